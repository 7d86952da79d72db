// The data and the schedule of rxecc-verbs, shared by both ends of a test.
//
// Every byte a test moves is a function of (stream, position), so the side
// that receives it can check it without a copy: a message's stream is its
// sequence number, the server's RDMA READ region is the stream kReadStream.
// Which operation and size message `seq` has is a function of (seed, seq),
// so the server knows what it should receive next without being told.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace rxecc::verbs {

inline constexpr uint64_t kReadStream = ~uint64_t{0};

// Fill `buf` with the bytes of `stream` from position `pos` on.
void fill(std::span<std::byte> buf, uint64_t stream, uint64_t pos = 0);

// The index of the first byte of `buf` that differs from `stream` at `pos`,
// or nothing when all match.
std::optional<size_t> first_mismatch(std::span<const std::byte> buf, uint64_t stream,
                                     uint64_t pos = 0);

enum class Op : uint8_t {
    send,       // SEND with immediate (the payload is the message)
    write,      // RDMA WRITE into a server slot, then a SEND naming it
    write_imm,  // RDMA WRITE with immediate into a server slot
    read,       // RDMA READ of the server's read region
};

std::string_view op_name(Op op);

// What message `seq` is: its operation, its size in bytes and, for a READ,
// the offset in the server's read region.
struct Step {
    Op op;
    uint32_t size;
    uint32_t offset;
};

class Schedule {
  public:
    // `max_size` bounds every size; `read_len` is the read region's length
    // (at least max_size). With `only` set, every step has that operation;
    // with `size` set, every step has that size.
    Schedule(uint64_t seed, uint32_t max_size, uint32_t read_len,
             std::optional<Op> only = std::nullopt, std::optional<uint32_t> size = std::nullopt);

    [[nodiscard]] Step at(uint64_t seq) const;
    // Whether the server sees message `seq` (everything but a READ does).
    [[nodiscard]] bool server_visible(uint64_t seq) const { return at(seq).op != Op::read; }
    // The server-visible message after `seq` (all ones: none).
    [[nodiscard]] uint64_t next_visible(uint64_t seq) const;

    [[nodiscard]] uint32_t max_size() const { return max_size_; }

  private:
    uint64_t seed_;
    uint32_t max_size_;
    uint32_t read_len_;
    std::optional<Op> only_;
    std::optional<uint32_t> size_;
};

}  // namespace rxecc::verbs
