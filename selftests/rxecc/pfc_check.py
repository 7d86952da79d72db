#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks and the report of pfc.sh, from tshark's reading of the captures,
the qdisc's statistics (`rxecc -j qdisc show`) and perftest's logs.

  pause PCAP PRIO SRC_IP DSCP_PAUSED DSCP_OTHER [PAUSED_US]
      PCAP is captured at the sender's own port, with the PFC frames it
      received: the sender's packets of DSCP_PAUSED stop while it is paused
      (from 20 ms after the first XOFF for PRIO reached it until the XON)
      and flow before and after; those of DSCP_OTHER flow during the pause;
      with PAUSED_US (the sender's rx_prioN_pause_duration), that is within
      25 % of the time from that XOFF to the XON
  frames QDISC_JSON PRIO QUANTA PCAP...
      every captured PFC frame enables exactly PRIO with QUANTA (XOFF) or 0
      (XON), is addressed to 01:80:c2:00:00:01, has no expert warning, and
      there are as many as the qdisc counted
  report NAME LOGDIR PCAP:DST...
      one line: goodput of the flows to DST in each capture, per-flow shares,
      Jain index, drops, PFC frames, time paused, retransmissions, CNPs
  goodput HOST PCAP:DST...
      the goodput of sender HOST (h4) in Mbit/s
  values "KEY WANT [PRIO]"...
      `rxecc -j qdisc show` of one qdisc on stdin: each KEY (of priority
      PRIO's, or of the qdisc's) is WANT; a line for each that is not
  config
      `rxecc -j qdisc show` of one qdisc on stdin: its configuration as one
      line of JSON (keys sorted; of the priorities only limit, xoff, xon,
      headroom, kmin, kmax and pmax, not their counters), to compare
  qdisc-counters QDISC_JSON
      "KEY VALUE" lines: priority 3's integers but drops, the drops of all
      priorities, and "frames", priority 3's XOFF and XON sent
The host tests are test_pfc_check.py.
"""
import json
import os
import re
import subprocess
import sys

# the measurement code shared with the lab (lib/python/)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "python"))
import rxecc_measure  # noqa: E402  pylint: disable=wrong-import-position

MBPS_PER_MBS = 8 * 1048576 / 1e6   # perftest's MB/sec is 2^20 bytes


def tshark(pcap, display, fields):
    cmd = ["tshark", "-n", "-r", pcap, "-Y", display, "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def pfc_frames(captured, prio):
    """(time, quanta) of every PFC frame among CAPTURED ((time, bytes) pairs)
    that pauses or resumes PRIO."""
    out = []
    for t, p in captured:
        if len(p) >= 34 and p[12:14] == b"\x88\x08" and p[14:16] == b"\x01\x01":
            enable = int.from_bytes(p[16:18], "big")
            if enable & (1 << prio):
                out.append((t, int.from_bytes(p[18 + 2 * prio:20 + 2 * prio], "big")))
    return out


def pause(pcap, prio, src, dscp_paused, dscp_other, paused_us=None):
    # The capture holds ~10^5 packets: read directly (rxecc_measure.py),
    # as tshark's dissection of them takes a minute on an emulated CPU.
    captured = list(rxecc_measure.frames(pcap))
    # Where the sender received them: a frame waits in the receive backlog
    # of a busy emulated CPU before the endpoint acts on it, which the
    # sender's own capture sees (taps run as the stack takes the frame).
    pfc = pfc_frames(captured, int(prio))
    xoff = [t for t, q in pfc if q]
    xon = [t for t, q in pfc if not q and xoff and t > xoff[0]]
    if not xoff or not xon:
        print(f"the capture holds {len(xoff)} XOFF and {len(xon)} XON frames for priority {prio}")
        return 1
    pkts = [(t, r.dscp) for t, r in ((t, rxecc_measure.roce(p)) for t, p in captured)
            if r is not None and r.src == src]
    first, end = xoff[0], xon[0]
    start = first + 0.02

    def count(dscp, lo, hi):
        return sum(1 for t, d in pkts if d == dscp and lo <= t < hi)
    before = count(int(dscp_paused), first - 1.0, first)
    during = count(int(dscp_paused), start, end)
    other = count(int(dscp_other), start, end)
    after = count(int(dscp_paused), end + 0.05, end + 1.0)
    print(f"{len(xoff)} XOFF frames over {end - first:.3f} s reached the sender; DSCP {dscp_paused}: "
          f"{before} packets in the second before the pause, {during} during it "
          f"({end - start:.3f} s), {after} in the second after the XON; DSCP {dscp_other} "
          f"during the pause: {other}")
    ok = before > 0 and during == 0 and other > 0 and after > 0
    if paused_us is not None:
        d = int(paused_us) / 1e6
        print(f"the sender counted {d:.3f} s paused for {end - first:.3f} s from XOFF to XON")
        ok = ok and abs(d - (end - first)) < 0.25 * (end - first)
    return 0 if ok else 1


def frames(qdisc_json, prio, quanta, pcaps):
    prio, quanta = int(prio), int(quanta)
    q = json.load(open(qdisc_json))[0]["prio"][prio]
    fields = ["eth.dst", "macc.cbfc.enbv"] + [f"macc.cbfc.pause_time.c{p}" for p in range(8)]
    n = xoff = xon = bad = 0
    if len(pcaps) > 1:
        # One file, so that tshark starts twice rather than twice per capture
        # (each start takes seconds on an emulated CPU).
        merged = os.path.join(os.path.dirname(pcaps[0]), "pfc-frames.merged.pcapng")
        subprocess.run(["mergecap", "-w", merged] + list(pcaps), check=True)
        pcaps = [merged]
    for pcap in pcaps:
        for r in tshark(pcap, "macc.opcode == 0x0101", fields):
            n += 1
            times = [int(x) for x in r[2:]]
            others = [t for p, t in enumerate(times) if p != prio]
            if (r[0] != "01:80:c2:00:00:01" or int(r[1], 16) != 1 << prio or any(others)
                    or times[prio] not in (0, quanta)):
                bad += 1
                if bad <= 3:
                    print("unexpected frame:", r)
            elif times[prio]:
                xoff += 1
            else:
                xon += 1
        expert = tshark(pcap, "macc && _ws.expert", ["frame.number"])
        if expert:
            print(f"{pcap}: {len(expert)} PFC frames with expert warnings")
            bad += len(expert)
    print(f"captured {n} PFC frames ({xoff} XOFF, {xon} XON, {bad} unexpected); "
          f"the qdisc sent {q['pause_tx']} XOFF and {q['xon_tx']} XON")
    return 0 if n > 0 and bad == 0 and xoff == q["pause_tx"] and xon == q["xon_tx"] else 1


def flows_mbps(specs):
    """Goodput per sender (h<N>, Mbit/s) from captures at switch ports: each
    spec is PCAP:DST, the data packets to DST counted once per PSN
    (rxecc_measure.goodput)."""
    out = {}
    for spec in specs:
        pcap, dst = spec.rsplit(":", 1)
        flows, _ = rxecc_measure.goodput(rxecc_measure.packets(pcap), dst)
        for src, bps in flows.items():
            out["h" + src.split(".")[2]] = bps / 1e6
    return out


def counters(logdir, name):
    out = {}
    path = os.path.join(logdir, f"{name}.counters")
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r"\S+: h(\d+) (\S+) \+(-?\d+)", line)
            if m:
                out[(int(m.group(1)), m.group(2))] = int(m.group(3))
    return out


def report(name, logdir, specs):
    flows = flows_mbps(specs)
    total = sum(flows.values())
    jain = rxecc_measure.jain(flows.values())
    qpath = next((os.path.join(logdir, f"{name}.{s}.json") for s in ("qdisc", "swp5")
                  if os.path.exists(os.path.join(logdir, f"{name}.{s}.json"))), None)
    line = f"{name}: goodput {total:.1f} Mbit/s"
    if qpath:
        q = json.load(open(qpath))[0]
        p3 = q["prio"][3]
        if q["rate_bps"]:
            line += f" ({100 * total / (q['rate_bps'] / 1e6):.0f}% of {q['rate_bps'] / 1e6:.0f})"
        line += ("; flows " + " ".join(f"{h} {v:.1f} ({100 * v / total if total else 0:.0f}%)"
                                       for h, v in sorted(flows.items())))
        line += (f"; Jain {jain:.3f}; switch drops {sum(p['drops'] for p in q['prio'])}"
                 f", ECN marks {p3['ecn_marked']}; PFC frames {p3['pause_tx']} XOFF + "
                 f"{p3['xon_tx']} XON, ports held in XOFF {p3['pause_tx_duration_us'] / 1000:.0f} ms")
    c = counters(logdir, name)
    if c:
        paused = sum(v for (h, k), v in c.items() if k == "rx_prio3_pause_duration")
        retx = sum(v for (h, k), v in c.items() if k == "completer_retry_err")
        cnps = sum(v for (h, k), v in c.items() if k == "rp_cnp_handled")
        line += (f"; senders paused {paused / 1000:.0f} ms in all; retransmissions {retx}; "
                 f"CNPs handled {cnps}")
    print(line)
    return 0


def wrong_values(q, specs):
    """The lines naming each value of the qdisc q (its JSON) that is not as
    a spec ("KEY WANT [PRIO]") wants."""
    out = []
    for v in specs:
        key, want, *prio = v.split()
        got = q["prio"][int(prio[0])][key] if prio else q[key]
        if str(got) != want:
            where = " of prio " + prio[0] if prio else ""
            out.append(f"{key}{where}: {got}, want {want}")
    return out


# What a priority of `rxecc -j qdisc show` holds that is configuration, not
# a counter.
PRIO_CONFIG = ("limit", "xoff", "xon", "headroom", "kmin", "kmax", "pmax")


def configuration(q):
    """The qdisc q (its JSON) with only PRIO_CONFIG's keys in its
    priorities; the qdisc's own keys all kept."""
    return dict(q, prio=[{k: v for k, v in p.items() if k in PRIO_CONFIG} for p in q["prio"]])


def qdisc_counters(q):
    """(KEY, VALUE) pairs of the qdisc q (its JSON): priority 3's integers
    (a JSON boolean is one too, as Python has it) but its drops, then
    "drops", all priorities' drops, and "frames", priority 3's XOFF and XON
    sent."""
    prio = q["prio"]
    out = [(k, v) for k, v in prio[3].items() if isinstance(v, int) and k != "drops"]
    out.append(("drops", sum(p["drops"] for p in prio)))
    out.append(("frames", prio[3]["pause_tx"] + prio[3]["xon_tx"]))
    return out


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "pause":
        return pause(*args)
    if cmd == "frames":
        return frames(args[0], args[1], args[2], args[3:])
    if cmd == "report":
        return report(args[0], args[1], args[2:])
    if cmd == "values":
        bad = wrong_values(json.load(sys.stdin)[0], args)
        for line in bad:
            print(line)
        return 1 if bad else 0
    if cmd == "config":
        print(json.dumps(configuration(json.load(sys.stdin)[0]), sort_keys=True))
        return 0
    if cmd == "qdisc-counters":
        with open(args[0], encoding="utf-8") as f:
            for k, v in qdisc_counters(json.load(f)[0]):
                print(k, v)
        return 0
    if cmd == "goodput":
        print(f"{flows_mbps(args[1:]).get(args[0], 0.0):.1f}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
