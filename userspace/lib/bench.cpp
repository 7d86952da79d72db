#include "bench.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include "stats.hpp"

namespace rxecc::bench {

namespace fs = std::filesystem;

namespace {

// The modules a bench run measures, and what is compared with what.
constexpr std::array<std::string_view, 3> kModules{"rxe", "rxecc", "rxecc-nocc"};
constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kComparisons{{
    {"rxecc", "rxe"},
    {"rxecc", "rxecc-nocc"},
}};
constexpr std::size_t kMinPairs = 3;

std::string fixed(double v, int digits) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(digits) << v;
    return s.str();
}

// "VALUE UNIT WHAT...": a measurement of the benchmark's own.
std::optional<perftest::Metric> read_value(const fs::path& path, perftest::Kind kind) {
    const auto text = perftest::read_text(path);
    if (!text) return std::nullopt;
    std::istringstream in(*text);
    double value{};
    std::string unit;
    std::string what;
    if (!(in >> value >> unit) || !std::isfinite(value)) return std::nullopt;
    std::getline(in >> std::ws, what);
    if (what.empty()) return std::nullopt;
    return perftest::Metric{kind, what, unit, value};
}

bool known_module(const std::string& m) {
    return std::find(kModules.begin(), kModules.end(), m) != kModules.end();
}

// Trials for a 95 % interval of half-width ln(1.1) / 2 when the logarithms
// of the ratios spread by `sd`: the smallest n with t(n-1) sd / sqrt(n) <=
// ln(1.1) / 2.
std::size_t trials_for(double sd) {
    const double target = std::log(kResolution) / 2.0;
    for (std::size_t n = 2; n < 100000; ++n) {
        if (stats::t975(n - 1) * sd / std::sqrt(static_cast<double>(n)) <= target) return n;
    }
    return 100000;
}

}  // namespace

const char* verdict_name(Verdict v) {
    switch (v) {
        case Verdict::too_few:
            return "too few trials";
        case Verdict::better:
            return "better";
        case Verdict::worse:
            return "worse";
        case Verdict::within_10:
            return "within 10 %";
        case Verdict::undecided:
            return "undecided";
    }
    return "?";
}

std::vector<Sample> collect(const fs::path& dir, std::vector<std::string>& errors) {
    std::vector<Sample> samples;
    if (!fs::is_directory(dir)) {
        errors.push_back(dir.string() + ": not a directory");
        return samples;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        const auto ext = entry.path().extension();
        if (!entry.is_regular_file() || (ext != ".log" && ext != ".value" && ext != ".rate")) {
            continue;
        }
        const auto rel = fs::relative(entry.path(), dir);
        std::vector<std::string> parts(rel.begin(), rel.end());
        if (parts.size() != 3) continue;  // not <trial>/<module>/<test>.<ext>
        const auto test = fs::path(parts[2]).stem().string();
        if (ext != ".log") {
            const auto kind = ext == ".rate" ? perftest::Kind::bandwidth : perftest::Kind::latency;
            if (const auto v = read_value(entry.path(), kind)) {
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
        return std::tie(a.test, a.module, a.trial) < std::tie(b.test, b.module, b.trial);
    });
    return samples;
}

Comparison compare(const Series& module, const Series& baseline, bool higher_is_better) {
    Comparison c;
    c.ratio_of_medians = baseline.median != 0.0 ? module.median / baseline.median : 0.0;
    std::vector<double> logs;
    for (const auto& [trial, v] : module.by_trial) {
        const auto b = baseline.by_trial.find(trial);
        if (b == baseline.by_trial.end() || v <= 0.0 || b->second <= 0.0) continue;
        logs.push_back(std::log(v / b->second));
    }
    c.pairs = logs.size();
    if (logs.empty()) return c;
    const double m = stats::mean(logs);
    c.geo_ratio = std::exp(m);
    c.p_value = stats::wilcoxon_p(logs);
    if (logs.size() < 2) return c;
    const double sd = stats::stddev(logs);
    const double half =
        stats::t975(logs.size() - 1) * sd / std::sqrt(static_cast<double>(logs.size()));
    c.ci_low = std::exp(m - half);
    c.ci_high = std::exp(m + half);
    c.trials_to_tell = trials_for(sd);
    c.under_10 = c.ci_low >= 1.0 / kResolution && c.ci_high <= kResolution;
    if (c.pairs < kMinPairs) return c;
    if (c.ci_low > 1.0 || c.ci_high < 1.0) {
        const bool up = c.ci_low > 1.0;
        c.verdict = up == higher_is_better ? Verdict::better : Verdict::worse;
    } else if (c.under_10) {
        c.verdict = Verdict::within_10;
    } else {
        c.verdict = Verdict::undecided;
    }
    return c;
}

std::vector<Row> summarize(const std::vector<Sample>& samples, std::vector<std::string>& errors) {
    std::map<std::string, Row> by_test;
    for (const auto& s : samples) {
        if (!known_module(s.module)) {
            errors.push_back(s.trial + "/" + s.module + "/" + s.test + ": unknown module");
            continue;
        }
        auto& row = by_test[s.test];
        row.test = s.test;
        row.column = s.metric.column;
        row.unit = s.metric.unit;
        row.higher_is_better = s.metric.kind == perftest::Kind::bandwidth;
        row.modules[s.module].by_trial[s.trial] = s.metric.value;
    }
    std::vector<Row> rows;
    for (auto& [test, row] : by_test) {
        for (auto& [name, series] : row.modules) {
            std::vector<double> values;
            for (const auto& [trial, v] : series.by_trial) values.push_back(v);
            series.median = stats::median(values);
            series.best = row.higher_is_better ? *std::max_element(values.begin(), values.end())
                                               : *std::min_element(values.begin(), values.end());
        }
        for (const auto& [module, baseline] : kComparisons) {
            const auto m = row.modules.find(std::string(module));
            const auto b = row.modules.find(std::string(baseline));
            if (m == row.modules.end() || b == row.modules.end()) continue;
            auto c = compare(m->second, b->second, row.higher_is_better);
            c.module = module;
            c.baseline = baseline;
            row.comparisons.push_back(c);
        }
        if (row.comparisons.empty()) {
            errors.push_back(test + ": needs samples of rxecc and of rxe or rxecc-nocc");
            continue;
        }
        rows.push_back(row);
    }
    return rows;
}

nlohmann::json to_json(const std::vector<Row>& rows) {
    nlohmann::json tests = nlohmann::json::object();
    for (const auto& r : rows) {
        nlohmann::json modules = nlohmann::json::object();
        for (const auto& [name, s] : r.modules) {
            modules[name] = {{"by_trial", s.by_trial}, {"median", s.median}, {"best", s.best}};
        }
        nlohmann::json comparisons = nlohmann::json::array();
        for (const auto& c : r.comparisons) {
            nlohmann::json j = {
                {"module", c.module},        {"baseline", c.baseline},
                {"pairs", c.pairs},          {"ratio_of_medians", c.ratio_of_medians},
                {"geo_ratio", nullptr},      {"ci95", nullptr},
                {"wilcoxon_p", c.p_value},   {"trials_to_tell_10pct", nullptr},
                {"under_10pct", c.under_10}, {"verdict", verdict_name(c.verdict)},
            };
            if (c.pairs >= 1) j["geo_ratio"] = c.geo_ratio;
            if (c.pairs >= 2) {
                j["ci95"] = {c.ci_low, c.ci_high};
                j["trials_to_tell_10pct"] = c.trials_to_tell;
            }
            comparisons.push_back(j);
        }
        tests[r.test] = {
            {"metric", r.column},
            {"unit", r.unit},
            {"higher_is_better", r.higher_is_better},
            {"modules", modules},
            {"comparisons", comparisons},
        };
    }
    return nlohmann::json{{"tests", tests}};
}

namespace {

std::string aligned(const std::vector<std::vector<std::string>>& cells, std::size_t text_columns) {
    std::vector<std::size_t> width(cells.front().size(), 0);
    for (const auto& line : cells) {
        for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
    }
    std::ostringstream out;
    for (const auto& line : cells) {
        for (std::size_t i = 0; i < line.size(); ++i) {
            out << (i >= text_columns ? std::right : std::left)
                << std::setw(static_cast<int>(width[i])) << line[i]
                << (i + 1 < line.size() ? "  " : "\n");
        }
    }
    return out.str();
}

std::string series_cell(const Row& r, const std::string& module) {
    const auto s = r.modules.find(module);
    if (s == r.modules.end()) return "-";
    return fixed(s->second.median, 2) + " (" + fixed(s->second.best, 2) + ")";
}

// One line of the table for comparison `c` of row `r`.
std::vector<std::string> table_line(const Row& r, const Comparison& c) {
    const std::string ci = c.pairs >= 2 ? fixed(c.ci_low, 3) + "-" + fixed(c.ci_high, 3) : "-";
    std::string verdict = verdict_name(c.verdict);
    if (c.under_10 && (c.verdict == Verdict::better || c.verdict == Verdict::worse)) {
        verdict += ", under 10 %";
    }
    return {r.test,
            r.unit + (r.higher_is_better ? " ^" : " v"),
            series_cell(r, c.baseline),
            series_cell(r, c.module),
            fixed(c.ratio_of_medians, 3),
            c.pairs >= 1 ? fixed(c.geo_ratio, 3) : "-",
            ci,
            c.pairs >= 1 ? fixed(c.p_value, 3) : "-",
            std::to_string(c.pairs),
            c.trials_to_tell > 0 ? std::to_string(c.trials_to_tell) : "-",
            verdict};
}

std::string table(const std::vector<Row>& rows, std::string_view module,
                  std::string_view baseline) {
    std::vector<std::vector<std::string>> cells{{"test", "unit", std::string(baseline),
                                                 std::string(module), "ratio", "geo", "95% CI", "p",
                                                 "n", "to tell", "verdict"}};
    for (const auto& r : rows) {
        for (const auto& c : r.comparisons) {
            if (c.module == module && c.baseline == baseline) cells.push_back(table_line(r, c));
        }
    }
    if (cells.size() == 1) return "";
    return aligned(cells, 2);
}

}  // namespace

std::string to_text(const std::vector<Row>& rows) {
    std::string out = table(rows, "rxecc", "rxe");
    const auto hooks = table(rows, "rxecc", "rxecc-nocc");
    if (!hooks.empty())
        out += "\nDCQCN's hooks (rxecc with DCQCN on against off, no congestion):\n" + hooks;
    return out;
}

}  // namespace rxecc::bench
