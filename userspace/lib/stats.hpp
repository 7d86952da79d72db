// Small statistics used by the benchmark reports and rxecc-verbs.
#pragma once

#include <cstddef>
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

// The arithmetic mean and the sample standard deviation (n - 1 in the
// denominator; 0 for fewer than two values). Throw std::invalid_argument for
// an empty input.
[[nodiscard]] double mean(const std::vector<double>& values);
[[nodiscard]] double stddev(const std::vector<double>& values);

// The 97.5th percentile of Student's t distribution with `df` degrees of
// freedom (the factor of a two-sided 95 % confidence interval): exact to
// three decimals for df 1..30 (the usual table), the Cornish-Fisher
// expansion above (error below 0.001). Throws std::invalid_argument for 0.
[[nodiscard]] double t975(std::size_t df);

// Wilcoxon's signed-rank test of paired differences: the two-sided p-value
// of the hypothesis that they are symmetric about zero. Zero differences are
// left out; tied magnitudes share their mean rank, and the p-value is exact
// for those ranks (all 2^n sign assignments counted, not the normal
// approximation). 1 when no difference is left. Throws
// std::invalid_argument for more than 200 differences.
[[nodiscard]] double wilcoxon_p(const std::vector<double>& diffs);

}  // namespace rxecc::stats
