# SPDX-License-Identifier: GPL-2.0
"""Reading what the guest recorded: captures, counters, the probe's samples,
the rate and queue traces."""

import functools
import os
import re

from .common import read_text
from .shared import PAYLOAD, rxecc_measure


def read_counters(path):
    c = {}
    if os.path.exists(path):
        for line in read_text(path).splitlines():
            host, name, value = line.split()
            c[(host, name)] = int(value)
    return c


@functools.lru_cache(maxsize=2)
def packets(pcap):
    """The capture's RoCE data packets (rxecc_measure.packets), read once for
    the goodput and the throughput series."""
    return tuple(rxecc_measure.packets(pcap))


def goodput(pcap, dst, senders, skip=0.0):
    """Per sender host: Mbit/s of distinct data packets (QP, PSN) to dst over
    the time every sender was sending, less its first `skip` s; and that
    time."""
    bps, seconds = rxecc_measure.goodput(packets(pcap) if os.path.exists(pcap) else (),
                                         dst, senders, skip)
    flows = {senders[src]: v / 1e6 for src, v in bps.items()}
    return dict(sorted(flows.items(), key=lambda kv: int(kv[0][1:]))), seconds


def probe_samples(d):
    """The pings sent inside the load's window: [(time s, us)]. probe.tsv
    has one line per ping from rxecc-verbs: when it was sent (ns,
    CLOCK_MONOTONIC) and its round trip (ns); the latency is half the round
    trip, as perftest reports it."""
    window = [float(read_text(os.path.join(d, f))) if os.path.exists(os.path.join(d, f)) else None
              for f in ("load-start", "load-done")]
    out = []
    path = os.path.join(d, "probe.tsv")
    if not os.path.exists(path):
        return out
    for line in read_text(path).splitlines():
        f = line.split()
        if len(f) != 2 or not all(x.isdigit() for x in f):
            continue
        t, us = int(f[0]) / 1e9, int(f[1]) / 2000
        if (window[0] is None or t >= window[0]) and (window[1] is None or t <= window[1]):
            out.append((t, us))
    return sorted(out)


TRACE = re.compile(r"\s([0-9]+\.[0-9]+): rxecc_rate: dev=(\S+) qpn=([0-9]+) event=(\S+) "
                   r"rc=([0-9]+)")


def clock_offset(d):
    """CLOCK_REALTIME - CLOCK_MONOTONIC in the guest (the capture's clock
    against the trace's), 0 if not recorded."""
    path = os.path.join(d, "clock-offset")
    return float(read_text(path)) if os.path.exists(path) else 0.0


def throughput_series(pcap, senders, t0, end, width):
    """{host: [(t - t0, Mbit/s)]}: each sender's distinct data packets at the
    bottleneck per bin of `width` s, t0 on the capture's clock."""
    src = {f"10.0.{i}.1": f"h{i}" for i in range(2, senders + 2)}
    n = max(0, int(end / width))
    seen = {h: [set() for _ in range(n)] for h in src.values()}
    if os.path.exists(pcap) and n:
        for t, s, d, key in packets(pcap):
            k = int((t - t0) / width)
            if d == "10.0.1.1" and s in src and 0 <= k < n:
                seen[src[s]][k].add(key)
    return {h: [(k * width, len(b) * PAYLOAD * 8 / width / 1e6) for k, b in enumerate(bins)]
            for h, bins in seen.items() if any(bins)}


def rate_series(path):
    """{(dev, qpn): [(t, Mbit/s)]} from the rxecc_rate tracepoint."""
    series = {}
    if os.path.exists(path):
        for line in read_text(path).splitlines():
            m = TRACE.search(line)
            if m:
                series.setdefault((m.group(2), int(m.group(3))), []).append(
                    (float(m.group(1)), int(m.group(5)) / 1000))
    return series


QTRACE = re.compile(r"\s([0-9]+\.[0-9]+): pfc_queue: dev=(\S+) prio=([0-9]+) backlog=([0-9]+)")


def queue_series(path, dev, prio):
    """[(t, bytes)]: the backlog of one priority of the qdisc on dev after
    every packet (the sch_pfc:pfc_queue tracepoint), a step function."""
    out = []
    if os.path.exists(path):
        for line in read_text(path).splitlines():
            m = QTRACE.search(line)
            if m and m.group(2) == dev and int(m.group(3)) == prio:
                out.append((float(m.group(1)), int(m.group(4))))
    return out


def trace_complete(path):
    """False if the trace buffer overflowed (its oldest events are lost):
    the header's entries-in-buffer/entries-written differ."""
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8", errors="replace") as f:
        for _, line in zip(range(20), f):
            m = re.search(r"entries-in-buffer/entries-written: ([0-9]+)/([0-9]+)", line)
            if m:
                return m.group(1) == m.group(2)
    return True


@functools.lru_cache(maxsize=8)
def packet_spans(pcap, senders):
    """{host: (first, last)}: when each sender's data packets reached the
    bottleneck (capture clock)."""
    src = {f"10.0.{i}.1": f"h{i}" for i in range(2, senders + 2)}
    spans = {}
    if os.path.exists(pcap):
        for t, s, d, _ in packets(pcap):
            if d == "10.0.1.1" and s in src:
                h = src[s]
                spans[h] = (spans[h][0], t) if h in spans else (t, t)
    return spans


def load_window(d):
    """[load start, load end] in s of CLOCK_MONOTONIC, None where unknown."""
    return [float(read_text(os.path.join(d, f))) if os.path.exists(os.path.join(d, f)) else None
            for f in ("load-start", "load-done")]

