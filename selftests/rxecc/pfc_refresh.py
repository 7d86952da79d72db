#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""How often a pfc switch port refreshes its XOFF, whatever its options say
(run it under `unshare -Urn` to be an unprivileged user's own namespace).

PORTS ingress ports pI (veth, peers qI) feed the egress port out0 (veth to
sink0, a pfc qdisc with PFC on priority 3 and the options given) through IP
forwarding. UDP frames of priority 3 are injected at the qI, round robin,
faster than out0's rate, so that every port's bytes stay above XOFF for the
whole run; nothing honours the pauses (the qI are raw sockets). The PFC
frames that reach the qI and the CPU time in irq and softirq (/proc/stat,
every CPU) are counted over DURATION seconds, for each --config in turn,
or for --fuzz N configurations drawn from a seed: quanta, link speed and
port rate at their edges and between.

Each config must send XOFF refreshes at the interval sch_pfc documents, no
more often and not much less, to every port: half the pause time of its
quanta at its link speed, at least 1 ms and 4 packet times at its rate.
Before the bound, `quanta 1 link_speed 1000000` made the interval 0 and the PFC
timer re-armed at once (thousands of frames a second). With --cpu-margin
the irq + softirq share of every config may exceed the first config's by
that many points; with --cpu-max no config's may exceed that share.

Prints one line per config (JSON) and per check; exits 1 if a check failed."""
import argparse
import json
import random
import select
import socket
import sys
import time

from pfc_ports import PFC_DA, SLOTS, build_ports, mac_of, sh, udp_frame

ETH_P_PAUSE = 0x8808
QUANTUM_BITS = 512
REFRESH_MIN_S = 1e-3
REFRESH_MTUS = 4
MTU = 1500 + 14


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
    link = opt_value(opts, "link_speed", 10000) * 1e6
    rate = opt_value(opts, "rate", 0) * 1e6 or link
    return max(quanta * QUANTUM_BITS / link / 2, REFRESH_MIN_S,
               min(REFRESH_MTUS * MTU * 8 / rate, 1.0))


def cpu() -> tuple:
    """(irq + softirq, all) jiffies of every CPU so far."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[5] + v[6], sum(v[:8])


def run(tool: str, opts: list, ports: int, duration: float, pps: float) -> dict:
    sh(tool, "qdisc", "add", "dev", "out0", "pfc", *opts)
    # every PFC frame that arrives on a qI (one socket, every interface)
    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_PAUSE))
    cap.setblocking(False)
    txs, pkts = [], []
    for i in range(ports):
        tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        tx.bind((f"q{i}", 0))
        txs.append(tx)
        pkts.append(udp_frame(mac_of(f"p{i}"), mac_of(f"q{i}"),
                              f"10.{10 + i // 200}.{i % 200}.2", "10.9.0.2", 24 << 2, 1358))
    # every port above XOFF first (out0 sends at its rate, 1400 bytes each)
    for _ in range(max(3, 40 // ports)):
        for tx, pkt in zip(txs, pkts):
            tx.send(pkt)
    time.sleep(0.2)
    while select.select([cap], [], [], 0)[0]:
        cap.recv(2048)
    frames = 0
    c0, t0 = cpu(), time.monotonic()
    nxt, k = t0, 0
    while True:
        now = time.monotonic()
        if now - t0 >= duration:
            break
        if now >= nxt:
            txs[k % ports].send(pkts[k % ports])
            k += 1
            nxt += 1 / pps
        ready, _, _ = select.select([cap], [], [], max(0.0, min(nxt - now, 0.05)))
        while ready:
            try:
                f, addr = cap.recvfrom(2048)
            except BlockingIOError:
                break
            if (addr[0].startswith("q") and addr[2] != socket.PACKET_OUTGOING and
                    f[:6] == PFC_DA and f[12:16] == b"\x88\x08\x01\x01"):
                frames += 1
    c1, t1 = cpu(), time.monotonic()
    qd = json.loads(sh(tool, "-j", "qdisc", "show", "dev", "out0"))[0]
    q = qd["prio"][3]
    sh(tool, "qdisc", "del", "dev", "out0")
    cap.close()
    for tx in txs:
        tx.close()
    busy = 100.0 * (c1[0] - c0[0]) / max(1, c1[1] - c0[1])
    held = min(ports, SLOTS)
    return {"options": " ".join(opts), "ports": ports, "seconds": round(t1 - t0, 2),
            "frames_per_s_per_port": round(frames / (t1 - t0) / held, 1),
            "pfc_untracked": qd["pfc_untracked"],
            "expected_per_s": round(1 / refresh_s(opts), 1),
            "irq_softirq_pct": round(busy, 1), "xoff_ports": q["xoff_ports"],
            "qlen": q["qlen"]}


def fuzz_configs(n: int, seed: int, rates: list) -> list:
    """@n option strings: quanta, link speed and port rate at their edges
    and between (the rate one of @rates, Mbit/s: under what the injection
    brings, so that the queue holds)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        quanta = rng.choice([1, 2, 7, 100, 190, 1000, 65535, rng.randrange(1, 65536)])
        link = rng.choice([1, 25, 1000, 10000, 100000, 1000000, rng.randrange(1, 1000001)])
        rate = rng.choice(rates)
        out.append(f"0x08 rate {rate} quanta {quanta} link_speed {link} delay 0 xoff 2000 xon 1000 "
                   "headroom 64KiB limit 4MiB")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--config", action="append", default=[],
                    help="the qdisc's options after 'pfc', one string")
    ap.add_argument("--fuzz", type=int, default=0, help="this many configurations from --seed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ports", type=int, default=1, help="ingress ports")
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--pps", type=float, default=300.0, help="injected packets per second")
    ap.add_argument("--cpu-margin", type=float, help="points above the first config allowed")
    ap.add_argument("--cpu-max", type=float, help="irq + softirq share no config may exceed")
    ap.add_argument("--rates", default="1,2", help="port rates the fuzzed configs take, Mbit/s")
    a = ap.parse_args()
    configs = a.config + fuzz_configs(a.fuzz, a.seed, [int(r) for r in a.rates.split(",")])
    if not configs:
        sys.exit("pfc_refresh: no --config and no --fuzz")
    build_ports(a.ports)
    ok = True
    base = None
    for conf in configs:
        r = run(a.tool, conf.split(), a.ports, a.duration, a.pps)
        print(json.dumps(r), flush=True)
        want = r["expected_per_s"]
        got = r["frames_per_s_per_port"]
        # every refresh, to every port held in XOFF (their first XOFFs came
        # before the run: the 32 a priority accounts; the others counted).
        # Ports not all in XOFF at the end: the injection did not keep the
        # queue up (too slow a guest for the rate), and nothing was measured.
        held = min(a.ports, SLOTS)
        if r["xoff_ports"] != held:
            print(f"FAIL: {conf}: only {r['xoff_ports']} of {held} ports in XOFF at the end "
                  f"(queue {r['qlen']} packets): the injection did not hold the queue, "
                  "nothing measured", flush=True)
        secs = r["seconds"]
        good = (r["xoff_ports"] == held and
                0.5 * want * secs - 1 <= got * secs <= 1.25 * want * secs + 1 and
                (r["pfc_untracked"] > 0) == (a.ports > SLOTS))
        print(f"{'ok' if good else 'FAIL'}: {conf}: {got} PFC frames/s to each of {held} "
              f"port(s) in XOFF, the refresh interval allows {want}/s (ports in XOFF: "
              f"{r['xoff_ports']}; untracked packets from the other "
              f"{a.ports - held}: {r['pfc_untracked']})", flush=True)
        ok &= good
        cpu_pct = r["irq_softirq_pct"]
        if a.cpu_max is not None and cpu_pct > a.cpu_max:
            print(f"FAIL: {conf}: irq + softirq {cpu_pct} % (at most {a.cpu_max} %)", flush=True)
            ok = False
        if base is None:
            base = cpu_pct
        elif a.cpu_margin is not None:
            good = cpu_pct <= base + a.cpu_margin
            print(f"{'ok' if good else 'FAIL'}: {conf}: irq + softirq {cpu_pct} % "
                  f"against {base} % (+{a.cpu_margin} allowed)", flush=True)
            ok &= good
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
