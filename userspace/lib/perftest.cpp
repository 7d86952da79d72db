#include "perftest.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace rxecc::perftest {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::vector<std::string> split_words(std::string_view line) {
    std::vector<std::string> words;
    std::istringstream in{std::string(line)};
    std::string w;
    while (in >> w) words.push_back(w);
    return words;
}

bool is_unsigned_integer(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
}

}  // namespace

std::vector<std::string> split_header(std::string_view line) {
    std::vector<std::string> cols;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_space(line[i])) ++i;
        if (i >= line.size()) break;
        std::size_t end = i;
        if (line[i] == '#') {
            // "#bytes", "#iterations": one word.
            while (end < line.size() && !is_space(line[end])) ++end;
        } else {
            // Up to and including the next ']' if one comes before the next
            // '#' or the end; otherwise just one word ("tps").
            const std::size_t close = line.find(']', i);
            const std::size_t hash = line.find('#', i);
            if (close != std::string_view::npos && close < hash) {
                end = close + 1;
            } else {
                while (end < line.size() && !is_space(line[end])) ++end;
            }
        }
        cols.emplace_back(line.substr(i, end - i));
        i = end;
    }
    return cols;
}

std::optional<std::string> read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::optional<Table> parse(std::string_view text) {
    std::istringstream in{std::string(text)};
    std::string line;
    std::optional<Table> table;
    while (std::getline(in, line)) {
        if (!table) {
            if (line.find("#bytes") != std::string::npos) {
                table.emplace();
                table->columns = split_header(line);
            }
            continue;
        }
        auto words = split_words(line);
        if (words.empty()) continue;
        if (!is_unsigned_integer(words.front())) {
            if (!table->rows.empty()) break;  // the end of the table
            continue;                         // e.g. a warning between header and row
        }
        table->rows.push_back(std::move(words));
    }
    if (!table || table->rows.empty()) return std::nullopt;
    return table;
}

std::optional<std::string> Table::cell(std::string_view column, std::size_t row) const {
    const auto it = std::find(columns.begin(), columns.end(), column);
    if (it == columns.end() || row >= rows.size()) return std::nullopt;
    const auto index = static_cast<std::size_t>(it - columns.begin());
    if (index >= rows[row].size()) return std::nullopt;
    return rows[row][index];
}

std::optional<double> Table::number(std::string_view column, std::size_t row) const {
    const auto text = cell(column, row);
    if (!text) return std::nullopt;
    double value{};
    const char* first = text->data();
    const char* last = first + text->size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    // perftest prints "inf" and "-nan" when its clock calibration failed.
    if (ec != std::errc{} || ptr != last || !std::isfinite(value)) return std::nullopt;
    return value;
}

std::string unit_of(std::string_view column) {
    const auto open = column.find('[');
    const auto close = column.rfind(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
        return {};
    }
    return std::string(column.substr(open + 1, close - open - 1));
}

std::optional<Metric> headline(const Table& table) {
    for (const auto& col : table.columns) {
        if (col.rfind("BW average[", 0) == 0) {
            if (auto v = table.number(col); v && *v > 0.0) {
                return Metric{Kind::bandwidth, col, unit_of(col), *v};
            }
        }
    }
    for (const std::string_view want : std::array<std::string_view, 2>{"t_typical[", "t_avg["}) {
        for (const auto& col : table.columns) {
            if (col.rfind(want, 0) == 0) {
                if (auto v = table.number(col); v && *v > 0.0) {
                    return Metric{Kind::latency, col, unit_of(col), *v};
                }
            }
        }
    }
    return std::nullopt;
}

}  // namespace rxecc::perftest
