#include "stats.hpp"

#include <algorithm>
#include <stdexcept>

namespace rxecc::stats {

double median(std::vector<double> values) {
    if (values.empty()) throw std::invalid_argument("median of no values");
    const auto n = values.size();
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
    std::nth_element(values.begin(), mid, values.end());
    if (n % 2 == 1) return *mid;
    const double upper = *mid;
    const double lower = *std::max_element(values.begin(), mid);
    return (lower + upper) / 2.0;
}

uint64_t nearest_rank(const std::vector<uint64_t>& sorted, unsigned per_mille) {
    if (sorted.empty()) throw std::invalid_argument("percentile of no values");
    if (per_mille > 1000) throw std::invalid_argument("percentile above 100 %");
    const uint64_t n = sorted.size();
    const uint64_t rank = std::max<uint64_t>((per_mille * n + 999) / 1000, 1);
    return sorted[rank - 1];
}

}  // namespace rxecc::stats
