# SPDX-License-Identifier: GPL-2.0
"""Analysis shared by the scenarios: the senders' DCQCN rates against their
fair share, the queue's spans, binning."""

import os

from .capture import clock_offset, packet_spans


# The queue plots: the backlog's time-weighted mean per bin (200 per second).
QUEUE_BIN_S = 0.005


# The rate plots: each sender's throughput per bin.
THROUGHPUT_BIN_S = 0.1


# A sender's DCQCN rate counts as at its fair share within this fraction of it.
FAIR_BAND = 0.3


# Seconds after the load starts that the rate statistics leave out.
SETTLE_S = 2.0


def sender_rc(series, host):
    """A sender's Rc events [(t, Mbit/s)] from rate_series: its first QP's."""
    return next((p for (dev, _), p in sorted(series.items()) if dev == host), [])


def mono_spans(sc, d):
    """packet_spans of mode directory d on CLOCK_MONOTONIC (the trace's)."""
    off = clock_offset(d)
    return {h: (a - off, b - off)
            for h, (a, b) in packet_spans(os.path.join(d, "swp1.pcap"), sc["senders"]).items()}


def congested(segments, line_mbps, rate_mbps):
    """The settled parts whose senders, at their line rate, oversubscribe the
    port (where a queue can stand and marking hold it); all of them if none
    does. One sender at the port's rate builds no queue to hold."""
    hot = [s for s in segments if len(s[2]) * line_mbps > rate_mbps]
    return hot or segments


def settled_segments(sc, d, window, senders):
    """The parts of the load's window the rate statistics look at: [(start,
    end, senders present)], each SETTLE_S after the senders present last
    changed. All senders throughout, less the window's first SETTLE_S; with
    `stagger`, a part per step between a sender's first and last packet at
    the bottleneck (CLOCK_MONOTONIC), none if a sender sent nothing."""
    w0, w1 = window
    if not sc.get("stagger"):
        return [(w0 + SETTLE_S, w1, list(senders))] if w1 > w0 + SETTLE_S else []
    spans = mono_spans(sc, d)
    if any(h not in spans for h in senders):
        return []
    edges = sorted({w0, w1} | {t for span in spans.values() for t in span if w0 < t < w1})
    out = []
    for a, b in zip(edges, edges[1:]):
        mid = (a + b) / 2
        present = [h for h in senders if h in spans and spans[h][0] <= mid <= spans[h][1]]
        if present and b > a + SETTLE_S:
            out.append((a + SETTLE_S, b, present))
    return out


def rc_steps(pts, a, b, line_mbps):
    """A sender's Rc over [a, b] as [(value, seconds)]: the step function of
    its rxecc_rate events, the line rate before the first."""
    steps = [(a, next((v for t, v in reversed(pts) if t <= a), line_mbps))]
    steps += [(t, v) for t, v in pts if a < t < b]
    return [(v, y - x) for (x, v), (y, _) in zip(steps, steps[1:] + [(b, 0)])]


def rate_stats(series, segments, senders, line_mbps, rate_mbps):
    """Each sender's DCQCN rate Rc against its fair share (the port's rate
    over the senders present) in the settled segments: {host: {median_mbps,
    in_band_pct}} and the time-weighted mean of the senders' summed Rc. Rc
    is a step function of the rxecc_rate events; before a QP's first event,
    and for a sender that has none, it is the line rate (the limiter is off).
    A sender with several QPs counts by its first."""
    seconds = sum(b - a for a, b, _ in segments)
    if seconds <= 0:
        return None
    per, total = {}, 0.0
    for host in senders:
        pts = sender_rc(series, host)
        spans = []     # (Rc, seconds, fair share)
        for a, b, present in segments:
            if host in present:
                fair = rate_mbps / len(present)
                spans += [(v, t, fair) for v, t in rc_steps(pts, a, b, line_mbps)]
        mine = sum(t for _, t, _ in spans)
        if mine <= 0:
            continue
        inside = sum(t for v, t, f in spans if abs(v - f) <= FAIR_BAND * f)
        acc, median = 0.0, spans[-1][0]
        for v, t, _ in sorted(spans):
            acc += t
            if acc >= mine / 2:
                median = v
                break
        per[host] = {"median_mbps": round(median, 1), "in_band_pct": round(100 * inside / mine, 1)}
        total += sum(v * t for v, t, _ in spans)
    return {"fair_mbps": round(rate_mbps / len(senders), 2), "band_pct": round(100 * FAIR_BAND),
            "seconds": round(seconds, 2), "senders": per, "sum_mean_mbps": round(total / seconds, 1)}


def step_spans(series, t0, t1, before=0.0):
    """A step function over [t0, t1] as [(value, seconds it held)]; `before`
    is its value until its first point."""
    out, v, last = [], before, t0
    for t, x in series:
        if t <= t0:
            v = x
            continue
        if t >= t1:
            break
        out.append((v, t - last))
        v, last = x, t
    out.append((v, t1 - last))
    return out


def queue_held(queue, segments, kmin):
    """The queue (a step function) over segments [(start, end, ...)]: its
    spans (step_spans), its time-weighted mean and the % of the time it was
    at kmin bytes or above."""
    spans = [x for a, b, *_ in segments for x in step_spans(queue, a, b)]
    seconds = sum(s for _, s in spans)
    return (spans, sum(v * s for v, s in spans) / seconds,
            100 * sum(s for v, s in spans if v >= kmin) / seconds)


def held_percentile(spans, p):
    """The value a step function stayed at or under for p % of its time
    (spans as step_spans gives them)."""
    total = sum(s for _, s in spans)
    acc = 0.0
    for v, s in sorted(spans):
        acc += s
        if acc >= p / 100 * total:
            return v
    return None


def binned(series, t0, t1, width):
    """A step function as its time-weighted mean per bin of `width` s, from
    t0 to t1: [(bin start - t0, mean)]."""
    out, i, v = [], 0, 0.0
    n = int((t1 - t0) / width)
    for k in range(n):
        a, b = t0 + k * width, t0 + (k + 1) * width
        acc, last = 0.0, a
        while i < len(series) and series[i][0] < b:
            t, x = series[i]
            if t > a:
                acc += v * (t - last)
                last = t
            v = x
            i += 1
        acc += v * (b - last)
        out.append((k * width, acc / width))
    return out

