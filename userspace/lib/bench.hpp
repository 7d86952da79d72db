// rdma_rxecc against stock rdma_rxe: the benchmark's samples and summary.
//
// A benchmark run leaves one perftest report per round, module and test:
//   DIR/<round>/<module>/<test>.log     (module: "rxe" or "rxecc")
// and may leave measurements of its own, one number each, lower is better:
//   DIR/<round>/<module>/<test>.value   "VALUE UNIT WHAT..." (e.g. memory per QP)
// The summary gives, per test, every round's value for each module, the
// medians and the rxecc/rxe ratio of the medians.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "perftest.hpp"

namespace rxecc::bench {

struct Sample {
    std::string round;
    std::string module;
    std::string test;
    perftest::Metric metric;
};

struct Row {
    std::string test;
    std::string column;
    std::string unit;
    bool higher_is_better{};
    std::vector<double> rxe;    // one value per round, in round order
    std::vector<double> rxecc;  // likewise
    double rxe_median{};
    double rxecc_median{};
    double ratio{};  // rxecc_median / rxe_median
};

// Read every report under `dir`. Reports without a result table are listed
// in `errors` (path: reason) and left out.
[[nodiscard]] std::vector<Sample> collect(const std::filesystem::path& dir,
                                          std::vector<std::string>& errors);

// One row per test that has at least one sample of each module, sorted by
// test name. Tests measured for one module only are listed in `errors`.
[[nodiscard]] std::vector<Row> summarize(const std::vector<Sample>& samples,
                                         std::vector<std::string>& errors);

[[nodiscard]] nlohmann::json to_json(const std::vector<Row>& rows);

// An aligned table for the terminal.
[[nodiscard]] std::string to_text(const std::vector<Row>& rows);

}  // namespace rxecc::bench
