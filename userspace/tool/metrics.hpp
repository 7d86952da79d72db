// `rxecc metrics`: every port counter of the rdma_rxecc devices and every
// statistic of the pfc qdiscs (their watchdog's too) in a text format that
// Prometheus scrapes: the Prometheus text exposition format 0.0.4 (as
// node_exporter's textfile collector reads it) or OpenMetrics 1.0.
//
// Names are stable: rxecc_port_<counter>_total{device,netdev,port} for a
// port counter under its hw_counters name (mlx5's where mlx5 has one), the
// per-priority PFC counters with a prio label, rxecc_qdisc_<statistic>
// {netdev} and rxecc_qdisc_prio_<statistic>{netdev,prio}. Times are in
// seconds (a counter in us becomes NAME_seconds_total), sizes in bytes.
#pragma once

#include <string>
#include <vector>

#include "netlink_client.hpp"
#include "qdisc.hpp"

namespace rxecc::tool {

enum class MetricsFormat { prometheus, openmetrics };

[[nodiscard]] std::string metrics_text(const std::vector<Stats>& stats,
                                       const std::vector<QdiscInfo>& qdiscs, MetricsFormat format);

}  // namespace rxecc::tool
