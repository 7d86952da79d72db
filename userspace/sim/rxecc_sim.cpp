// rxecc-sim: the lab's incast in the host simulation (core/dcqcn_sim.hpp),
// driven by the module's own DCQCN code with the parameters a device had.
//
//   rxecc-sim --params FILE --senders N --rate-kbps R [options]
//   rxecc-sim --profile NAME [--scale-kbps KBPS [--speedup N]] --senders N ...
//   rxecc-sim (--params FILE | --profile NAME ...) --print-params
//
// FILE is the output of `rxecc -j dcqcn show dev DEV` (the device's DCQCN
// parameters); or a profile, scaled as `rxecc dcqcn profile ... scale`
// does. Prints a time series as tab-separated columns, one row per
// --sample-ms: t_ms, queue_bytes, then each sender's Rc and goodput in
// Mbit/s (--start-ms and --stop-ms count from 0, t_ms from the earliest
// start); then '#' lines with the run's totals, whose Jain index is over
// every sender's goodput in the second half of the run, stopped ones
// included. --print-params prints the parameters instead, as `rxecc -j dcqcn
// show` does. Exit codes: 0 success, 1 the parameters file is unreadable or
// invalid, 2 bad usage.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dcqcn_sim.hpp"

namespace {

constexpr int kExitInput = 1;
constexpr int kExitUsage = 2;

constexpr std::string_view kUsage =
    "usage: rxecc-sim (--params FILE | --profile NAME [--scale-kbps KBPS [--speedup N]])\n"
    "                 --senders N --rate-kbps KBPS [--link-kbps KBPS]\n"
    "                 [--kmin BYTES] [--kmax BYTES] [--pmax PERCENT] [--buffer BYTES]\n"
    "                 [--packet BYTES] [--delay-us US] [--duration S] [--sample-ms MS]\n"
    "                 [--start-ms MS,MS,...] [--stop-ms MS,MS,...] [--seed N]\n"
    "       rxecc-sim (--params FILE | --profile NAME ...) --print-params\n"
    "  FILE: `rxecc -j dcqcn show dev DEV`; rate: the bottleneck; link: each sender's\n"
    "  line rate (default: the bottleneck's); RED marking on enqueue as in sch_pfc;\n"
    "  --start-ms, --stop-ms: per sender, ms from 0 (t_ms counts from the earliest start)\n";

int usage(std::string_view why) {
    std::cerr << "rxecc-sim: " << why << "\n" << kUsage;
    return kExitUsage;
}

std::optional<double> number(std::string_view s) {
    double v = 0;
    const auto* end = s.data() + s.size();
    const auto [p, ec] = std::from_chars(s.data(), end, v);
    if (ec != std::errc() || p != end || !std::isfinite(v) || v < 0) {
        return std::nullopt;
    }
    return v;
}

void print(const rxecc::sim::Result& r, unsigned senders) {
    std::cout << "t_ms\tqueue_bytes";
    for (unsigned i = 0; i < senders; i++) {
        std::cout << "\trc" << i + 1 << "_mbps";
    }
    for (unsigned i = 0; i < senders; i++) {
        std::cout << "\tgoodput" << i + 1 << "_mbps";
    }
    std::cout << "\n" << std::fixed << std::setprecision(3);
    for (const auto& s : r.series) {
        std::cout << s.t_ms << "\t" << static_cast<std::uint64_t>(s.queue_bytes);
        for (const double v : s.rc_mbps) {
            std::cout << "\t" << v;
        }
        for (const double v : s.goodput_mbps) {
            std::cout << "\t" << v;
        }
        std::cout << "\n";
    }
    std::cout << "# jain " << r.jain << " utilisation " << r.utilisation << " cnps " << r.cnps
              << " marks " << r.marks << " drops " << r.drops << " max_queue_kb " << r.max_queue_kb
              << "\n";
}

// The parameters as `rxecc -j dcqcn show dev DEV` prints them (its "dcqcn"
// object), which --params reads back.
nlohmann::json params_json(const rxecc_dcqcn_params& p) {
    nlohmann::json dcqcn = nlohmann::json::object();
    for (unsigned i = 0; i < rxecc_dcqcn_num_params; i++) {
        dcqcn[rxecc_dcqcn_param_descs[i].name] = rxecc_dcqcn_param_get(&p, i);
    }
    return nlohmann::json::array({{{"dcqcn", dcqcn}}});
}

std::string fmt(double v) {
    std::ostringstream o;
    o << v;
    return o.str();
}

// Bad usage (exit 2) and an unusable parameters file (exit 1).
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using Options = std::map<std::string, std::string, std::less<>>;
using Numbers = std::map<std::string, double, std::less<>>;

// The options as name -> value; "print-params", which takes no value, maps
// to "" when given.
Options parse_options(std::span<char*> args) {
    static const std::vector<std::string_view> known = {
        "params",    "profile",  "scale-kbps", "speedup",  "senders", "rate-kbps",
        "link-kbps", "kmin",     "kmax",       "pmax",     "buffer",  "packet",
        "delay-us",  "duration", "sample-ms",  "start-ms", "stop-ms", "seed"};
    Options opt;
    std::size_t i = 0;
    while (i < args.size()) {
        const std::string_view k = args[i];
        if (k == "--print-params") {
            opt["print-params"] = "";
            i++;
            continue;
        }
        if (!k.starts_with("--") || i + 1 >= args.size()) {
            throw UsageError("'" + std::string(k) + "' needs a value (or is no option)");
        }
        if (std::ranges::find(known, k.substr(2)) == known.end()) {
            throw UsageError("unknown option " + std::string(k));
        }
        opt[std::string(k.substr(2))] = args[i + 1];
        i += 2;
    }
    if (opt.contains("params") == opt.contains("profile")) {
        throw UsageError("give --params or --profile");
    }
    if (opt.contains("scale-kbps") && !opt.contains("profile")) {
        throw UsageError("--scale-kbps goes with --profile");
    }
    if (opt.contains("speedup") && !opt.contains("scale-kbps")) {
        throw UsageError("--speedup goes with --scale-kbps");
    }
    for (const char* req : {"senders", "rate-kbps"}) {
        if (!opt.contains("print-params") && !opt.contains(req)) {
            throw UsageError(std::string("--") + req + " is required");
        }
    }
    return opt;
}

// Every numeric option, its default where it was not given (--senders and
// --rate-kbps are required for a run: parse_options).
Numbers parse_numbers(const Options& opt) {
    Numbers num = {{"senders", 1},     {"rate-kbps", 1}, {"link-kbps", 0},   {"kmin", 5000},
                   {"kmax", 20000},    {"pmax", 20},     {"buffer", 262144}, {"packet", 1082},
                   {"delay-us", 1500}, {"duration", 20}, {"sample-ms", 100}, {"seed", 1},
                   {"scale-kbps", 0},  {"speedup", 1}};
    for (auto& [k, v] : num) {
        if (const auto it = opt.find(k); it != opt.end()) {
            const auto n = number(it->second);
            if (!n) {
                throw UsageError("--" + k + " '" + it->second + "' is not a number");
            }
            v = *n;
        }
    }
    // whole numbers in a range; the rest in a range
    static const std::map<std::string, std::pair<double, double>, std::less<>> whole = {
        {"senders", {1, 64}},
        {"packet", {64, 65536}},
        {"seed", {0, 1e15}},
        {"speedup", {1, 1024}},
        {"scale-kbps", {0, 400e6}}};
    static const std::map<std::string, std::pair<double, double>, std::less<>> ranges = {
        {"rate-kbps", {1, 400e6}}, {"link-kbps", {0, 400e6}},   {"kmin", {0, 1e9}},
        {"kmax", {0, 1e9}},        {"pmax", {0, 100}},          {"buffer", {0, 1e9}},
        {"delay-us", {0, 1e7}},    {"duration", {0.001, 3600}}, {"sample-ms", {0.001, 1e6}}};
    for (const auto& [k, r] : whole) {
        const double v = num[k];
        if (v < r.first || v > r.second || v != std::floor(v)) {
            throw UsageError("--" + k + " must be a whole number from " + fmt(r.first) + " to " +
                             fmt(r.second));
        }
    }
    for (const auto& [k, r] : ranges) {
        if (num[k] < r.first || num[k] > r.second) {
            throw UsageError("--" + k + " must be from " + fmt(r.first) + " to " + fmt(r.second));
        }
    }
    if (num["kmax"] > 0 && num["kmax"] < num["kmin"]) {
        throw UsageError("--kmax must not be below --kmin");
    }
    if (num["duration"] * 1000 / num["sample-ms"] > 1e6) {
        throw UsageError(
            "more than a million samples: a longer --sample-ms or a shorter --duration");
    }
    return num;
}

// --start-ms or --stop-ms (`key`): a time per sender, 0 where none is given.
std::vector<double> parse_times(const Options& opt, const std::string& key, unsigned senders) {
    std::vector<double> times(senders, 0.0);
    const auto it = opt.find(key);
    if (it == opt.end()) {
        return times;
    }
    std::stringstream ss(it->second);
    std::string item;
    unsigned i = 0;
    while (std::getline(ss, item, ',')) {
        const auto n = number(item);
        if (!n || i >= senders) {
            throw UsageError("--" + key + " takes up to --senders times in ms, comma-separated");
        }
        times[i++] = *n;
    }
    return times;
}

rxecc_dcqcn_params load_params(const Options& opt, const Numbers& num) {
    rxecc_dcqcn_params p{};
    if (const auto prof_it = opt.find("profile"); prof_it != opt.end()) {
        const int prof = rxecc_dcqcn_profile_find(prof_it->second.c_str());
        if (prof < 0) {
            throw UsageError("no profile '" + prof_it->second + "'");
        }
        const auto profile = static_cast<rxecc_dcqcn_profile>(prof);
        rxecc_dcqcn_load_profile(&p, profile);
        if (opt.contains("scale-kbps") &&
            rxecc_dcqcn_scale_profile(&p, profile, static_cast<std::uint64_t>(num.at("scale-kbps")),
                                      static_cast<std::uint32_t>(num.at("speedup"))) != 0) {
            throw UsageError("profile '" + prof_it->second +
                             "' cannot be scaled to that rate and speedup");
        }
        return p;
    }
    const std::string& path = opt.at("params");
    std::ifstream in(path);
    if (!in) {
        throw InputError("cannot read " + path);
    }
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded()) {
        throw InputError(path + ": not JSON");
    }
    std::string why;
    const auto got = rxecc::sim::params_from_json(doc, why);
    if (!got) {
        throw InputError(path + ": " + why);
    }
    return *got;
}

rxecc::sim::Config make_config(const Options& opt, Numbers& num) {
    rxecc::sim::Config cfg;
    cfg.flows = static_cast<unsigned>(num["senders"]);
    cfg.link_gbps = num["rate-kbps"] / 1e6;
    cfg.sender_gbps = num["link-kbps"] / 1e6;
    cfg.kmin_kb = num["kmin"] / 1000;
    cfg.kmax_kb = num["kmax"] / 1000;
    cfg.pmax = num["pmax"] / 100;
    cfg.queue_limit_kb = num["buffer"] / 1000;
    cfg.packet_bytes = static_cast<unsigned>(num["packet"]);
    cfg.delay_us = num["delay-us"];
    cfg.measure_ms = num["duration"] * 1000;
    cfg.bin_ms = cfg.measure_ms / 20;
    cfg.sample_ms = num["sample-ms"];
    cfg.seed = static_cast<std::uint64_t>(num["seed"]);
    cfg.mark_on_enqueue = true;
    cfg.start_ms = parse_times(opt, "start-ms", cfg.flows);
    cfg.stop_ms = parse_times(opt, "stop-ms", cfg.flows);
    for (unsigned i = 0; i < cfg.flows; i++) {
        if (cfg.stop_ms[i] > 0 && cfg.stop_ms[i] <= cfg.start_ms[i]) {
            throw UsageError("--stop-ms: sender " + std::to_string(i + 1) +
                             " stops before it starts");
        }
    }
    cfg.params = load_params(opt, num);
    return cfg;
}

int run(std::span<char*> args) {
    if (!args.empty() &&
        (std::string_view(args[0]) == "-h" || std::string_view(args[0]) == "--help")) {
        std::cout << kUsage;
        return 0;
    }
    try {
        const Options opt = parse_options(args);
        if (opt.contains("print-params")) {
            Numbers num = parse_numbers(opt);
            std::cout << params_json(load_params(opt, num)).dump(2) << "\n";
            return 0;
        }
        Numbers num = parse_numbers(opt);
        const auto cfg = make_config(opt, num);
        print(rxecc::sim::run(cfg), cfg.flows);
    } catch (const UsageError& e) {
        return usage(e.what());
    } catch (const InputError& e) {
        std::cerr << "rxecc-sim: " << e.what() << "\n";
        return kExitInput;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(std::span<char*>(argv + 1, static_cast<std::size_t>(argc - 1)));
    } catch (const std::exception& e) {
        std::cerr << "rxecc-sim: " << e.what() << "\n";
        return kExitInput;
    }
}
