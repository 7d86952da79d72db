#include "protocol.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace rxecc::verbs {

namespace {

// Little-endian, at `off`.
template <typename T>
void put(std::span<std::byte> out, size_t off, T v) {
    const auto u = static_cast<uint64_t>(v);
    for (size_t i = 0; i < sizeof(T); ++i) {
        out[off + i] = static_cast<std::byte>((u >> (8U * i)) & 0xffU);
    }
}

template <typename T>
T get(std::span<const std::byte> in, size_t off) {
    uint64_t u = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
        u |= uint64_t{std::to_integer<uint8_t>(in[off + i])} << (8U * i);
    }
    return static_cast<T>(u);
}

void need(std::span<const std::byte> in, size_t size, const char* what) {
    if (in.size() < size) {
        throw Error(std::string(what) + " of " + std::to_string(in.size()) + " bytes, not " +
                    std::to_string(size));
    }
}

}  // namespace

Hello hello_for(const Options& o) {
    return {kMagic,
            kVersion,
            static_cast<uint8_t>(o.test),
            o.only ? static_cast<uint8_t>(*o.only) : kAllOps,
            0,
            o.depth,
            o.max_size,
            o.test == Test::ping ? o.size : 0,
            0,
            o.seed};
}

std::array<std::byte, kHelloSize> encode(const Hello& h) {
    std::array<std::byte, kHelloSize> out{};
    put(out, offsetof(Hello, magic), h.magic);
    put(out, offsetof(Hello, version), h.version);
    put(out, offsetof(Hello, test), h.test);
    put(out, offsetof(Hello, only), h.only);
    put(out, offsetof(Hello, reserved), h.reserved);
    put(out, offsetof(Hello, depth), h.depth);
    put(out, offsetof(Hello, max_size), h.max_size);
    put(out, offsetof(Hello, size), h.size);
    put(out, offsetof(Hello, pad), h.pad);
    put(out, offsetof(Hello, seed), h.seed);
    return out;
}

std::array<std::byte, kWelcomeSize> encode(const Welcome& w) {
    std::array<std::byte, kWelcomeSize> out{};
    put(out, offsetof(Welcome, slots_addr), w.slots_addr);
    put(out, offsetof(Welcome, read_addr), w.read_addr);
    put(out, offsetof(Welcome, rkey), w.rkey);
    put(out, offsetof(Welcome, read_len), w.read_len);
    return out;
}

std::array<std::byte, kCtlSize> encode(const Ctl& c) {
    std::array<std::byte, kCtlSize> out{};
    put(out, offsetof(Ctl, magic), c.magic);
    put(out, offsetof(Ctl, kind), static_cast<uint32_t>(c.kind));
    put(out, offsetof(Ctl, value), c.value);
    put(out, offsetof(Ctl, msgs), c.msgs);
    put(out, offsetof(Ctl, bytes), c.bytes);
    put(out, offsetof(Ctl, corrupt), c.corrupt);
    put(out, offsetof(Ctl, lost), c.lost);
    put(out, offsetof(Ctl, dup), c.dup);
    put(out, offsetof(Ctl, bad), c.bad);
    return out;
}

Hello decode_hello(std::span<const std::byte> in) {
    need(in, kHelloSize, "a connect request");
    Hello h{};
    h.magic = get<uint32_t>(in, offsetof(Hello, magic));
    h.version = get<uint8_t>(in, offsetof(Hello, version));
    h.test = get<uint8_t>(in, offsetof(Hello, test));
    h.only = get<uint8_t>(in, offsetof(Hello, only));
    h.reserved = get<uint8_t>(in, offsetof(Hello, reserved));
    h.depth = get<uint32_t>(in, offsetof(Hello, depth));
    h.max_size = get<uint32_t>(in, offsetof(Hello, max_size));
    h.size = get<uint32_t>(in, offsetof(Hello, size));
    h.pad = get<uint32_t>(in, offsetof(Hello, pad));
    h.seed = get<uint64_t>(in, offsetof(Hello, seed));
    return h;
}

Welcome decode_welcome(std::span<const std::byte> in) {
    need(in, kWelcomeSize, "a connect answer");
    Welcome w{};
    w.slots_addr = get<uint64_t>(in, offsetof(Welcome, slots_addr));
    w.read_addr = get<uint64_t>(in, offsetof(Welcome, read_addr));
    w.rkey = get<uint32_t>(in, offsetof(Welcome, rkey));
    w.read_len = get<uint32_t>(in, offsetof(Welcome, read_len));
    return w;
}

Ctl decode_ctl(std::span<const std::byte> in) {
    need(in, kCtlSize, "a control message");
    Ctl c{};
    c.magic = get<uint32_t>(in, offsetof(Ctl, magic));
    c.kind = static_cast<Kind>(get<uint32_t>(in, offsetof(Ctl, kind)));
    c.value = get<uint64_t>(in, offsetof(Ctl, value));
    c.msgs = get<uint64_t>(in, offsetof(Ctl, msgs));
    c.bytes = get<uint64_t>(in, offsetof(Ctl, bytes));
    c.corrupt = get<uint64_t>(in, offsetof(Ctl, corrupt));
    c.lost = get<uint64_t>(in, offsetof(Ctl, lost));
    c.dup = get<uint64_t>(in, offsetof(Ctl, dup));
    c.bad = get<uint64_t>(in, offsetof(Ctl, bad));
    return c;
}

nlohmann::json to_json(const Counts& c) {
    return {{"messages", c.msgs}, {"bytes", c.bytes},    {"corrupt", c.corrupt},
            {"lost", c.lost},     {"duplicated", c.dup}, {"bad_completions", c.bad}};
}

nlohmann::json to_json(const QpPath& p) {
    return {{"qpn", p.qpn},
            {"remote_qpn", p.remote_qpn},
            {"flow_label", p.flow_label},
            {"cm_src_port", p.cm_src_port},
            {"cm_dst_port", p.cm_dst_port}};
}

Ctl result_ctl(const Counts& c) {
    return {kMagic, Kind::result, 0, c.msgs, c.bytes, c.corrupt, c.lost, c.dup, c.bad};
}

Counts counts_of(const Ctl& c) { return {c.msgs, c.bytes, c.corrupt, c.lost, c.dup, c.bad}; }

uint64_t widen(uint64_t near, uint32_t imm) {
    const auto d = static_cast<int32_t>(imm - static_cast<uint32_t>(near));
    return near + static_cast<uint64_t>(static_cast<int64_t>(d));
}

}  // namespace rxecc::verbs
