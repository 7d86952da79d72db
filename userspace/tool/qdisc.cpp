#include "qdisc.hpp"

#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "format.hpp"
#include "params.hpp"

namespace rxecc::tool {
namespace {

constexpr std::string_view kKind = "pfc";

uint32_t ifindex_of(const std::string& netdev) {
    const unsigned idx = if_nametoindex(netdev.c_str());
    if (idx == 0)
        throw Error(Exit::no_device, "no netdev '" + netdev + "' in this network namespace");
    return idx;
}

std::string netdev_of(uint32_t ifindex) {
    std::array<char, IF_NAMESIZE> name{};
    if (if_indextoname(ifindex, name.data()) == nullptr) return std::to_string(ifindex);
    return name.data();
}

nl::Message qdisc_message(uint16_t type, uint16_t flags, uint32_t ifindex) {
    tcmsg tcm{};
    tcm.tcm_family = AF_UNSPEC;
    tcm.tcm_ifindex = static_cast<int>(ifindex);
    tcm.tcm_parent = TC_H_ROOT;
    return {type, flags, &tcm, sizeof(tcm)};
}

template <typename T>
std::string option_of(std::span<const Field<T>> fields, uint16_t attr) {
    for (const auto& f : fields)
        if (f.attr == attr && !f.option.empty()) return std::string(f.option);
    return {};
}

}  // namespace

std::span<const Field<QdiscInfo>> qdisc_port_fields() {
    // Ranges of the kernel's policy (sch_pfc.c); rate has none but 64 bits.
    static const std::array<Field<QdiscInfo>, 11> fields = {
        member<&QdiscInfo::handle>("handle", 0, Wire::none, Show::handle),
        member<&QdiscInfo::rate_bps>("rate_bps", TCA_PFC_RATE, Wire::u64)
            .settable("rate", Unit::speed, "Mbit/s", 0, UINT32_MAX, 1000000),
        member<&QdiscInfo::enable>("pfc_enable", TCA_PFC_ENABLE, Wire::u8, Show::mask)
            .settable("pfc", Unit::prio_mask, "prio mask", 0, 0xff),
        member<&QdiscInfo::trust>("trust", TCA_PFC_TRUST, Wire::u8, Show::trust)
            .settable("trust", Unit::trust, "dscp|pcp", 0, TC_PFC_TRUST_PCP),
        member<&QdiscInfo::link_speed>("link_speed", TCA_PFC_LINK_SPEED, Wire::u32)
            .settable("link_speed", Unit::mbps, "Mbit/s", 1, 1000000),
        member<&QdiscInfo::delay_ns>("delay_ns", TCA_PFC_DELAY, Wire::u32)
            .settable("delay", Unit::micros, "us", 0, 1000000, 1000),
        member<&QdiscInfo::quanta>("quanta", TCA_PFC_QUANTA, Wire::u16)
            .settable("quanta", Unit::plain, "quanta", 1, 65535),
        member<&QdiscInfo::wd_detection_ms>("wd_detection_ms", TCA_PFC_WD_DETECTION, Wire::u32)
            .settable("wd_detection", Unit::millis, "ms", 0, 5000),
        member<&QdiscInfo::wd_restoration_ms>("wd_restoration_ms", TCA_PFC_WD_RESTORATION,
                                              Wire::u32)
            .settable("wd_restoration", Unit::millis, "ms", 0, 60000),
        member<&QdiscInfo::wd_action>("wd_action", TCA_PFC_WD_ACTION, Wire::u8, Show::wd_action)
            .settable("wd_action", Unit::wd_action, "drop|forward|alert", 0, TC_PFC_WD_ALERT),
        member<&QdiscInfo::wd_poll_ms>("wd_poll_ms", TCA_PFC_WD_POLL, Wire::u32)
            .settable("wd_poll", Unit::millis, "ms", 0, 5000),
    };
    return fields;
}

std::span<const Field<QdiscInfo>> qdisc_port_stat_fields() {
    static const std::array<Field<QdiscInfo>, 6> fields = {
        member<&QdiscInfo::drops>("drops", 0, Wire::none),
        member<&QdiscInfo::pfc_tx_errors>("pfc_tx_errors", 0, Wire::none),
        member<&QdiscInfo::pfc_rx_ignored>("pfc_rx_ignored", 0, Wire::none),
        member<&QdiscInfo::pfc_rx_malformed>("pfc_rx_malformed", 0, Wire::none),
        member<&QdiscInfo::pfc_rx_rejected>("pfc_rx_rejected", 0, Wire::none),
        member<&QdiscInfo::pfc_untracked>("pfc_untracked", 0, Wire::none),
    };
    return fields;
}

std::span<const Field<QdiscInfo::Prio>> qdisc_prio_fields() {
    using P = QdiscInfo::Prio;
    constexpr uint32_t big = UINT32_MAX;
    static const std::array<Field<P>, 9> fields = {
        member<&P::id>("prio", 0, Wire::none),
        member<&P::pfc>("pfc", 0, Wire::none, Show::onoff),
        member<&P::limit>("limit", TCA_PFC_PRIO_LIMIT, Wire::u32)
            .settable("limit", Unit::bytes, "bytes", 1, big),
        member<&P::xoff>("xoff", TCA_PFC_PRIO_XOFF, Wire::u32)
            .settable("xoff", Unit::bytes, "bytes", 1, big),
        member<&P::xon>("xon", TCA_PFC_PRIO_XON, Wire::u32)
            .settable("xon", Unit::bytes, "bytes", 0, big),
        member<&P::headroom>("headroom", TCA_PFC_PRIO_HEADROOM, Wire::u32)
            .settable("headroom", Unit::bytes, "bytes", 0, big),
        member<&P::kmin>("kmin", TCA_PFC_PRIO_KMIN, Wire::u32)
            .settable("kmin", Unit::bytes, "bytes", 0, big),
        member<&P::kmax>("kmax", TCA_PFC_PRIO_KMAX, Wire::u32)
            .settable("kmax", Unit::bytes, "bytes", 0, big),
        member<&P::pmax>("pmax", TCA_PFC_PRIO_PMAX, Wire::u32)
            .settable("pmax", Unit::percent, "%", 0, 100),
    };
    return fields;
}

std::span<const Field<tc_pfc_prio_stats>> qdisc_prio_stat_fields() {
    using S = tc_pfc_prio_stats;
    static const std::array<Field<S>, 13> fields = {
        member<&S::tx_bytes>("tx_bytes", 0, Wire::none),
        member<&S::tx_packets>("tx_packets", 0, Wire::none),
        member<&S::backlog>("backlog", 0, Wire::none),
        member<&S::qlen>("qlen", 0, Wire::none),
        member<&S::drops>("drops", 0, Wire::none),
        member<&S::ecn_marked>("ecn_marked", 0, Wire::none),
        member<&S::pause_tx>("pause_tx", 0, Wire::none),
        member<&S::xon_tx>("xon_tx", 0, Wire::none),
        member<&S::pause_tx_duration>("pause_tx_duration_us", 0, Wire::none, Show::ns_as_us),
        member<&S::pause_rx>("pause_rx", 0, Wire::none),
        member<&S::pause_rx_duration>("pause_rx_duration_us", 0, Wire::none, Show::ns_as_us),
        member<&S::pause_rx_transition>("pause_rx_transition", 0, Wire::none),
        member<&S::xoff_ports>("xoff_ports", 0, Wire::none),
    };
    return fields;
}

std::span<const Field<tc_pfc_wd_stats>> qdisc_prio_wd_fields() {
    using W = tc_pfc_wd_stats;
    static const std::array<Field<W>, 6> fields = {
        member<&W::storm>("wd_storm", 0, Wire::none, Show::boolean),
        member<&W::storms>("wd_storms", 0, Wire::none),
        member<&W::restorations>("wd_restorations", 0, Wire::none),
        member<&W::drops>("wd_drops", 0, Wire::none),
        member<&W::pause_ignored>("wd_pause_ignored", 0, Wire::none),
        member<&W::storm_duration>("wd_storm_duration_us", 0, Wire::none, Show::ns_as_us),
    };
    return fields;
}

nl::Message qdisc_set_request(const QdiscSpec& spec, uint32_t ifindex) {
    uint16_t flags = 0;
    if (spec.op == QdiscSpec::Op::add) flags = NLM_F_CREATE | NLM_F_EXCL;
    if (spec.op == QdiscSpec::Op::replace) flags = NLM_F_CREATE | NLM_F_REPLACE;
    auto msg = qdisc_message(RTM_NEWQDISC, flags, ifindex);
    msg.put_str(TCA_KIND, kKind);
    nlattr* opts = msg.nest_start(TCA_OPTIONS);
    for (const auto& f : qdisc_port_fields())
        if (f.attr != 0 && spec.opt.at(f.attr)) put_wire(msg, f.attr, f.wire, *spec.opt[f.attr]);
    for (size_t p = 0; p < spec.prio.size(); ++p) {
        const QdiscPrio& q = spec.prio.at(p);
        nlattr* nest = nullptr;
        for (const auto& f : qdisc_prio_fields()) {
            if (f.attr == 0 || !q.opt.at(f.attr)) continue;
            if (nest == nullptr) {
                nest = msg.nest_start(TCA_PFC_PRIO);
                msg.put_u8(TCA_PFC_PRIO_ID, static_cast<uint8_t>(p));
            }
            put_wire(msg, f.attr, f.wire, *q.opt[f.attr]);
        }
        if (nest != nullptr) msg.nest_end(nest);
    }
    msg.nest_end(opts);
    return msg;
}

nl::Message qdisc_del_request(uint32_t ifindex) {
    auto msg = qdisc_message(RTM_DELQDISC, 0, ifindex);
    msg.put_str(TCA_KIND, kKind);
    return msg;
}

namespace {

void decode_options(const nlattr* opts, QdiscInfo& q) {
    decode_fields(nl::parse_nested(opts, TCA_PFC_MAX), qdisc_port_fields(), q);
    for (const nlattr* a : nl::children(opts)) {
        if (mnl_attr_get_type(a) != TCA_PFC_PRIO) continue;
        auto p = nl::parse_nested(a, TCA_PFC_PRIO_MAX);
        if (p[TCA_PFC_PRIO_ID] == nullptr) continue;
        const uint8_t id = nl::get_u8(p[TCA_PFC_PRIO_ID]);
        if (id >= TC_PFC_NUM_PRIO) continue;
        decode_fields(p, qdisc_prio_fields(), q.prio.at(id));
    }
    for (size_t p = 0; p < q.prio.size(); ++p) {
        q.prio.at(p).id = static_cast<uint8_t>(p);
        q.prio.at(p).pfc = (q.enable >> p & 1U) != 0;
    }
}

void decode_stats(const nlattr* stats, QdiscInfo& q) {
    auto s = nl::parse_nested(stats, TCA_STATS_MAX);
    if (const nlattr* a = s[TCA_STATS_QUEUE];
        a != nullptr && mnl_attr_get_payload_len(a) >= sizeof(gnet_stats_queue)) {
        gnet_stats_queue qs{};
        std::memcpy(&qs, mnl_attr_get_payload(a), sizeof(qs));
        q.drops = qs.drops;
    }
    // The struct only grows at its end: a module older than the tool sends a
    // shorter one, whose missing counters read 0.
    if (const nlattr* a = s[TCA_STATS_APP];
        a != nullptr && mnl_attr_get_payload_len(a) >= offsetof(tc_pfc_xstats, pfc_tx_errors)) {
        tc_pfc_xstats x{};
        std::memcpy(&x, mnl_attr_get_payload(a),
                    std::min<size_t>(mnl_attr_get_payload_len(a), sizeof(x)));
        for (size_t p = 0; p < TC_PFC_NUM_PRIO; ++p) {
            q.prio.at(p).stats = x.prio[p];
            q.prio.at(p).wd = x.wd[p];
        }
        q.pfc_tx_errors = x.pfc_tx_errors;
        q.pfc_rx_ignored = x.pfc_rx_ignored;
        q.pfc_rx_malformed = x.pfc_rx_malformed;
        q.pfc_rx_rejected = x.pfc_rx_rejected;
        q.pfc_untracked = x.pfc_untracked;
    }
}

}  // namespace

std::optional<QdiscInfo> decode_qdisc(const nlmsghdr* nlh) {
    if (nlh->nlmsg_type != RTM_NEWQDISC || nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(tcmsg))
        return std::nullopt;
    const auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(nlh));
    auto tb = nl::parse(nlh, sizeof(tcmsg), TCA_MAX);
    if (tcm->tcm_parent != TC_H_ROOT || tb[TCA_KIND] == nullptr ||
        nl::get_str(tb[TCA_KIND]) != kKind)
        return std::nullopt;
    QdiscInfo q;
    q.ifindex = static_cast<uint32_t>(tcm->tcm_ifindex);
    q.netdev = netdev_of(q.ifindex);
    q.handle = tcm->tcm_handle;
    if (tb[TCA_OPTIONS] != nullptr) decode_options(tb[TCA_OPTIONS], q);
    if (tb[TCA_STATS2] != nullptr) decode_stats(tb[TCA_STATS2], q);
    return q;
}

Error explain_qdisc(const nl::KernelError& err, const nl::Message& req, const std::string& netdev) {
    std::string name;
    if (err.offset) {
        auto path = nl::attr_path_at(req, *err.offset);
        if (path.size() >= 2 && (path[0] & NLA_TYPE_MASK) == TCA_OPTIONS) {
            const auto type = static_cast<uint16_t>(path[1] & NLA_TYPE_MASK);
            name = type == TCA_PFC_PRIO ? "prio" : option_of(qdisc_port_fields(), type);
            if (type == TCA_PFC_PRIO && path.size() >= 3)
                name = option_of(qdisc_prio_fields(), path[2] & NLA_TYPE_MASK);
        }
    }
    std::string why = err.msg.empty() ? std::strerror(err.err) : err.msg;
    if (!name.empty() && why.find(name) == std::string::npos) why = name + ": " + why;
    const std::string line = "qdisc on '" + netdev + "': " + why;
    switch (err.err) {
        case ENOENT:
            if (err.msg.find("kind is unknown") != std::string::npos)
                return {Exit::no_module, "the sch_pfc module is not loaded (qdisc kind 'pfc')"};
            return {Exit::no_device, "no pfc qdisc on '" + netdev + "'"};
        case ENODEV:
            return {Exit::no_device, line};
        case EPERM:
        case EACCES:
            return {Exit::permission,
                    "permission denied: qdiscs need CAP_NET_ADMIN in the netdev's network "
                    "namespace"};
        case EINVAL:
        case ERANGE:
            return {Exit::bad_value, line};
        default:
            return {Exit::system, line};
    }
}

nlohmann::json to_json(const QdiscInfo& q) {
    nlohmann::json j;
    j["netdev"] = q.netdev;
    put_json(j, qdisc_port_fields(), q);
    put_json(j, qdisc_port_stat_fields(), q);
    auto& prios = j["prio"];
    prios = nlohmann::json::array();
    for (const auto& d : q.prio) {
        nlohmann::json one;
        put_json(one, qdisc_prio_fields(), d);
        put_json(one, qdisc_prio_stat_fields(), d.stats);
        put_json(one, qdisc_prio_wd_fields(), d.wd);
        prios.push_back(one);
    }
    return j;
}

namespace {

// A table of every priority: `fields` of the priority, then `more` of its
// statistics; rows indented by two.
template <typename S>
std::string prio_table(const QdiscInfo& q, std::span<const Field<QdiscInfo::Prio>> fields,
                       std::span<const Field<S>> more, S QdiscInfo::Prio::*sub) {
    auto header = text_header(fields);
    auto right = text_right(fields);
    for (auto& h : text_header(more)) header.push_back(h);
    for (bool r : text_right(more)) right.push_back(r);
    header.front() = "  " + header.front();
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : q.prio) {
        auto row = text_row(fields, d);
        for (auto& cell : text_row(more, d.*sub)) row.push_back(cell);
        row.front() = "  " + row.front();
        rows.push_back(row);
    }
    return table(header, right, rows);
}

}  // namespace

std::string to_text(const std::vector<QdiscInfo>& qdiscs) {
    std::string out;
    for (const auto& q : qdiscs) {
        if (!out.empty()) out += "\n";
        out += "qdisc pfc netdev " + q.netdev + " " + text_pairs(qdisc_port_fields(), q) + "\n";
        out += "  " + text_pairs(qdisc_port_stat_fields(), q) + "\n";
        // The options of every priority, then its counters.
        const auto prio_only = qdisc_prio_fields().first(1);
        out += prio_table<tc_pfc_prio_stats>(q, qdisc_prio_fields(), {}, &QdiscInfo::Prio::stats);
        out += prio_table(q, prio_only, qdisc_prio_stat_fields(), &QdiscInfo::Prio::stats);
        out += prio_table(q, prio_only, qdisc_prio_wd_fields(), &QdiscInfo::Prio::wd);
    }
    return out;
}

std::vector<QdiscInfo> QdiscClient::show(const std::string& netdev) {
    const uint32_t only = netdev.empty() ? 0 : ifindex_of(netdev);
    auto msg = qdisc_message(RTM_GETQDISC, NLM_F_DUMP, 0);
    std::vector<QdiscInfo> out;
    auto err = sock_.request(msg, [&](const nlmsghdr* nlh) {
        auto q = decode_qdisc(nlh);
        if (q && (only == 0 || q->ifindex == only)) out.push_back(*q);
    });
    if (err) throw explain_qdisc(*err, msg, netdev);
    if (only != 0 && out.empty()) throw Error(Exit::no_device, "no pfc qdisc on '" + netdev + "'");
    return out;
}

void QdiscClient::set(const QdiscSpec& spec) {
    auto msg = qdisc_set_request(spec, ifindex_of(spec.netdev));
    auto err = sock_.request(msg, [](const nlmsghdr*) {});
    if (err) throw explain_qdisc(*err, msg, spec.netdev);
}

void QdiscClient::del(const std::string& netdev) {
    // Only a pfc qdisc: show() fails with "no pfc qdisc" for another kind.
    (void)show(netdev);
    auto msg = qdisc_del_request(ifindex_of(netdev));
    auto err = sock_.request(msg, [](const nlmsghdr*) {});
    if (err) throw explain_qdisc(*err, msg, netdev);
}

}  // namespace rxecc::tool
