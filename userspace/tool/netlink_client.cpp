#include "netlink_client.hpp"

#include <linux/genetlink.h>
#include <rdma/rxecc_netlink.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "dcqcn_core.hpp"
#include "errors.hpp"
#include "fields.hpp"

namespace rxecc::tool {
namespace {

DevId decode_dev(const nl::Table& tb) {
    DevId d;
    if (tb[RXECC_ATTR_DEV_INDEX] != nullptr) d.index = nl::get_u32(tb[RXECC_ATTR_DEV_INDEX]);
    if (tb[RXECC_ATTR_DEV_NAME] != nullptr) d.name = nl::get_str(tb[RXECC_ATTR_DEV_NAME]);
    if (tb[RXECC_ATTR_NETDEV] != nullptr) d.netdev = nl::get_str(tb[RXECC_ATTR_NETDEV]);
    return d;
}

void put_dev(nl::Message& msg, const std::optional<std::string>& dev) {
    if (dev) msg.put_str(RXECC_ATTR_DEV_NAME, *dev);
}

// The knob of a request's attribute (a DCQCN parameter's inside the nest).
const Knob* knob_of_attr(const std::vector<uint16_t>& path) {
    const bool dcqcn = (path[0] & NLA_TYPE_MASK) == RXECC_ATTR_DCQCN;
    if (dcqcn && path.size() < 2) return nullptr;
    const unsigned t = (dcqcn ? path[1] : path[0]) & NLA_TYPE_MASK;
    for (const auto& k : knobs())
        if ((k.dcqcn_index >= 0) == dcqcn && k.attr == t) return &k;
    return nullptr;
}

// How an attribute of a request is called on the command line.
std::string attr_name(const std::vector<uint16_t>& path) {
    if (path.empty()) return {};
    if (const Knob* k = knob_of_attr(path)) return k->name;
    switch (path[0] & NLA_TYPE_MASK) {
        case RXECC_ATTR_DEV_INDEX:
            return "dev index";
        case RXECC_ATTR_DEV_NAME:
            return "dev";
        case RXECC_ATTR_PROFILE:
            return "profile";
        case RXECC_ATTR_DSCP2PRIO:
            return "dscp2prio";
        case RXECC_ATTR_DCQCN:
            if (path.size() < 2) return "dcqcn";
            return "dcqcn attribute " + std::to_string(path[1] & NLA_TYPE_MASK);
        default:
            return "attribute " + std::to_string(path[0] & NLA_TYPE_MASK);
    }
}

// The whole DSCP map: `base` (or DSCP >> 3 after `default`) with the changes.
void put_dscp_map(nl::Message& msg, const Command& cmd, const std::vector<uint8_t>& base) {
    std::vector<uint8_t> map = base;
    if (cmd.dscp2prio_default || map.size() != kDscpCount) {
        map.resize(kDscpCount);
        for (size_t d = 0; d < kDscpCount; ++d) map[d] = static_cast<uint8_t>(d >> 3);
    }
    for (const auto& [dscp, prio] : cmd.dscp2prio) map.at(dscp) = prio;
    msg.put_raw(RXECC_ATTR_DSCP2PRIO, map.data(), map.size());
}

}  // namespace

uint32_t knob_value(const Config& cfg, const Knob& knob) { return cfg.values.at(knob.index); }

void set_knob(Config& cfg, std::string_view name, uint32_t value) {
    cfg.values.at(find_knob(name)->index) = value;
}

nl::Message set_request(uint16_t family, const Command& cmd, const std::vector<uint8_t>& base_map) {
    nl::Message msg(family, cmd.defaults ? RXECC_CMD_DEFAULTS_SET : RXECC_CMD_DEV_SET,
                    RXECC_GENL_VERSION, 0);
    if (!cmd.defaults) put_dev(msg, cmd.dev);
    if (!cmd.profile.empty()) msg.put_str(RXECC_ATTR_PROFILE, cmd.profile);
    if (cmd.profile_kbps != 0) msg.put_u32(RXECC_ATTR_PROFILE_KBPS, cmd.profile_kbps);
    if (cmd.profile_speedup != 0) msg.put_u32(RXECC_ATTR_PROFILE_SPEEDUP, cmd.profile_speedup);
    nlattr* nest = nullptr;
    for (const auto& s : cmd.settings) {
        if (s.knob->dcqcn_index < 0) continue;
        if (nest == nullptr) nest = msg.nest_start(RXECC_ATTR_DCQCN);
        put_wire(msg, s.knob->attr, s.knob->wire, s.value);
    }
    if (nest != nullptr) msg.nest_end(nest);
    for (const auto& s : cmd.settings)
        if (s.knob->dcqcn_index < 0) put_wire(msg, s.knob->attr, s.knob->wire, s.value);
    if (cmd.dscp2prio_default || !cmd.dscp2prio.empty()) put_dscp_map(msg, cmd, base_map);
    return msg;
}

Config decode_config(const nlmsghdr* nlh) {
    auto tb = nl::parse(nlh, sizeof(genlmsghdr), RXECC_ATTR_MAX);
    Config c;
    if (tb[RXECC_ATTR_DEV_NAME] != nullptr) c.dev = decode_dev(tb);
    if (tb[RXECC_ATTR_LINE_KBPS] != nullptr) c.line_kbps = nl::get_u64(tb[RXECC_ATTR_LINE_KBPS]);
    if (tb[RXECC_ATTR_PROFILE] != nullptr) c.profile = nl::get_str(tb[RXECC_ATTR_PROFILE]);
    // Absent attributes read as the kernel's defaults would: 0, and
    // roce_prio 8 (DSCP).
    set_knob(c, "roce_prio", RXECC_ROCE_PRIO_DSCP);
    nl::Table nest(RXECC_DCQCN_A_MAX + 1);
    if (tb[RXECC_ATTR_DCQCN] != nullptr)
        nest = nl::parse_nested(tb[RXECC_ATTR_DCQCN], RXECC_DCQCN_A_MAX);
    for (const auto& k : knobs()) {
        const nl::Table& t = k.dcqcn_index >= 0 ? nest : tb;
        if (t.at(k.attr) != nullptr)
            c.values[k.index] = static_cast<uint32_t>(get_wire(t[k.attr], k.wire));
    }
    if (const nlattr* a = tb[RXECC_ATTR_DSCP2PRIO];
        a != nullptr && mnl_attr_get_payload_len(a) == kDscpCount) {
        const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(a));
        c.dscp2prio.assign(p, p + kDscpCount);
    }
    return c;
}

Stats decode_stats(const nlmsghdr* nlh) {
    auto tb = nl::parse(nlh, sizeof(genlmsghdr), RXECC_ATTR_MAX);
    Stats s;
    s.dev = decode_dev(tb);
    if (tb[RXECC_ATTR_STATS] == nullptr) return s;
    for (const nlattr* one : nl::children(tb[RXECC_ATTR_STATS])) {
        auto t = nl::parse_nested(one, RXECC_STAT_A_MAX);
        if (t[RXECC_STAT_A_NAME] == nullptr || t[RXECC_STAT_A_VALUE] == nullptr) continue;
        s.counters.push_back(
            {nl::get_str(t[RXECC_STAT_A_NAME]), nl::get_u64(t[RXECC_STAT_A_VALUE])});
    }
    return s;
}

std::span<const Field<Qp>> qp_fields() {
    static const std::array<Field<Qp>, 14> fields = {
        member<&Qp::qpn>("qpn", RXECC_QP_A_QPN, Wire::u32),
        member<&Qp::type>("type", RXECC_QP_A_TYPE, Wire::u8, Show::qp_type),
        member<&Qp::state>("state", RXECC_QP_A_STATE, Wire::u8, Show::qp_state),
        member<&Qp::dest_qpn>("dest_qpn", RXECC_QP_A_DEST_QPN, Wire::u32),
        member<&Qp::prio>("prio", RXECC_QP_A_PRIO, Wire::u8),
        member<&Qp::limited>("limited", RXECC_QP_A_LIMITED, Wire::u8, Show::boolean),
        member<&Qp::rate_kbps>("rate_kbps", RXECC_QP_A_RATE_KBPS, Wire::u64),
        member<&Qp::target_kbps>("target_kbps", RXECC_QP_A_TARGET_KBPS, Wire::u64),
        member<&Qp::alpha_ppm>("alpha_ppm", RXECC_QP_A_ALPHA_PPM, Wire::u32),
        member<&Qp::t_stage>("t_stage", RXECC_QP_A_T_STAGE, Wire::u32),
        member<&Qp::bc_stage>("bc_stage", RXECC_QP_A_BC_STAGE, Wire::u32),
        member<&Qp::cnp_handled>("cnp_handled", RXECC_QP_A_CNP_HANDLED, Wire::u64),
        member<&Qp::cnp_sent>("cnp_sent", RXECC_QP_A_CNP_SENT, Wire::u64),
        member<&Qp::rp_tx_deferred>("rp_tx_deferred", RXECC_QP_A_RP_TX_DEFERRED, Wire::u64),
    };
    return fields;
}

Qp decode_qp(const nlmsghdr* nlh) {
    auto tb = nl::parse(nlh, sizeof(genlmsghdr), RXECC_ATTR_MAX);
    Qp q;
    q.dev = decode_dev(tb);
    if (tb[RXECC_ATTR_QP] == nullptr) return q;
    decode_fields(nl::parse_nested(tb[RXECC_ATTR_QP], RXECC_QP_A_MAX), qp_fields(), q);
    return q;
}

Error explain(const nl::KernelError& err, const nl::Message& req,
              const std::optional<std::string>& dev) {
    std::string name;
    std::vector<uint16_t> path;
    if (err.offset) {
        path = nl::attr_path_at(req, *err.offset);
        name = attr_name(path);
    }
    // The kernel's message, or the errno's text.
    std::string why = err.msg.empty() ? std::strerror(err.err) : err.msg;
    // Messages about the device start with the attribute (a dump's error
    // carries no offset): say which device instead.
    bool about_dev = name == "dev" || name == "dev index";
    for (const char* prefix : {"DEV_NAME: ", "DEV_INDEX: "})
        if (why.rfind(prefix, 0) == 0) {
            why.erase(0, std::strlen(prefix));
            about_dev = true;
        }
    std::string line = why;
    if (about_dev && dev)
        line = "device '" + *dev + "': " + why;
    else if (!name.empty() && why.find(name) == std::string::npos)
        line = name + ": " + why;
    switch (err.err) {
        case ENODEV:
            return {Exit::no_device, line};
        case EOPNOTSUPP:
            return {Exit::not_rxecc, line};
        case EPERM:
        case EACCES:
            return {Exit::permission,
                    "permission denied: changing rxecc settings needs "
                    "CAP_NET_ADMIN in the device's network namespace"};
        case ERANGE:
        case EINVAL:
            if (!path.empty() && !about_dev) return {Exit::bad_value, line};
            break;
        default:
            break;
    }
    return {Exit::system, line};
}

Client::Client() {
    auto fam = sock_.resolve(RXECC_GENL_NAME);
    if (!fam)
        throw Error(Exit::no_module,
                    "the rdma_rxecc module is not loaded (no netlink family 'rxecc')");
    family_ = *fam;
}

void Client::run(nl::Message& msg, const nl::Handler& on_reply) {
    auto err = sock_.request(msg, on_reply);
    if (!err) return;
    std::optional<std::string> dev;
    auto tb = nl::parse(msg.header(), sizeof(genlmsghdr), RXECC_ATTR_MAX);
    if (tb[RXECC_ATTR_DEV_NAME] != nullptr) dev = nl::get_str(tb[RXECC_ATTR_DEV_NAME]);
    throw explain(*err, msg, dev);
}

std::vector<Config> Client::configs(const std::optional<std::string>& dev) {
    nl::Message msg(family_.id, RXECC_CMD_DEV_GET, RXECC_GENL_VERSION, dev ? 0 : NLM_F_DUMP);
    put_dev(msg, dev);
    std::vector<Config> out;
    run(msg, [&](const nlmsghdr* nlh) { out.push_back(decode_config(nlh)); });
    return out;
}

Config Client::defaults() {
    nl::Message msg(family_.id, RXECC_CMD_DEFAULTS_GET, RXECC_GENL_VERSION, 0);
    Config c;
    run(msg, [&](const nlmsghdr* nlh) { c = decode_config(nlh); });
    return c;
}

void Client::set(const Command& cmd) {
    // Entries of the DSCP map change on top of the current map.
    std::vector<uint8_t> base;
    if (!cmd.dscp2prio.empty() && !cmd.dscp2prio_default) {
        if (cmd.defaults) {
            base = defaults().dscp2prio;
        } else {
            auto cur = configs(cmd.dev);
            if (!cur.empty()) base = cur.front().dscp2prio;
        }
    }
    auto msg = set_request(family_.id, cmd, base);
    run(msg, [](const nlmsghdr*) {});
}

std::vector<Stats> Client::stats(const std::optional<std::string>& dev) {
    nl::Message msg(family_.id, RXECC_CMD_STATS_GET, RXECC_GENL_VERSION, dev ? 0 : NLM_F_DUMP);
    put_dev(msg, dev);
    std::vector<Stats> out;
    run(msg, [&](const nlmsghdr* nlh) { out.push_back(decode_stats(nlh)); });
    return out;
}

void Client::reset_stats(const std::string& dev) {
    nl::Message msg(family_.id, RXECC_CMD_STATS_RESET, RXECC_GENL_VERSION, 0);
    put_dev(msg, dev);
    run(msg, [](const nlmsghdr*) {});
}

std::vector<Qp> Client::qps(const std::optional<std::string>& dev) {
    nl::Message msg(family_.id, RXECC_CMD_QP_GET, RXECC_GENL_VERSION, NLM_F_DUMP);
    put_dev(msg, dev);
    std::vector<Qp> out;
    run(msg, [&](const nlmsghdr* nlh) { out.push_back(decode_qp(nlh)); });
    return out;
}

nl::Socket Client::subscribe() {
    nl::Socket events;
    for (const auto& [name, id] : family_.groups)
        if (name == RXECC_GENL_MCGRP_CONFIG) {
            events.join(id);
            return events;
        }
    throw Error(Exit::system, "the rxecc netlink family has no 'config' group");
}

}  // namespace rxecc::tool
