// The fields of the objects the tool reads (per-QP state, a pfc qdisc's
// options and statistics): one table per object names each field once, with
// its netlink attribute, its width and how it is shown, and drives decoding,
// JSON and text output alike. As iproute2's print_*(PRINT_ANY, key, ...):
// a field is printed under one name, its `key`, in both outputs; the text
// shows the same value as the JSON, in the unit the key names (booleans and
// enumerations as words). The device settings are the knobs of params.hpp.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "netlink.hpp"
#include "params.hpp"

namespace rxecc::tool {

// How a field's value is shown (JSON / text).
enum class Show : uint8_t {
    number,     // a number / the same number
    boolean,    // true, false / yes, no
    onoff,      // true, false / on, off
    mask,       // a number / 0x08
    qp_type,    // "RC" / RC (enum ib_qp_type)
    qp_state,   // "RTS" / RTS (enum ib_qp_state)
    trust,      // "dscp" / dscp (enum tc_pfc_trust)
    handle,     // "8001:" / 8001: (a qdisc handle, as tc writes it)
    ns_as_us,   // nanoseconds shown as whole microseconds (a key ending in _us)
    wd_action,  // "drop" / drop (enum tc_pfc_wd_action)
};

[[nodiscard]] nlohmann::json json_value(Show show, uint64_t v);
[[nodiscard]] std::string text_value(Show show, uint64_t v);

// An attribute's value by its width, and the other way.
[[nodiscard]] uint64_t get_wire(const nlattr* a, Wire wire);
void put_wire(nl::Message& msg, uint16_t type, Wire wire, uint64_t v);

template <typename T>
struct Field {
    std::string_view key;    // JSON key and text label
    uint16_t attr = 0;       // netlink attribute (0: none, filled in otherwise)
    Wire wire = Wire::none;  // its width
    Show show = Show::number;
    uint64_t (*get)(const T&) = nullptr;
    void (*set)(T&, uint64_t) = nullptr;
    // A field the command line sets: its keyword, how its value is read
    // (unit and range, as a knob's) and the attribute's value per unit.
    std::string_view option = {};
    Unit unit = Unit::plain;
    std::string_view unit_name = {};
    uint32_t min = 0;
    uint32_t max = 0;
    uint64_t scale = 1;

    [[nodiscard]] constexpr Field settable(std::string_view opt, Unit u, std::string_view uname,
                                           uint32_t lo, uint32_t hi, uint64_t per = 1) const {
        Field f = *this;
        f.option = opt;
        f.unit = u;
        f.unit_name = uname;
        f.min = lo;
        f.max = hi;
        f.scale = per;
        return f;
    }
    // The option's value as the attribute's (Error(bad_value) naming the
    // option for text that is no such value or outside min..max).
    [[nodiscard]] uint64_t parse(std::string_view text) const {
        const Knob k{std::string(option), unit, std::string(unit_name), min, max, -1};
        return uint64_t{parse_value(k, text)} * scale;
    }
};

namespace detail {
template <typename C, typename V>
C class_of(V C::*);
}  // namespace detail

// The field of member M (of any integer or bool type).
template <auto M>
constexpr auto member(std::string_view key, uint16_t attr, Wire wire, Show show = Show::number) {
    using C = decltype(detail::class_of(M));
    using V = std::remove_cvref_t<decltype(std::declval<C&>().*M)>;
    return Field<C>{key,
                    attr,
                    wire,
                    show,
                    [](const C& o) { return static_cast<uint64_t>(o.*M); },
                    [](C& o, uint64_t v) { o.*M = static_cast<V>(v); }};
}

// Every field of `fields` that `t` (attributes by type) holds, into `obj`.
template <typename T>
void decode_fields(const nl::Table& t, std::span<const Field<T>> fields, T& obj) {
    for (const auto& f : fields)
        if (f.attr != 0 && f.attr < t.size() && t[f.attr] != nullptr)
            f.set(obj, get_wire(t[f.attr], f.wire));
}

// The header row of a text table (the keys) and one object's row.
template <typename T>
std::vector<std::string> text_header(std::span<const Field<T>> fields) {
    std::vector<std::string> out;
    for (const auto& f : fields) out.emplace_back(f.key);
    return out;
}

template <typename T>
std::vector<std::string> text_row(std::span<const Field<T>> fields, const T& obj) {
    std::vector<std::string> out;
    for (const auto& f : fields) out.push_back(text_value(f.show, f.get(obj)));
    return out;
}

// "key value key value ...": one line of fields.
template <typename T>
std::string text_pairs(std::span<const Field<T>> fields, const T& obj) {
    std::string out;
    for (const auto& f : fields)
        out += (out.empty() ? "" : " ") + std::string(f.key) + " " + text_value(f.show, f.get(obj));
    return out;
}

// Numbers right-aligned in a text table.
template <typename T>
std::vector<bool> text_right(std::span<const Field<T>> fields) {
    std::vector<bool> out;
    for (const auto& f : fields) out.push_back(f.show == Show::number || f.show == Show::ns_as_us);
    return out;
}

}  // namespace rxecc::tool
