#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The operator's view of a fabric's pfc switch ports over time, from the
samples of pfc_sampler.py (fabric.sh's fabric_qdisc_sampler): lines
"TIME SWITCH JSON", JSON the switch's pfc qdiscs as `rxecc -j qdisc show`
prints them.

  pfc_timeline.py summary PRIO FILE [--ports SW:DEV,...] [--bin S]
      JSON on stdout: per port the growth of every counter of priority PRIO
      over the run, and the frozen windows: the spans in which every port of
      --ports (default: every port sampled) held packets of PRIO and sent
      none of them (a PFC deadlock when the ports form a cycle), with the
      longest and their total.
  pfc_timeline.py line SUMMARY.json
      One line of a summary, for a log.
  pfc_timeline.py table PRIO FILE [--ports ...] [--bin S]
      The same ports per bin of S seconds (default 0.1), from the run's first
      sample: packets sent, PFC frames received and sent, drops (the queue's
      and the watchdog's), ECN marks, and the backlog at the bin's end; a
      tab-separated table with a header line.

Times are seconds from the first sample."""
import argparse
import json
import sys

COUNTERS = ("tx_packets", "tx_bytes", "pause_rx", "pause_tx", "xon_tx", "drops",
            "ecn_marked", "wd_storms", "wd_restorations", "wd_drops", "wd_pause_ignored")


class Port:
    """One port's samples of one priority: (time, {key: value})."""

    def __init__(self, name):
        self.name = name
        self.samples = []

    def value(self, key, t):
        """The value of KEY at the last sample at or before T (the first
        sample's before it)."""
        v = self.samples[0][1][key]
        for ts, s in self.samples:
            if ts > t:
                break
            v = s[key]
        return v

    def stalled(self):
        """Spans between consecutive samples in which the priority held
        packets at both ends and sent none."""
        spans = []
        for (t0, a), (t1, b) in zip(self.samples, self.samples[1:]):
            if a["tx_packets"] == b["tx_packets"] and a["qlen"] > 0 and b["qlen"] > 0:
                if spans and spans[-1][1] == t0:
                    spans[-1][1] = t1
                else:
                    spans.append([t0, t1])
        return spans


def load(path, prio):
    """{SW:DEV: Port} from a file of samples."""
    ports = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            ts, sw, js = (line.strip().split(" ", 2) + ["", ""])[:3]
            if sw.startswith("hw:"):
                continue	# a device's counters
            try:
                t = float(ts)
                qdiscs = json.loads(js)
            except ValueError:
                continue	# a line cut by the sampler's end
            for q in qdiscs:
                name = f"{sw}:{q['netdev']}"
                p = q["prio"][prio]
                ports.setdefault(name, Port(name)).samples.append(
                    (t, {k: int(p[k]) for k in COUNTERS + ("backlog", "qlen")}))
    if not ports:
        raise SystemExit(f"pfc_timeline: no samples in {path}")
    return ports


def intersect(a, b):
    """The intersection of two sorted lists of [start, end] spans."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append([lo, hi])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def chosen(ports, names):
    if not names:
        return sorted(ports)
    missing = [n for n in names if n not in ports]
    if missing:
        raise SystemExit(f"pfc_timeline: no samples of {', '.join(missing)}")
    return names


def summary(ports, names, t0):
    frozen = None
    for n in names:
        s = ports[n].stalled()
        frozen = s if frozen is None else intersect(frozen, s)
    frozen = [[round(a - t0, 3), round(b - t0, 3)] for a, b in frozen or []]
    out = {"start": t0, "end": max(p.samples[-1][0] for p in ports.values()) - t0,
           "ports": {}, "frozen": frozen,
           "longest_frozen": max((b - a for a, b in frozen), default=0.0),
           "frozen_total": round(sum(b - a for a, b in frozen), 3)}
    for n in names:
        p = ports[n]
        first, last = p.samples[0][1], p.samples[-1][1]
        out["ports"][n] = {k: last[k] - first[k] for k in COUNTERS}
        out["ports"][n]["samples"] = len(p.samples)
        out["ports"][n]["backlog_end"] = last["backlog"]
        storms = [t for (t, a), (_, b) in zip(p.samples, p.samples[1:])
                  if b["wd_storms"] > a["wd_storms"]]
        out["ports"][n]["first_storm"] = round(storms[0] - t0, 3) if storms else None
    return out


def table(ports, names, t0, width):
    end = max(p.samples[-1][0] for p in ports.values())
    cols = ("tx", "pause_rx", "pause_tx", "drops", "ecn", "backlog")
    print("\t".join(["t"] + [f"{n}.{c}" for n in names for c in cols]))
    t = t0
    while t < end:
        row = [f"{t + width - t0:.1f}"]
        for n in names:
            p = ports[n]

            def grew(key, p=p, t=t):
                return p.value(key, t + width) - p.value(key, t)
            row += [str(grew("tx_packets")), str(grew("pause_rx")),
                    str(grew("pause_tx") + grew("xon_tx")),
                    str(grew("drops") + grew("wd_drops")), str(grew("ecn_marked")),
                    str(p.value("backlog", t + width))]
        print("\t".join(row))
        t += width


def line(s):
    """One line of a summary: the freeze, and the ports' totals."""
    p = s["ports"].values()
    total = {k: sum(x[k] for x in p) for k in ("tx_packets", "drops", "wd_storms", "wd_drops",
                                               "pause_rx", "ecn_marked")}
    return (f"longest freeze {s['longest_frozen']:.1f} s ({len(s['frozen'])} spans,"
            f" {s['frozen_total']:.1f} s in all, of {s['end']:.1f} s); the ports sent"
            f" {total['tx_packets']} packets, dropped {total['drops']}, received"
            f" {total['pause_rx']} PFC frames, marked {total['ecn_marked']}; watchdog storms"
            f" {total['wd_storms']}, drops {total['wd_drops']}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    sub = ap.add_subparsers(dest="what", required=True)
    for what in ("summary", "table"):
        one = sub.add_parser(what)
        one.add_argument("prio", type=int, choices=range(8))
        one.add_argument("samples", metavar="FILE")
        one.add_argument("--ports", default="", help="SW:DEV,... (default: every port)")
        one.add_argument("--bin", type=float, default=0.1, help="seconds per row of the table")
    sub.add_parser("line").add_argument("summary", metavar="SUMMARY.json")
    a = ap.parse_args(argv)
    if a.what == "line":
        with open(a.summary, encoding="utf-8") as f:
            print(line(json.load(f)))
        return 0
    ports = load(a.samples, a.prio)
    names = chosen(ports, [n for n in a.ports.split(",") if n])
    t0 = min(p.samples[0][0] for p in ports.values())
    if a.what == "summary":
        json.dump(summary(ports, names, t0), sys.stdout, indent=1)
        print()
    else:
        table(ports, names, t0, a.bin)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
