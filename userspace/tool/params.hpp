// The knobs the tool knows: the DCQCN parameters of the module's core (their
// names, units and ranges come from its table, RXECC_DCQCN_PARAMS in
// rxecc_dcqcn.h) and the twelve per-device switches of the module's table
// (RXECC_SWITCHES in rxecc.h; knobs() lists them). Parsing of values with
// units and formatting for output.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rxecc::tool {

// How a value is written and read.
enum class Unit {
    boolean,    // 0/1, on/off, true/false, yes/no
    micros,     // microseconds: 300, 300us, 1.5ms, 2s, 4000ns
    mbps,       // Mbit/s: 5, 5mbit, 25gbit (a whole number of Mbit/s)
    kbps,       // kbit/s: 50, 50kbit, 1.5mbit, 25gbit
    units64,    // 64-byte units: 32767, or bytes with a suffix: 2MiB, 640B
    bytes,      // bytes: 65536, 64KiB, 1MB
    percent,    // 50, 50%
    plain,      // an integer in the unit named by `unit_name`
    prio_mask,  // bit p = priority p: 0xff, 255, all, none
    ecn,        // av (0), ect1 (1), ect0 (2)
    prio,       // a priority 0..7, or dscp (8): from the DSCP map
    speed,      // Mbit/s like mbps, or auto (0): the netdev's speed
    trust,      // dscp (0), pcp (1): enum tc_pfc_trust
    millis,     // milliseconds: 200, 200ms, 1.5s, 2000us (a whole number of ms)
    wd_action,  // drop (0), forward (1), alert (2): enum tc_pfc_wd_action
    udp_sport,  // flow_label (0), qpn (1): enum rxecc_udp_sport
};

// The PFC watchdog's actions by value (enum tc_pfc_wd_action).
inline constexpr std::array<std::string_view, 3> kWdActions = {"drop", "forward", "alert"};
// The UDP source port policies by value (enum rxecc_udp_sport).
inline constexpr std::array<std::string_view, 2> kUdpSports = {"flow_label", "qpn"};

// How a value travels in a netlink attribute.
enum class Wire : uint8_t { none, u8, u16, u32, u64 };

struct Knob {
    std::string name;
    Unit unit;
    std::string unit_name;  // as documented ("us", "Mbps", "64B", ...)
    uint32_t min;           // the range, in the unit; the kernel's (its policy, its table)
    uint32_t max;
    int dcqcn_index;        // index in the core's table, -1 for the switches
    uint16_t attr = 0;      // RXECC_ATTR_* of a switch (a DCQCN parameter: dcqcn_index + 1)
    Wire wire = Wire::u32;  // its width on the wire
    size_t index = 0;       // position in knobs(): a Config's values[index]
};

// Every knob, DCQCN parameters first in table order, then rp_enable,
// np_enable, ecn, pfc_enable, roce_prio, link_speed, pfc_rx_xoff, pfc_rx_xon,
// tx_qlimit, device_stall_critical_watermark, device_stall_minor_watermark,
// udp_sport.
[[nodiscard]] const std::vector<Knob>& knobs();
[[nodiscard]] const Knob* find_knob(std::string_view name);

// The profile names the module knows (mlx5, paper, lab).
[[nodiscard]] std::vector<std::string> profile_names();

// The knob that sets the same value as `knob` in a finer unit (rp_ai_rate:
// rp_ai_rate_kbps), or `knob` itself.
[[nodiscard]] const Knob& base_knob(const Knob& knob);

// A rate knob's value as a setting: a whole number of Mbit/s for a knob in
// Mbit/s stays with it, any other rate goes to its kbit/s twin.
[[nodiscard]] std::pair<const Knob*, uint32_t> parse_setting(const Knob& knob,
                                                             std::string_view text);

// Parse `text` for `knob` into the knob's own unit. Throws Error(bad_value)
// with a one-line message naming the knob for text that is no value of that
// kind, does not fit 32 bits or is outside the knob's range (min..max).
[[nodiscard]] uint32_t parse_value(const Knob& knob, std::string_view text);

// Throws Error(bad_value) "NAME: out of range MIN..MAX UNIT ('TEXT')" unless
// min <= value <= max (value in the knob's unit, `text` as the user wrote it).
void check_range(const Knob& knob, std::string_view text, uint64_t value);

// A value in its unit for people ("300 us", "0xff", "ect0", "50 %").
[[nodiscard]] std::string format_value(const Knob& knob, uint32_t value);

// A rate in kbit/s for people: "40 Gbit/s", "12.5 Mbit/s", "900 kbit/s".
[[nodiscard]] std::string format_kbps(uint64_t kbps);

}  // namespace rxecc::tool
