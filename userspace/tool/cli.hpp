// The command line of `rxecc`, parsed into a Command (no I/O here).
#pragma once

#include <linux/sch_pfc.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "params.hpp"

namespace rxecc::tool {

enum class Verb {
    help,
    version,
    dcqcn_show,
    dcqcn_set,
    dcqcn_profile,
    stats_show,
    stats_reset,
    qp_show,
    monitor,
    qdisc_show,
    qdisc_set,  // add, change, replace
    qdisc_del,
    metrics,
};

// `rxecc qdisc ...`: the switch-port qdisc sch_pfc (include/uapi/linux/sch_pfc.h).
// Unset values keep the qdisc's (or its defaults on add). Values by
// attribute, as the kernel takes them (qdisc.hpp's tables say which).
struct QdiscPrio {
    std::array<std::optional<uint32_t>, TCA_PFC_PRIO_MAX + 1> opt{};  // by TCA_PFC_PRIO_*
};

struct QdiscSpec {
    enum class Op { add, change, replace } op = Op::add;
    std::string netdev;
    std::array<std::optional<uint64_t>, TCA_PFC_MAX + 1> opt{};  // by TCA_PFC_*
    std::array<QdiscPrio, TC_PFC_NUM_PRIO> prio{};
};

constexpr size_t kDscpCount = 64;

struct Setting {
    const Knob* knob;
    uint32_t value;
};

struct Command {
    Verb verb = Verb::help;
    bool json = false;
    bool pretty = false;
    std::string netns;               // -n NAME: enter /run/netns/NAME first ("" none)
    std::optional<std::string> dev;  // `dev NAME`
    bool defaults = false;           // `defaults` instead of a device
    std::vector<Setting> settings;   // dcqcn set
    // dcqcn set dscp2prio D:P,...: entries to change; `default`: the
    // DSCP's top three bits again (then the entries on top)
    std::vector<std::pair<uint8_t, uint8_t>> dscp2prio;
    bool dscp2prio_default = false;
    std::string profile;            // dcqcn profile
    uint32_t profile_kbps = 0;      // dcqcn profile ... scale RATE (0: not scaled)
    uint32_t profile_speedup = 0;   // ... speedup N (0: not given)
    uint32_t interval_ms = 1000;    // monitor
    std::optional<uint32_t> count;  // monitor: stop after this many refreshes
    QdiscSpec qdisc;                // qdisc add/change/replace (netdev also for show, del)
    bool openmetrics = false;       // metrics: OpenMetrics instead of format 0.0.4
    std::string help_topic;         // help: "", "dcqcn", "stats", "qp", "monitor"
};

// Parse the arguments after the program name. Throws Error(usage) for bad
// syntax, Error(unknown_param) and Error(bad_value) for settings.
[[nodiscard]] Command parse_command(std::span<const std::string> argv);

// The help text of a topic ("" for the overview).
[[nodiscard]] std::string help_text(std::string_view topic);

}  // namespace rxecc::tool
