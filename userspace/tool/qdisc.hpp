// `rxecc qdisc`: the switch-port qdisc "pfc" (sch_pfc.ko) over rtnetlink.
// include/uapi/linux/sch_pfc.h is the wire format.
#pragma once

#include <linux/sch_pfc.h>

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "errors.hpp"
#include "fields.hpp"
#include "netlink.hpp"

namespace rxecc::tool {

// One pfc qdisc as the kernel reports it.
struct QdiscInfo {
    std::string netdev;
    uint32_t ifindex = 0;
    uint32_t handle = 0;
    uint64_t rate_bps = 0;
    uint8_t enable = 0;
    uint8_t trust = 0;
    uint32_t link_speed = 0;
    uint32_t delay_ns = 0;
    uint16_t quanta = 0;
    uint32_t wd_detection_ms = 0;
    uint32_t wd_restoration_ms = 0;
    uint8_t wd_action = 0;
    uint32_t wd_poll_ms = 0;
    struct Prio {
        uint8_t id = 0;    // the priority
        bool pfc = false;  // its bit of `enable`
        uint32_t limit = 0, xoff = 0, xon = 0, headroom = 0, kmin = 0, kmax = 0, pmax = 0;
        tc_pfc_prio_stats stats{};
        tc_pfc_wd_stats wd{};  // the PFC watchdog's
    };
    std::array<Prio, TC_PFC_NUM_PRIO> prio{};
    uint64_t pfc_tx_errors = 0;
    uint64_t pfc_rx_ignored = 0;
    uint64_t pfc_rx_malformed = 0;
    uint64_t pfc_rx_rejected = 0;
    uint64_t pfc_untracked = 0;  // PFC traffic from ports past 32: never paused
    uint64_t drops = 0;          // the qdisc's own count (TCA_STATS_QUEUE)
};

// The tables of a pfc qdisc, in output order: the port's options (and its
// handle), the port's counters, each priority's options and its counters.
// Options carry their command-line keyword, unit and range.
[[nodiscard]] std::span<const Field<QdiscInfo>> qdisc_port_fields();
[[nodiscard]] std::span<const Field<QdiscInfo>> qdisc_port_stat_fields();
[[nodiscard]] std::span<const Field<QdiscInfo::Prio>> qdisc_prio_fields();
[[nodiscard]] std::span<const Field<tc_pfc_prio_stats>> qdisc_prio_stat_fields();
[[nodiscard]] std::span<const Field<tc_pfc_wd_stats>> qdisc_prio_wd_fields();

// Requests as messages (tests build and inspect them without a socket).
[[nodiscard]] nl::Message qdisc_set_request(const QdiscSpec& spec, uint32_t ifindex);
[[nodiscard]] nl::Message qdisc_del_request(uint32_t ifindex);
// A qdisc message (RTM_NEWQDISC); nullopt if it is not a root pfc qdisc.
[[nodiscard]] std::optional<QdiscInfo> decode_qdisc(const nlmsghdr* nlh);
// What a kernel error on a qdisc request means for the user.
[[nodiscard]] Error explain_qdisc(const nl::KernelError& err, const nl::Message& req,
                                  const std::string& netdev);

[[nodiscard]] nlohmann::json to_json(const QdiscInfo& q);
[[nodiscard]] std::string to_text(const std::vector<QdiscInfo>& qdiscs);

class QdiscClient {
  public:
    QdiscClient() : sock_(NETLINK_ROUTE) {}
    // Every root pfc qdisc in this network namespace, or that of `netdev`.
    [[nodiscard]] std::vector<QdiscInfo> show(const std::string& netdev);
    void set(const QdiscSpec& spec);
    void del(const std::string& netdev);

  private:
    nl::Socket sock_;
};

}  // namespace rxecc::tool
