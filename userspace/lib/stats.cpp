#include "stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
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

double mean(const std::vector<double>& values) {
    if (values.empty()) throw std::invalid_argument("mean of no values");
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double stddev(const std::vector<double>& values) {
    const double m = mean(values);
    if (values.size() < 2) return 0.0;
    double sum = 0.0;
    for (const double v : values) sum += (v - m) * (v - m);
    return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double t975(std::size_t df) {
    // t(0.975, df) for df = 1..30.
    static constexpr std::array<double, 30> kTable{
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df == 0) throw std::invalid_argument("t quantile with no degree of freedom");
    if (df <= kTable.size()) return kTable.at(df - 1);
    // Cornish-Fisher: the normal quantile corrected in powers of 1/df.
    constexpr double z = 1.959963984540054;
    const auto n = static_cast<double>(df);
    const double z3 = z * z * z;
    const double z5 = z3 * z * z;
    return z + (z3 + z) / (4.0 * n) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n);
}

double wilcoxon_p(const std::vector<double>& diffs) {
    if (diffs.size() > 200) throw std::invalid_argument("signed-rank test of over 200 pairs");
    std::vector<double> d;
    for (const double x : diffs) {
        if (x != 0.0) d.push_back(x);
    }
    const std::size_t n = d.size();
    if (n == 0) return 1.0;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&d](std::size_t a, std::size_t b) { return std::fabs(d[a]) < std::fabs(d[b]); });
    // Doubled ranks (integers even for shared mean ranks): a group of equal
    // magnitudes at ranks i+1..j gets i+j+1 each.
    std::vector<std::size_t> rank2(n);
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i + 1;
        while (j < n && std::fabs(d[order[j]]) == std::fabs(d[order[i]])) ++j;
        for (std::size_t k = i; k < j; ++k) rank2[order[k]] = i + j + 1;
        i = j;
    }
    std::size_t total = 0;
    std::size_t observed = 0;  // doubled sum of the positive differences' ranks
    for (std::size_t i = 0; i < n; ++i) {
        total += rank2[i];
        if (d[i] > 0) observed += rank2[i];
    }
    // ways[s]: how many sign assignments give the positive ranks the doubled sum s.
    std::vector<double> ways(total + 1, 0.0);
    ways[0] = 1.0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t s = total; s >= rank2[i]; --s) ways[s] += ways[s - rank2[i]];
    }
    const double all = std::ldexp(1.0, static_cast<int>(n));
    double low = 0.0;   // P(sum <= observed)
    double high = 0.0;  // P(sum >= observed)
    for (std::size_t s = 0; s <= total; ++s) {
        if (s <= observed) low += ways[s];
        if (s >= observed) high += ways[s];
    }
    return std::min(1.0, 2.0 * std::min(low, high) / all);
}

}  // namespace rxecc::stats
