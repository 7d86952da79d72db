#include "pattern.hpp"

#include <array>

namespace rxecc::verbs {

namespace {

// splitmix64's finaliser: every (stream, word) gives an unrelated word.
uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31U);
}

uint64_t word(uint64_t stream, uint64_t index) { return mix(mix(stream) ^ index); }

std::byte byte_at(uint64_t w, uint64_t pos) {
    return static_cast<std::byte>((w >> ((pos & 7U) * 8U)) & 0xffU);
}

}  // namespace

void fill(std::span<std::byte> buf, uint64_t stream, uint64_t pos) {
    uint64_t w = word(stream, pos >> 3U);
    for (auto& b : buf) {
        b = byte_at(w, pos);
        if ((++pos & 7U) == 0) {
            w = word(stream, pos >> 3U);
        }
    }
}

std::optional<size_t> first_mismatch(std::span<const std::byte> buf, uint64_t stream,
                                     uint64_t pos) {
    uint64_t w = word(stream, pos >> 3U);
    for (size_t i = 0; i < buf.size(); ++i) {
        if (buf[i] != byte_at(w, pos)) {
            return i;
        }
        if ((++pos & 7U) == 0) {
            w = word(stream, pos >> 3U);
        }
    }
    return std::nullopt;
}

std::string_view op_name(Op op) {
    switch (op) {
        case Op::send:
            return "send";
        case Op::write:
            return "write";
        case Op::write_imm:
            return "write_imm";
        case Op::read:
            return "read";
    }
    return "?";
}

Schedule::Schedule(uint64_t seed, uint32_t max_size, uint32_t read_len, std::optional<Op> only,
                   std::optional<uint32_t> size)
    : seed_(seed), max_size_(max_size), read_len_(read_len), only_(only), size_(size) {}

Step Schedule::at(uint64_t seq) const {
    const uint64_t r = mix(seed_ ^ mix(seq));
    static constexpr std::array kOps{Op::send, Op::write, Op::write_imm, Op::read};
    const Op op = only_ ? *only_ : kOps.at(r & 3U);
    // Sizes: a quarter tiny (0..64 B, zero included), a quarter around
    // one MTU, half anywhere up to max_size (multi-packet messages).
    const uint64_t s = r >> 8U;
    uint64_t size = 0;
    switch ((r >> 2U) & 3U) {
        case 0:
            size = s % 65;
            break;
        case 1:
            size = 1000 + s % 3200;
            break;
        default:
            size = s % (uint64_t{max_size_} + 1);
            break;
    }
    if (size_) {
        size = *size_;
    }
    if (size > max_size_) {
        size = max_size_;
    }
    uint64_t offset = 0;
    if (op == Op::read && read_len_ > size) {
        offset = (r >> 40U) % (read_len_ - size + 1);
    }
    return {op, static_cast<uint32_t>(size), static_cast<uint32_t>(offset)};
}

uint64_t Schedule::next_visible(uint64_t seq) const {
    if (only_ == Op::read) {
        return ~uint64_t{0};  // the server sees nothing
    }
    do {
        ++seq;
    } while (!server_visible(seq));
    return seq;
}

}  // namespace rxecc::verbs
