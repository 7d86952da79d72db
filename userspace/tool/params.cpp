#include "params.hpp"

#include <rdma/rxecc_netlink.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>
#include <utility>

#include "dcqcn_core.hpp"
#include "errors.hpp"

namespace rxecc::tool {
namespace {

// NOLINTNEXTLINE(modernize-use-using): __extension__ needs typedef
__extension__ typedef unsigned __int128 u128;

Unit unit_of(std::string_view u) {
    if (u == "bool") return Unit::boolean;
    if (u == "us") return Unit::micros;
    if (u == "Mbps") return Unit::mbps;
    if (u == "kbps") return Unit::kbps;
    if (u == "64B") return Unit::units64;
    if (u == "%") return Unit::percent;
    return Unit::plain;
}

std::vector<Knob> make_knobs() {
    std::vector<Knob> all;
    for (unsigned int i = 0; i < rxecc_dcqcn_num_params; ++i) {
        const auto& d = rxecc_dcqcn_param_descs[i];
        all.push_back({d.name, unit_of(d.unit), d.unit, d.min, d.max, static_cast<int>(i),
                       static_cast<uint16_t>(i + 1)});
    }
    // The switches: ranges of the kernel's policy (rxecc_nl.c).
    all.push_back(
        {"rp_enable", Unit::prio_mask, "prio mask", 0, 0xff, -1, RXECC_ATTR_RP_ENABLE, Wire::u8});
    all.push_back(
        {"np_enable", Unit::prio_mask, "prio mask", 0, 0xff, -1, RXECC_ATTR_NP_ENABLE, Wire::u8});
    all.push_back({"ecn", Unit::ecn, "av|ect1|ect0", 0, 2, -1, RXECC_ATTR_ECN, Wire::u8});
    all.push_back(
        {"pfc_enable", Unit::prio_mask, "prio mask", 0, 0xff, -1, RXECC_ATTR_PFC_ENABLE, Wire::u8});
    all.push_back({"roce_prio", Unit::prio, "prio|dscp", 0, RXECC_ROCE_PRIO_DSCP, -1,
                   RXECC_ATTR_ROCE_PRIO, Wire::u8});
    all.push_back({"link_speed", Unit::speed, "Mbps|auto", 0, 1000000, -1, RXECC_ATTR_LINK_SPEED});
    all.push_back({"pfc_rx_xoff", Unit::micros, "us", 0, 1000000, -1, RXECC_ATTR_PFC_RX_XOFF});
    all.push_back({"pfc_rx_xon", Unit::micros, "us", 0, 1000000, -1, RXECC_ATTR_PFC_RX_XON});
    all.push_back({"tx_qlimit", Unit::bytes, "bytes", 0, 1U << 30U, -1, RXECC_ATTR_TX_QLIMIT});
    // mlx5's names; 0 or 80..8000 ms (the kernel refuses 1..79 with its reason)
    all.push_back({"device_stall_critical_watermark", Unit::millis, "ms", 0, 8000, -1,
                   RXECC_ATTR_PFC_STALL_CRITICAL});
    all.push_back({"device_stall_minor_watermark", Unit::millis, "ms", 0, 8000, -1,
                   RXECC_ATTR_PFC_STALL_MINOR});
    all.push_back({"udp_sport", Unit::udp_sport, "flow_label|qpn", 0, RXECC_UDP_SPORT_QPN, -1,
                   RXECC_ATTR_UDP_SPORT, Wire::u8});
    for (size_t i = 0; i < all.size(); ++i) all[i].index = i;
    return all;
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

[[noreturn]] void bad(const Knob& knob, std::string_view text, std::string_view expected) {
    throw Error(Exit::bad_value,
                knob.name + ": '" + std::string(text) + "' is not " + std::string(expected));
}

// A decimal number with an optional fraction ("1.25" = 125/100), or a
// hexadecimal integer ("0x1f"); the rest of the text is its suffix.
struct Number {
    u128 num = 0;
    u128 den = 1;
    std::string suffix;
};

std::optional<Number> split_number(std::string_view text) {
    Number n;
    size_t i = 0;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), v, 16);
        if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
        n.num = v;
        return n;
    }
    constexpr u128 kMaxDen = 1000000000000000000ULL;  // 10^18
    bool digits = false;
    bool dot = false;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (c >= '0' && c <= '9') {
            if (n.num > std::numeric_limits<uint64_t>::max()) return std::nullopt;
            n.num = n.num * 10 + static_cast<unsigned>(c - '0');
            // at most 18 decimals: the denominator stays below 10^19, and
            // with any factor and divisor of a unit within 128 bits
            if (dot && (n.den *= 10) > kMaxDen) return std::nullopt;
            digits = true;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    if (!digits) return std::nullopt;
    n.suffix = lower(text.substr(i));
    return n;
}

// num/den * factor / divisor as an exact 32-bit integer, if it is one.
std::optional<uint32_t> scale(const Number& n, uint64_t factor, uint64_t divisor) {
    const u128 top = n.num * factor;
    const u128 bottom = n.den * divisor;
    if (top % bottom != 0) return std::nullopt;
    const u128 v = top / bottom;
    if (v > std::numeric_limits<uint32_t>::max()) return std::nullopt;
    return static_cast<uint32_t>(v);
}

using Suffixes = std::vector<std::pair<std::string_view, uint64_t>>;

// Rates in kbit/s; `bare` is what a number without a unit counts.
Suffixes rate_suffixes(uint64_t bare) {
    return {{"", bare}, {"kbit", 1}, {"mbit", 1000}, {"gbit", 1000000}, {"tbit", 1000000000}};
}

// B, KB, KiB, MB, MiB, GB, GiB; with @bare, a number without a suffix too.
Suffixes byte_suffixes(bool bare) {
    Suffixes s = {{"b", 1},         {"kb", 1000},       {"kib", 1024},      {"mb", 1000000},
                  {"mib", 1048576}, {"gb", 1000000000}, {"gib", 1073741824}};
    if (bare) s.emplace_back("", 1);
    return s;
}

uint32_t parse_scaled(const Knob& knob, std::string_view text, const Suffixes& suffixes,
                      uint64_t divisor, std::string_view expected) {
    auto n = split_number(text);
    if (!n) bad(knob, text, expected);
    for (const auto& [suffix, factor] : suffixes) {
        if (n->suffix != suffix) continue;
        if (auto v = scale(*n, factor, divisor)) return *v;
        bad(knob, text, std::string(expected) + " (a whole number of its unit, 32 bits)");
    }
    bad(knob, text, expected);
}

uint32_t parse_prio_mask(const Knob& knob, std::string_view text, const std::string& t) {
    if (t == "all") return 0xff;
    if (t == "none") return 0;
    // mlnx_qos style: eight flags, priority 0 first ("0,0,0,1,0,0,0,0")
    if (t.size() == 15 && std::count(t.begin(), t.end(), ',') == 7) {
        uint32_t mask = 0;
        for (size_t p = 0; p < 8; ++p) {
            const char c = t[2 * p];
            if ((c != '0' && c != '1') || (p < 7 && t[2 * p + 1] != ','))
                bad(knob, text, "eight 0/1 flags, priority 0 first");
            if (c == '1') mask |= 1U << p;
        }
        return mask;
    }
    return parse_scaled(knob, text, {{"", 1}}, 1,
                        "a priority mask (0x00..0xff, bit p = priority p; all, none; "
                        "or eight flags 0,0,0,1,0,0,0,0)");
}

// The index of `t` (lower case) in `words`.
template <size_t N>
uint32_t parse_word(const Knob& knob, std::string_view text, const std::string& t,
                    const std::array<std::string_view, N>& words, std::string_view expected) {
    for (size_t i = 0; i < N; ++i)
        if (t == words.at(i)) return static_cast<uint32_t>(i);
    bad(knob, text, expected);
}

uint32_t parse_prio(const Knob& knob, std::string_view text, const std::string& t) {
    if (t == "dscp") return 8;
    if (t.size() == 1 && t[0] >= '0' && t[0] <= '7') return static_cast<uint32_t>(t[0] - '0');
    bad(knob, text, "a priority (0..7) or dscp");
}

}  // namespace

const std::vector<Knob>& knobs() {
    static const std::vector<Knob> all = make_knobs();
    return all;
}

const Knob* find_knob(std::string_view name) {
    for (const auto& k : knobs())
        if (k.name == name) return &k;
    return nullptr;
}

const Knob& base_knob(const Knob& knob) {
    if (knob.dcqcn_index < 0) return knob;
    const auto base = rxecc_dcqcn_param_base(static_cast<unsigned int>(knob.dcqcn_index));
    return knobs().at(base);
}

std::pair<const Knob*, uint32_t> parse_setting(const Knob& knob, std::string_view text) {
    const Knob& base = base_knob(knob);
    if (knob.unit != Unit::mbps || &base == &knob) return {&knob, parse_value(knob, text)};
    // In kbit/s, a bare number in Mbit/s.
    const uint32_t kbps = parse_scaled(knob, text, rate_suffixes(1000), 1,
                                       "a rate (Mbit/s by default; kbit, mbit, gbit, tbit)");
    if (kbps % 1000 == 0) {
        check_range(knob, text, kbps / 1000);
        return {&knob, kbps / 1000};
    }
    check_range(base, text, kbps);
    return {&base, kbps};
}

std::vector<std::string> profile_names() {
    std::vector<std::string> names;
    for (const char* name : rxecc_dcqcn_profile_names) names.emplace_back(name);
    return names;
}

void check_range(const Knob& knob, std::string_view text, uint64_t value) {
    if (value >= knob.min && value <= knob.max) return;
    // As the kernel says it ("rp_gd: out of range 0..15 log2"), with the value.
    auto bound = [&](uint32_t v) {
        return knob.unit == Unit::speed ? std::to_string(v) : format_value(knob, v);
    };
    throw Error(Exit::bad_value, knob.name + ": out of range " + bound(knob.min) + ".." +
                                     bound(knob.max) + " " + knob.unit_name + " ('" +
                                     std::string(text) + "')");
}

namespace {

uint32_t parse_unchecked(const Knob& knob, std::string_view text) {
    const std::string t = lower(text);
    switch (knob.unit) {
        case Unit::boolean:
            if (t == "1" || t == "on" || t == "true" || t == "yes") return 1;
            if (t == "0" || t == "off" || t == "false" || t == "no") return 0;
            bad(knob, text, "a boolean (on/off, 1/0)");
        case Unit::micros:
            return parse_scaled(
                knob, text,
                {{"", 1000}, {"us", 1000}, {"ns", 1}, {"ms", 1000000}, {"s", 1000000000}}, 1000,
                "a time (us by default; ns, us, ms, s)");
        case Unit::mbps:
            return parse_scaled(knob, text, rate_suffixes(1000), 1000,
                                "a rate (Mbit/s by default; kbit, mbit, gbit, tbit)");
        case Unit::kbps:
            return parse_scaled(knob, text, rate_suffixes(1), 1,
                                "a rate (kbit/s by default; kbit, mbit, gbit, tbit)");
        case Unit::units64: {
            auto n = split_number(text);
            if (n && n->suffix.empty()) return parse_scaled(knob, text, {{"", 1}}, 1, "");
            return parse_scaled(knob, text, byte_suffixes(false), 64,
                                "a byte count (64-byte units by default; B, KB, KiB, MB, MiB, GB, "
                                "GiB: a multiple of 64 B)");
        }
        case Unit::bytes:
            return parse_scaled(knob, text, byte_suffixes(true), 1,
                                "a byte count (B, KB, KiB, MB, MiB, GB, GiB)");
        case Unit::percent:
            return parse_scaled(knob, text, {{"", 1}, {"%", 1}}, 1, "a percentage");
        case Unit::plain:
            return parse_scaled(knob, text, {{"", 1}}, 1, "an integer (" + knob.unit_name + ")");
        case Unit::prio_mask:
            return parse_prio_mask(knob, text, t);
        case Unit::prio:
            return parse_prio(knob, text, t);
        case Unit::speed:
            if (t == "auto") return 0;
            return parse_scaled(knob, text, rate_suffixes(1000), 1000,
                                "a speed (Mbit/s by default; kbit, mbit, gbit, tbit; auto)");
        case Unit::ecn:
            if (t == "av" || t == "off" || t == "0") return 0;
            if (t == "ect1" || t == "1") return 1;
            if (t == "ect0" || t == "2") return 2;
            bad(knob, text, "an ECN mode (av, ect1, ect0)");
        case Unit::trust:
            if (t == "dscp") return 0;
            if (t == "pcp") return 1;
            bad(knob, text, "dscp or pcp");
        case Unit::millis:
            return parse_scaled(knob, text, {{"", 1000}, {"ms", 1000}, {"s", 1000000}, {"us", 1}},
                                1000, "a time (ms by default; us, ms, s)");
        case Unit::wd_action:
            return parse_word(knob, text, t, kWdActions,
                              "a watchdog action (drop, forward, alert)");
        case Unit::udp_sport:
            return parse_word(knob, text, t, kUdpSports, "a source port policy (flow_label, qpn)");
    }
    bad(knob, text, "a value");
}

}  // namespace

uint32_t parse_value(const Knob& knob, std::string_view text) {
    const uint32_t v = parse_unchecked(knob, text);
    check_range(knob, text, v);
    return v;
}

std::string format_value(const Knob& knob, uint32_t value) {
    static constexpr std::array<const char*, 3> ecn_names = {"av", "ect1", "ect0"};
    switch (knob.unit) {
        case Unit::prio_mask: {
            std::array<char, 8> buf{};
            std::snprintf(buf.data(), buf.size(), "0x%02x", value);  // NOLINT(*-vararg): snprintf
            return buf.data();
        }
        case Unit::ecn:
            if (value < ecn_names.size()) return ecn_names.at(value);
            break;
        case Unit::prio:
            return value == 8 ? "dscp" : std::to_string(value);
        case Unit::speed:
            return value == 0 ? "auto" : std::to_string(value);
        case Unit::trust:
            return value == 0 ? "dscp" : value == 1 ? "pcp" : std::to_string(value);
        case Unit::wd_action:
            if (value < kWdActions.size()) return std::string(kWdActions.at(value));
            break;
        case Unit::udp_sport:
            if (value < kUdpSports.size()) return std::string(kUdpSports.at(value));
            break;
        default:
            break;
    }
    return std::to_string(value);
}

std::string format_kbps(uint64_t kbps) {
    struct Step {
        uint64_t div;
        const char* unit;
    };
    static constexpr std::array<Step, 3> steps = {
        {{1000000000, "Tbit/s"}, {1000000, "Gbit/s"}, {1000, "Mbit/s"}}};
    for (const auto& s : steps) {
        if (kbps < s.div) continue;
        std::array<char, 32> buf{};
        const double v = static_cast<double>(kbps) / static_cast<double>(s.div);
        std::snprintf(buf.data(), buf.size(), "%.4g %s", v, s.unit);  // NOLINT(*-vararg): snprintf
        return buf.data();
    }
    return std::to_string(kbps) + " kbit/s";
}

}  // namespace rxecc::tool
