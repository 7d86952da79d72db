#include "collective.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace rxecc::coll {

std::string_view op_name(Op op) { return op == Op::allreduce ? "allreduce" : "alltoall"; }

Chunk chunk_of(size_t count, unsigned n, unsigned c) {
    const size_t base = count / n;
    const size_t extra = count % n;
    return {c * base + std::min<size_t>(c, extra), base + (c < extra ? 1 : 0)};
}

RingStep ring_step(unsigned rank, unsigned n, unsigned step) {
    // chunk k mod n, for k possibly below zero
    auto mod = [n](long k) {
        const long m = static_cast<long>(n);
        return static_cast<unsigned>(((k % m) + m) % m);
    };
    const long r = rank;
    const long s = step;
    if (step < n - 1) {
        // reduce-scatter: pass on the chunk reduced last; after n-1 steps
        // the rank holds chunk rank+1 summed over every rank
        return {mod(r - s), mod(r - s - 1), true};
    }
    // all-gather: pass on the last complete chunk, starting with rank+1
    const long g = s - static_cast<long>(n - 1);
    return {mod(r + 1 - g), mod(r - g), false};
}

void reduce_sum(std::span<float> dst, std::span<const float> src) {
    if (dst.size() != src.size()) throw std::invalid_argument("reduce_sum: sizes differ");
    std::transform(dst.begin(), dst.end(), src.begin(), dst.begin(), std::plus<>());
}

float allreduce_input(unsigned rank, size_t i, uint64_t iter) {
    // (rank + 1) * (1..251) + (0..6): the sum over 64 ranks stays below 2^24
    return static_cast<float>((rank + 1U) * (i % 251U + 1U) + iter % 7U);
}

float allreduce_expected(unsigned n, size_t i, uint64_t iter) {
    const uint64_t ranks = uint64_t{n} * (n + 1U) / 2U;
    return static_cast<float>(ranks * (i % 251U + 1U) + n * (iter % 7U));
}

float alltoall_value(unsigned from, unsigned to, size_t i, uint64_t iter) {
    return static_cast<float>(((from * 131U + to * 17U + i * 7U + iter * 3U) % 65521U));
}

size_t mismatches(std::span<const float> got, std::span<const float> want) {
    size_t bad = got.size() > want.size() ? got.size() - want.size() : want.size() - got.size();
    const size_t n = std::min(got.size(), want.size());
    for (size_t i = 0; i < n; ++i) bad += got[i] != want[i] ? 1 : 0;
    return bad;
}

double algbw(size_t bytes, double seconds) {
    return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0;
}

double busbw_factor(Op op, unsigned n) {
    const double d = n;
    return op == Op::allreduce ? 2.0 * (d - 1) / d : (d - 1) / d;
}

std::vector<size_t> sizes(size_t min, size_t max, unsigned n) {
    std::vector<size_t> out;
    const size_t unit = size_t{n} * sizeof(float);
    for (size_t s = std::max<size_t>(min, 1); s <= max; s *= 2) {
        const size_t r = std::max(unit, s / unit * unit);
        if (out.empty() || out.back() != r) out.push_back(r);
        if (s > max / 2) break;
    }
    return out;
}

size_t Layout::ring_slot(size_t count, unsigned step) const {
    return step * chunk_of(count, n, 0).count * sizeof(float);
}

size_t Layout::alltoall_slot(size_t count, unsigned from) const {
    return from * (count / n) * sizeof(float);
}

uint64_t config_of(Op op, unsigned n, size_t min_bytes, size_t max_bytes, unsigned iters,
                   unsigned warmup) {
    // FNV-1a over the settings
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const uint64_t v : {uint64_t{static_cast<uint8_t>(op)}, uint64_t{n}, uint64_t{min_bytes},
                             uint64_t{max_bytes}, uint64_t{iters}, uint64_t{warmup}}) {
        for (unsigned b = 0; b < 8; ++b) {
            h ^= (v >> (8 * b)) & 0xffU;
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

Timing summarize(const std::vector<std::vector<double>>& times) {
    Timing t{0, 0, 0, 0};
    if (times.empty() || times[0].empty()) return t;
    const size_t iters = times[0].size();
    double worst_mean = -1;
    for (size_t r = 0; r < times.size(); ++r) {
        const double mean =
            std::accumulate(times[r].begin(), times[r].end(), 0.0) / static_cast<double>(iters);
        t.time += mean / static_cast<double>(times.size());
        if (mean > worst_mean) {
            worst_mean = mean;
            t.slow_rank = static_cast<unsigned>(r);
        }
        t.worst = std::max(t.worst, *std::max_element(times[r].begin(), times[r].end()));
    }
    for (size_t i = 0; i < iters; ++i) {
        double m = 0;
        for (const auto& rank : times) m = std::max(m, rank.at(i));
        t.slowest += m / static_cast<double>(iters);
    }
    return t;
}

}  // namespace rxecc::coll
