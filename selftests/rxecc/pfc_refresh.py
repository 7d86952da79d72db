#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How often a pfc switch port refreshes its XOFF, whatever its options say
(run it under `unshare -Urn` to be an unprivileged user's own namespace).

One ingress port p0 (veth, its peer q0) feeds the egress port out0 (veth to
sink0, a pfc qdisc with PFC on priority 3 and the OPTIONS given) through IP
forwarding. UDP frames of priority 3 are injected at q0 faster than out0's
rate, so out0's queue stays above XOFF for the whole run; nothing honours
the pauses (q0 is a raw socket). The PFC frames that reach q0 and the CPU
time in irq and softirq (/proc/stat, every CPU) are counted over DURATION
seconds, for each --config in turn.

Each config must send XOFF refreshes at the interval sch_pfc documents, no
more often and not much less: half the pause time of its quanta at its link
speed, at least 1 ms and 4 packet times at its rate. Before the bound,
`quanta 1 link 1000000` made the interval 0 and the PFC timer re-armed at
once (thousands of frames a second). With --cpu-margin the irq + softirq
share of every config may exceed the first config's by that many points.

Prints one line per config (JSON) and per check; exits 1 if a check failed."""
import argparse
import json
import select
import socket
import subprocess
import sys
import time

from pfc_ports import PFC_DA, mac_of, sh, udp_frame

ETH_P_PAUSE = 0x8808
QUANTUM_BITS = 512
REFRESH_MIN_S = 1e-3
REFRESH_MTUS = 4
MTU = 1500 + 14


def setup() -> None:
    cmds = ["link set lo up", "link add out0 type veth peer name sink0",
            "link set out0 up", "link set sink0 up", "addr add 10.9.0.1/24 dev out0",
            "neigh add 10.9.0.2 lladdr 02:00:00:00:00:02 dev out0 nud permanent",
            "link add p0 type veth peer name q0", "link set p0 up", "link set q0 up",
            "addr add 10.10.0.1/24 dev p0"]
    subprocess.run(["ip", "-batch", "-"], input="\n".join(cmds) + "\n", text=True, check=True)
    for k in ["net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
              "net.ipv4.conf.default.rp_filter=0"]:
        sh("sysctl", "-qw", k)


def opt_value(opts: list, key: str, default: float) -> float:
    """A number from the options (rate in Mbit/s as given: '1mbit' or '1')."""
    if key not in opts:
        return default
    v = opts[opts.index(key) + 1].lower()
    for suffix, mult in (("gbit", 1000), ("mbit", 1), ("kbit", 1e-3)):
        if v.endswith(suffix):
            return float(v[: -len(suffix)]) * mult
    return float(v)


def refresh_s(opts: list) -> float:
    """The refresh interval sch_pfc documents, for these options."""
    quanta = opt_value(opts, "quanta", 65535)
    link = opt_value(opts, "link", 10000) * 1e6
    rate = opt_value(opts, "rate", 0) * 1e6 or link
    return max(quanta * QUANTUM_BITS / link / 2, REFRESH_MIN_S,
               min(REFRESH_MTUS * MTU * 8 / rate, 1.0))


def cpu() -> tuple:
    """(irq + softirq, all) jiffies of every CPU so far."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[5] + v[6], sum(v[:8])


def run(tool: str, opts: list, duration: float, pps: float) -> dict:
    sh(tool, "qdisc", "add", "dev", "out0", "pfc", *opts)
    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_PAUSE))
    cap.bind(("q0", 0))
    cap.setblocking(False)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind(("q0", 0))
    pkt = udp_frame(mac_of("p0"), mac_of("q0"), "10.10.0.2", "10.9.0.2", 24 << 2, 958)
    # the queue above XOFF first (out0 sends at its rate, 1000 bytes each)
    for _ in range(40):
        tx.send(pkt)
    time.sleep(0.2)
    while cap.recv_into(bytearray(2048)) if select.select([cap], [], [], 0)[0] else 0:
        pass
    frames = 0
    c0, t0 = cpu(), time.monotonic()
    nxt = t0
    while True:
        now = time.monotonic()
        if now - t0 >= duration:
            break
        if now >= nxt:
            tx.send(pkt)
            nxt += 1 / pps
        ready, _, _ = select.select([cap], [], [], max(0.0, min(nxt - now, 0.05)))
        while ready:
            try:
                f = cap.recv(2048)
            except BlockingIOError:
                break
            if f[:6] == PFC_DA and f[12:16] == b"\x88\x08\x01\x01":
                frames += 1
    c1, t1 = cpu(), time.monotonic()
    q = json.loads(sh(tool, "-j", "qdisc", "show", "dev", "out0"))[0]["prio"][3]
    sh(tool, "qdisc", "del", "dev", "out0")
    cap.close()
    tx.close()
    busy = 100.0 * (c1[0] - c0[0]) / max(1, c1[1] - c0[1])
    return {"options": " ".join(opts), "seconds": round(t1 - t0, 2),
            "frames_per_s": round(frames / (t1 - t0), 1),
            "expected_per_s": round(1 / refresh_s(opts), 1),
            "irq_softirq_pct": round(busy, 1), "xoff_ports": q["xoff_ports"],
            "qlen": q["qlen"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--config", action="append", required=True,
                    help="the qdisc's options after 'pfc', one string")
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--pps", type=float, default=300.0, help="injected packets per second")
    ap.add_argument("--cpu-margin", type=float, help="points above the first config allowed")
    a = ap.parse_args()
    setup()
    ok = True
    base = None
    for conf in a.config:
        r = run(a.tool, conf.split(), a.duration, a.pps)
        print(json.dumps(r), flush=True)
        want = r["expected_per_s"]
        # the frames of the run: every refresh (the first XOFF was before it)
        good = r["xoff_ports"] == 1 and 0.5 * want - 1 <= r["frames_per_s"] <= 1.25 * want + 1
        print(f"{'ok' if good else 'FAIL'}: {conf}: {r['frames_per_s']} PFC frames/s, "
              f"the refresh interval allows {want}/s (port in XOFF: {r['xoff_ports']})", flush=True)
        ok &= good
        if base is None:
            base = r["irq_softirq_pct"]
        elif a.cpu_margin is not None:
            good = r["irq_softirq_pct"] <= base + a.cpu_margin
            print(f"{'ok' if good else 'FAIL'}: {conf}: irq + softirq {r['irq_softirq_pct']} % "
                  f"against {base} % (+{a.cpu_margin} allowed)", flush=True)
            ok &= good
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
