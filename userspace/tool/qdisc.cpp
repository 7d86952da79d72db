#include "qdisc.hpp"

#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

std::string option_name(uint16_t type) {
    switch (type) {
        case TCA_PFC_RATE:
            return "rate";
        case TCA_PFC_ENABLE:
            return "pfc";
        case TCA_PFC_TRUST:
            return "trust";
        case TCA_PFC_LINK_MBPS:
            return "link";
        case TCA_PFC_DELAY:
            return "delay";
        case TCA_PFC_QUANTA:
            return "quanta";
        case TCA_PFC_PRIO:
            return "prio";
        default:
            return {};
    }
}

std::string prio_option_name(uint16_t type) {
    static const std::array<const char*, TCA_PFC_PRIO_MAX + 1> names = {
        "", "prio", "limit", "xoff", "xon", "headroom", "kmin", "kmax", "pmax"};
    return type <= TCA_PFC_PRIO_MAX ? names.at(type) : std::string();
}

uint64_t us(uint64_t ns) { return ns / 1000; }

// "8001:", as tc writes a qdisc handle.
std::string handle_text(uint32_t handle) {
    std::array<char, 16> buf{};
    std::snprintf(buf.data(), buf.size(), "%x:", handle >> 16);  // NOLINT(*-vararg)
    return buf.data();
}

}  // namespace

nl::Message qdisc_set_request(const QdiscSpec& spec, uint32_t ifindex) {
    uint16_t flags = 0;
    if (spec.op == QdiscSpec::Op::add) flags = NLM_F_CREATE | NLM_F_EXCL;
    if (spec.op == QdiscSpec::Op::replace) flags = NLM_F_CREATE | NLM_F_REPLACE;
    auto msg = qdisc_message(RTM_NEWQDISC, flags, ifindex);
    msg.put_str(TCA_KIND, kKind);
    nlattr* opts = msg.nest_start(TCA_OPTIONS);
    if (spec.rate_bps) msg.put_u64(TCA_PFC_RATE, *spec.rate_bps);
    if (spec.enable) msg.put_u8(TCA_PFC_ENABLE, *spec.enable);
    if (spec.trust) msg.put_u8(TCA_PFC_TRUST, *spec.trust);
    if (spec.link_mbps) msg.put_u32(TCA_PFC_LINK_MBPS, *spec.link_mbps);
    if (spec.delay_ns) msg.put_u32(TCA_PFC_DELAY, *spec.delay_ns);
    if (spec.quanta) msg.put_u16(TCA_PFC_QUANTA, *spec.quanta);
    for (size_t p = 0; p < spec.prio.size(); ++p) {
        const QdiscPrio& q = spec.prio.at(p);
        const std::array<std::pair<uint16_t, const std::optional<uint32_t>*>, 7> fields = {{
            {TCA_PFC_PRIO_LIMIT, &q.limit},
            {TCA_PFC_PRIO_XOFF, &q.xoff},
            {TCA_PFC_PRIO_XON, &q.xon},
            {TCA_PFC_PRIO_HEADROOM, &q.headroom},
            {TCA_PFC_PRIO_KMIN, &q.kmin},
            {TCA_PFC_PRIO_KMAX, &q.kmax},
            {TCA_PFC_PRIO_PMAX, &q.pmax},
        }};
        nlattr* nest = nullptr;
        for (const auto& [type, value] : fields) {
            if (!*value) continue;
            if (nest == nullptr) {
                nest = msg.nest_start(TCA_PFC_PRIO);
                msg.put_u8(TCA_PFC_PRIO_ID, static_cast<uint8_t>(p));
            }
            msg.put_u32(type, **value);
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
    auto o = nl::parse_nested(opts, TCA_PFC_MAX);
    if (o[TCA_PFC_RATE] != nullptr) q.rate_bps = nl::get_u64(o[TCA_PFC_RATE]);
    if (o[TCA_PFC_ENABLE] != nullptr) q.enable = nl::get_u8(o[TCA_PFC_ENABLE]);
    if (o[TCA_PFC_TRUST] != nullptr) q.trust = nl::get_u8(o[TCA_PFC_TRUST]);
    if (o[TCA_PFC_LINK_MBPS] != nullptr) q.link_mbps = nl::get_u32(o[TCA_PFC_LINK_MBPS]);
    if (o[TCA_PFC_DELAY] != nullptr) q.delay_ns = nl::get_u32(o[TCA_PFC_DELAY]);
    if (o[TCA_PFC_QUANTA] != nullptr) q.quanta = nl::get_u16(o[TCA_PFC_QUANTA]);
    for (const nlattr* a : nl::children(opts)) {
        if (mnl_attr_get_type(a) != TCA_PFC_PRIO) continue;
        auto p = nl::parse_nested(a, TCA_PFC_PRIO_MAX);
        if (p[TCA_PFC_PRIO_ID] == nullptr) continue;
        const uint8_t id = nl::get_u8(p[TCA_PFC_PRIO_ID]);
        if (id >= TC_PFC_NUM_PRIO) continue;
        auto& d = q.prio.at(id);
        auto u32 = [&](uint16_t t) { return p[t] != nullptr ? nl::get_u32(p[t]) : 0U; };
        d.limit = u32(TCA_PFC_PRIO_LIMIT);
        d.xoff = u32(TCA_PFC_PRIO_XOFF);
        d.xon = u32(TCA_PFC_PRIO_XON);
        d.headroom = u32(TCA_PFC_PRIO_HEADROOM);
        d.kmin = u32(TCA_PFC_PRIO_KMIN);
        d.kmax = u32(TCA_PFC_PRIO_KMAX);
        d.pmax = u32(TCA_PFC_PRIO_PMAX);
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
        for (size_t p = 0; p < TC_PFC_NUM_PRIO; ++p)
            q.prio.at(p).stats = x.prio[p];  // NOLINT(*-constant-array-index)
        q.pfc_tx_errors = x.pfc_tx_errors;
        q.pfc_rx_ignored = x.pfc_rx_ignored;
        q.pfc_rx_malformed = x.pfc_rx_malformed;
        q.pfc_rx_rejected = x.pfc_rx_rejected;
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
            name = option_name(path[1] & NLA_TYPE_MASK);
            if ((path[1] & NLA_TYPE_MASK) == TCA_PFC_PRIO && path.size() >= 3)
                name = prio_option_name(path[2] & NLA_TYPE_MASK);
        }
    }
    std::string why = err.msg.empty() ? std::strerror(err.err) : err.msg;  // NOLINT(*-mt-unsafe)
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
    j["handle"] = handle_text(q.handle);
    j["rate_bps"] = q.rate_bps;
    j["pfc_enable"] = q.enable;
    j["trust"] = q.trust == TC_PFC_TRUST_PCP ? "pcp" : "dscp";
    j["link_mbps"] = q.link_mbps;
    j["delay_ns"] = q.delay_ns;
    j["quanta"] = q.quanta;
    j["drops"] = q.drops;
    j["pfc_tx_errors"] = q.pfc_tx_errors;
    j["pfc_rx_ignored"] = q.pfc_rx_ignored;
    j["pfc_rx_malformed"] = q.pfc_rx_malformed;
    j["pfc_rx_rejected"] = q.pfc_rx_rejected;
    auto& prios = j["prio"];
    prios = nlohmann::json::array();
    for (size_t p = 0; p < q.prio.size(); ++p) {
        const auto& d = q.prio.at(p);
        const auto& s = d.stats;
        prios.push_back({{"prio", p},
                         {"pfc", (q.enable >> p & 1U) != 0},
                         {"limit", d.limit},
                         {"xoff", d.xoff},
                         {"xon", d.xon},
                         {"headroom", d.headroom},
                         {"kmin", d.kmin},
                         {"kmax", d.kmax},
                         {"pmax", d.pmax},
                         {"tx_bytes", s.tx_bytes},
                         {"tx_packets", s.tx_packets},
                         {"backlog", s.backlog},
                         {"qlen", s.qlen},
                         {"drops", s.drops},
                         {"ecn_marked", s.ecn_marked},
                         {"pause_tx", s.pause_tx},
                         {"xon_tx", s.xon_tx},
                         {"pause_tx_duration_us", us(s.pause_tx_duration)},
                         {"pause_rx", s.pause_rx},
                         {"pause_rx_duration_us", us(s.pause_rx_duration)},
                         {"pause_rx_transition", s.pause_rx_transition},
                         {"xoff_ports", s.xoff_ports}});
    }
    return j;
}

std::string to_text(const std::vector<QdiscInfo>& qdiscs) {
    std::string out;
    for (const auto& q : qdiscs) {
        if (!out.empty()) out += "\n";
        out += "qdisc pfc " + handle_text(q.handle) + " dev " + q.netdev + " rate " +
               (q.rate_bps != 0 ? format_kbps(q.rate_bps / 1000) : std::string("none")) + " pfc " +
               format_value(*find_knob("pfc_enable"), q.enable) + " trust " +
               (q.trust == TC_PFC_TRUST_PCP ? "pcp" : "dscp") + " link " +
               format_kbps(uint64_t{q.link_mbps} * 1000) + " delay " +
               std::to_string(q.delay_ns / 1000) + "us quanta " + std::to_string(q.quanta) + "\n";
        out += "  drops " + std::to_string(q.drops) + " pfc_tx_errors " +
               std::to_string(q.pfc_tx_errors) + " pfc_rx_ignored " +
               std::to_string(q.pfc_rx_ignored) + " pfc_rx_malformed " +
               std::to_string(q.pfc_rx_malformed) + " pfc_rx_rejected " +
               std::to_string(q.pfc_rx_rejected) + "\n";
        std::vector<std::vector<std::string>> rows;
        for (size_t p = 0; p < q.prio.size(); ++p) {
            const auto& d = q.prio.at(p);
            const auto& s = d.stats;
            rows.push_back({"  " + std::to_string(p), (q.enable >> p & 1U) != 0 ? "on" : "off",
                            std::to_string(d.limit), std::to_string(d.xoff), std::to_string(d.xon),
                            std::to_string(d.headroom),
                            std::to_string(d.kmin) + "-" + std::to_string(d.kmax) + "/" +
                                std::to_string(d.pmax) + "%",
                            std::to_string(s.tx_packets), std::to_string(s.backlog),
                            std::to_string(s.drops), std::to_string(s.ecn_marked),
                            std::to_string(s.pause_tx), std::to_string(s.xon_tx),
                            std::to_string(us(s.pause_tx_duration)), std::to_string(s.pause_rx),
                            std::to_string(us(s.pause_rx_duration))});
        }
        out +=
            table({"  PRIO", "PFC", "LIMIT", "XOFF", "XON", "HEADROOM", "ECN", "TX_PKTS", "BACKLOG",
                   "DROPS", "MARKED", "XOFF_TX", "XON_TX", "XOFF_TX_US", "PFC_RX", "PAUSED_US"},
                  {false, false, true, true, true, true, true, true, true, true, true, true, true,
                   true, true, true},
                  rows);
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
