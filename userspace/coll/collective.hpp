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

// The per-iteration times (seconds) of every rank: times[rank][iteration].
struct Timing {
    double time;         // nccl-tests' time: each rank's mean, averaged over ranks
    double slowest;      // the mean over iterations of the slowest rank's time
    double worst;        // the slowest rank's longest iteration
    unsigned slow_rank;  // the rank with the largest mean
};
Timing summarize(const std::vector<std::vector<double>>& times);

// The immediate value that tags a write: iteration (15 bits) and step; bit
// 31 stays clear for rxecc-coll's own messages.
inline uint32_t tag(uint64_t iter, unsigned step) {
    return (static_cast<uint32_t>(iter & 0x7fffU) << 16U) | (step & 0xffffU);
}

}  // namespace rxecc::coll
