// The server of rxecc-verbs: it accepts one client, checks every message the
// client sends (its bytes, its shape and its place in the order) and
// acknowledges it, answers the client's FIN with its counts and prints them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "options.hpp"
#include "pattern.hpp"
#include "protocol.hpp"

namespace rxecc::verbs {

// Layout of the server's buffer: the WRITE slots, the READ region, the
// receive buffers, the send (acknowledgement) buffers, one per send-queue
// entry.
struct ServerLayout {
    uint32_t depth, slot, read_len;
    [[nodiscard]] uint32_t sq() const { return 2 * depth + 2; }
    [[nodiscard]] size_t slot_off(uint64_t seq) const { return (seq % depth) * slot; }
    [[nodiscard]] size_t read_off() const { return size_t{depth} * slot; }
    [[nodiscard]] size_t recv_off(uint64_t i) const { return read_off() + read_len + i * slot; }
    [[nodiscard]] size_t send_off(uint64_t i) const { return recv_off(depth) + (i % sq()) * slot; }
    [[nodiscard]] size_t total() const { return send_off(0) + size_t{sq()} * slot; }
};

// The layout for the test a (checked) Hello asks for.
ServerLayout server_layout(const Hello& h);

// `h` if it is a request of this program's version with parameters in
// range; else throws Error.
Hello check_hello(const Hello& h);

// The server's account of the order of messages: which server-visible
// message it expects next, and how many never arrived (lost) or arrived
// again (duplicated). Message numbers only grow: one after a gap counts the
// server-visible messages it skipped as lost, one before the message
// expected counts as a duplicate. A message overtaken by a later one is thus
// one lost and, when it arrives, one duplicate.
class Arrivals {
  public:
    // `sched` (the test's schedule) must outlive this.
    explicit Arrivals(const Schedule& sched);

    [[nodiscard]] uint64_t expected() const { return expected_; }
    // Message `seq` arrived: false for a duplicate, which changes nothing
    // else; otherwise the messages skipped count as lost and the next one
    // expected is the server-visible message after `seq`.
    bool arrive(uint64_t seq);
    // The client's FIN: it sent the server-visible messages before `end`;
    // those still expected count as lost.
    void finish(uint64_t end);

    [[nodiscard]] uint64_t lost() const { return lost_; }
    [[nodiscard]] uint64_t duplicated() const { return dup_; }

  private:
    void skip_to(uint64_t seq);

    const Schedule* sched_;
    uint64_t expected_;
    uint64_t lost_ = 0, dup_ = 0;
};

// Listen on o.addr and o.port, serve one client; the exit code (0: all
// clean, 1: not). Throws on any other failure, among them no client within
// o.timeout.
int run_server(const Options& o);

}  // namespace rxecc::verbs
