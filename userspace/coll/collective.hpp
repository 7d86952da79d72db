// The pure parts of rxecc-coll: the ring all-reduce's schedule, the
// reduction, the data every rank contributes and what it must get back, and
// nccl-tests' bandwidth arithmetic. No RDMA here: the host tests cover it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace rxecc::coll {

enum class Op : uint8_t { allreduce, alltoall };

std::string_view op_name(Op op);

// One chunk of a buffer of `count` elements cut in `n` chunks: the first
// count % n chunks have one element more.
struct Chunk {
    size_t first;
    size_t count;
};
Chunk chunk_of(size_t count, unsigned n, unsigned c);

// The ring all-reduce of rank `rank` among `n` (n >= 2): 2(n - 1) steps,
// first a reduce-scatter (steps 0 .. n-2: the received chunk is added), then
// an all-gather (steps n-1 .. 2n-3: the received chunk is copied). At each
// step the rank sends one chunk to rank + 1 and receives one from rank - 1.
struct RingStep {
    unsigned send_chunk;
    unsigned recv_chunk;
    bool reduce;  // add the received chunk (reduce-scatter) or copy it
};
RingStep ring_step(unsigned rank, unsigned n, unsigned step);
inline unsigned ring_steps(unsigned n) { return 2 * (n - 1); }

// dst[i] += src[i]
void reduce_sum(std::span<float> dst, std::span<const float> src);

// The all-reduce's input of `rank` at element `i` in iteration `iter`, and
// the sum of all `n` ranks' inputs: small integers, exact in float.
float allreduce_input(unsigned rank, size_t i, uint64_t iter);
float allreduce_expected(unsigned n, size_t i, uint64_t iter);

// The all-to-all's element `i` of the chunk rank `from` sends rank `to`.
float alltoall_value(unsigned from, unsigned to, size_t i, uint64_t iter);

// Elements of `got` that differ from `want`.
size_t mismatches(std::span<const float> got, std::span<const float> want);

// nccl-tests' bandwidths (doc/PERFORMANCE.md), GB/s from bytes and seconds:
// algbw = bytes / time; busbw = algbw * 2(n-1)/n for all-reduce, (n-1)/n
// for all-to-all.
double algbw(size_t bytes, double seconds);
double busbw_factor(Op op, unsigned n);

// Message sizes from `min` to `max` bytes, doubling (nccl-tests' -b -e -f 2),
// each rounded down to whole elements per rank (n * 4 bytes), at least one
// element per rank.
std::vector<size_t> sizes(size_t min, size_t max, unsigned n);

// A rank's registered buffer, for messages of up to `max` bytes among `n`
// ranks: the data [0, max); the receive area, two halves of 2 max by the
// iteration's parity (a peer can be at most one iteration ahead: it cannot
// finish one without this rank's part of it); then rank 0's gather area, a
// row of iters + 1 doubles per rank (its iteration times and wrong elements).
struct Layout {
    size_t max;
    unsigned n;
    unsigned iters;
    [[nodiscard]] size_t recv(uint64_t iter) const { return max + (iter % 2) * 2 * max; }
    [[nodiscard]] size_t row() const { return (size_t{iters} + 1) * sizeof(double); }
    [[nodiscard]] size_t gather(unsigned rank) const { return 5 * max + rank * row(); }
    [[nodiscard]] size_t bytes() const { return 5 * max + n * row(); }
    // where step `step` of an all-reduce of `count` elements lands, and
    // where rank `from`'s chunk of an all-to-all does, within recv(iter)
    [[nodiscard]] size_t ring_slot(size_t count, unsigned step) const;
    [[nodiscard]] size_t alltoall_slot(size_t count, unsigned from) const;
};

// A number that stands for a run's settings: ranks compare theirs.
uint64_t config_of(Op op, unsigned n, size_t min_bytes, size_t max_bytes, unsigned iters,
                   unsigned warmup);

// The per-iteration times (seconds) of every rank: times[rank][iteration].
struct Timing {
    double time;         // nccl-tests' time: each rank's mean, averaged over ranks
    double slowest;      // the mean over iterations of the slowest rank's time
    double worst;        // the longest iteration of any rank
    unsigned slow_rank;  // the rank with the largest mean
};
Timing summarize(const std::vector<std::vector<double>>& times);

// The immediate value that tags a write: iteration (15 bits) and step; bit
// 31 stays clear for rxecc-coll's own messages.
inline uint32_t tag(uint64_t iter, unsigned step) {
    return (static_cast<uint32_t>(iter & 0x7fffU) << 16U) | (step & 0xffffU);
}

}  // namespace rxecc::coll
