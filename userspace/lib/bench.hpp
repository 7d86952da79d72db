// rdma_rxecc against stock rdma_rxe: the benchmark's samples and summary.
//
// A benchmark run leaves one result per trial, module and test:
//   DIR/<trial>/<module>/<test>.log     a perftest report (its headline metric)
//   DIR/<trial>/<module>/<test>.value   "VALUE UNIT WHAT...", a measurement of the
//                                       bench's own where lower is better (CPU time
//                                       per GB, memory per QP)
//   DIR/<trial>/<module>/<test>.rate    the same where higher is better (fio's MB/s)
// The modules are "rxe" (stock rdma_rxe), "rxecc" (rdma_rxecc as it loads, DCQCN
// on) and "rxecc-nocc" (rdma_rxecc with DCQCN off). The trials are paired: within
// one trial each test ran on every module back to back, so the ratio of two
// modules' values in one trial shares that moment's load on the machine.
//
// The summary gives, per test, each module's values, median and best, and per
// comparison (rxecc against rxe, and rxecc against rxecc-nocc: the cost of
// DCQCN's hooks with no congestion) the ratio of the medians, the geometric
// mean of the per-trial ratios with its 95 % confidence interval (Student's t
// on the logarithms), Wilcoxon's signed-rank p-value on them, whether a
// difference is shown (the interval excludes 1) or a 10 % difference ruled out,
// and how many trials would tell a 10 % difference at the spread seen.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "perftest.hpp"

namespace rxecc::bench {

struct Sample {
    std::string trial;
    std::string module;
    std::string test;
    perftest::Metric metric;  // kind bandwidth: higher is better
};

// The difference the bench is to tell: 10 %.
inline constexpr double kResolution = 1.10;

// What the trials say about a 10 % difference between two modules.
enum class Verdict {
    too_few,    // fewer than 3 paired trials
    better,     // the interval excludes 1, on the metric's good side
    worse,      // the interval excludes 1, on its bad side
    within_10,  // the interval contains 1 and lies inside [1/1.1, 1.1]
    undecided,  // neither: more trials needed
};

[[nodiscard]] const char* verdict_name(Verdict v);

struct Comparison {
    std::string module;    // e.g. "rxecc"
    std::string baseline;  // e.g. "rxe"
    std::size_t pairs{};   // trials with a positive value of both
    double ratio_of_medians{};
    double geo_ratio{};  // exp(mean(log(module / baseline))) over the pairs; 0 with none
    double ci_low{};     // its 95 % confidence interval; 0 and 0 with fewer than 2 pairs
    double ci_high{};
    double p_value{1.0};  // Wilcoxon signed-rank on the log ratios, two-sided; 1 with none
    // Trials for an interval of half-width ln(1.1) / 2, from the spread
    // seen: one such either excludes 1 or lies inside [1/1.1, 1.1], so a 10 %
    // difference shows or is ruled out. 0 with fewer than 2 pairs.
    std::size_t trials_to_tell{};
    // The interval lies inside [1/1.1, 1.1] (with better or worse: a
    // difference shown, and under 10 %).
    bool under_10{};
    Verdict verdict{Verdict::too_few};
};

struct Series {
    std::map<std::string, double> by_trial;
    double median{};
    double best{};  // highest or lowest, as the metric goes
};

struct Row {
    std::string test;
    std::string column;
    std::string unit;
    bool higher_is_better{};
    std::map<std::string, Series> modules;  // "rxe", "rxecc", "rxecc-nocc"
    std::vector<Comparison> comparisons;
};

// Read every result under `dir`. Files without a result are listed in
// `errors` (path: reason) and left out.
[[nodiscard]] std::vector<Sample> collect(const std::filesystem::path& dir,
                                          std::vector<std::string>& errors);

// One row per test that has samples of at least one compared pair of modules
// (rxecc and rxe, or rxecc and rxecc-nocc), sorted by test name. Other tests,
// and unknown modules, are listed in `errors`.
[[nodiscard]] std::vector<Row> summarize(const std::vector<Sample>& samples,
                                         std::vector<std::string>& errors);

// The comparison of `module` against `baseline` over the trials both have.
[[nodiscard]] Comparison compare(const Series& module, const Series& baseline,
                                 bool higher_is_better);

[[nodiscard]] nlohmann::json to_json(const std::vector<Row>& rows);

// Aligned tables for the terminal: rxecc against rxe, then the hooks' cost.
[[nodiscard]] std::string to_text(const std::vector<Row>& rows);

}  // namespace rxecc::bench
