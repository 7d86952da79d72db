#include "bench.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "stats.hpp"

namespace rxecc::bench {

namespace fs = std::filesystem;

namespace {

std::string fixed(double v, int digits) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(digits) << v;
    return s.str();
}

// "VALUE UNIT WHAT...": a measurement of the benchmark's own.
std::optional<perftest::Metric> read_value(const fs::path& path) {
    const auto text = perftest::read_text(path);
    if (!text) return std::nullopt;
    std::istringstream in(*text);
    double value{};
    std::string unit;
    std::string what;
    if (!(in >> value >> unit) || !std::isfinite(value)) return std::nullopt;
    std::getline(in >> std::ws, what);
    if (what.empty()) return std::nullopt;
    return perftest::Metric{perftest::Kind::latency, what, unit, value};
}

}  // namespace

std::vector<Sample> collect(const fs::path& dir, std::vector<std::string>& errors) {
    std::vector<Sample> samples;
    if (!fs::is_directory(dir)) {
        errors.push_back(dir.string() + ": not a directory");
        return samples;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        const auto ext = entry.path().extension();
        if (!entry.is_regular_file() || (ext != ".log" && ext != ".value")) continue;
        const auto rel = fs::relative(entry.path(), dir);
        std::vector<std::string> parts(rel.begin(), rel.end());
        if (parts.size() != 3) continue;  // not <round>/<module>/<test>.log
        const auto test = fs::path(parts[2]).stem().string();
        if (ext == ".value") {
            if (const auto v = read_value(entry.path())) {
                samples.push_back(Sample{parts[0], parts[1], test, *v});
            } else {
                errors.push_back(entry.path().string() + ": not 'VALUE UNIT WHAT'");
            }
            continue;
        }
        const auto text = perftest::read_text(entry.path());
        const auto table = text ? perftest::parse(*text) : std::nullopt;
        const auto metric = table ? perftest::headline(*table) : std::nullopt;
        if (!metric) {
            errors.push_back(entry.path().string() + ": no perftest result");
            continue;
        }
        samples.push_back(Sample{parts[0], parts[1], test, *metric});
    }
    std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
        return std::tie(a.test, a.module, a.round) < std::tie(b.test, b.module, b.round);
    });
    return samples;
}

std::vector<Row> summarize(const std::vector<Sample>& samples, std::vector<std::string>& errors) {
    std::map<std::string, Row> by_test;
    for (const auto& s : samples) {
        auto& row = by_test[s.test];
        row.test = s.test;
        row.column = s.metric.column;
        row.unit = s.metric.unit;
        row.higher_is_better = s.metric.kind == perftest::Kind::bandwidth;
        if (s.module == "rxe") {
            row.rxe.push_back(s.metric.value);
        } else if (s.module == "rxecc") {
            row.rxecc.push_back(s.metric.value);
        } else {
            errors.push_back(s.round + "/" + s.module + "/" + s.test + ": unknown module");
        }
    }
    std::vector<Row> rows;
    for (auto& [test, row] : by_test) {
        if (row.rxe.empty() || row.rxecc.empty()) {
            errors.push_back(test + ": needs samples of both rxe and rxecc");
            continue;
        }
        row.rxe_median = stats::median(row.rxe);
        row.rxecc_median = stats::median(row.rxecc);
        row.ratio = row.rxe_median != 0.0 ? row.rxecc_median / row.rxe_median : 0.0;
        rows.push_back(row);
    }
    return rows;
}

nlohmann::json to_json(const std::vector<Row>& rows) {
    nlohmann::json tests = nlohmann::json::object();
    for (const auto& r : rows) {
        tests[r.test] = {
            {"metric", r.column},
            {"unit", r.unit},
            {"higher_is_better", r.higher_is_better},
            {"rxe", r.rxe},
            {"rxecc", r.rxecc},
            {"rxe_median", r.rxe_median},
            {"rxecc_median", r.rxecc_median},
            {"ratio_rxecc_over_rxe", r.ratio},
        };
    }
    return nlohmann::json{{"tests", tests}};
}

std::string to_text(const std::vector<Row>& rows) {
    const std::vector<std::string> head{"test", "metric", "rdma_rxe", "rdma_rxecc", "rxecc/rxe"};
    std::vector<std::vector<std::string>> cells{head};
    for (const auto& r : rows) {
        cells.push_back({r.test, r.column, fixed(r.rxe_median, 2), fixed(r.rxecc_median, 2),
                         fixed(r.ratio, 3)});
    }
    std::vector<std::size_t> width(head.size(), 0);
    for (const auto& line : cells) {
        for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
    }
    std::ostringstream out;
    for (const auto& line : cells) {
        for (std::size_t i = 0; i < line.size(); ++i) {
            const bool numeric = i >= 2;
            out << (numeric ? std::right : std::left) << std::setw(static_cast<int>(width[i]))
                << line[i] << (i + 1 < line.size() ? "  " : "\n");
        }
    }
    return out.str();
}

}  // namespace rxecc::bench
