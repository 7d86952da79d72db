// Small statistics used by the benchmark reports and rxecc-verbs.
#pragma once

#include <cstdint>
#include <vector>

namespace rxecc::stats {

// The median of `values` (the mean of the two middle ones for an even
// count). Throws std::invalid_argument for an empty input.
[[nodiscard]] double median(std::vector<double> values);

// The nearest-rank percentile of ascending `sorted`: the smallest value with
// at least `per_mille` / 10 % of them at or below it (rank ceil(q n),
// computed exactly), as the lab's Python (lib/python/rxecc_measure.py)
// computes it. Throws std::invalid_argument for an empty input or a
// per_mille above 1000.
[[nodiscard]] uint64_t nearest_rank(const std::vector<uint64_t>& sorted, unsigned per_mille);

}  // namespace rxecc::stats
