#include "client.hpp"

#include <linux/genetlink.h>
#include <rdma/rxecc_netlink.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "dcqcn_core.hpp"
#include "errors.hpp"

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

// How an attribute of a request is called on the command line.
std::string attr_name(const std::vector<uint16_t>& path) {
    if (path.empty()) return {};
    switch (path[0] & NLA_TYPE_MASK) {
        case RXECC_ATTR_DEV_INDEX:
            return "dev index";
        case RXECC_ATTR_DEV_NAME:
            return "dev";
        case RXECC_ATTR_PROFILE:
            return "profile";
        case RXECC_ATTR_RP_ENABLE:
            return "rp_enable";
        case RXECC_ATTR_NP_ENABLE:
            return "np_enable";
        case RXECC_ATTR_ECN:
            return "ecn";
        case RXECC_ATTR_PFC_ENABLE:
            return "pfc_enable";
        case RXECC_ATTR_ROCE_PRIO:
            return "roce_prio";
        case RXECC_ATTR_LINK_MBPS:
            return "link_speed";
        case RXECC_ATTR_DSCP2PRIO:
            return "dscp2prio";
        case RXECC_ATTR_PFC_RX_XOFF:
            return "pfc_rx_xoff";
        case RXECC_ATTR_PFC_RX_XON:
            return "pfc_rx_xon";
        case RXECC_ATTR_TX_QLIMIT:
            return "tx_qlimit";
        case RXECC_ATTR_DCQCN: {
            if (path.size() < 2) return "dcqcn";
            const unsigned t = path[1] & NLA_TYPE_MASK;
            if (t >= 1 && t <= rxecc_dcqcn_num_params) return knobs().at(t - 1).name;
            return "dcqcn attribute " + std::to_string(t);
        }
        default:
            return "attribute " + std::to_string(path[0] & NLA_TYPE_MASK);
    }
}

// A knob that is no DCQCN parameter: its own attribute.
void put_switch(nl::Message& msg, const Setting& s) {
    static const std::array<std::pair<const char*, uint16_t>, 5> u8_attrs = {{
        {"rp_enable", RXECC_ATTR_RP_ENABLE},
        {"np_enable", RXECC_ATTR_NP_ENABLE},
        {"ecn", RXECC_ATTR_ECN},
        {"pfc_enable", RXECC_ATTR_PFC_ENABLE},
        {"roce_prio", RXECC_ATTR_ROCE_PRIO},
    }};
    static const std::array<std::pair<const char*, uint16_t>, 4> u32_attrs = {{
        {"link_speed", RXECC_ATTR_LINK_MBPS},
        {"pfc_rx_xoff", RXECC_ATTR_PFC_RX_XOFF},
        {"pfc_rx_xon", RXECC_ATTR_PFC_RX_XON},
        {"tx_qlimit", RXECC_ATTR_TX_QLIMIT},
    }};
    for (const auto& [name, type] : u32_attrs)
        if (s.knob->name == name) msg.put_u32(type, s.value);
    for (const auto& [name, type] : u8_attrs)
        if (s.knob->name == name) msg.put_u8(type, static_cast<uint8_t>(s.value));
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

uint32_t knob_value(const Config& cfg, const Knob& knob) {
    if (knob.dcqcn_index >= 0) return cfg.dcqcn.at(static_cast<size_t>(knob.dcqcn_index));
    if (knob.name == "rp_enable") return cfg.rp_enable;
    if (knob.name == "np_enable") return cfg.np_enable;
    if (knob.name == "pfc_enable") return cfg.pfc_enable;
    if (knob.name == "roce_prio") return cfg.roce_prio;
    if (knob.name == "link_speed") return cfg.link_mbps;
    if (knob.name == "pfc_rx_xoff") return cfg.pfc_rx_xoff;
    if (knob.name == "pfc_rx_xon") return cfg.pfc_rx_xon;
    if (knob.name == "tx_qlimit") return cfg.tx_qlimit;
    return cfg.ecn;
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
        msg.put_u32(static_cast<uint16_t>(s.knob->dcqcn_index + 1), s.value);
    }
    if (nest != nullptr) msg.nest_end(nest);
    for (const auto& s : cmd.settings) put_switch(msg, s);
    if (cmd.dscp2prio_default || !cmd.dscp2prio.empty()) put_dscp_map(msg, cmd, base_map);
    return msg;
}

Config decode_config(const nlmsghdr* nlh) {
    auto tb = nl::parse(nlh, sizeof(genlmsghdr), RXECC_ATTR_MAX);
    Config c;
    if (tb[RXECC_ATTR_DEV_NAME] != nullptr) c.dev = decode_dev(tb);
    if (tb[RXECC_ATTR_LINE_KBPS] != nullptr) c.line_kbps = nl::get_u64(tb[RXECC_ATTR_LINE_KBPS]);
    if (tb[RXECC_ATTR_PROFILE] != nullptr) c.profile = nl::get_str(tb[RXECC_ATTR_PROFILE]);
    if (tb[RXECC_ATTR_RP_ENABLE] != nullptr) c.rp_enable = nl::get_u8(tb[RXECC_ATTR_RP_ENABLE]);
    if (tb[RXECC_ATTR_NP_ENABLE] != nullptr) c.np_enable = nl::get_u8(tb[RXECC_ATTR_NP_ENABLE]);
    if (tb[RXECC_ATTR_ECN] != nullptr) c.ecn = nl::get_u8(tb[RXECC_ATTR_ECN]);
    if (tb[RXECC_ATTR_PFC_ENABLE] != nullptr) c.pfc_enable = nl::get_u8(tb[RXECC_ATTR_PFC_ENABLE]);
    if (tb[RXECC_ATTR_ROCE_PRIO] != nullptr) c.roce_prio = nl::get_u8(tb[RXECC_ATTR_ROCE_PRIO]);
    if (tb[RXECC_ATTR_LINK_MBPS] != nullptr) c.link_mbps = nl::get_u32(tb[RXECC_ATTR_LINK_MBPS]);
    if (tb[RXECC_ATTR_PFC_RX_XOFF] != nullptr)
        c.pfc_rx_xoff = nl::get_u32(tb[RXECC_ATTR_PFC_RX_XOFF]);
    if (tb[RXECC_ATTR_PFC_RX_XON] != nullptr) c.pfc_rx_xon = nl::get_u32(tb[RXECC_ATTR_PFC_RX_XON]);
    if (tb[RXECC_ATTR_TX_QLIMIT] != nullptr) c.tx_qlimit = nl::get_u32(tb[RXECC_ATTR_TX_QLIMIT]);
    if (const nlattr* a = tb[RXECC_ATTR_DSCP2PRIO];
        a != nullptr && mnl_attr_get_payload_len(a) == kDscpCount) {
        const auto* p = static_cast<const uint8_t*>(mnl_attr_get_payload(a));
        c.dscp2prio.assign(p, p + kDscpCount);  // NOLINT(*-pointer-arithmetic)
    }
    c.dcqcn.assign(rxecc_dcqcn_num_params, 0);
    if (tb[RXECC_ATTR_DCQCN] != nullptr) {
        auto p = nl::parse_nested(tb[RXECC_ATTR_DCQCN], RXECC_DCQCN_A_MAX);
        for (unsigned i = 0; i < rxecc_dcqcn_num_params; ++i)
            if (p.at(i + 1) != nullptr) c.dcqcn[i] = nl::get_u32(p[i + 1]);
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

Qp decode_qp(const nlmsghdr* nlh) {
    auto tb = nl::parse(nlh, sizeof(genlmsghdr), RXECC_ATTR_MAX);
    Qp q;
    q.dev = decode_dev(tb);
    if (tb[RXECC_ATTR_QP] == nullptr) return q;
    auto t = nl::parse_nested(tb[RXECC_ATTR_QP], RXECC_QP_A_MAX);
    auto u8 = [&](size_t a) { return t.at(a) != nullptr ? nl::get_u8(t[a]) : uint8_t{0}; };
    auto u32 = [&](size_t a) { return t.at(a) != nullptr ? nl::get_u32(t[a]) : uint32_t{0}; };
    auto u64 = [&](size_t a) { return t.at(a) != nullptr ? nl::get_u64(t[a]) : uint64_t{0}; };
    q.qpn = u32(RXECC_QP_A_QPN);
    q.type = u8(RXECC_QP_A_TYPE);
    q.state = u8(RXECC_QP_A_STATE);
    q.dest_qpn = u32(RXECC_QP_A_DEST_QPN);
    q.prio = u8(RXECC_QP_A_PRIO);
    q.limited = u8(RXECC_QP_A_LIMITED) != 0;
    q.rate_kbps = u64(RXECC_QP_A_RATE_KBPS);
    q.target_kbps = u64(RXECC_QP_A_TARGET_KBPS);
    q.alpha_ppm = u32(RXECC_QP_A_ALPHA_PPM);
    q.t_stage = u32(RXECC_QP_A_T_STAGE);
    q.bc_stage = u32(RXECC_QP_A_BC_STAGE);
    q.cnp_handled = u64(RXECC_QP_A_CNP_HANDLED);
    q.cnp_sent = u64(RXECC_QP_A_CNP_SENT);
    q.tx_deferred = u64(RXECC_QP_A_TX_DEFERRED);
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
    std::string why = err.msg.empty() ? std::strerror(err.err) : err.msg;  // NOLINT(*-mt-unsafe)
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
