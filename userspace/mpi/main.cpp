// rxecc-mpi: MPI_Allreduce and MPI_Alltoall among the ranks of an MPI job,
// every element of every iteration checked, reported per message size as
// rxecc-coll and nccl-tests report it. It is the same workload as rxecc-coll's
// (the same inputs and expected results), carried by the MPI library (Open MPI
// over UCX on rxecc in the selftests) instead of rxecc's own ring.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective.hpp"
#include "report.hpp"

namespace {

using namespace rxecc::coll;

const char* const kUsage =
    "usage: mpirun ... rxecc-mpi [--op allreduce|alltoall|both] [--min-bytes B]\n"
    "                  [--max-bytes B] [--iters N] [--warmup N] [--json]\n"
    "Sizes double from --min-bytes (default 4096) to --max-bytes (default 1048576),\n"
    "float32 sum; --op both (the default) runs all-reduce, then all-to-all.\n"
    "Rank 0 prints rxecc-coll's table (or a JSON object per size, --json).\n"
    "Every rank must be given the same options (checked).\n"
    "exit status: 0 every result right; 1 a wrong element; 2 a bad command line;\n"
    "3 any other failure (an MPI call, ranks that disagree, fewer than 2 or more\n"
    "than 64 ranks).\n";

struct Options {
    std::vector<Op> ops{Op::allreduce, Op::alltoall};
    size_t min_bytes = 4096;
    size_t max_bytes = 1 << 20;
    unsigned iters = 20;
    unsigned warmup = 2;
    bool json = false;
};

Options parse(const std::vector<std::string>& args) {
    Options o;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--json") {
            o.json = true;
            continue;
        }
        if (i + 1 >= args.size()) throw Usage(a + " needs a value");
        const std::string& v = args[++i];
        if (a == "--op") {
            if (v == "allreduce") {
                o.ops = {Op::allreduce};
            } else if (v == "alltoall") {
                o.ops = {Op::alltoall};
            } else if (v == "both") {
                o.ops = {Op::allreduce, Op::alltoall};
            } else {
                throw Usage("--op: '" + v + "' is not allreduce, alltoall or both");
            }
        } else if (a == "--min-bytes") {
            o.min_bytes = number(a, v, 4, 64U << 20U);
        } else if (a == "--max-bytes") {
            o.max_bytes = number(a, v, 4, 64U << 20U);
        } else if (a == "--iters") {
            o.iters = static_cast<unsigned>(number(a, v, 1, 100000));
        } else if (a == "--warmup") {
            o.warmup = static_cast<unsigned>(number(a, v, 0, 1000));
        } else {
            throw Usage("unknown option '" + a + "'");
        }
    }
    if (o.min_bytes > o.max_bytes) throw Usage("--min-bytes is above --max-bytes");
    return o;
}

struct MpiError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// An MPI call's result: MPI_ERRORS_RETURN is set, so a failure returns here.
void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    std::string msg(MPI_MAX_ERROR_STRING, '\0');
    int len = 0;
    MPI_Error_string(rc, msg.data(), &len);
    msg.resize(static_cast<size_t>(len));
    throw MpiError(std::string(what) + ": " + msg);
}

// MPI_Init and MPI_Finalize around the program's life.
class Session {
  public:
    Session(int* argc, char*** argv) {
        check(MPI_Init(argc, argv), "MPI_Init");
        check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler");
        int r = 0;
        int n = 0;
        check(MPI_Comm_rank(MPI_COMM_WORLD, &r), "MPI_Comm_rank");
        check(MPI_Comm_size(MPI_COMM_WORLD, &n), "MPI_Comm_size");
        rank_ = static_cast<unsigned>(r);
        size_ = static_cast<unsigned>(n);
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    Session(Session&&) = delete;
    Session& operator=(Session&&) = delete;
    ~Session() { MPI_Finalize(); }

    [[nodiscard]] unsigned rank() const { return rank_; }
    [[nodiscard]] unsigned size() const { return size_; }

  private:
    unsigned rank_ = 0;
    unsigned size_ = 0;
};

int count_of(size_t elements) {
    if (elements > static_cast<size_t>(std::numeric_limits<int>::max()))
        throw MpiError("message too large for an MPI count");
    return static_cast<int>(elements);
}

// One iteration of `op` on `count` elements: inputs set, the collective
// timed, its result checked. Returns the time; adds wrong elements.
double iteration(const Session& s, Op op, size_t count, uint64_t iter, std::vector<float>& in,
                 std::vector<float>& out, size_t& wrong) {
    const unsigned r = s.rank();
    const unsigned n = s.size();
    std::vector<float> want(count);
    double t = 0;
    if (op == Op::allreduce) {
        for (size_t i = 0; i < count; ++i) {
            in[i] = allreduce_input(r, i, iter);
            want[i] = allreduce_expected(n, i, iter);
        }
        const double t0 = MPI_Wtime();
        check(MPI_Allreduce(in.data(), out.data(), count_of(count), MPI_FLOAT, MPI_SUM,
                            MPI_COMM_WORLD),
              "MPI_Allreduce");
        t = MPI_Wtime() - t0;
    } else {
        const size_t per = count / n;
        for (unsigned j = 0; j < n; ++j) {
            for (size_t i = 0; i < per; ++i) {
                in[j * per + i] = alltoall_value(r, j, i, iter);
                want[j * per + i] = alltoall_value(j, r, i, iter);
            }
        }
        count = per * n;
        want.resize(count);
        const double t0 = MPI_Wtime();
        check(MPI_Alltoall(in.data(), count_of(per), MPI_FLOAT, out.data(), count_of(per),
                           MPI_FLOAT, MPI_COMM_WORLD),
              "MPI_Alltoall");
        t = MPI_Wtime() - t0;
    }
    wrong += mismatches(std::span<const float>(out.data(), count), want);
    return t;
}

// One size: warm-up and timed iterations, each rank's times and wrong
// elements gathered to rank 0, which returns the report (others: null).
nlohmann::json one_size(const Session& s, const Options& o, Op op, size_t bytes, uint64_t& iter) {
    const size_t count = bytes / sizeof(float);
    std::vector<float> in(count);
    std::vector<float> out(count);
    std::vector<double> row;
    size_t wrong = 0;
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    for (unsigned i = 0; i < o.warmup + o.iters; ++i, ++iter) {
        const double t = iteration(s, op, count, iter, in, out, wrong);
        if (i >= o.warmup) row.push_back(t);
    }
    row.push_back(static_cast<double>(wrong));
    const size_t width = row.size();
    std::vector<double> all(s.rank() == 0 ? width * s.size() : 0);
    check(MPI_Gather(row.data(), count_of(width), MPI_DOUBLE, all.data(), count_of(width),
                     MPI_DOUBLE, 0, MPI_COMM_WORLD),
          "MPI_Gather");
    if (s.rank() != 0) return nullptr;
    std::vector<std::vector<double>> times(s.size());
    size_t total = 0;
    for (unsigned r = 0; r < s.size(); ++r) {
        const auto first = all.begin() + static_cast<std::ptrdiff_t>(r * width);
        times[r].assign(first, first + static_cast<std::ptrdiff_t>(width - 1));
        total += static_cast<size_t>(*(first + static_cast<std::ptrdiff_t>(width - 1)));
    }
    return report(op, s.size(), bytes, o.iters, times, total);
}

// Every op and size; rank 0 prints. Returns the exit status.
// The ranks' settings agree: each app context of an MPMD launch has its own
// command line, and ranks that disagree would wait in mismatched collectives.
void check_same_settings(const Session& s, const Options& o) {
    uint64_t mine = 0;
    for (const Op op : o.ops)
        mine = mine * 31 + config_of(op, s.size(), o.min_bytes, o.max_bytes, o.iters, o.warmup);
    uint64_t lo = 0;
    uint64_t hi = 0;
    check(MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    check(MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    if (lo != hi) throw MpiError("the ranks were given different options");
}

int run(const Session& s, const Options& o) {
    // (the inputs' sums stay exact in float32 up to 64 ranks, collective.cpp)
    if (s.size() < 2 || s.size() > 64)
        throw MpiError("needs 2 to 64 ranks, has " + std::to_string(s.size()));
    check_same_settings(s, o);
    bool ok = true;
    uint64_t iter = 0;
    for (const Op op : o.ops) {
        if (s.rank() == 0 && !o.json) std::cout << table_header(op, s.size(), o.iters, o.warmup);
        for (const size_t bytes : sizes(o.min_bytes, o.max_bytes, s.size())) {
            const nlohmann::json j = one_size(s, o, op, bytes, iter);
            if (s.rank() != 0) continue;
            ok = ok && j["wrong"].get<size_t>() == 0;
            std::cout << (o.json ? j.dump() + "\n" : table_row(j)) << std::flush;
        }
    }
    // every rank learns whether any was wrong, so that all exit alike
    int bad = ok ? 0 : 1;
    check(MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return bad;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    try {
        o = parse(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const Usage& e) {
        std::cerr << "rxecc-mpi: " << e.what() << "\n" << kUsage;
        return 2;
    }
    try {
        const Session s(&argc, &argv);
        try {
            return run(s, o);
        } catch (const std::exception& e) {
            // the other ranks may wait in a collective: end the whole job
            std::cerr << "rxecc-mpi (rank " << s.rank() << "): " << e.what() << "\n";
            MPI_Abort(MPI_COMM_WORLD, 3);
            return 3;
        }
    } catch (const std::exception& e) {
        // MPI_Init ran but the session is not whole: end the job
        std::cerr << "rxecc-mpi: " << e.what() << "\n";
        int init = 0;
        int fin = 0;
        MPI_Initialized(&init);
        MPI_Finalized(&fin);
        if (init != 0 && fin == 0) MPI_Abort(MPI_COMM_WORLD, 3);
        return 3;
    }
}
