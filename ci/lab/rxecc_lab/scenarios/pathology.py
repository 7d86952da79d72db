# SPDX-License-Identifier: GPL-2.0
"""The report of the lab's scenarios of PFC gone wrong (topology ring,
victim or storm; ci/guest/lab_fabric.sh records them): per mode the goodput
of each group of flows over time, the operator's view per 100 ms (PFC
frames, CNPs, ECN marks, drops, storms: the counters a switch and an RNIC
export), the figures of the table, the expectations, the plots. Registered for
those topologies (rxecc_lab.registry)."""
import bisect
import json
import os
import sys

from .. import registry
from ..checks import not_applicable, uncovered
from ..common import fmt
from ..plots import gnuplot, gp_file, gp_str, write_data
from ..report import analyse_and_record, print_summary, write_report_md
from ..shared import Port, intersect

BIN_S = 0.1
# Each topology's groups of flows: (name, the switch port they leave by: its
# bytes sent are their goodput).
GROUPS = {
    "ring": [("h1->h3", "sw3:swp3"), ("h2->h4", "sw4:swp4"), ("h3->h1", "sw:swp1"),
             ("h4->h2", "sw2:swp2")],
    "victim": [("h2,h3->h5 (incast)", "sw2:swp5"), ("h4->h6 (victim)", "sw2:swp6")],
    "storm": [("h2->h1 (stalled host)", "sw2:swp1"), ("h3->h4 (victim)", "sw2:swp4")],
}
RING = ["sw:to-sw2", "sw2:to-sw3", "sw3:to-sw4", "sw4:to-sw"]
UPLINK = "sw:to-sw2"
STALLED_PORT = "sw2:swp1"
# the victims' goodput after the stall, against before it
SPREAD_MAX = 1 / 3	# without protection: below this share
RECOVERED_MIN = 0.5	# with protection: at least this share
RECOVERY_S = 2.0	# ... from this long after the stall began
BEFORE_S = 2.0		# "before": this long before the stall
BEFORE_MIN = 0.5	# ... in which the victim must have had this share of its link
VICTIM_HELD_MAX = 0.8	# victim: PFC holds it below this share of its link
# victim: DCQCN + PFC gives it at least this many times PFC alone's goodput
# (measured 1.80-1.85x, docs/results.md; halfway between no gain, 1x, and
# the least of those, so that noise does not pass it and a DCQCN that
# cannot cut fails it)
VICTIM_GAIN = 1.4
PORT_KEYS = ("tx_packets", "tx_bytes", "qlen", "backlog", "drops", "ecn_marked", "pause_tx",
             "xon_tx", "pause_rx", "wd_storms", "wd_drops")
TIMELINE = ("pfc_sent", "pfc_received", "cnps", "ecn_marks", "drops", "storms")


def load(path, prio):
    """{switch:port: Port} and {host: [(t, counters)]} of a mode's samples."""
    ports, hosts = {}, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            ts, name, js = (line.strip().split(" ", 2) + ["", ""])[:3]
            try:
                t, v = float(ts), json.loads(js)
            except ValueError:
                continue	# cut short when the sampler stopped
            if name.startswith("hw:"):
                hosts.setdefault(name[3:], []).append((t, v))
                continue
            for q in v:
                key = f"{name}:{q['netdev']}"
                p = q["prio"][prio]
                ports.setdefault(key, Port(key)).samples.append(
                    (t, {k: int(p.get(k, 0)) for k in PORT_KEYS}))
    return ports, hosts


def at(samples, key, t):
    """A counter of (time, values) samples at time t (the last sample at or
    before it; the first one's value before the first)."""
    i = bisect.bisect_right(samples, t, key=lambda x: x[0])
    return samples[max(i - 1, 0)][1].get(key, 0)


def grew(samples, key, a, b):
    return at(samples, key, b) - at(samples, key, a) if samples else 0


def read_time(d, name):
    try:
        with open(os.path.join(d, name), encoding="utf-8") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def operator(ports, hosts, prio, a, b):
    """The operator's counters over [a, b]: every switch port's and host's."""
    p = [x.samples for x in ports.values()]
    h = list(hosts.values())
    return {
        "pfc_sent": sum(grew(s, "pause_tx", a, b) + grew(s, "xon_tx", a, b) for s in p)
        + sum(grew(s, f"tx_prio{prio}_pause", a, b) for s in h),
        "pfc_received": sum(grew(s, "pause_rx", a, b) for s in p)
        + sum(grew(s, f"rx_prio{prio}_pause", a, b) for s in h),
        "cnps": sum(grew(s, "np_cnp_sent", a, b) for s in h),
        "ecn_marks": sum(grew(s, "ecn_marked", a, b) for s in p),
        "drops": sum(grew(s, "drops", a, b) + grew(s, "wd_drops", a, b) for s in p),
        "storms": sum(grew(s, "wd_storms", a, b) for s in p)
        + sum(grew(s, "tx_pause_storm_error_events", a, b) for s in h),
    }


def mbps(port, a, b):
    if not port or b <= a:
        return 0.0
    return grew(port.samples, "tx_bytes", a, b) * 8 / (b - a) / 1e6


def first_traffic(groups, start):
    """The load's window starts at the first sample after start at which
    any group has sent a byte."""
    best = None
    for _, p in groups:
        if not p:
            continue
        base = at(p.samples, "tx_bytes", start)
        t = next((t for t, v in p.samples if t >= start and v["tx_bytes"] > base), None)
        if t is not None and (best is None or t < best):
            best = t
    return best if best is not None else start


def analyse(raw, sc, mode):
    """One mode's figures and series."""
    d = os.path.join(raw, mode["name"])
    prio = sc["dscp"] >> 3
    path = os.path.join(d, "samples")
    r = {"name": mode["name"], "label": mode.get("label", mode["name"]), "pfc": mode["pfc"],
         "dcqcn": mode["dcqcn"], "watchdog": mode["watchdog"],
         "watchdog_ports": mode.get("watchdog_ports", "bottleneck"),
         "stall_watermark": mode["stall_watermark"]}
    if not os.path.exists(path):
        r["error"] = "no samples (the guest run failed: see its log)"
        return r, {}
    ports, hosts = load(path, prio)
    start, done = read_time(d, "load-start"), read_time(d, "load-done")
    if start is None or done is None or not ports:
        r["error"] = "no load window or no samples"
        return r, {}
    groups = [(n, ports.get(p)) for n, p in GROUPS[sc["topology"]]]
    first = first_traffic(groups, start)
    r["window_s"] = round(done - first, 2)
    r["goodput_mbps"] = {n: round(mbps(p, first, done), 2) for n, p in groups}
    r["totals"] = operator(ports, hosts, prio, first, done)
    series = {"t0": start, "groups": {}, "timeline": []}
    t = start
    while t + BIN_S <= done + 1e-9:
        series["timeline"].append([round(t + BIN_S - start, 1)]
                                  + list(operator(ports, hosts, prio, t, t + BIN_S).values()))
        for n, p in groups:
            series["groups"].setdefault(n, []).append((round(t + BIN_S - start, 1),
                                                       round(mbps(p, t, t + BIN_S), 3)))
        t += BIN_S
    topo = sc["topology"]
    if topo == "ring":
        missing = [n for n in RING if n not in ports]
        if missing:
            r["error"] = f"no samples of ring port(s) {', '.join(missing)}"
            return r, series
        frozen = None
        for n in RING:
            s = [[max(a, first), min(b, done)] for a, b in ports[n].stalled() if b > first and a < done]
            frozen = s if frozen is None else intersect(frozen, s)
        r["longest_frozen_s"] = round(max((b - a for a, b in frozen), default=0.0), 2)
        r["frozen_s"] = round(sum(b - a for a, b in frozen), 2)
        r["ring_packets"] = sum(grew(ports[n].samples, "tx_packets", first, done) for n in RING)
        r["ring_watchdog_storms"] = sum(grew(ports[n].samples, "wd_storms", first, done) for n in RING)
    elif topo == "victim" and UPLINK in ports:
        r["uplink_pfc_received"] = grew(ports[UPLINK].samples, "pause_rx", first, done)
    elif topo == "storm":
        stall = read_time(d, "stall-start")
        r["stall_s"] = round(stall - start, 2) if stall else None
        if stall:
            victims = groups[1][1]
            r["victims_before_mbps"] = round(mbps(victims, max(first, stall - BEFORE_S), stall), 2)
            r["victims_after_mbps"] = round(mbps(victims, stall + RECOVERY_S, done), 2)
            r["stalled_host_pfc_sent"] = grew(hosts.get("h1", []), f"tx_prio{prio}_pause", stall, done)
            r["stall_storm_events"] = grew(hosts.get("h1", []), "tx_pause_storm_error_events", stall, done)
            r["watchdog_storms"] = (grew(ports[STALLED_PORT].samples, "wd_storms", stall, done)
                                    if STALLED_PORT in ports else 0)
            up = ports.get(UPLINK)
            r["uplink_watchdog_drops"] = grew(up.samples, "wd_drops", stall, done) if up else 0
            r["recovery_s"] = recovery(series["groups"][groups[1][0]], stall - start,
                                       r["victims_before_mbps"])
    return r, series


def recovery(points, stall, before):
    """Seconds from the stall until the victims' goodput, in 0.5 s windows,
    is back at RECOVERED_MIN of before for good; None if it never is."""
    win = round(0.5 / BIN_S)
    after = [(t, v) for t, v in points if t > stall]
    for i in range(len(after) - win + 1):
        ok = all(sum(v for _, v in after[j:j + win]) / win >= RECOVERED_MIN * before
                 for j in range(i, len(after) - win + 1))
        if ok:
            return round(max(0.0, after[i][0] - BIN_S - stall), 1)
    return None


def prevents(r, sc):
    """The hosts' storm prevention can end the storm: its watermark is on and
    shorter than the stall (only the storm's stalled host pauses on its own)."""
    w = r["stall_watermark"]
    return sc["topology"] == "storm" and 0 < w < (sc["duration"] - sc["stall_at"]) * 1000


def is_alone(m, sc):
    """A mode (or its results) that runs PFC alone: no DCQCN, no watchdog,
    no storm prevention."""
    return m["pfc"] and not m["dcqcn"] and not m["watchdog"] and not prevents(m, sc)


def checks(results, sc):
    out = [(f"{r['label']}: the mode was recorded", False, r["error"]) for r in results if "error" in r]
    ok = [r for r in results if "error" not in r]
    topo = sc["topology"]
    # PFC alone: the scenario's first mode with PFC and no DCQCN, watchdog
    # or storm prevention; whether there is one is the scenario's to say,
    # not the run's (one that was not recorded fails the comparisons)
    declared = next((m for m in sc["modes"] if is_alone(m, sc)), None)
    alone = next((r for r in ok if declared and r["name"] == declared["name"]), None)
    missing = f"{declared['label']} was not recorded" if declared and alone is None else None
    if declared is None:
        out.append(not_applicable({"ring": "PFC alone: the ring freezes", "victim": "PFC alone: the "
                                       "victim is held back", "storm": "PFC alone: the stalled host's pauses "
                                       "spread"}[topo], "no mode of the scenario runs PFC alone (no DCQCN, "
                                      "no watchdog, no storm prevention)"))
    for r in ok:
        lbl, t = r["label"], r["totals"]
        protected = r["watchdog"] or prevents(r, sc)
        if topo == "ring" and r is alone:
            out.append((f"{lbl}: the ring freezes (all four ring ports hold packets and send none) for half "
                        "the load or more, and nothing is dropped",
                        r["longest_frozen_s"] >= r["window_s"] / 2 and t["drops"] == 0,
                        f"longest freeze {r['longest_frozen_s']} s of {r['window_s']} s, {t['drops']} drops"))
        if topo == "ring" and r["watchdog"] and r["pfc"]:
            text = (f"{lbl}: the watchdog breaks the deadlock (a storm detected on a ring port, no freeze of "
                    "1 s, over twice the ring's packets of PFC alone)")
            if declared is None:
                out.append(not_applicable(text, "no mode of the scenario runs PFC alone"))
            elif alone is None:
                out.append((text, False, missing))
            else:
                out.append((text, r["ring_watchdog_storms"] >= 1 and r["longest_frozen_s"] < 1.0
                            and r["ring_packets"] > 2 * alone["ring_packets"],
                            f"{r['ring_watchdog_storms']} storms, longest freeze {r['longest_frozen_s']} s, "
                            f"{r['ring_packets']} packets vs {alone['ring_packets']}"))
        if topo == "victim" and r is alone:
            v = r["goodput_mbps"][GROUPS["victim"][1][0]]
            out.append((f"{lbl}: the victim is held back by pauses on the uplink (under "
                        f"{round(100 * VICTIM_HELD_MAX)} % of its {sc['link']} Mbit/s link), nothing dropped",
                        v < VICTIM_HELD_MAX * sc["link"] and r.get("uplink_pfc_received", 0) > 0
                        and t["drops"] == 0,
                        f"{v} Mbit/s, uplink received {r.get('uplink_pfc_received')} PFC frames, "
                        f"{t['drops']} drops"))
        if topo == "victim" and r["pfc"] and r["dcqcn"]:
            text = f"{lbl}: the victim gets {VICTIM_GAIN:g}x its goodput with PFC alone or more"
            if declared is None:
                out.append(not_applicable(text, "no mode of the scenario runs PFC alone"))
            elif alone is None:
                out.append((text, False, missing))
            else:
                v, va = (x["goodput_mbps"][GROUPS["victim"][1][0]] for x in (r, alone))
                # a victim that got nothing with PFC alone is no baseline
                out.append((text, va > 0 and v >= VICTIM_GAIN * va,
                            f"{v} vs {va} Mbit/s ({alone['label']})" + (f", {v / va:.2f}x" if va else "")))
        if topo == "storm" and r.get("stall_s") is None:
            # every storm check needs the stall's time: not met, not left out
            out.append((f"{lbl}: the stall was recorded", False, "no stall time in the run's files"))
        if topo == "storm" and r.get("stall_s") is not None:
            before, after = r["victims_before_mbps"], r["victims_after_mbps"]
            if before < BEFORE_MIN * min(sc["rate"], sc["link"]):
                # a victim that had not got going is no baseline
                out.append((f"{lbl}: the victim ran at {round(100 * BEFORE_MIN)} % of its link or more in the "
                            f"{BEFORE_S:g} s before the stall", False, f"{before} Mbit/s"))
                continue
            if r is alone:
                out.append((f"{lbl}: the stalled host's pauses spread: h1 sends PFC and the victim's goodput "
                            f"{RECOVERY_S:g} s after the stall is under {round(100 * SPREAD_MAX)} % of before",
                            r["stalled_host_pfc_sent"] > 0 and after < SPREAD_MAX * before,
                            f"h1 sent {r['stalled_host_pfc_sent']} PFC frames; {after} vs {before} Mbit/s"))
            elif r["pfc"] and r["watchdog"] and r["watchdog_ports"] == "all":
                # no expectation: whether the uplink's watchdog fires too depends on which of the two
                # stalled queues passes the detection time first (docs/lab.md)
                out.append(not_applicable(f"{lbl}: the protection fires and the victim recovers",
                                              "with the watchdog on every port it is a race (docs/lab.md)"))
            elif r["pfc"] and protected:
                fired = (r["stall_storm_events"] >= 1 if prevents(r, sc) else True) and \
                    (r["watchdog_storms"] >= 1 if r["watchdog"] else True)
                out.append((f"{lbl}: the protection fires and the victim recovers (at least "
                            f"{round(100 * RECOVERED_MIN)} % of their goodput before the stall, from "
                            f"{RECOVERY_S:g} s after it)",
                            fired and after >= RECOVERED_MIN * before,
                            f"h1 storm events {r['stall_storm_events']}, switch watchdog storms "
                            f"{r['watchdog_storms']}; {after} vs {before} Mbit/s, back for good after "
                            f"{r['recovery_s']} s"))
    return uncovered(results, out)


def spread_figures(topology):
    """The figures of a mode that the spread over runs reports."""
    figs = [(f"{n} Mbit/s", lambda r, n=n: (r.get("goodput_mbps") or {}).get(n)) for n, _ in GROUPS[topology]]
    if topology == "ring":
        figs.append(("longest freeze s", lambda r: r.get("longest_frozen_s")))
    if topology == "storm":
        figs += [("victim after stall Mbit/s", lambda r: r.get("victims_after_mbps")),
                 ("uplink watchdog drops", lambda r: r.get("uplink_watchdog_drops"))]
    figs += [(k.replace("_", " "), lambda r, k=k: (r.get("totals") or {}).get(k)) for k in TIMELINE]
    return figs


def describe(sc):
    base = {"ring": "four switches in a ring, routes one way round, h1 -> h3, h2 -> h4, h3 -> h1, "
                    f"h4 -> h2; every link {sc['rate']} Mbit/s (a PFC deadlock's cyclic buffer dependency)",
            "victim": f"h2, h3 -> h5 through sw2's {sc['rate']} Mbit/s port; the victim h4 -> h6 shares "
                      "only the uplink sw -> sw2 with them",
            "storm": f"h2 -> h1 and the victim h3 -> h4, over the uplink sw -> sw2 and through sw2's "
                     f"{sc['rate']} Mbit/s ports; {sc['stall_at']} s into the load h1's receive path lets "
                     f"one packet through every {sc['stall_release']} ms (h1 pauses after "
                     f"{sc['pfc_rx_xoff']} ms of wait)"}[sc["topology"]]
    return (f"{base}; ib_write_bw {sc['message']} B for {sc['duration']} s, DSCP {sc['dscp']} (priority "
            f"{sc['dscp'] >> 3}); host links {sc['link']} Mbit/s; switch buffer {sc['buffer']}, XOFF "
            f"{sc['xoff']}, XON {sc['xon']}, headroom {sc['headroom']}, ECN {sc['kmin']}-{sc['kmax']}")


def columns(sc):
    """The table's columns: (header, getter)."""
    cols = [(f"{n} Mbit/s", lambda r, n=n: r["goodput_mbps"].get(n)) for n, _ in GROUPS[sc["topology"]]]
    if sc["topology"] == "ring":
        cols += [("longest freeze s", lambda r: r.get("longest_frozen_s"))]
    if sc["topology"] == "storm":
        cols += [("victim before/after stall", lambda r: f"{r.get('victims_before_mbps')}/"
                  f"{r.get('victims_after_mbps')}"),
                 ("recovery s", lambda r: r.get("recovery_s")),
                 ("uplink watchdog drops", lambda r: r.get("uplink_watchdog_drops"))]
    cols += [(k.replace("_", " "), lambda r, k=k: r["totals"][k]) for k in TIMELINE]
    return cols


def md_table(results, sc):
    cols = columns(sc)
    lines = ["| mode | " + " | ".join(h for h, _ in cols) + " |", "|---|" + "---|" * len(cols)]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['label']} | " + " | ".join("-" for _ in cols) + " |")
            continue
        lines.append(f"| {r['label']} | " + " | ".join(fmt(g(r)) for _, g in cols) + " |")
    return "\n".join(lines)


def per_second(series):
    """The 100 ms timeline summed per second: rows of [second, counters...]."""
    out = {}
    for row in series["timeline"]:
        sec = int((row[0] - 1e-6) // 1) + 1
        acc = out.setdefault(sec, [0] * len(TIMELINE))
        for i, v in enumerate(row[1:]):
            acc[i] += v
    return [[s] + v for s, v in sorted(out.items())]


def write_timeline(path, rows):
    """The operator's events per 100 ms (rows of [t, TIMELINE...]) as a TSV."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("# t_s\t" + "\t".join(TIMELINE) + "  (per 100 ms, ending at t)\n")
        f.writelines("\t".join(str(x) for x in row) + "\n" for row in rows)


def operator_panel(tfile, rows, outdir):
    """gnuplot lines plotting the operator's events of tfile (its rows)."""
    if any(any(row[1:]) for row in rows):
        # a log scale: drops come by the hundred, storms one at a time
        script = ["set logscale y", "set yrange [0.8:*]"]
        use = "(${c} > 0 ? ${c} : NaN)"
    else:
        script = ["set yrange [0:1]", "set label 'no event' at graph 0.45,0.5"]
        use = "{c}"
    script.append("plot " + ", ".join(
        f"{gp_file(tfile, outdir)} using 1:{use.format(c=i + 2)} with impulses lw 2 "
        f"title {gp_str(k.replace('_', ' '))}" for i, k in enumerate(TIMELINE)))
    return script


def plots(sc, results, allseries, outdir):
    made = []
    groups = [n for n, _ in GROUPS[sc["topology"]]]
    for r in results:
        s = allseries.get(r["name"])
        if not s:
            continue
        name = r["name"]
        gfile = os.path.join(outdir, f"goodput-{name}.tsv")
        rows = []
        for i, (t, _) in enumerate(s["groups"][groups[0]]):
            rows.append([t] + [s["groups"][g][i][1] for g in groups])
        write_data(gfile, rows)
        tfile = os.path.join(outdir, f"timeline-{name}.tsv")
        write_timeline(tfile, s["timeline"])
        png = f"{name}.png"
        stall = r.get("stall_s")
        script = [
            "set terminal pngcairo size 1000,700 font ',10'", f"set output {gp_str(png)}",
            "set multiplot layout 2,1", f"set title {gp_str(r['label'] + ': goodput per 100 ms')}",
            "set ylabel 'Mbit/s'", "set xlabel 's since the load started'", "set key outside right",
            "set grid", f"set yrange [0:{sc['link'] * 1.6}]",
        ]
        if stall is not None:
            script.append(f"set arrow from {stall},graph 0 to {stall},graph 1 nohead dt 2 lc rgb 'red'")
            script.append(f"set label 'receive stall' at {stall},graph 0.95 offset 0.5,0 tc rgb 'red'")
        script.append("plot " + ", ".join(
            f"{gp_file(gfile, outdir)} using 1:{i + 2} with steps lw 2 title {gp_str(g)}"
            for i, g in enumerate(groups)))
        script += ["unset label", "unset arrow",
                   f"set title {gp_str(r['label'] + ': what the operator sees, per 100 ms')}",
                   "set ylabel 'events per 100 ms'"]
        if stall is not None:
            script.append(f"set arrow from {stall},graph 0 to {stall},graph 1 nohead dt 2 lc rgb 'red'")
        script += operator_panel(tfile, s["timeline"], outdir)
        script.append("unset multiplot")
        gnuplot("\n".join(script) + "\n", outdir)
        made.append(png)
    return made


def report(raw, sc, outdir):
    results, allseries, made, ck = analyse_and_record(raw, sc, outdir, analyse, plots, checks)
    notes = ("Goodput: bytes each group's switch port sent, over the load (from its first byte). The "
             "operator's counters, over the load, every switch port (`pfc` qdisc) and host (hw_counters) "
             "together: PFC frames sent (XOFF and XON) and received, CNPs the hosts sent, ECN marks the "
             "ports set, drops (queue and watchdog), storms (switch watchdog and the hosts' "
             "`tx_pause_storm_error_events`). Sampled every 100 ms (pfc_sampler.py); per 100 ms in "
             "timeline-MODE.tsv and the plots, per second below.")
    body = ["## The operator's view, per second", ""]
    for r in results:
        s = allseries.get(r["name"])
        if not s:
            body += [f"{r['label']}: {r.get('error')}", ""]
            continue
        body += [f"{r['label']}:", "", "| s | " + " | ".join(k.replace("_", " ") for k in TIMELINE) + " |",
                 "|---|" + "---|" * len(TIMELINE)]
        body += ["| " + " | ".join(str(x) for x in row) + " |" for row in per_second(s)]
        body.append("")
    write_report_md(outdir, [f"# When PFC goes wrong: {sc['topology']}", "", describe(sc), "",
                                 md_table(results, sc), "", notes, ""], ck, body, made)
    print_summary(describe(sc), results, columns(sc), ck, outdir, made)
    return 0


TOPOLOGIES = ("ring", "victim", "storm")
registry.register(sys.modules[__name__])
