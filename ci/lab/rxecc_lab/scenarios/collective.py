# SPDX-License-Identifier: GPL-2.0
"""The report of the lab's collective scenarios (topology collective;
ci/guest/lab_fabric.sh records them): rxecc-coll's ring all-reduce or
all-to-all among the eight hosts of the leaf-spine, in each congestion
control mode: the iteration time, bus bandwidth and slowest rank as
nccl-tests reports them, whether every element was right, the operator's
counters (PFC frames, CNPs, ECN marks, drops), and per 100 ms the data the
leaves delivered to the hosts and the operator's events. Registered for
topology collective (rxecc_lab.registry)."""
import json
import os
import sys

from .. import registry
from ..checks import not_applicable, uncovered
from ..common import fmt, to_bytes
from ..plots import gnuplot, gp_file, gp_str, write_data
from ..report import analyse_and_record, print_summary, write_report_md
from . import pathology

BIN_S = 0.1
HOST_PORTS = [f"lf1:swp{i}" for i in range(1, 5)] + [f"lf2:swp{i}" for i in range(5, 9)]
UPLINKS = ["lf1:to-sp1", "lf1:to-sp2", "lf2:to-sp1", "lf2:to-sp2"]
FEWER_PFC = 2		# DCQCN + PFC sends at most 1/FEWER_PFC of PFC only's frames
RING_PER_ITER = 10	# the ring's PFC frames and CNPs per iteration, under (all-to-all: hundreds)


def read_row(d):
    """Rank 0's report (rxecc-coll --json: one object per size; one size here)."""
    try:
        with open(os.path.join(d, "coll.json"), encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.startswith("{")]
    except (OSError, ValueError):
        return None
    return rows[-1] if rows else None


def fabric_bound_s(sc):
    """The least time of one iteration the fabric allows (every link at
    `rate`, 2 leaves of 4 hosts, 2 uplinks each): all-reduce, each rank
    sends 2(n-1)/n of the buffer over its link; all-to-all, each leaf sends
    4 x 4 chunks of S/8 to the other leaf over 2 uplinks (S per uplink),
    more than a host's link carries ((n-1)/n S), if ECMP spreads the QPs
    evenly."""
    n = 8
    mbit = to_bytes(sc["coll_bytes"]) // (4 * n) * 4 * n * 8 / 1e6	# whole elements per rank
    host = (2 if sc["collective"] == "allreduce" else 1) * (n - 1) / n * mbit / min(sc["link"], sc["rate"])
    if sc["collective"] == "allreduce":
        return host
    # (the 16 cross-leaf QPs of a leaf spread 8/8 over its uplinks)
    return max(host, mbit / sc["rate"])


def analyse(raw, sc, mode):
    d = os.path.join(raw, mode["name"])
    prio = sc["dscp"] >> 3
    r = {"name": mode["name"], "label": mode.get("label", mode["name"]), "pfc": mode["pfc"],
         "dcqcn": mode["dcqcn"], "watchdog": mode.get("watchdog", 0)}
    start, done = pathology.read_time(d, "load-start"), pathology.read_time(d, "load-done")
    path = os.path.join(d, "samples")
    if start is None or done is None or not os.path.exists(path):
        r["error"] = "no load window or no samples (the guest run failed: see its log)"
        return r, {}
    row = read_row(d)
    # each rank's exit status: 124 when timeout(1) ended it at `duration`
    status = {rk: pathology.read_time(d, f"rank{rk}.rc") for rk in range(8)}
    r["rank_status"] = {str(rk): None if v is None else int(v) for rk, v in status.items()}
    r["ranks_ok"] = all(v == 0 for v in status.values())
    if row:
        r.update({k: row[k] for k in ("time_us", "algbw", "busbw", "slowest_us", "worst_us", "slow_rank",
                                      "wrong", "iters", "bytes", "ranks")})
    r["bound_ms"] = round(fabric_bound_s(sc) * 1000, 1)
    ports, hosts = pathology.load(path, prio)
    missing = [p for p in HOST_PORTS + UPLINKS if p not in ports]
    if missing:
        r["error"] = f"no samples of the switch port(s) {', '.join(missing)}"
        return r, {}
    r["window_s"] = round(done - start, 2)
    r["totals"] = pathology.operator(ports, hosts, prio, start, done)
    # the requesters' retransmissions (rxe's completer_retry_err: a timeout or a NAK)
    r["qp_retries"] = sum(pathology.grew(v, "completer_retry_err", start, done) for v in hosts.values())
    r["host_port_drops"] = sum(pathology.grew(ports[p].samples, "drops", start, done)
                               for p in HOST_PORTS if p in ports)
    r["uplink_drops"] = sum(pathology.grew(ports[p].samples, "drops", start, done) for p in UPLINKS if p in ports)
    series = {"delivered": [], "timeline": []}
    t = start
    while t + BIN_S <= done + 1e-9:
        series["delivered"].append((round(t + BIN_S - start, 1),
                                    round(sum(pathology.mbps(ports.get(p), t, t + BIN_S) for p in HOST_PORTS), 3)))
        series["timeline"].append([round(t + BIN_S - start, 1)]
                                  + list(pathology.operator(ports, hosts, prio, t, t + BIN_S).values()))
        t += BIN_S
    return r, series


def checks(results, sc):
    out = [(f"{r['label']}: the mode was recorded", False, r["error"]) for r in results if "error" in r]
    ok = [r for r in results if "error" not in r]
    op = sc["collective"]
    for r in ok:
        lbl, t = r["label"], r["totals"]
        bad = {rk: v for rk, v in r["rank_status"].items() if v != 0}

        def status(v):
            return ("no exit status" if v is None else f"killed after {sc['duration']} s" if v == 124
                    else f"exit {v}")
        ranks = "all exited 0" if not bad else "failed: " + ", ".join(
            f"rank {rk} {status(v)}" for rk, v in bad.items())
        # only the all-to-all's lossy baseline may fail to finish (below)
        if r["pfc"] or r["dcqcn"] or op == "allreduce":
            out.append((f"{lbl}: every rank finished and every element of every iteration was right",
                        r["ranks_ok"] and r.get("wrong") == 0 and r.get("iters") == sc["coll_iters"],
                        f"ranks {ranks}; wrong elements {r.get('wrong')}"))
        else:
            # without PFC or DCQCN an incast's go-back-N retransmissions can
            # overflow the port again round after round: whether the ranks
            # finish is what the run shows, not an expectation; a result that
            # came must be right
            # no report is met only when the ranks were stopped at the
            # duration (124), not when one crashed or did not start
            out.append((f"{lbl}: every element that rank 0 reported was right (no report: the ranks were "
                        "stopped at the duration)",
                        r.get("wrong") == 0 if "wrong" in r else bool(bad) and all(v == 124 for v in bad.values()),
                        f"wrong elements {r.get('wrong')}; ranks {ranks}"))
        if r["pfc"]:
            out.append((f"{lbl}: lossless: no switch port dropped a packet", t["drops"] == 0,
                        f"{t['drops']} drops"))
        if op == "allreduce":
            # each rank sends to one neighbour and receives from the other:
            # one flow per link, no port has more to send than its rate; what
            # queues is the hosts' shapers' bursts (8 KB) against Kmin
            n = sc["coll_iters"] + 1
            out.append((f"{lbl}: the ring hardly congests: no drop, under {RING_PER_ITER} PFC frames and "
                        f"{RING_PER_ITER} CNPs per iteration",
                        r.get("time_us") is not None and t["drops"] == 0 and t["pfc_sent"] < RING_PER_ITER * n
                        and t["cnps"] < RING_PER_ITER * n,
                        f"{t['drops']} drops, {t['pfc_sent']} PFC frames, {t['cnps']} CNPs in {n} iterations"))
    if op == "alltoall":
        # which comparisons apply is the scenario's modes' to say; a mode
        # that was not recorded fails them
        declared = {(m["pfc"], m["dcqcn"]) for m in sc["modes"] if not m["watchdog"]}
        # (PFC alone: no DCQCN and no watchdog; the first mode of each kind)
        by = {}
        for r in ok:
            if not r.get("watchdog"):
                by.setdefault((r["pfc"], r["dcqcn"]), r)
        base, pfc, both = by.get((False, False)), by.get((True, False)), by.get((True, True))
        text = "without PFC or DCQCN: the switches drop packets"
        if (False, False) not in declared:
            out.append(not_applicable(text, "no mode of the scenario runs without both"))
        elif not base:
            out.append((text, False, "that mode was not recorded"))
        text = f"DCQCN + PFC: at most 1/{FEWER_PFC} of PFC alone's PFC frames"
        if not {(True, False), (True, True)} <= declared:
            out.append(not_applicable(text, "the scenario lacks a mode with PFC alone or with both"))
        elif not (pfc and both):
            out.append((text, False, "one of the two modes was not recorded"))
        if base:
            t = base["totals"]
            out.append((f"{base['label']}: the switches drop packets (the incast at the hosts' ports, the 2:1 "
                        "oversubscribed uplinks)", t["drops"] > 0,
                        f"{t['drops']} drops: {base['host_port_drops']} at the hosts' ports, "
                        f"{base['uplink_drops']} at the uplinks"))
        if pfc and both:
            a, b = both["totals"]["pfc_sent"], pfc["totals"]["pfc_sent"]
            out.append((f"{both['label']}: at most 1/{FEWER_PFC} of {pfc['label']}'s PFC frames (DCQCN slows "
                        "the senders before the queues reach XOFF)", a * FEWER_PFC <= b and b > 0,
                        f"{a} vs {b}"))
    return uncovered(results, out)


def describe(sc):
    what = {"allreduce": "ring all-reduce (each rank sends 2(N-1)/N of the buffer to its right neighbour)",
            "alltoall": "all-to-all (every rank sends a chunk to every other at once: an incast at every "
                        "host's port)"}[sc["collective"]]
    return (f"rxecc-coll {what} among h1..h8 of a leaf-spine (2 leaves, 2 spines, 4 hosts each; every leaf "
            f"port {sc['rate']} Mbit/s, 2:1 oversubscribed), {sc['coll_bytes']} per rank, "
            f"{sc['coll_iters']} iterations after one warm-up, DSCP {sc['dscp']} (priority {sc['dscp'] >> 3}); "
            f"switch buffer {sc['buffer']}, XOFF {sc['xoff']}, XON {sc['xon']}, headroom {sc['headroom']}, "
            f"ECN {sc['kmin']}-{sc['kmax']}")


COLUMNS = [
    ("time ms", lambda r: None if r.get("time_us") is None else round(r["time_us"] / 1000, 1)),
    ("fabric-bound ms", lambda r: r.get("bound_ms")),
    ("busbw MB/s", lambda r: None if r.get("busbw") is None else round(r["busbw"] * 1000, 3)),
    ("slowest ms", lambda r: None if r.get("slowest_us") is None else round(r["slowest_us"] / 1000, 1)),
    ("worst ms", lambda r: None if r.get("worst_us") is None else round(r["worst_us"] / 1000, 1)),
    ("slow rank", lambda r: r.get("slow_rank")),
    ("wrong", lambda r: r.get("wrong")),
    ("ranks exited 0", lambda r: sum(1 for v in (r.get("rank_status") or {}).values() if v == 0)),
    ("PFC frames", lambda r: (r.get("totals") or {}).get("pfc_sent")),
    ("CNPs", lambda r: (r.get("totals") or {}).get("cnps")),
    ("ECN marks", lambda r: (r.get("totals") or {}).get("ecn_marks")),
    ("drops", lambda r: (r.get("totals") or {}).get("drops")),
    ("QP retries", lambda r: r.get("qp_retries")),
]
SPREAD_FIGURES = [(h, g) for h, g in COLUMNS if h not in ("slow rank", "fabric-bound ms")]


def spread_figures(topology):  # pylint: disable=unused-argument
    return SPREAD_FIGURES


def md_table(results):
    lines = ["| mode | " + " | ".join(h for h, _ in COLUMNS) + " |", "|---|" + "---|" * len(COLUMNS)]
    for r in results:
        cells = ["-"] * len(COLUMNS) if "error" in r else [fmt(g(r)) for _, g in COLUMNS]
        lines.append(f"| {r['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plots(sc, results, allseries, outdir):
    """MODE.png: the data the leaves delivered to the hosts per 100 ms (all
    eight ports together), and the operator's events per 100 ms."""
    made = []
    for r in results:
        s = allseries.get(r["name"])
        if not s or not s["delivered"]:
            continue
        name = r["name"]
        dfile = os.path.join(outdir, f"delivered-{name}.tsv")
        write_data(dfile, [list(x) for x in s["delivered"]])
        tfile = os.path.join(outdir, f"timeline-{name}.tsv")
        pathology.write_timeline(tfile, s["timeline"])
        png = f"{name}.png"
        script = ["set terminal pngcairo size 1000,700 font ',10'", f"set output {gp_str(png)}",
                  "set multiplot layout 2,1", "set grid", "set key outside right",
                  f"set title {gp_str(r['label'] + ': delivered to the hosts, per 100 ms')}",
                  "set xlabel 's since the ranks started'", "set ylabel 'Mbit/s'",
                  f"set yrange [0:{sc['rate'] * 8 * 1.2}]",
                  f"plot {gp_file(dfile, outdir)} using 1:2 with steps lw 2 title 'all 8 hosts', "
                  f"{sc['rate'] * 8} with lines dt 2 lc rgb 'black' title '8 host links'",
                  f"set title {gp_str(r['label'] + ': what the operator sees, per 100 ms')}",
                  "set ylabel 'events per 100 ms'"]
        script += pathology.operator_panel(tfile, s["timeline"], outdir)
        script.append("unset multiplot")
        gnuplot("\n".join(script) + "\n", outdir)
        made.append(png)
    return made


def report(raw, sc, outdir):
    results, _, made, ck = analyse_and_record(raw, sc, outdir, analyse, plots, checks)
    notes = ("Time, busbw, slowest, worst, slow rank, wrong: rank 0's report (rxecc-coll, nccl-tests' "
             "definitions: docs/lab.md, \"Collectives\"). Fabric-bound: the least time of an iteration at "
             "the links' rate (all-reduce: 2(n-1)/n of the buffer over each rank's link; all-to-all: the "
             "buffer over each of the 2:1 oversubscribed uplinks, if ECMP spreads the QPs evenly). QP "
             "retries: the hosts' completer_retry_err (a retransmission after a timeout or a NAK). PFC "
             "frames (XOFF and XON, switches and hosts), CNPs "
             "(the hosts'), ECN marks and drops (every switch port): while the ranks ran, set-up included.")
    write_report_md(outdir, [f"# Collectives on the leaf-spine: {describe(sc)}", "", md_table(results), "",
                                 notes, ""], ck, [], made)
    print_summary(describe(sc), results, COLUMNS, ck, outdir, made)
    return 0


TOPOLOGIES = ("collective",)
registry.register(sys.modules[__name__])
