// The command line of rxecc-verbs.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pattern.hpp"

namespace rxecc::verbs {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Test : uint8_t { verify = 1, ping = 2 };

struct Options {
    bool server = false;
    std::string addr;  // client: the server; server: the address to bind (empty: any)
    uint16_t port = 18515;
    Test test = Test::verify;
    std::optional<Op> only;              // --op: one operation instead of the mix
    uint32_t size = 64;                  // --size: the ping's message size
    uint32_t max_size = 65536;           // --max-size: the largest verify message
    uint32_t depth = 16;                 // --depth: messages in flight
    uint64_t seed = 1;                   // --seed
    uint64_t count = 0;                  // --count: messages (0: until --duration)
    double duration = 0;                 // --duration: seconds (0: until --count)
    double timeout = 30;                 // --timeout: seconds without progress
    std::optional<uint8_t> tos;          // --tos: IP TOS (traffic class)
    std::optional<uint8_t> ack_timeout;  // --ack-timeout: the QP's local ACK timeout exponent
    // --flow-label: the IPv6 flow label (20 bits) of the client's source
    // address, which rdma_cm gives the connection's address vectors
    std::optional<uint32_t> flow_label;
    bool busy_poll = false;  // --poll busy|event (default: busy for ping)
    std::string samples;     // --samples FILE: "mono_ns rtt_ns" per message
};

// Parse argv[1..]; throws UsageError naming the bad argument.
Options parse_options(const std::vector<std::string>& args);

extern const char* const kUsage;

}  // namespace rxecc::verbs
