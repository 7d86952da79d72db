# SPDX-License-Identifier: GPL-2.0
"""The host simulation beside the kernel: the incast in rxecc-sim (the
module's own DCQCN core) and its agreement with what the kernel did."""

import os
import statistics
import subprocess

from .analysis import binned, congested, mono_spans, queue_held, sender_rc
from .capture import load_window
from .common import TOP, to_bytes


# The simulation's samples, and the bins in which the kernel's and the
# simulation's Rc are compared (their means: the sawtooth's phase is chance).
SIM_SAMPLE_MS = 10


AGREE_BIN_S = 1.0


# Kernel and simulation agree when each sender's Rc differs by at most this
# fraction of the fair share, on average (issue 21's target).
TARGET_AGREE = 0.25


def sim_binary():
    return os.environ.get("RXECC_SIM") or os.path.join(TOP, "build", "userspace", "rxecc-sim")


def parse_sim(text, senders):
    """rxecc-sim's output: [(t_s, queue_bytes, [Rc Mbit/s per sender])]."""
    rows = []
    for line in text.splitlines():
        if not line or line.startswith(("#", "t_ms")):
            continue
        f = line.split("\t")
        if len(f) != 2 + 2 * senders:
            raise ValueError(f"rxecc-sim: a row of {len(f)} columns, want {2 + 2 * senders}")
        rows.append((float(f[0]) / 1000, float(f[1]), [float(x) for x in f[2:2 + senders]]))
    return rows


def simulate(raw, sc, mode):
    """The mode's incast in the host simulation (rxecc-sim, the module's own
    DCQCN code): the parameters the first sender had (DCQCN.json), the
    scenario's port, marking and buffer, each sender starting when its first
    packet reached the bottleneck. Returns ({"base": CLOCK_MONOTONIC of the
    simulation's time 0, "rows": parse_sim(...)}, None) or (None, why not).
    The simulation has no PFC and no CPU: its senders send at Rc."""
    d = os.path.join(raw, mode["name"])
    params = os.path.join(d, "dcqcn.json")
    if not os.path.exists(params):
        return None, "no DCQCN parameters recorded (dcqcn.json)"
    exe = sim_binary()
    if not os.access(exe, os.X_OK):
        return None, f"{exe} is not built"
    _, done = load_window(d)
    spans = mono_spans(sc, d)
    hosts = [f"h{i}" for i in range(2, sc["senders"] + 2)]
    if done is None or any(h not in spans for h in hosts):
        return None, "no load window or a sender without packets"
    base = min(a for a, _ in spans.values())
    start = [spans[h][0] - base for h in hosts]
    cmd = [exe, "--params", params, "--senders", str(sc["senders"]),
           "--rate-kbps", f"{sc['rate'] * 1000:g}", "--link-kbps", f"{sc['link'] * 1000:g}",
           "--kmin", str(to_bytes(sc["kmin"])), "--kmax", str(to_bytes(sc["kmax"])),
           "--pmax", str(sc["pmax"]), "--buffer", str(to_bytes(sc["buffer"])),
           # the simulation runs its duration after the last start
           "--duration", f"{max(done - base - max(start), 0.1):.3f}",
           "--sample-ms", str(SIM_SAMPLE_MS), "--start-ms", ",".join(f"{t * 1000:.1f}" for t in start)]
    if sc.get("stagger"):
        # senders that leave: each stops after its last packet (and a
        # millisecond after its first, if that was all)
        cmd += ["--stop-ms", ",".join(f"{max(spans[h][1] - base, t + 0.001) * 1000:.1f}"
                                      for h, t in zip(hosts, start))]
    r = subprocess.run(cmd, text=True, capture_output=True, check=False)
    if r.returncode != 0:
        return None, "rxecc-sim: " + (r.stderr.strip().splitlines() or ["failed"])[0]
    return {"base": base, "rows": parse_sim(r.stdout, sc["senders"])}, None


def agreement(series, sim, segments, senders, line_mbps, rate_mbps, kmin=None):
    """Kernel against simulation in the settled segments: per sender the
    mean |Rc_kernel - Rc_sim| of their AGREE_BIN_S means while it is
    present, in % of its fair share then, and both means; "rc_diff_pct": the
    mean over the senders; the simulated queue's mean (KB) and, given kmin
    (bytes), its share of the time at kmin or above."""
    rows = [(sim["base"] + t, q, rc) for t, q, rc in sim["rows"]]
    per = {}
    for k, host in enumerate(senders):
        pts = sender_rc(series, host)
        sim_pts = [(t, rc[k]) for t, _, rc in rows]
        diffs, kern, simu = [], [], []
        for a, b, present in segments:
            if host not in present:
                continue
            fair = rate_mbps / len(present)
            ka = binned([(a - 1e9, line_mbps)] + pts, a, b, AGREE_BIN_S)
            sa = binned([(a - 1e9, line_mbps)] + sim_pts, a, b, AGREE_BIN_S)
            diffs += [abs(x - y) / fair for (_, x), (_, y) in zip(ka, sa)]
            kern += [x for _, x in ka]
            simu += [y for _, y in sa]
        if diffs:
            per[host] = {"diff_pct": round(100 * statistics.mean(diffs), 1),
                         "kernel_mbps": round(statistics.mean(kern), 2),
                         "sim_mbps": round(statistics.mean(simu), 2)}
    if not per:
        return None
    _, q, at = queue_held([(t, b) for t, b, _ in rows], congested(segments, line_mbps, rate_mbps),
                          kmin or 0)
    out = {"rc_diff_pct": round(statistics.mean(p["diff_pct"] for p in per.values()), 1),
           "senders": per, "queue_mean_kb": round(q / 1000, 1)}
    if kmin is not None:
        out["queue_at_kmin_pct"] = round(at, 1)
    return out

