#include "fields.hpp"

#include <array>
#include <cstdio>

#include "format.hpp"

namespace rxecc::tool {

nlohmann::json json_value(Show show, uint64_t v) {
    switch (show) {
        case Show::boolean:
        case Show::onoff:
            return v != 0;
        case Show::qp_type:
        case Show::qp_state:
        case Show::trust:
        case Show::handle:
        case Show::wd_action:
            return text_value(show, v);
        case Show::ns_as_us:
            return v / 1000;
        case Show::number:
        case Show::mask:
            break;
    }
    return v;
}

std::string text_value(Show show, uint64_t v) {
    std::array<char, 16> buf{};
    switch (show) {
        case Show::boolean:
            return v != 0 ? "yes" : "no";
        case Show::onoff:
            return v != 0 ? "on" : "off";
        case Show::mask:
            std::snprintf(buf.data(), buf.size(), "0x%02x",  // NOLINT(*-vararg): snprintf
                          static_cast<unsigned>(v));
            return buf.data();
        case Show::qp_type:
            return qp_type_name(static_cast<uint8_t>(v));
        case Show::qp_state:
            return qp_state_name(static_cast<uint8_t>(v));
        case Show::trust:
            return v == 1 ? "pcp" : "dscp";
        case Show::handle:
            std::snprintf(buf.data(), buf.size(), "%x:",  // NOLINT(*-vararg): snprintf
                          static_cast<unsigned>(v >> 16U));
            return buf.data();
        case Show::ns_as_us:
            return std::to_string(v / 1000);
        case Show::wd_action:
            return v < kWdActions.size() ? std::string(kWdActions.at(v)) : std::to_string(v);
        case Show::number:
            break;
    }
    return std::to_string(v);
}

uint64_t get_wire(const nlattr* a, Wire wire) {
    switch (wire) {
        case Wire::u8:
            return nl::get_u8(a);
        case Wire::u16:
            return nl::get_u16(a);
        case Wire::u32:
            return nl::get_u32(a);
        case Wire::u64:
            return nl::get_u64(a);
        case Wire::none:
            break;
    }
    return 0;
}

void put_wire(nl::Message& msg, uint16_t type, Wire wire, uint64_t v) {
    switch (wire) {
        case Wire::u8:
            msg.put_u8(type, static_cast<uint8_t>(v));
            break;
        case Wire::u16:
            msg.put_u16(type, static_cast<uint16_t>(v));
            break;
        case Wire::u32:
            msg.put_u32(type, static_cast<uint32_t>(v));
            break;
        case Wire::u64:
            msg.put_u64(type, v);
            break;
        case Wire::none:
            break;
    }
}

}  // namespace rxecc::tool
