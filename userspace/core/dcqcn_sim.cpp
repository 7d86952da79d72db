#include "dcqcn_sim.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <nlohmann/json.hpp>
#include <queue>
#include <random>
#include <vector>

namespace rxecc::sim {

std::optional<rxecc_dcqcn_params> params_from_json(const nlohmann::json& doc, std::string& why) {
    if (!doc.is_array() || doc.empty() || !doc[0].contains("dcqcn") ||
        !doc[0]["dcqcn"].is_object()) {
        why = "not the output of 'rxecc -j dcqcn show dev DEV'";
        return std::nullopt;
    }
    const auto& d = doc[0]["dcqcn"];
    rxecc_dcqcn_params p{};
    for (unsigned i = 0; i < rxecc_dcqcn_num_params; i++) {
        if (rxecc_dcqcn_param_base(i) != i) {
            continue;
        }
        const char* name = rxecc_dcqcn_param_descs[i].name;
        if (!d.contains(name) || !d[name].is_number_integer()) {
            why = std::string("no value for ") + name;
            return std::nullopt;
        }
        const auto v = d[name].get<std::int64_t>();
        if (v < 0 || v > UINT32_MAX ||
            rxecc_dcqcn_param_set(&p, i, static_cast<std::uint32_t>(v)) != 0) {
            why = std::string(name) + " " + std::to_string(v) + " is out of its range";
            return std::nullopt;
        }
    }
    return p;
}

double jain(const double* x, unsigned n) {
    double sum = 0;
    double sq = 0;
    for (unsigned i = 0; i < n; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    return sq > 0 ? sum * sum / (n * sq) : 1.0;
}

namespace {

enum class Ev { Tx, LinkDone, Mark, NpTimer, Cnp, Sample };

struct Event {
    std::uint64_t t;
    std::uint64_t seq;  // FIFO among equal times
    Ev type;
    unsigned flow;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct Flow {
    rxecc_dcqcn_rp rp{};
    rxecc_dcqcn_np np{};
    std::vector<double> bins;  // delivered bytes per bin after the last start
    double window_bytes = 0;   // second half of the measurement window
    double sample_bytes = 0;   // delivered since the last sample
};

class Sim {
  public:
    explicit Sim(const Config& c)
        : cfg_(c),
          link_kbps_(static_cast<std::uint64_t>(c.link_gbps * 1e6)),
          line_kbps_(c.sender_gbps > 0 ? static_cast<std::uint64_t>(c.sender_gbps * 1e6)
                                       : link_kbps_),
          flows_(c.flows),
          rng_(c.seed),
          last_start_(ns(last_start_of(c) * 1e6)),
          end_(last_start_ + ns(c.measure_ms * 1e6)),
          bins_(static_cast<unsigned>(std::ceil(c.measure_ms / c.bin_ms))) {
        for (auto& f : flows_) {
            f.bins.assign(bins_, 0.0);
        }
        std::uint64_t first = UINT64_MAX;
        for (unsigned i = 0; i < c.flows; i++) {
            const std::uint64_t t = ns(start_of(c, i) * 1e6);
            first = std::min(first, t);
            push(t, Ev::Tx, i);
        }
        first_start_ = first;
        if (c.sample_ms > 0) {
            push(first + ns(c.sample_ms * 1e6), Ev::Sample, 0);
        }
    }

    Result run() {
        while (!events_.empty()) {
            const Event e = events_.top();
            events_.pop();
            if (e.t > end_) {
                break;
            }
            handle(e);
        }
        return result();
    }

  private:
    static std::uint64_t ns(double v) { return static_cast<std::uint64_t>(std::llround(v)); }

    // Flow i's start in ms: its entry of start_ms (0 if it has none), or
    // i * stagger_ms.
    static double start_of(const Config& c, unsigned i) {
        if (c.start_ms.empty()) {
            return c.stagger_ms * i;
        }
        return i < c.start_ms.size() ? c.start_ms[i] : 0.0;
    }

    static double last_start_of(const Config& c) {
        double last = 0;
        for (unsigned i = 0; i < c.flows; i++) {
            last = std::max(last, start_of(c, i));
        }
        return last;
    }

    void push(std::uint64_t t, Ev type, unsigned flow) { events_.push({t, seq_++, type, flow}); }

    // Whether flow i sends at t: from its start until its stop, if it has one.
    [[nodiscard]] bool sending(unsigned i, std::uint64_t t) const {
        if (t < ns(start_of(cfg_, i) * 1e6)) {
            return false;
        }
        if (i >= cfg_.stop_ms.size() || cfg_.stop_ms[i] <= 0) {
            return true;
        }
        return t < ns(cfg_.stop_ms[i] * 1e6);
    }

    [[nodiscard]] std::uint64_t rate(const rxecc_dcqcn_rp& rp) const {
        return rp.active != 0 ? std::min(rp.rc, line_kbps_) : line_kbps_;
    }

    void sample(std::uint64_t t) {
        Sample smp;
        smp.t_ms = static_cast<double>(t - first_start_) / 1e6;
        smp.queue_bytes = queue_bytes_;
        const double secs = cfg_.sample_ms / 1e3;
        for (unsigned i = 0; i < flows_.size(); i++) {
            auto& f = flows_[i];
            // The rate a packet sent now would get, from a copy: the flow's
            // own state advances only as it sends, so sampling it changes
            // nothing in the run.
            rxecc_dcqcn_rp rp = f.rp;
            rxecc_dcqcn_rp_advance(&rp, &cfg_.params, line_kbps_, t);
            smp.rc_mbps.push_back(sending(i, t) ? static_cast<double>(rate(rp)) / 1e3 : 0.0);
            smp.goodput_mbps.push_back(f.sample_bytes * 8 / secs / 1e6);
            f.sample_bytes = 0;
        }
        series_.push_back(std::move(smp));
    }

    void handle(const Event& e) {
        Flow& f = flows_[e.flow];
        const std::uint64_t delay = ns(cfg_.delay_us * 1e3);
        switch (e.type) {
            case Ev::Tx:
                if (!sending(e.flow, e.t)) {
                    break;  // stopped: no more packets
                }
                rxecc_dcqcn_rp_sent(&f.rp, &cfg_.params, line_kbps_, cfg_.packet_bytes, e.t);
                if (queue_bytes_ + cfg_.packet_bytes > cfg_.queue_limit_kb * 1000) {
                    drops_++;
                } else {
                    queue_.push_back({e.flow, cfg_.mark_on_enqueue && marked(queue_bytes_)});
                    queue_bytes_ += cfg_.packet_bytes;
                    max_queue_ = std::max(max_queue_, queue_bytes_);
                    if (queue_.size() == 1) {
                        push(e.t + rxecc_dcqcn_tx_ns(cfg_.packet_bytes, link_kbps_), Ev::LinkDone,
                             e.flow);
                    }
                }
                push(e.t + rxecc_dcqcn_tx_ns(cfg_.packet_bytes, rate(f.rp)), Ev::Tx, e.flow);
                break;
            case Ev::LinkDone: {
                const Queued pkt = queue_.front();
                const double q = queue_bytes_;
                queue_.pop_front();
                queue_bytes_ -= cfg_.packet_bytes;
                deliver(pkt.flow, e.t);
                if (cfg_.mark_on_enqueue ? pkt.marked : marked(q)) {
                    marks_++;
                    push(e.t + delay, Ev::Mark, pkt.flow);
                }
                if (!queue_.empty()) {
                    push(e.t + rxecc_dcqcn_tx_ns(cfg_.packet_bytes, link_kbps_), Ev::LinkDone,
                         queue_.front().flow);
                }
                break;
            }
            case Ev::Sample:
                sample(e.t);
                push(e.t + ns(cfg_.sample_ms * 1e6), Ev::Sample, 0);
                break;
            case Ev::Mark: {
                std::uint64_t when = 0;
                switch (rxecc_dcqcn_np_ce(&f.np, &cfg_.params, e.t, &when)) {
                    case RXECC_NP_SEND:
                        push(e.t + delay, Ev::Cnp, e.flow);
                        break;
                    case RXECC_NP_DEFER:
                        push(when, Ev::NpTimer, e.flow);
                        break;
                    case RXECC_NP_PENDING:
                        break;
                }
                break;
            }
            case Ev::NpTimer:
                if (rxecc_dcqcn_np_timer(&f.np, e.t)) {
                    push(e.t + delay, Ev::Cnp, e.flow);
                }
                break;
            case Ev::Cnp:
                cnps_++;
                if (cfg_.react) {
                    rxecc_dcqcn_rp_cnp(&f.rp, &cfg_.params, line_kbps_, e.t);
                }
                break;
        }
    }

    // RED: with pmax * (q - kmin) / (kmax - kmin) between kmin and kmax,
    // always above. On enqueue as sch_pfc marks: never with kmax 0, always
    // from kmax on.
    bool marked(double q) {
        const double kmin = cfg_.kmin_kb * 1000;
        const double kmax = cfg_.kmax_kb * 1000;
        if (q <= kmin || (cfg_.mark_on_enqueue && kmax <= 0)) {
            return false;
        }
        if (q > kmax || (cfg_.mark_on_enqueue && q >= kmax)) {
            return true;
        }
        return std::uniform_real_distribution<double>(0, 1)(rng_) <
               cfg_.pmax * (q - kmin) / (kmax - kmin);
    }

    void deliver(unsigned fl, std::uint64_t t) {
        flows_[fl].sample_bytes += cfg_.packet_bytes;
        if (t < last_start_) {
            return;
        }
        const double rel_ms = static_cast<double>(t - last_start_) / 1e6;
        const auto bin = static_cast<unsigned>(rel_ms / cfg_.bin_ms);
        if (bin < bins_) {
            flows_[fl].bins[bin] += cfg_.packet_bytes;
        }
        if (rel_ms >= cfg_.measure_ms / 2) {
            flows_[fl].window_bytes += cfg_.packet_bytes;
        }
        total_bytes_ += cfg_.packet_bytes;
    }

    [[nodiscard]] Result result() {
        Result r;
        r.series = std::move(series_);
        std::vector<double> x(cfg_.flows);
        for (unsigned i = 0; i < cfg_.flows; i++) {
            x[i] = flows_[i].window_bytes;
        }
        r.jain = jain(x.data(), cfg_.flows);
        r.utilisation = total_bytes_ * 8 / (cfg_.link_gbps * 1e9 * cfg_.measure_ms / 1e3);
        // The first bin from which every later bin is fair.
        int first = -1;
        for (int b = static_cast<int>(bins_) - 1; b >= 0; b--) {
            for (unsigned i = 0; i < cfg_.flows; i++) {
                x[i] = flows_[i].bins[static_cast<unsigned>(b)];
            }
            if (jain(x.data(), cfg_.flows) < cfg_.converged_jain) {
                break;
            }
            first = b;
        }
        r.convergence_ms = first < 0 ? -1 : first * cfg_.bin_ms;
        r.max_queue_kb = max_queue_ / 1000;
        r.cnps = cnps_;
        r.marks = marks_;
        r.drops = drops_;
        return r;
    }

    Config cfg_;
    std::uint64_t link_kbps_;  // the bottleneck
    std::uint64_t line_kbps_;  // each sender's line rate
    std::vector<Flow> flows_;
    std::mt19937_64 rng_;
    std::uint64_t last_start_;
    std::uint64_t end_;
    std::uint64_t first_start_ = 0;
    std::vector<Sample> series_;
    unsigned bins_;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
    std::uint64_t seq_ = 0;
    struct Queued {
        unsigned flow;
        bool marked;  // CE on enqueue (mark_on_enqueue)
    };
    std::deque<Queued> queue_;
    double queue_bytes_ = 0;
    double max_queue_ = 0;
    double total_bytes_ = 0;
    std::uint64_t cnps_ = 0, marks_ = 0, drops_ = 0;
};

}  // namespace

Result run(const Config& cfg) { return Sim(cfg).run(); }

}  // namespace rxecc::sim
