#include "report.hpp"

#include <iomanip>
#include <sstream>

namespace rxecc::coll {

uint64_t number(const std::string& opt, const std::string& v, uint64_t lo, uint64_t hi) {
    size_t used = 0;
    uint64_t out = 0;
    try {
        out = std::stoull(v, &used, 0);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || v[0] == '-')
        throw Usage(opt + ": '" + v + "' is not a number");
    if (out < lo || out > hi) {
        throw Usage(opt + ": " + v + " is out of range " + std::to_string(lo) + ".." +
                    std::to_string(hi));
    }
    return out;
}

nlohmann::json report(Op op, unsigned ranks, size_t bytes, unsigned iters,
                      const std::vector<std::vector<double>>& times, size_t wrong) {
    const Timing t = summarize(times);
    return {{"op", std::string(op_name(op))},
            {"ranks", ranks},
            {"bytes", bytes},
            {"count", bytes / sizeof(float)},
            {"time_us", t.time * 1e6},
            {"algbw", algbw(bytes, t.time)},
            {"busbw", algbw(bytes, t.time) * busbw_factor(op, ranks)},
            {"slowest_us", t.slowest * 1e6},
            {"worst_us", t.worst * 1e6},
            {"slow_rank", t.slow_rank},
            {"wrong", wrong},
            {"iters", iters}};
}

std::string table_header(Op op, unsigned ranks, unsigned iters, unsigned warmup) {
    std::ostringstream s;
    s << "# " << op_name(op) << ", " << ranks << " ranks, float32 sum, " << iters
      << " iterations (+" << warmup << " warm-up)\n#" << std::setw(11) << "bytes" << std::setw(11)
      << "count" << std::setw(11) << "time(us)" << std::setw(9) << "algbw" << std::setw(9)
      << "busbw" << std::setw(12) << "slowest(us)" << std::setw(12) << "worst(us)" << std::setw(6)
      << "slow" << std::setw(7) << "wrong"
      << "\n";
    return s.str();
}

std::string table_row(const nlohmann::json& j) {
    std::ostringstream s;
    s << " " << std::setw(11) << j["bytes"].get<size_t>() << std::setw(11)
      << j["count"].get<size_t>() << std::fixed << std::setprecision(1) << std::setw(11)
      << j["time_us"].get<double>() << std::setprecision(4) << std::setw(9)
      << j["algbw"].get<double>() << std::setw(9) << j["busbw"].get<double>()
      << std::setprecision(1) << std::setw(12) << j["slowest_us"].get<double>() << std::setw(12)
      << j["worst_us"].get<double>() << std::setw(6) << j["slow_rank"].get<unsigned>()
      << std::setw(7) << j["wrong"].get<size_t>() << "\n";
    return s.str();
}

}  // namespace rxecc::coll
