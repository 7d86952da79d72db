// rxecc-report: read perftest reports and benchmark result folders.
//
//   rxecc-report value FILE COLUMN        one cell of the first result row
//   rxecc-report headline FILE            "<value> <unit> <column>" of the headline metric
//   rxecc-report bench DIR [--json FILE] [--meta KEY=VALUE]...
//                                         rdma_rxe against rdma_rxecc: medians and ratios
//
// Exit codes: 0 success, 1 the input holds no such result, 2 bad usage.
#include <exception>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench.hpp"
#include "perftest.hpp"

namespace {

constexpr int kExitNoResult = 1;
constexpr int kExitUsage = 2;

constexpr std::string_view kUsage =
    "usage: rxecc-report value FILE COLUMN\n"
    "       rxecc-report headline FILE\n"
    "       rxecc-report bench DIR [--json FILE] [--meta KEY=VALUE]...\n";

int usage(std::string_view why) {
    std::cerr << "rxecc-report: " << why << "\n" << kUsage;
    return kExitUsage;
}

// The first result table of the report at `path`; says why on stderr if none.
std::optional<rxecc::perftest::Table> load_table(std::string_view path) {
    const auto text = rxecc::perftest::read_text(std::string(path));
    if (!text) {
        std::cerr << "rxecc-report: cannot read " << path << "\n";
        return std::nullopt;
    }
    auto table = rxecc::perftest::parse(*text);
    if (!table) std::cerr << "rxecc-report: " << path << ": no perftest result table\n";
    return table;
}

int cmd_value(std::span<const std::string_view> args) {
    if (args.size() != 2) return usage("value takes FILE COLUMN");
    const auto table = load_table(args[0]);
    if (!table) return kExitNoResult;
    const auto cell = table->cell(args[1]);
    if (!cell) {
        std::cerr << "rxecc-report: " << args[0] << ": no column '" << args[1] << "'\n";
        return kExitNoResult;
    }
    std::cout << *cell << "\n";
    return 0;
}

int cmd_headline(std::span<const std::string_view> args) {
    if (args.size() != 1) return usage("headline takes FILE");
    const auto table = load_table(args[0]);
    if (!table) return kExitNoResult;
    const auto metric = rxecc::perftest::headline(*table);
    if (!metric) {
        std::cerr << "rxecc-report: " << args[0] << ": no finite headline value\n";
        return kExitNoResult;
    }
    std::cout << metric->value << " " << metric->unit << " " << metric->column << "\n";
    return 0;
}

int cmd_bench(std::span<const std::string_view> args) {
    if (args.empty()) return usage("bench takes DIR");
    std::string json_path;
    nlohmann::json meta = nlohmann::json::object();
    for (std::size_t i = 1; i < args.size(); i += 2) {
        if (i + 1 >= args.size()) return usage("bench: " + std::string(args[i]) + " needs a value");
        if (args[i] == "--json") {
            json_path = args[i + 1];
        } else if (args[i] == "--meta") {
            const auto kv = args[i + 1];
            const auto eq = kv.find('=');
            if (eq == std::string_view::npos || eq == 0) {
                return usage("bench: --meta takes KEY=VALUE, not '" + std::string(kv) + "'");
            }
            meta[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
        } else {
            return usage("bench: unknown option '" + std::string(args[i]) + "'");
        }
    }
    std::vector<std::string> errors;
    const auto samples = rxecc::bench::collect(std::string(args[0]), errors);
    const auto rows = rxecc::bench::summarize(samples, errors);
    for (const auto& e : errors) std::cerr << "rxecc-report: " << e << "\n";
    if (rows.empty()) {
        std::cerr << "rxecc-report: " << args[0] << ": no test measured on both modules\n";
        return kExitNoResult;
    }
    std::cout << rxecc::bench::to_text(rows);
    if (!json_path.empty()) {
        auto doc = rxecc::bench::to_json(rows);
        doc["meta"] = meta;
        std::ofstream out(json_path);
        out << doc.dump(2) << "\n";
        if (!out) {
            std::cerr << "rxecc-report: cannot write " << json_path << "\n";
            return kExitNoResult;
        }
    }
    return errors.empty() ? 0 : kExitNoResult;
}

int run(const std::vector<std::string_view>& all) {
    if (all.empty()) return usage("no command");
    const std::string_view cmd = all.front();
    const std::span<const std::string_view> args(all.begin() + 1, all.end());
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        std::cout << kUsage;
        return 0;
    }
    if (cmd == "value") return cmd_value(args);
    if (cmd == "headline") return cmd_headline(args);
    if (cmd == "bench") return cmd_bench(args);
    return usage("unknown command '" + std::string(cmd) + "'");
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(std::vector<std::string_view>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
        std::cerr << "rxecc-report: " << e.what() << "\n";
    } catch (...) {
        std::cerr << "rxecc-report: unexpected error\n";
    }
    return kExitNoResult;
}
