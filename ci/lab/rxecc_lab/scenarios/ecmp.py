# SPDX-License-Identifier: GPL-2.0
"""The report of the lab's ECMP scenario (topology ecmp; ci/guest/lab_fabric.sh
records it): per mode which spine each flow (QP) took, by its bytes counted
on the spines under its UDP source port; each flow's completion time of the
fixed transfer; each uplink's Mbit/s over time; the operator's counters; the
expectations; the plots. Registered for topology ecmp
(rxecc_lab.registry)."""
import itertools
import json
import os
import re
import sys

from .. import registry
from ..checks import not_applicable
from ..common import fmt, to_bytes
from ..plots import gnuplot, gp_file, gp_str, write_data
from ..report import analyse_and_record, print_summary, write_report_md
from ..shared import get_udp_sport, qpn_sport
from . import pathology

SPINES = ("sp1", "sp2")
UPLINKS = {"sp1": "lf1:to-sp1", "sp2": "lf1:to-sp2"}
ONE_PATH = 0.99		# a flow's bytes on its spine, at least
HELD = 1.5		# the free uplink's last flow against fair sharing's: held back above
JOB_MAX = 2.0		# the job against its fair time (measured 1.16-1.58x, docs/results.md 2026-12-05)
UPLINK_BIN_S = 0.5	# the guest sends in bursts: 100 ms bins swing from 0 to the rate
CLIENT = re.compile(r"^c([0-9]+)-([0-9]+)\.([0-9]+)\.log$")


def host_ip(i):
    return f"10.0.{i}.1"


def client_qp(log):
    """(local QPN, remote QPN) of a perftest client's one QP, and whether it
    finished (printed its result line)."""
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None, False
    loc = re.findall(r"local address:.*?QPN (0x[0-9a-f]+)", text)
    rem = re.findall(r"remote address:.*?QPN (0x[0-9a-f]+)", text)
    qp = (int(loc[0], 16), int(rem[0], 16)) if len(loc) == 1 and len(rem) == 1 else None
    done = re.search(r"^\s*[0-9]+\s+[0-9]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s*$", text, re.M) is not None
    return qp, done


def sport_of(policy, qp):
    """The UDP source port the device's policy gives the QP (rxecc_sport.c):
    perftest sets no flow label, so flow_label folds one from both QPNs."""
    return qpn_sport(qp[0]) if policy == "qpn" else get_udp_sport(0, qp[0], qp[1])


def spine_counts(path):
    """{(saddr, daddr, sport): bytes} of a spine's nft set (nft -j)."""
    try:
        with open(path, encoding="utf-8") as f:
            return parse_set(json.load(f))
    except (OSError, ValueError):
        return None


def spine_series(path):
    """[(uptime, {(saddr, daddr, sport): bytes})] of a spine's log of its
    set (a line "UPTIME JSON" every 0.2 s); [] when there is none."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                ts, _, js = line.partition(" ")
                try:
                    out.append((float(ts), parse_set(json.loads(js))))
                except ValueError:
                    continue	# cut short when the loop was stopped
    except OSError:
        return []
    return out


def parse_set(doc):
    out = {}
    for item in doc.get("nftables", []):
        for e in (item.get("set") or {}).get("elem", []):
            el = e.get("elem", e)
            val = el.get("val", el) if isinstance(el, dict) else el
            key = (val.get("concat") if isinstance(val, dict) else None) or []
            ctr = el.get("counter") if isinstance(el, dict) else None
            if len(key) == 3 and ctr:
                out[(str(key[0]), str(key[1]), int(key[2]))] = int(ctr.get("bytes", 0))
    return out


def flow_span(series, key, done=0.99):
    """(first, last) uptime of a flow in a spine's series: its first sample
    with bytes, and the first with `done` of its final bytes; None if the
    series never saw it."""
    seen = [(t, c.get(key, 0)) for t, c in series]
    final = max((b for _, b in seen), default=0)
    if not final:
        return None
    first = next(t for t, b in seen if b > 0)
    last = next(t for t, b in seen if b >= done * final)
    return first, last


def analyse(raw, sc, mode):
    d = os.path.join(raw, mode["name"])
    r = {"name": mode["name"], "label": mode.get("label", mode["name"]), "pfc": mode["pfc"],
         "dcqcn": mode["dcqcn"], "ecmp_hash": mode["ecmp_hash"], "udp_sport": mode["udp_sport"],
         "placement": mode.get("placement", "hash")}
    launched = pathology.read_time(d, "load-start")
    counts = {s: spine_counts(os.path.join(d, f"flows-{s}.json")) for s in SPINES}
    if launched is None or any(c is None for c in counts.values()):
        r["error"] = "no load start or no spine counts (the guest run failed: see its log)"
        return r, {}
    path = os.path.join(d, "samples")
    if not os.path.exists(path):
        r["error"] = "no samples of the switch ports (the sampler failed: see sampler.err)"
        return r, {}
    ports, hosts = pathology.load(path, sc["dscp"] >> 3)
    # the clock starts with the first byte on an uplink: the perftest
    # processes take seconds to set up their QPs here, before any data
    start = pathology.first_traffic([(s, ports.get(p)) for s, p in UPLINKS.items()], launched)
    r["setup_s"] = round(start - launched, 2)
    flows = []
    logs = sorted((tuple(int(x) for x in m.groups()), name) for name in os.listdir(d)
                  if (m := CLIENT.match(name)))
    for (src, dst, k), name in logs:
        qp, finished = client_qp(os.path.join(d, name))
        end = pathology.read_time(d, f"done{src}-{dst}.{k}")
        f = {"flow": f"h{src}->h{dst}.{k}", "pair": f"h{src}->h{dst}", "finished": finished,
             "exited_s": round(end - start, 2) if end is not None else None, "completion_s": None}
        if qp:
            f["qpn"], f["remote_qpn"] = qp
            f["sport"] = sport_of(mode["udp_sport"], qp)
            f["key"] = (host_ip(src), host_ip(dst), f["sport"])
        flows.append(f)
    # QPs of one host pair with the same source port (the flow label is
    # symmetric in the two QP numbers: 17<->18 and 18<->17 fold alike) are
    # one 5-tuple: the spines count them together, and each gets its part
    same = {}
    for f in flows:
        if "key" in f:
            same.setdefault(f["key"], []).append(f)
    for group in same.values():
        per = {s: counts[s].get(group[0]["key"], 0) / len(group) for s in SPINES}
        total = sum(per.values())
        for f in group:
            f["bytes"] = {s: round(v) for s, v in per.items()}
            if len(group) > 1:
                f["same_port_as"] = [g["flow"] for g in group if g is not f]
            if total:
                f["spine"] = max(SPINES, key=lambda s, p=per: p[s])
                f["on_spine_share"] = round(per[f["spine"]] / total, 4)
    series_of = {sp: spine_series(os.path.join(d, f"flows-{sp}.log")) for sp in SPINES}
    # how often the spines' counts were read: the resolution of each flow's start and end
    gaps = sorted(b[0] - a[0] for sp in SPINES for a, b in zip(series_of[sp], series_of[sp][1:]))
    r["count_interval_s"] = round(gaps[len(gaps) // 2], 2) if gaps else None
    for group in same.values():
        for f in group:
            sp = series_of.get(f.get("spine"), [])
            span = flow_span(sp, group[0]["key"])
            if span and f["finished"]:
                f["start_s"] = round(span[0] - start, 2)
                f["completion_s"] = round(span[1] - start, 2)
                f["duration_s"] = round(span[1] - span[0], 2)
            f["progress"] = [(round(t - start, 2), round(c.get(group[0]["key"], 0) / len(group) / 1e6, 3))
                             for t, c in sp if t <= (span[1] + 1 if span else t)]
    for f in flows:
        f.pop("key", None)
    r["flows"] = flows
    # the fabric as the mode set it: lf1's hash policy and its route to lf2
    policy = pathology.read_time(d, "hash-policy")
    r["hash_policy"] = None if policy is None else int(policy)
    try:
        with open(os.path.join(d, "route-lf1"), encoding="utf-8") as fh:
            r["lf1_next_hops"] = fh.read().count("nexthop")
    except OSError:
        r["lf1_next_hops"] = None
    placed = [f for f in flows if "spine" in f]
    r["flows_per_spine"] = {s: sum(1 for f in placed if f["spine"] == s) for s in SPINES}
    pairs = {}
    for f in placed:
        pairs.setdefault(f["pair"], set()).add(f["spine"])
    r["pairs_split"] = sum(1 for s in pairs.values() if len(s) > 1)
    times = [f["completion_s"] for f in flows if f["completion_s"] is not None]
    r["job_s"] = max(times) if times and len(times) == len(flows) else None
    starts = [f["start_s"] for f in flows if f.get("start_s") is not None]
    r["start_spread_s"] = round(max(starts) - min(starts), 2) if starts else None
    # the busiest uplink's transfers (payload) at its rate: a floor under the job's time
    bytes_on = {s: sum(f["bytes"][s] for f in placed) for s in SPINES}
    r["spine_mbytes"] = {s: round(b / 1e6, 2) for s, b in bytes_on.items()}
    r["floor_s"] = (round(max(r["flows_per_spine"].values()) * to_bytes(sc["transfer"]) * 8
                          / (sc["rate"] * 1e6), 2) if placed else None)
    # the placement the guest arranged (placement = arranged): lf1's FIB
    # asked before the load, {flow: spine}
    r["arranged"] = read_arranged(d, flows)
    # the fair times of the spines the flows took; an arrangement's, of the
    # spines it chose (what the job would take had the fabric kept it)
    where = r["arranged"] or {f["flow"]: f["spine"] for f in placed}
    if len(where) == len(flows) and flows:
        res = {f"h{i}": sc["link"] for i in range(1, 5)}
        res.update({sp: sc["rate"] for sp in SPINES})
        model = [{"host": f["pair"].split("->")[0], "spine": where[f["flow"]]} for f in flows]
        # each flow released when its first byte was counted, as it was
        release = [f.get("start_s") or 0.0 for f in flows]
        times = fair_times(model, res, to_bytes(sc["transfer"]), release)
        for f, t in zip(flows, times):
            f["fair_s"] = round(t, 2)
        r["fair_s"] = round(max(times), 2)
        # each uplink's load when every flow runs, max-min fair
        rates = fair_rates(model, res, list(range(len(model))))
        r["fair_uplink_mbps"] = {sp: round(sum(v for i, v in rates.items() if model[i]["spine"] == sp), 2)
                                 for sp in SPINES}
    r["ideal_s"] = round(sc["flows_per_pair"] * to_bytes(sc["transfer"]) * 8 / (sc["link"] * 1e6), 2)
    end = start + (r["job_s"] or sc["duration"])
    r["totals"] = pathology.operator(ports, hosts, sc["dscp"] >> 3, start, end) if ports else {}
    series = {"t0": start, "uplinks": {}}
    t = start
    while t + UPLINK_BIN_S <= end + UPLINK_BIN_S - 1e-9:
        for s, p in UPLINKS.items():
            series["uplinks"].setdefault(s, []).append(
                (round(t + UPLINK_BIN_S - start, 1), round(pathology.mbps(ports.get(p), t, t + UPLINK_BIN_S), 3)))
        t += UPLINK_BIN_S
    r["uplink_mbps"] = {s: round(pathology.mbps(ports.get(p), start, end), 2) for s, p in UPLINKS.items()}
    return r, series


def fair_rates(flows, caps, active):
    """Max-min fair rates (Mbit/s, {flow index: rate}) of the active flows
    ({"host": h, "spine": s}: each crosses its host's link, shaped to
    `link`, and its spine's uplink; caps: {resource: Mbit/s}), by
    progressive filling. (The destinations' links are not shaped.)"""
    for i in active:
        if flows[i]["host"] not in caps or flows[i]["spine"] not in caps:
            raise ValueError(f"flow {i} crosses a link of no known rate")
    rate, frozen = {}, set()
    while len(frozen) < len(active):
        # the tightest resource among the unfrozen flows' sets its share
        best = None
        for res, cap in caps.items():
            users = [i for i in active if res in (flows[i]["host"], flows[i]["spine"])]
            free = [i for i in users if i not in frozen]
            if not free:
                continue
            share = (cap - sum(rate[i] for i in users if i in frozen)) / len(free)
            if best is None or share < best[0]:
                best = (share, free)
        for i in best[1]:
            rate[i] = max(best[0], 0.0)
            frozen.add(i)
    return rate


def fair_times(flows, caps, nbytes, release=None):
    """Each flow's completion time (s) under max-min fair sharing: each has
    nbytes to send from its release time (default 0), and a finished flow's
    share goes to the others. The fluid model of ideal per-flow rate
    control."""
    n = len(flows)
    release = [max(0.0, x) for x in release] if release else [0.0] * n
    left = [nbytes * 8 / 1e6] * n	# Mbit
    done = [None] * n
    now = min(release, default=0.0)
    while any(d is None for d in done):
        active = [i for i in range(n) if done[i] is None and release[i] <= now + 1e-9]
        pending = [release[i] for i in range(n) if done[i] is None and release[i] > now + 1e-9]
        if not active:
            now = min(pending)
            continue
        rate = fair_rates(flows, caps, active)
        steps = [left[i] / rate[i] for i in active if rate[i] > 0] + [p - now for p in pending]
        if not steps:
            raise ValueError("no flow can move: a link of rate 0")
        step = min(steps)
        now += step
        for i in active:
            left[i] -= rate[i] * step
            if left[i] <= 1e-9:
                done[i] = now
    return done


def arrange(routes):
    """placement = arranged: eight flows, two from each of h1..h4, chosen
    from where lf1's FIB sends each host pair (routes: {(src, dst): spine},
    src 1..4, dst 5..8; an address hash, so every QP of a pair alike) so
    that one uplink carries six flows and the other two, the two from
    different hosts that each have a flow on the busy uplink too and to
    different destinations, every destination receiving two if the routes
    allow it, else up to three (the receive load spread over lf2's hosts).
    Under max-min fair sharing the busy uplink is full and the other 2/3
    loaded: the free flows are held back only if their hosts' flows on the
    busy uplink hold them. [(src, dst)] in launch order (the free-uplink
    flows first), or None when the routes allow no such choice."""
    pairs = {}
    for src in range(1, 5):
        dsts = [d for d in range(5, 9) if (src, d) in routes]
        pairs[src] = [(a, b) for i, a in enumerate(dsts) for b in dsts[i:]]
    # every destination two flows if the routes allow it, else up to three,
    # and a free flow's destination at most two
    for most in (2, 3):
        for busy in SPINES:
            for choice in itertools.product(*(pairs[src] for src in range(1, 5))):
                flows = [(src, d) for src, two in zip(range(1, 5), choice) for d in two]
                free = [f for f in flows if routes[f] != busy]
                per_dst = {x: sum(1 for _, d in flows if d == x) for x in range(5, 9)}
                if (len(free) == 2 and len({f[0] for f in free}) == 2 and len({f[1] for f in free}) == 2
                        and max(per_dst.values()) <= most and all(per_dst[d] <= 2 for _, d in free)):
                    return free + [f for f in flows if f not in free]
    return None


def arrange_main(path):
    """`ecmp_arrange.py ROUTES`: ROUTES has a line "SRC DST SPINE" per host
    pair (lf1's `ip route get`); prints "SRC:DST SPINE" per flow of the
    arrangement, exit 1 when there is none."""
    routes = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[2] in SPINES:
                routes[(int(w[0]), int(w[1]))] = w[2]
    flows = arrange(routes)
    if flows is None:
        print(f"ecmp: no arrangement of 6 and 2 flows over the spines from {len(routes)} routes",
              file=sys.stderr)
        return 1
    for f in flows:
        print(f"{f[0]}:{f[1]} {routes[f]}")
    return 0


def read_arranged(d, flows):
    """{flow: spine} of the guest's arrangement (d/arranged, "SRC:DST
    SPINE" per flow in launch order: the K-th line is flow hSRC->hDST.K),
    None without one or when it does not name these flows."""
    try:
        with open(os.path.join(d, "arranged"), encoding="utf-8") as f:
            lines = [w for w in (x.split() for x in f) if len(w) == 2]
    except OSError:
        return None
    got = {"h{}->h{}.{}".format(*w[0].split(":"), k): w[1] for k, w in enumerate(lines, 1)}
    return got if set(got) == {f["flow"] for f in flows} else None


def checks(results, sc):
    out = [(f"{r['label']}: the mode was recorded", False, r["error"]) for r in results if "error" in r]
    for r in (x for x in results if "error" not in x):
        lbl, flows = r["label"], r["flows"]
        n = len(flows)
        want = 4 * sc["flows_per_pair"]
        unfinished = [f["flow"] for f in flows if not f["finished"] or f["completion_s"] is None]
        want_policy = 0 if r["ecmp_hash"] == "l3" else 1
        out.append((f"{lbl}: the fabric is as the mode says (lf1 hashes with fib_multipath_hash_policy "
                    f"{want_policy} over two next hops to lf2's hosts)",
                    r.get("hash_policy") == want_policy and r.get("lf1_next_hops") == 2,
                    f"policy {r.get('hash_policy')}, {r.get('lf1_next_hops')} next hops"))
        out.append((f"{lbl}: all {want} flows finished their transfer", n == want and not unfinished,
                    f"{n} flows, unfinished: {', '.join(unfinished) or 'none'}"))
        # a QP's packets keep one UDP source port, so one path (no reordering)
        strays = [f"{f['flow']} {f.get('on_spine_share')}" for f in flows
                  if f.get("on_spine_share", 0) < ONE_PATH]
        out.append((f"{lbl}: every flow's bytes are on one spine ({round(100 * ONE_PATH)} % or more, counted "
                    "under the source port its policy gives it)", not strays,
                    f"{r['flows_per_spine']['sp1']} flows on sp1, {r['flows_per_spine']['sp2']} on sp2; "
                    f"off: {', '.join(strays) or 'none'}"))
        if r["ecmp_hash"] == "l3":
            out.append((f"{lbl}: the QPs of each host pair share one spine (the hash sees only addresses)",
                        r["pairs_split"] == 0 and not strays, f"{r['pairs_split']} pairs split"))
        job = (f"{lbl}: the job within {JOB_MAX:g}x its fair time (max-min fair sharing of the links, "
               + ("on the arranged spines)" if r["placement"] == "arranged" else "on the spines the flows took)"))
        if r["job_s"] is not None and r.get("fair_s") is not None:
            out.append((job, r["job_s"] <= JOB_MAX * r["fair_s"],
                        f"{r['job_s']} s, fair {r['fair_s']} s ({r['job_s'] / r['fair_s']:.2f}x)"))
        else:
            out.append((job, False, "not every flow finished" if unfinished else "no fair time: a flow without "
                        "a spine"))
        out += arranged_checks(r, unfinished)
    return out


def arranged_checks(r, unfinished):
    """placement = arranged: the flows took the spines chosen, and the free
    uplink's flows, whose hosts also send on the busy one, were not held
    back: nothing ties them to the busy uplink (a collision does: every flow
    on one uplink, make lab-mutants' one_uplink; pauses that stop their
    hosts could, docs/lab.md)."""
    lbl = r["label"]
    took = f"{lbl}: the flows took the spines arranged from lf1's FIB (6 flows on one, 2 on the other)"
    free = (f"{lbl}: the free uplink's flows are not held back by their hosts' flows on the busy one (the last "
            f"ends at most {HELD:g}x later than under max-min fair sharing)")
    if r["placement"] != "arranged":
        why = "placement = hash: which uplink is congested, if any, is the hash's chance"
        return [not_applicable(took, why), not_applicable(free, why)]
    if not r.get("arranged"):
        return [(took, False, "no arrangement (the guest found none, or its flows are not these)"),
                (free, False, "no arrangement")]
    wrong = [f"{f['flow']} on {f.get('spine', 'no spine')}, not {r['arranged'][f['flow']]}"
             for f in r["flows"] if f.get("spine") != r["arranged"][f["flow"]]]
    out = [(took, not wrong, "; ".join(wrong) or
            f"{r['flows_per_spine']['sp1']} flows on sp1, {r['flows_per_spine']['sp2']} on sp2, as arranged")]
    counts = {sp: sum(1 for v in r["arranged"].values() if v == sp) for sp in SPINES}
    idle = min(SPINES, key=lambda sp: counts[sp])
    mine = [f for f in r["flows"] if r["arranged"][f["flow"]] == idle]
    if unfinished:
        out.append((free, False, "not every flow finished"))
        return out
    last = max(f["completion_s"] for f in mine)
    fair_last = max(f["fair_s"] for f in mine) if all("fair_s" in f for f in mine) else None
    out.append((free, fair_last is not None and last <= HELD * fair_last,
                f"{idle}'s last flow ended at {last} s, fair {fmt(fair_last)} s"
                + (f" ({last / fair_last:.2f}x)" if fair_last else "")))
    return out


def describe(sc):
    return (f"leaf-spine (2 leaves, 2 spines, 4 hosts each): h1..h4 (lf1) each write "
            f"{sc['transfer']} per QP to h5..h8 (lf2) over {sc['flows_per_pair']} QPs (ib_send_bw "
            f"{sc['message']} B, one process per QP), all at once; lf1's uplinks {sc['rate']} Mbit/s, host links {sc['link']} "
            f"Mbit/s; DSCP {sc['dscp']}; switch buffer {sc['buffer']}, XOFF {sc['xoff']}, XON {sc['xon']}, "
            f"headroom {sc['headroom']}, ECN {sc['kmin']}-{sc['kmax']}")


COLUMNS = [
    ("hash", lambda r: r["ecmp_hash"]),
    ("source port", lambda r: r["udp_sport"]),
    ("flows sp1/sp2", lambda r: f"{r['flows_per_spine']['sp1']}/{r['flows_per_spine']['sp2']}"),
    ("pairs split", lambda r: r["pairs_split"]),
    ("uplink Mbit/s sp1/sp2", lambda r: f"{r['uplink_mbps']['sp1']}/{r['uplink_mbps']['sp2']}"),
    ("starts within s", lambda r: r.get("start_spread_s")),
    ("counts every s", lambda r: r.get("count_interval_s")),
    ("job s", lambda r: r["job_s"]),
    ("fair s", lambda r: r.get("fair_s")),
    ("floor s", lambda r: r["floor_s"]),
    ("even s", lambda r: r["ideal_s"]),
    ("PFC frames", lambda r: (r.get("totals") or {}).get("pfc_sent")),
    ("CNPs", lambda r: (r.get("totals") or {}).get("cnps")),
]


def md_table(results):
    lines = ["| mode | " + " | ".join(h for h, _ in COLUMNS) + " |", "|---|" + "---|" * len(COLUMNS)]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['label']} | " + " | ".join("-" for _ in COLUMNS) + " |")
        else:
            lines.append(f"| {r['label']} | " + " | ".join(fmt(g(r)) for _, g in COLUMNS) + " |")
    return "\n".join(lines)


def flow_table(r):
    lines = [f"{r['label']}:", "", "| flow | QPNs | source port | spine | share | MB sp1 | MB sp2 | start s | "
             "done s | fair done s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for f in r["flows"]:
        b = f.get("bytes", {})
        qpns = f"{f['qpn']}/{f['remote_qpn']}" if "qpn" in f else "-"
        port = f"{f.get('sport', '-')}" + (" (also " + ", ".join(f["same_port_as"]) + ")"
                                           if f.get("same_port_as") else "")
        lines.append(f"| {f['flow']} | {qpns} | {port} | {f.get('spine', '-')} | "
                     f"{fmt(f.get('on_spine_share'))} | {fmt(round(b.get('sp1', 0) / 1e6, 2))} | "
                     f"{fmt(round(b.get('sp2', 0) / 1e6, 2))} | {fmt(f.get('start_s'))} | "
                     f"{fmt(f['completion_s'])} | {fmt(f.get('fair_s'))} |")
    return lines + [""]


def plots(sc, results, allseries, outdir):
    """ecmp.png: per mode, each uplink's Mbit/s per 0.5 s (one spine full,
    the other idle, is a collision) and each flow's bytes through its spine
    over time, coloured by the spine (a flow sharing the busy spine climbs
    slower and ends later)."""
    ok = [r for r in results if "error" not in r and allseries.get(r["name"])]
    if not ok:
        return []
    script = ["set terminal pngcairo size 1100,%d font ',10'" % (330 * len(ok)), "set output 'ecmp.png'",
              f"set multiplot layout {len(ok)},2", "set grid", "set key top right"]
    for r in ok:
        s = allseries[r["name"]]
        ufile = os.path.join(outdir, f"uplinks-{r['name']}.tsv")
        rows = [[t] + [s["uplinks"][sp][i][1] for sp in SPINES] for i, (t, _) in enumerate(s["uplinks"]["sp1"])]
        write_data(ufile, rows)
        ffile = os.path.join(outdir, f"flows-{r['name']}.tsv")
        shown = [f for f in r["flows"] if f.get("progress") and "spine" in f]
        with open(ffile, "w", encoding="utf-8") as fh:
            for f in shown:	# a block per flow (gnuplot's index)
                fh.write(f"# {f['flow']} via {f['spine']}: s, MB\n")
                fh.writelines(f"{t}\t{mb}\n" for t, mb in f["progress"] if t >= -0.5)
                fh.write("\n\n")
        colour = {"sp1": "#9400d3", "sp2": "#009e73"}
        script += [f"set title {gp_str(r['label'] + ': lf1 uplinks, per 0.5 s')}",
                   "set xlabel 's since the first byte'", "set ylabel 'Mbit/s'",
                   f"set yrange [0:{sc['rate'] * 1.4}]", "set xrange [0:*]",
                   "plot " + ", ".join(f"{gp_file(ufile, outdir)} using 1:{i + 2} with steps lw 2 "
                                       f"lc rgb '{colour[sp]}' title {gp_str('to ' + sp)}"
                                       for i, sp in enumerate(SPINES)),
                   f"set title {gp_str(r['label'] + ': each flow, MB through its spine')}",
                   "set ylabel 'MB'", "set yrange [0:*]", "set key top left"]
        if shown:
            script.append("plot " + ", ".join(
                f"{gp_file(ffile, outdir)} index {i} using 1:2 with lines lw 2 lc rgb '{colour[f['spine']]}' "
                f"dt {1 + i % 4} title {gp_str(f['flow'] + ' via ' + f['spine'])}"
                for i, f in enumerate(shown)))
        else:
            script += ["set yrange [0:1]", "set label 1 'no flow series' at graph 0.4,0.5",
                       "plot -1 notitle", "unset label 1"]
        script.append("set key top right")
    script.append("unset multiplot")
    gnuplot("\n".join(script) + "\n", outdir)
    return ["ecmp.png"]


def spread_figures(topology):  # pylint: disable=unused-argument
    return [("job s", lambda r: r.get("job_s")), ("floor s", lambda r: r.get("floor_s")),
            ("pairs split", lambda r: r.get("pairs_split")),
            ("busiest spine's flows", lambda r: max((r.get("flows_per_spine") or {"-": None}).values()))]


def report(raw, sc, outdir):
    results, _, made, ck = analyse_and_record(raw, sc, outdir, analyse, plots, checks)
    notes = ("Flows sp1/sp2: the QPs whose bytes the spine counted (an nft set keyed by source, destination "
             "and UDP source port, the port computed from the client's QP numbers as the mode's policy "
             "chooses it). Pairs split: host pairs whose QPs took both spines. Uplink Mbit/s: lf1's ports "
             "to the spines while the transfer ran. Job: the last flow's completion time, from the first "
             "byte on an uplink (the QPs' setup before it, seconds here, is left out); the flows start "
             "within the seconds given, as their connections come up. Fair: what the job would take with "
             "this placement and these starts under max-min fair sharing of host links and uplinks (a "
             "fluid model of ideal per-flow rate control). Floor: the "
             "busiest uplink's transfers at its rate, the least the job can take with this spread. Even: "
             "each host's transfer at its link rate, what an even spread allows. PFC frames (XOFF and "
             "XON, switches and hosts) and CNPs: while the transfer ran.")
    body = ["## Every flow", ""]
    for r in results:
        body += flow_table(r) if "error" not in r else [f"{r['label']}: {r['error']}", ""]
    write_report_md(outdir, [f"# ECMP and the UDP source port: {describe(sc)}", "", md_table(results), "",
                                 notes, ""], ck, body, made)
    print_summary(describe(sc), results, COLUMNS, ck, outdir, made)
    return 0


TOPOLOGIES = ("ecmp",)
registry.register(sys.modules[__name__])
