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

}  // namespace rxecc::stats
