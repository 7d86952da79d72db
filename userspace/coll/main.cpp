// rxecc-coll: ring all-reduce and all-to-all among N ranks over RC QPs with
// RDMA WRITE with immediate, every iteration's result checked, reported per
// message size as nccl-tests reports it (time, algbw, busbw) with the
// slowest rank's time per iteration. Every rank runs it with its own
// --rank and the same --hosts; rank 0 prints the report.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collective.hpp"
#include "mesh.hpp"
#include "report.hpp"

namespace {

using namespace rxecc::coll;

const char* const kUsage =
    "usage: rxecc-coll --rank R --hosts ADDR0,ADDR1,... [--op allreduce|alltoall]\n"
    "                  [--min-bytes B] [--max-bytes B] [--iters N] [--warmup N]\n"
    "                  [--port P] [--timeout S] [--tos N] [--ack-timeout N] [--json]\n"
    "Every rank runs it with its own --rank and the same --hosts (rank i listens\n"
    "on ADDRi, which must be an address of an RDMA device). Sizes double from\n"
    "--min-bytes (default 4096) to --max-bytes (default 1048576), float32 sum.\n"
    "Rank 0 prints per size: bytes, count, time (us: each rank's mean iteration\n"
    "time, averaged over ranks, as nccl-tests), algbw and busbw (GB/s), the mean\n"
    "over iterations of the slowest rank's time, the longest iteration, the\n"
    "slowest rank, and the elements found wrong; --json: one JSON object per size.\n"
    "exit status: 0 every result right; 1 a wrong element; 2 a bad command line;\n"
    "3 any other failure (a rank missing after --timeout, default 30 s).\n"
    "--tos: the IP type of service of the RoCE packets (DSCP << 2: 104 is DSCP 26);\n"
    "--ack-timeout: the QPs' local ACK timeout, 4.096 us x 2^N, N 1..31 (rdma_cm's\n"
    "default 0.54 s).\n";

struct Options {
    unsigned rank = 0;
    std::vector<std::string> hosts;
    Op op = Op::allreduce;
    size_t min_bytes = 4096;
    size_t max_bytes = 1 << 20;
    unsigned iters = 20;
    unsigned warmup = 2;
    uint16_t port = 18600;
    double timeout = 30;
    Mesh::QpOptions qp;
    bool json = false;
};

std::vector<std::string> split(const std::string& v) {
    std::vector<std::string> out;
    size_t b = 0;
    for (size_t e = v.find(','); e != std::string::npos; e = v.find(',', b)) {
        out.push_back(v.substr(b, e - b));
        b = e + 1;
    }
    out.push_back(v.substr(b));
    return out;
}

// One option with its value.
void set_option(Options& o, const std::string& a, const std::string& v) {
    if (a == "--rank") {
        o.rank = static_cast<unsigned>(number(a, v, 0, 63));
    } else if (a == "--hosts") {
        o.hosts = split(v);
    } else if (a == "--op") {
        if (v != "allreduce" && v != "alltoall") {
            throw Usage("--op: '" + v + "' is not allreduce or alltoall");
        }
        o.op = v == "allreduce" ? Op::allreduce : Op::alltoall;
    } else if (a == "--min-bytes") {
        o.min_bytes = number(a, v, 4, 64U << 20U);
    } else if (a == "--max-bytes") {
        o.max_bytes = number(a, v, 4, 64U << 20U);
    } else if (a == "--iters") {
        o.iters = static_cast<unsigned>(number(a, v, 1, 100000));
    } else if (a == "--warmup") {
        o.warmup = static_cast<unsigned>(number(a, v, 0, 1000));
    } else if (a == "--port") {
        o.port = static_cast<uint16_t>(number(a, v, 1, 65535));
    } else if (a == "--timeout") {
        o.timeout = static_cast<double>(number(a, v, 1, 3600));
    } else if (a == "--tos") {
        o.qp.tos = static_cast<uint8_t>(number(a, v, 0, 255));
    } else if (a == "--ack-timeout") {
        o.qp.ack_timeout = static_cast<uint8_t>(number(a, v, 1, 31));  // (0: no timer at all)
    } else {
        throw Usage("unknown option '" + a + "'");
    }
}

Options parse(const std::vector<std::string>& args) {
    Options o;
    bool rank = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--json") {
            o.json = true;
            continue;
        }
        if (i + 1 >= args.size()) throw Usage(a + " needs a value");
        set_option(o, a, args[++i]);
        rank = rank || a == "--rank";
    }
    if (!rank) throw Usage("--rank is missing");
    if (o.hosts.size() < 2) throw Usage("--hosts: give at least two addresses");
    if (o.hosts.size() > 64) throw Usage("--hosts: at most 64 ranks");
    if (o.rank >= o.hosts.size()) throw Usage("--rank: beyond the --hosts list");
    if (o.min_bytes > o.max_bytes) throw Usage("--min-bytes is above --max-bytes");
    return o;
}

using rxecc::verbs::now_s;

// One run: the mesh and its buffer (Layout), and the iterations of each size.
class Run {
  public:
    Run(const Options& o, size_t max_bytes)
        : o_(o),
          n_(static_cast<unsigned>(o.hosts.size())),
          lay_{max_bytes, n_, o.iters},
          mesh_(o.rank, o.hosts, o.port, lay_.bytes(), o.timeout,
                config_of(o.op, n_, o.min_bytes, o.max_bytes, o.iters, o.warmup), o.qp) {}

    // One size: warm-up and timed iterations; on rank 0 the report.
    bool size(size_t bytes, nlohmann::json& out) {
        const size_t count = bytes / sizeof(float);
        std::vector<double> times;
        size_t wrong = 0;
        for (unsigned i = 0; i < o_.warmup + o_.iters; ++i, ++iter_) {
            const double t =
                o_.op == Op::allreduce ? allreduce(count, wrong) : alltoall(count, wrong);
            if (i >= o_.warmup) times.push_back(t);
        }
        // every rank's times, and its wrong elements, to rank 0
        times.push_back(static_cast<double>(wrong));
        const size_t row = lay_.row();
        if (o_.rank != 0) {
            const size_t at = lay_.gather(o_.rank);
            std::memcpy(mesh_.buf() + at, times.data(), row);
            mesh_.write(0, at, row, at, kGatherTag);
            mesh_.drain_sends();
            return wrong == 0;
        }
        std::vector<std::vector<double>> all(n_);
        all[0].assign(times.begin(), times.end() - 1);
        for (unsigned r = 1; r < n_; ++r) {
            if (mesh_.recv_from(r) != kGatherTag)
                throw Error("rank " + std::to_string(r) + ": out of step");
            std::vector<double> v(o_.iters + 1);
            std::memcpy(v.data(), mesh_.buf() + lay_.gather(r), row);
            wrong += static_cast<size_t>(v.back());
            v.pop_back();
            all[r] = std::move(v);
        }
        out = report(o_.op, n_, bytes, o_.iters, all, wrong);
        return wrong == 0;
    }

  private:
    static constexpr uint32_t kGatherTag = 0x80000000U;

    std::span<float> floats(size_t off, size_t count) {
        // NOLINTNEXTLINE(*-reinterpret-cast): the buffer's bytes as floats
        return {reinterpret_cast<float*>(mesh_.buf() + off), count};
    }

    double allreduce(size_t count, size_t& wrong) {
        const unsigned r = o_.rank;
        auto data = floats(0, count);
        for (size_t i = 0; i < count; ++i) data[i] = allreduce_input(r, i, iter_);
        const unsigned right = (r + 1) % n_;
        const unsigned left = (r + n_ - 1) % n_;
        const double t0 = now_s();
        for (unsigned s = 0; s < ring_steps(n_); ++s) {
            const RingStep st = ring_step(r, n_, s);
            const Chunk out = chunk_of(count, n_, st.send_chunk);
            const size_t dst = lay_.recv(iter_) + lay_.ring_slot(count, s);
            // the chunks the all-gather overwrites went out in the
            // reduce-scatter: their writes must be complete first
            if (s == n_ - 1) mesh_.drain_sends();
            mesh_.write(right, out.first * sizeof(float), out.count * sizeof(float), dst,
                        tag(iter_, s));
            if (mesh_.recv_from(left) != tag(iter_, s))
                throw Error("rank " + std::to_string(left) + ": out of step");
            const Chunk in = chunk_of(count, n_, st.recv_chunk);
            auto got = floats(dst, in.count);
            auto mine = data.subspan(in.first, in.count);
            if (st.reduce) {
                reduce_sum(mine, got);
            } else {
                std::copy(got.begin(), got.end(), mine.begin());
            }
        }
        mesh_.drain_sends();
        const double t = now_s() - t0;
        for (size_t i = 0; i < count; ++i)
            wrong += data[i] != allreduce_expected(n_, i, iter_) ? 1 : 0;
        return t;
    }

    double alltoall(size_t count, size_t& wrong) {
        const unsigned r = o_.rank;
        const size_t per = count / n_;
        const size_t chunk = per * sizeof(float);
        for (unsigned j = 0; j < n_; ++j) {
            auto c = floats(j * chunk, per);
            for (size_t i = 0; i < per; ++i) c[i] = alltoall_value(r, j, i, iter_);
        }
        const size_t base = lay_.recv(iter_);
        const double t0 = now_s();
        for (unsigned k = 1; k < n_; ++k) {
            const unsigned j = (r + k) % n_;
            mesh_.write(j, j * chunk, chunk, base + lay_.alltoall_slot(count, r), tag(iter_, 0));
        }
        std::memcpy(mesh_.buf() + base + lay_.alltoall_slot(count, r), mesh_.buf() + r * chunk,
                    chunk);
        for (unsigned k = 1; k < n_; ++k) {
            const unsigned j = (r + n_ - k) % n_;
            if (mesh_.recv_from(j) != tag(iter_, 0))
                throw Error("rank " + std::to_string(j) + ": out of step");
        }
        mesh_.drain_sends();
        const double t = now_s() - t0;
        std::vector<float> want(per);
        for (unsigned j = 0; j < n_; ++j) {
            for (size_t i = 0; i < per; ++i) want[i] = alltoall_value(j, r, i, iter_);
            wrong += mismatches(floats(base + lay_.alltoall_slot(count, j), per), want);
        }
        return t;
    }

    const Options& o_;
    unsigned n_;
    Layout lay_;
    Mesh mesh_;
    uint64_t iter_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    Options o;
    try {
        o = parse(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const Usage& e) {
        std::cerr << "rxecc-coll: " << e.what() << "\n" << kUsage;
        return 2;
    }
    try {
        const auto all = sizes(o.min_bytes, o.max_bytes, static_cast<unsigned>(o.hosts.size()));
        Run run(o, all.back());
        bool ok = true;
        if (o.rank == 0 && !o.json)
            std::cout << table_header(o.op, static_cast<unsigned>(o.hosts.size()), o.iters,
                                      o.warmup);
        for (size_t bytes : all) {
            nlohmann::json j;
            ok = run.size(bytes, j) && ok;
            if (o.rank != 0) continue;
            if (o.json) {
                std::cout << j.dump() << std::endl;
            } else {
                std::cout << table_row(j) << std::flush;
            }
        }
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "rxecc-coll (rank " << o.rank << "): " << e.what() << "\n";
        return 3;
    }
}
