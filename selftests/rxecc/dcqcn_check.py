#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of dcqcn.sh, from the captures (lib/python/rxecc_measure.py or
tshark's fields) and the lab's report; the host tests are
test_dcqcn_check.py.

  queue-delay SENT.pcap GOT.pcap
      the median and the 90th percentile (ms) of the time from h2's capture
      to h1's of each of h2's data packets (BTH QP and PSN seen once at
      each); fails with fewer than 100 matched
  cnp-format QPS NP_CNP_SENT
      tshark's fields of every CNP on stdin (frame.len, udp.dstport,
      udp.payload, bth.opcode, bth.p_key, bth.psn, dscp, ecn, bth.destqp):
      each 74 B, UDP 4791, BECN only, P_Key 0xffff, PSN 0, DSCP 48,
      Not-ECT, 16 zero bytes, to one of QPS (the senders' QPs, a word each)
  ecn-count PCAP
      "SRC DST OPCODE ECN COUNT" for the RoCE packets of PCAP
  cnp-spacing GAP_US
      tshark's time, ip.dst and bth.destqp of every CNP on stdin: per QP
      the span of its n CNPs at least n - 2 gaps and at most 1 % of the
      gaps (at least one) under half a gap
  lab-report REPORT.json
      the lab's end-to-end run (two senders that join and leave, DCQCN
      only): its segments, rate statistics, simulation, pacers and plots
"""
import collections
import json
import os
import sys

# the measurement code shared with the lab (lib/python/)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "python"))
from rxecc_measure import frames, packets, percentile, roce  # noqa: E402  pylint: disable=wrong-import-position


def once(pkts, src="10.0.2.1", dst="10.0.1.1"):
    """{key: time} of the packets from src to dst whose key (BTH QP and PSN)
    was seen once."""
    seen, dup = {}, set()
    for t, s, d, key in pkts:
        if s == src and d == dst:
            if key in seen:
                dup.add(key)
            seen[key] = t
    return {k: t for k, t in seen.items() if k not in dup}


def queue_delay(sent_pkts, got_pkts):
    """(p50, p90) in ms of the delays of the packets seen once at each end;
    a ValueError with fewer than 100 matched."""
    sent, got = once(sent_pkts), once(got_pkts)
    d = sorted((got[k] - t) * 1000 for k, t in sent.items() if k in got)
    if len(d) < 100:
        raise ValueError("too few packets matched: %d" % len(d))
    return percentile(d, 50), percentile(d, 90)


def cnp_ok(line, qps):
    """One CNP as tshark's tab-separated fields: the form dcqcn.sh expects."""
    ln, port, pl, op, pkey, psn, dscp, ecn, dqp = line.rstrip("\n").split("\t")
    b = bytes.fromhex(pl.replace(":", ""))
    return (ln == "74" and port == "4791" and int(op, 0) == 0x81 and len(b) == 32 and b[0] == 0x81
            and b[4] == 0x40 and b[1] == 0 and int(pkey, 0) == 0xffff and psn == "0" and dscp == "48"
            and ecn == "0" and b[12:28] == bytes(16) and int(dqp, 16) in qps)


def cnp_format(lines, qps, cnps_sent):
    """(ok, the lines to print): at least one CNP and none malformed."""
    out, n, bad = [], 0, 0
    for line in lines:
        n += 1
        if not cnp_ok(line, qps):
            bad += 1
            if bad < 4:
                out.append("bad CNP: " + line.strip())
    out.append(f"{n} CNPs captured at h1 (np_cnp_sent +{cnps_sent}), {bad} malformed")
    return n > 0 and bad == 0, out


def ecn_count(records):
    """"SRC DST OPCODE ECN COUNT" lines of the RoCE records (rxecc_measure.roce,
    None for what is not RoCE), sorted."""
    c = collections.Counter((r.src, r.dst, r.opcode, r.ecn) for r in records if r is not None)
    return [f"{src} {dst} {op} {ecn} {n}" for (src, dst, op, ecn), n in sorted(c.items())]


def cnp_spacing(lines, gap_us):
    """(ok, the lines to print) of the CNPs' spacing per QP (its address and
    number: h2 and h3 can have QPs of one number).

    The driver spaces its decisions by the gap; the capture stamps the
    transmission, later by the time it takes to build and send the CNP,
    which a TCG vCPU preempted on a busy host can stretch by milliseconds
    for one CNP and not the next (its gap shrinks by the stall; 8.6 ms seen
    once in CI-like load; a late first CNP shortens the span by as much).
    So: the span of a QP's n CNPs at least n - 2 gaps, and at most 1 % of
    its gaps (at least one) shorter than half a gap. A driver that did not
    space its CNPs would send one per CE-marked packet: most gaps far below
    the gap."""
    gap = float(gap_us) / 1e6
    times, n = {}, 0
    for line in lines:
        t, dst, dqp = line.split()
        times.setdefault(dst + "/" + dqp, []).append(float(t))
        n += 1
    stall = gap / 2
    ok = n > 1
    out = []
    for qp, ts in times.items():
        if len(ts) < 2:
            continue
        gaps = [b - a for a, b in zip(ts, ts[1:])]
        span = ts[-1] - ts[0]
        short = sum(g < gap - stall for g in gaps)
        out.append("%s: %d CNPs, smallest gap %d us, mean %d us, %d under half the gap" %
                   (qp, len(ts), min(gaps) * 1e6, span / len(gaps) * 1e6, short))
        ok = ok and short <= max(1, len(gaps) // 100) and span >= (len(gaps) - 1) * gap
    out.append("%d CNPs" % n)
    return ok and any(len(ts) > 1 for ts in times.values()), out


def lab_report(r, say=print):
    """The lab's end-to-end report (report.json, loaded), what it shows said
    line by line; an AssertionError names what is wrong."""
    m = r["modes"][0]
    say("settled parts: " + str(m["segments"]))
    say(f"rate statistics: {m.get('rc')} simulation: {m['sim']}")
    assert [p for _, _, p in m["segments"]] == [["h2"], ["h2", "h3"], ["h2"]], m["segments"]
    assert m.get("rc") and sorted(m["rc"]["senders"]) == ["h2", "h3"], m.get("rc")
    assert m["cnp_handled"] > 0, m["cnp_handled"]
    assert "rc_diff_pct" in m["sim"], m["sim"]
    # goodput over the time both senders ran (4 s, scaled), and from 2 s on
    assert m["goodput_settled_pct"] is not None and m["goodput_pct"] > 0, m
    # the pacers' lost time (rp_pace_late_us, rp_pace_idle_us): read on every
    # sender, in % of their time under load, so at most 100 together
    say(f"pacers lost: {m.get('pace_late_pct')} % late, {m.get('pace_idle_pct')} % idle")
    assert 0 <= m["pace_late_pct"] and 0 <= m["pace_idle_pct"], m
    assert m["pace_late_pct"] + m["pace_idle_pct"] < 100, m
    assert {"dcqcn-rates.png", "dcqcn-sim.png", "dcqcn-jain.png"} <= set(r["plots"]), r["plots"]


def main(argv):
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "queue-delay" and len(args) == 2:
        try:
            p50, p90 = queue_delay(packets(args[0]), packets(args[1]))
        except ValueError as e:
            sys.exit(str(e))
        print("%.2f %.2f" % (p50, p90))
        return 0
    if cmd in ("cnp-format", "cnp-spacing") and len(args) == (2 if cmd == "cnp-format" else 1):
        if cmd == "cnp-format":
            ok, out = cnp_format(sys.stdin, {int(q) for q in args[0].split()}, args[1])
        else:
            ok, out = cnp_spacing(sys.stdin, args[0])
        print("\n".join(out))
        return 0 if ok else 1
    if cmd == "ecn-count" and len(args) == 1:
        for line in ecn_count(roce(p) for _, p in frames(args[0])):
            print(line)
        return 0
    if cmd == "lab-report" and len(args) == 1:
        with open(args[0], encoding="utf-8") as f:
            r = json.load(f)
        try:
            lab_report(r)
        except AssertionError as e:
            print(f"lab-report: {e}", file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
