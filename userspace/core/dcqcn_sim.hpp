// A packet-level simulation of N DCQCN senders through one marking
// bottleneck, driven by the module's DCQCN core. Used by the host tests to
// check convergence to fair shares, and by rxecc-sim to predict the lab's
// per-sender rates and queue (the same DCQCN code as the kernel's, with an
// ideal pacer and a fixed round trip).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dcqcn_core.hpp"

namespace rxecc::sim {

struct Config {
    rxecc_dcqcn_params params{};
    unsigned flows = 2;
    double link_gbps = 40.0;  // bottleneck and sender line rate
    unsigned packet_bytes = 1000;
    double kmin_kb = 5.0;  // RED on the instantaneous queue (paper values)
    double kmax_kb = 200.0;
    double pmax = 0.01;
    double delay_us = 2.0;  // one way, sender to receiver and back
    double queue_limit_kb = 2000.0;
    double stagger_ms = 5.0;   // flow i starts at i * stagger_ms
    double measure_ms = 30.0;  // after the last flow started
    double bin_ms = 1.0;       // granularity of the convergence check
    double converged_jain = 0.9;
    bool react = true;  // false: senders ignore CNPs
    std::uint64_t seed = 1;
    // The lab's shape. Each sender's line rate (its DCQCN maximum and the
    // most it sends), 0: link_gbps.
    double sender_gbps = 0;
    std::vector<double> start_ms;  // per flow (flows entries); empty: i * stagger_ms
    std::vector<double> stop_ms;   // per flow, on start_ms's clock; empty or 0: never stops
    bool mark_on_enqueue = false;  // RED on the queue a packet finds (sch_pfc), else leaves
    double sample_ms = 0;          // > 0: Result::series, one sample per sample_ms
};

// One sample of the time series: at t_ms after the first start, the queue
// and, per flow, its Rc (its line rate while not limited; 0 before it starts
// and after it stops) and the goodput delivered since the previous sample.
struct Sample {
    double t_ms = 0;
    double queue_bytes = 0;
    std::vector<double> rc_mbps;
    std::vector<double> goodput_mbps;
};

struct Result {
    double jain = 0;             // per-flow goodput in the second half of the window
    double utilisation = 0;      // goodput / link rate over the window
    double convergence_ms = -1;  // after the last start, until every bin stays fair
    double max_queue_kb = 0;
    std::uint64_t cnps = 0;
    std::uint64_t marks = 0;
    std::uint64_t drops = 0;
    std::vector<Sample> series;  // with Config::sample_ms > 0
};

[[nodiscard]] Result run(const Config& cfg);

// The DCQCN parameters of the first device in `doc`, the output of
// `rxecc -j dcqcn show dev DEV`: every base parameter (not the Mbit/s views
// of the kbit/s ones) must be there and in range; else nullopt and `why`.
[[nodiscard]] std::optional<rxecc_dcqcn_params> params_from_json(const nlohmann::json& doc,
                                                                 std::string& why);

// Jain's fairness index of x: (sum x)^2 / (n * sum x^2).
[[nodiscard]] double jain(const double* x, unsigned n);

}  // namespace rxecc::sim
