// Parsing of perftest (ib_write_bw, ib_send_lat, ...) result tables.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rxecc::perftest {

// One result table: the header's column names and the numeric rows under it.
struct Table {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;

    // The cell of `column` in `row`, if both exist.
    [[nodiscard]] std::optional<std::string> cell(std::string_view column,
                                                  std::size_t row = 0) const;
    // The same cell as a finite number, if it is one.
    [[nodiscard]] std::optional<double> number(std::string_view column, std::size_t row = 0) const;
};

// Split a perftest header such as
//   " #bytes #iterations    t_min[usec]  ...  99% percentile[usec]"
// into its column names ("#bytes", "#iterations", "t_min[usec]", ...).
// Names may contain spaces ("BW average[MB/sec]"), so whitespace alone does
// not separate them: a name runs up to its closing bracket.
[[nodiscard]] std::vector<std::string> split_header(std::string_view line);

// The whole content of a report file, or nullopt if it cannot be read.
[[nodiscard]] std::optional<std::string> read_text(const std::filesystem::path& path);

// The first result table of a perftest report, or nullopt if there is none.
[[nodiscard]] std::optional<Table> parse(std::string_view text);

enum class Kind { bandwidth, latency };

// The number a reader looks at first: BW average for bandwidth tests,
// t_typical (perftest's median) for latency tests, t_avg where a latency
// test ran for a duration and reports only that. Only a positive finite
// value counts: perftest prints 0, inf or -nan on a side whose clock
// calibration failed.
struct Metric {
    Kind kind{};
    std::string column;
    std::string unit;  // the bracketed unit of the column, e.g. "MB/sec", "usec"
    double value{};
};

[[nodiscard]] std::optional<Metric> headline(const Table& table);

// The unit inside the brackets of a column name ("" if it has none).
[[nodiscard]] std::string unit_of(std::string_view column);

}  // namespace rxecc::perftest
