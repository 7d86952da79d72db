// What the two ends of rxecc-verbs tell each other besides the data: the
// client's connect request (Hello, rdma_cm private data), the server's answer
// (Welcome, private data of the accept) and the control messages (Ctl, plain
// SENDs without immediate).
//
// Byte order: every field of these three is little-endian on the wire, at
// the offset its struct has here. The structs have no implicit padding (the
// static_asserts below), so on a little-endian host the wire bytes are the
// struct's own bytes. A message's number travels in the 32-bit immediate of
// a SEND or WRITE with immediate, in network byte order (big-endian, as
// ibv_send_wr's imm_data is), and is widened back to 64 bits by widen().
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <stdexcept>

#include "options.hpp"

namespace rxecc::verbs {

// A failure of the test: a verbs or rdma_cm call, a peer, a timeout.
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline constexpr uint32_t kMagic = 0x72786376;  // "rxcv"
inline constexpr uint8_t kVersion = 1;
inline constexpr uint8_t kAllOps = 0xff;  // Hello::only: the mix

// The client's connect request: what the test is, so that the server can
// derive every message from the seed (pattern.hpp).
struct Hello {
    uint32_t magic;
    uint8_t version;
    uint8_t test;  // Test (options.hpp)
    uint8_t only;  // Op (pattern.hpp), or kAllOps
    uint8_t reserved;
    uint32_t depth;
    uint32_t max_size;
    uint32_t size;  // ping size
    uint32_t pad;   // 0: seed is 8-byte aligned
    uint64_t seed;
};
inline constexpr size_t kHelloSize = 32;
static_assert(offsetof(Hello, magic) == 0);
static_assert(offsetof(Hello, version) == 4);
static_assert(offsetof(Hello, test) == 5);
static_assert(offsetof(Hello, only) == 6);
static_assert(offsetof(Hello, reserved) == 7);
static_assert(offsetof(Hello, depth) == 8);
static_assert(offsetof(Hello, max_size) == 12);
static_assert(offsetof(Hello, size) == 16);
static_assert(offsetof(Hello, pad) == 20);
static_assert(offsetof(Hello, seed) == 24);
static_assert(sizeof(Hello) == kHelloSize);

// The server's answer: where the client writes (the slots) and reads.
struct Welcome {
    uint64_t slots_addr;
    uint64_t read_addr;
    uint32_t rkey;
    uint32_t read_len;
};
inline constexpr size_t kWelcomeSize = 24;
static_assert(offsetof(Welcome, slots_addr) == 0);
static_assert(offsetof(Welcome, read_addr) == 8);
static_assert(offsetof(Welcome, rkey) == 16);
static_assert(offsetof(Welcome, read_len) == 20);
static_assert(sizeof(Welcome) == kWelcomeSize);

// A control message: notify (client: message `value` is in its slot, after
// an RDMA WRITE), fin (client: `value` is the end of the server-visible
// messages it sent) and result (server: its counts).
enum class Kind : uint32_t { notify = 1, fin = 2, result = 3 };
struct Ctl {
    uint32_t magic;
    Kind kind;
    uint64_t value;
    uint64_t msgs, bytes, corrupt, lost, dup, bad;
};
inline constexpr size_t kCtlSize = 64;
static_assert(sizeof(Kind) == 4);
static_assert(offsetof(Ctl, magic) == 0);
static_assert(offsetof(Ctl, kind) == 4);
static_assert(offsetof(Ctl, value) == 8);
static_assert(offsetof(Ctl, msgs) == 16);
static_assert(offsetof(Ctl, bytes) == 24);
static_assert(offsetof(Ctl, corrupt) == 32);
static_assert(offsetof(Ctl, lost) == 40);
static_assert(offsetof(Ctl, dup) == 48);
static_assert(offsetof(Ctl, bad) == 56);
static_assert(sizeof(Ctl) == kCtlSize);

// The connect request for the test `o` asks for.
Hello hello_for(const Options& o);

std::array<std::byte, kHelloSize> encode(const Hello& h);
std::array<std::byte, kWelcomeSize> encode(const Welcome& w);
std::array<std::byte, kCtlSize> encode(const Ctl& c);
// Decode the first bytes of `in`; throws Error when `in` is shorter.
Hello decode_hello(std::span<const std::byte> in);
Welcome decode_welcome(std::span<const std::byte> in);
Ctl decode_ctl(std::span<const std::byte> in);

// What one end checked.
struct Counts {
    uint64_t msgs = 0, bytes = 0, corrupt = 0, lost = 0, dup = 0, bad = 0;
    [[nodiscard]] bool clean() const { return corrupt == 0 && lost == 0 && dup == 0 && bad == 0; }
};

nlohmann::json to_json(const Counts& c);

// A connected QP's numbers and flow label (as ibv_query_qp reports its
// address vector) and the rdma_cm ports of its id: what the UDP source port
// of its packets is derived from.
struct QpPath {
    uint32_t qpn = 0;
    uint32_t remote_qpn = 0;
    uint32_t flow_label = 0;
    uint16_t cm_src_port = 0;
    uint16_t cm_dst_port = 0;
};

nlohmann::json to_json(const QpPath& p);
Ctl result_ctl(const Counts& c);
Counts counts_of(const Ctl& c);

// The server's READ region for messages of at most `max_size` bytes.
inline uint32_t read_len_for(uint32_t max_size) { return 2 * max_size; }
// One buffer (a WRITE slot, a receive or a send buffer) of either end.
inline uint32_t buf_size_for(uint32_t max_size) { return std::max<uint32_t>(max_size, kCtlSize); }

// The 64-bit message number nearest `near` whose low 32 bits are `imm`
// (nearest: at most 2^31 before or 2^31 - 1 after it).
uint64_t widen(uint64_t near, uint32_t imm);

}  // namespace rxecc::verbs
