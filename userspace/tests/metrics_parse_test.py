#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""`rxecc metrics` output parsed by the Prometheus client library's parsers:
the text format 0.0.4 (prometheus_client.parser) and OpenMetrics 1.0
(prometheus_client.openmetrics.parser, strict: units, _total, # EOF).

usage: metrics_parse_test.py sample METRICS_SAMPLE   (made-up values, checked)
       metrics_parse_test.py check [prometheus|openmetrics] < TEXT
The second form (the guest tests) parses TEXT and prints one line per sample:
NAME{label=value,...} VALUE."""
import subprocess
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families as prom_parse


def format_rules(text, fmt):
    """What the parsers let pass: in 0.0.4 one TYPE line per name, no UNIT or
    EOF line (Prometheus's own parser refuses a family split in two)."""
    if fmt == "openmetrics":
        return
    types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
    if len(types) != len(set(types)):
        sys.exit("format 0.0.4: a name with two TYPE lines")
    if any(line.startswith(("# UNIT", "# EOF")) for line in text.splitlines()):
        sys.exit("format 0.0.4: an OpenMetrics line")


def samples(text, fmt):
    """{(name, frozenset(labels)): value} of every sample; fails on a text the
    parser refuses, a family without HELP, a name outside rxecc_, or (in
    OpenMetrics) a unit that is not the one its name ends with."""
    format_rules(text, fmt)
    parse = om_parse if fmt == "openmetrics" else prom_parse
    out = {}
    for fam in parse(text):
        if not fam.name.startswith("rxecc_") or not fam.documentation:
            sys.exit(f"family {fam.name}: no rxecc_ name or no HELP")
        if fam.type not in ("counter", "gauge"):
            sys.exit(f"family {fam.name}: type {fam.type}")
        unit = next((u for u in ("seconds", "bytes") if fam.name.endswith("_" + u)), "")
        if fmt == "openmetrics" and fam.unit != unit:
            sys.exit(f"family {fam.name}: unit '{fam.unit}', want '{unit}'")
        for s in fam.samples:
            key = (s.name, frozenset(s.labels.items()))
            if key in out:
                sys.exit(f"sample {s.name} {s.labels} twice")
            out[key] = s.value
    return out


def want(got, name, labels, value):
    v = got.get((name, frozenset(labels.items())))
    if v is None or abs(v - value) > 1e-9 * max(1.0, value):
        sys.exit(f"{name}{labels}: {v}, want {value}")


def sample_test(tool):
    for fmt in ("prometheus", "openmetrics"):
        text = subprocess.run([tool, fmt], check=True, capture_output=True, text=True).stdout
        got = samples(text, fmt)
        dev = {"device": "h1", "netdev": "eth0", "port": "1"}
        want(got, "rxecc_port_np_cnp_sent_total", dev, 7)
        want(got, "rxecc_port_rx_prio_pause_total", {**dev, "prio": "3"}, 12)
        want(got, "rxecc_port_rx_prio_pause_duration_seconds_total", {**dev, "prio": "3"}, 2.5)
        want(got, "rxecc_port_tx_prio_pause_duration_seconds_total", {**dev, "prio": "3"}, 0.0015)
        want(got, "rxecc_port_rp_pace_late_seconds_total", dev, 0.00025)
        want(got, "rxecc_port_tx_pause_storm_error_events_total", dev, 2)
        want(got, "rxecc_port_np_cnp_sent_total",
             {"device": "h2", "netdev": 'a\\nb"c\\', "port": "1"}, 7)
        want(got, "rxecc_port_np_cnp_sent_total", {"device": "h3", "netdev": "x\ny", "port": "1"}, 7)
        q = {"netdev": "swp1", "prio": "3"}
        want(got, "rxecc_qdisc_drops_total", {"netdev": "swp1"}, 9)
        want(got, "rxecc_qdisc_prio_tx_bytes_total", q, 123456)
        want(got, "rxecc_qdisc_prio_backlog_bytes", q, 4096)
        want(got, "rxecc_qdisc_prio_pause_rx_duration_seconds_total", q, 3.0)
        want(got, "rxecc_qdisc_prio_wd_storm", q, 1)
        want(got, "rxecc_qdisc_prio_wd_storms_total", q, 1)
        want(got, "rxecc_qdisc_prio_wd_storm_duration_seconds_total", q, 0.0015)
        want(got, "rxecc_qdisc_prio_wd_storms_total", {"netdev": "swp1", "prio": "0"}, 0)
        print(f"{fmt}: {len(got)} samples parsed, values checked")
    # A broken text is refused: the test can fail.
    try:
        samples("# TYPE rxecc_x counter\nrxecc_x_total{a=\"1} 2\n# EOF\n", "openmetrics")
    except ValueError:
        pass
    else:
        sys.exit("the OpenMetrics parser took a broken label")


def main():
    if sys.argv[1] == "sample":
        sample_test(sys.argv[2])
        return
    fmt = sys.argv[2] if len(sys.argv) > 2 else "prometheus"
    for (name, labels), v in sorted(samples(sys.stdin.read(), fmt).items(), key=str):
        print(name + "{" + ",".join(f"{k}={val}" for k, val in sorted(labels)) + "} " + repr(float(v)))


if __name__ == "__main__":
    main()
