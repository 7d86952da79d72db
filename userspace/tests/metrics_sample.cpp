// Prints `rxecc metrics` of made-up devices and qdiscs (no kernel needed),
// in the format its argument names, for metrics_parse_test.py to parse with
// the Prometheus client library's parsers.
//   metrics_sample prometheus|openmetrics
#include <linux/sch_pfc.h>

#include <iostream>
#include <span>
#include <string>

#include "metrics.hpp"

int main(int argc, char** argv) {
    using namespace rxecc::tool;
    const std::span<char*> args(argv, static_cast<size_t>(argc));
    if (args.size() != 2) {
        std::cerr << "usage: metrics_sample prometheus|openmetrics\n";
        return 1;
    }
    Stats a;
    a.dev = DevId{1, "h1", "eth0"};
    a.counters = {{"np_cnp_sent", 7},
                  {"rx_prio3_pause", 12},
                  {"rx_prio3_pause_duration", 2500000},
                  {"tx_prio3_pause_duration", 1500},
                  {"rp_pace_late_us", 250},
                  {"tx_pause_storm_error_events", 2}};
    // Label values to escape: a backslash before n, a quote, a trailing
    // backslash; a newline.
    Stats b = a;
    b.dev = DevId{2, "h2", R"(a\nb"c\)"};
    Stats c = a;
    c.dev = DevId{3, "h3", "x\ny"};
    QdiscInfo q;
    q.netdev = "swp1";
    q.drops = 9;
    q.prio.at(3).id = 3;
    q.prio.at(3).stats.tx_bytes = 123456;
    q.prio.at(3).stats.backlog = 4096;
    q.prio.at(3).stats.pause_rx_duration = 3000000000;  // ns: 3 s
    q.prio.at(3).wd.storm = 1;
    q.prio.at(3).wd.storms = 1;
    q.prio.at(3).wd.storm_duration = 1500000;  // ns
    for (size_t p = 0; p < q.prio.size(); ++p) q.prio.at(p).id = static_cast<uint8_t>(p);
    const std::string format = args[1];
    std::cout << metrics_text(
        {a, b, c}, {q},
        format == "openmetrics" ? MetricsFormat::openmetrics : MetricsFormat::prometheus);
    return 0;
}
