// Small statistics used by the benchmark reports.
#pragma once

#include <vector>

namespace rxecc::stats {

// The median of `values` (the mean of the two middle ones for an even
// count). Throws std::invalid_argument for an empty input.
[[nodiscard]] double median(std::vector<double> values);

}  // namespace rxecc::stats
