#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A pfc switch port with more ingress ports in XOFF than one priority has
port slots (32), in the caller's network namespace (run it under
`unshare -Urn` to be an unprivileged user's own namespace).

PORTS veth pairs pI/qI feed one egress port out0 (veth to sink0) through IP
forwarding; out0 carries a pfc qdisc with PFC on priorities 1 and 2. The
first half of the ports send priority 1 (DSCP 8), the other half priority 2
(DSCP 16), so the qdisc holds up to 64 distinct ports in XOFF. out0 itself
is paused by a PFC frame (33.5 s at 1 Mbit/s) from sink0, so nothing drains.
Then every port must be in XOFF, and each of the ways the qdisc releases
them (`change` turning PFC off: the PFC timer; `del`: destroy) must send one
XON to every port, captured on qI. The qdisc once built those frames in an
on-stack array of 33: 34 or more ports overflowed it.

A priority accounts 32 ports at once: with more than 32 ports on a priority
the others are never paused, and the qdisc must say so (pfc_untracked, in
`qdisc show`), not pretend the priority is still lossless.

Prints one line per check and exits 1 if any failed."""
import argparse
import json
import select
import socket
import struct
import subprocess
import sys
import time

ETH_P_PAUSE = 0x8808
ETH_P_IP = 0x0800
PFC_DA = bytes.fromhex("0180c2000001")


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def udp_frame(dst_mac: bytes, src_mac: bytes, src: str, dst: str, tos: int,
              payload: int) -> bytes:
    udp = struct.pack("!HHHH", 40000, 9, 8 + payload, 0) + bytes(payload)
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return dst_mac + src_mac + struct.pack("!H", ETH_P_IP) + hdr + udp


def pfc_frame(src_mac: bytes, enable: int, quanta: int) -> bytes:
    times = [quanta if enable & (1 << p) else 0 for p in range(8)]
    return (PFC_DA + src_mac + struct.pack("!HHH8H", ETH_P_PAUSE, 0x0101, enable, *times)
            ).ljust(60, b"\0")


MACS: dict = {}


def mac_of(dev: str) -> bytes:
    """From rtnetlink: /sys shows the namespace it was mounted in."""
    if not MACS:
        for link in json.loads(sh("ip", "-j", "link", "show")):
            # Ethernet links only: a kernel with tunnels built in puts its
            # fallback devices (tunl0 "0.0.0.0", sit0, ...) in every namespace
            if link.get("link_type") == "ether":
                MACS[link["ifname"]] = bytes.fromhex(link["address"].replace(":", ""))
    return MACS[dev]


def qdisc(tool: str) -> dict:
    return json.loads(sh(tool, "-j", "qdisc", "show", "dev", "out0"))[0]


def build_ports(n: int) -> None:
    """out0 (its peer sink0) and n ingress ports pI (peers qI), forwarding."""
    cmds = ["link set lo up", "link add out0 type veth peer name sink0",
            "link set out0 up", "link set sink0 up", "addr add 10.9.0.1/24 dev out0",
            "neigh add 10.9.0.2 lladdr 02:00:00:00:00:02 dev out0 nud permanent"]
    for i in range(n):
        cmds += [f"link add p{i} type veth peer name q{i}", f"link set p{i} up",
                 f"link set q{i} up", f"addr add 10.{10 + i // 200}.{i % 200}.1/24 dev p{i}"]
    subprocess.run(["ip", "-batch", "-"], input="\n".join(cmds) + "\n", text=True, check=True)
    for k in ["net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
              "net.ipv4.conf.default.rp_filter=0"]:
        sh("sysctl", "-qw", k)


def setup(n: int, tool: str) -> None:
    build_ports(n)
    # 1 Mbit/s link: one XOFF frame (65535 quanta) pauses for 33.5 s.
    sh(tool, "qdisc", "add", "dev", "out0", "pfc", "0x06", "link_speed", "1mbit", "delay", "0us",
       "xoff", "2000", "xon", "1000", "headroom", "64KiB", "limit", "4MiB")


def fill(n: int, socks: list) -> None:
    """Pause out0, then send 3 packets of 1000 bytes from every port."""
    sink = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sink.bind(("sink0", 0))
    sink.send(pfc_frame(mac_of("sink0"), 0x06, 0xFFFF))
    sink.close()
    time.sleep(0.2)
    for _ in range(3):
        for i in range(n):
            tos = (8 if i < n // 2 else 16) << 2
            socks[i].send(udp_frame(mac_of(f"p{i}"), mac_of(f"q{i}"),
                                    f"10.{10 + i // 200}.{i % 200}.2", "10.9.0.2", tos, 958))


def captures(n: int) -> list:
    out = []
    for i in range(n):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_PAUSE))
        s.bind((f"q{i}", 0))
        s.setblocking(False)
        out.append(s)
    return out


def drain(caps: list, wait: float) -> list:
    """Per port, the PFC frames received so far: (enable, times)."""
    got: list = [[] for _ in caps]
    end = time.time() + wait
    while True:
        left = end - time.time()
        ready, _, _ = select.select(caps, [], [], max(left, 0))
        if not ready:
            return got
        for s in ready:
            while True:
                try:
                    f = s.recv(2048)
                except BlockingIOError:
                    break
                if f[:6] == PFC_DA and f[12:16] == b"\x88\x08\x01\x01":
                    enable, *times = struct.unpack("!H8H", f[16:34])
                    got[caps.index(s)].append((enable, times))


def prio_of(i: int, n: int) -> int:
    return 1 if i < n // 2 else 2


def check(name: str, ok: bool, detail: str) -> bool:
    print(f"{'ok' if ok else 'FAIL'}: {name}: {detail}", flush=True)
    return ok


SLOTS = 32  # ingress ports a priority accounts at once (sch_pfc's PFC_PORTS)


def per_prio(n: int) -> tuple:
    """Ports sending priority 1 and 2."""
    return n // 2, n - n // 2


def tracked(n: int) -> tuple:
    """Ports of priorities 1 and 2 the qdisc can hold in XOFF."""
    return tuple(min(SLOTS, k) for k in per_prio(n))


def slot_of(i: int, n: int) -> int:
    """The port's place among those of its priority."""
    return i if i < n // 2 else i - n // 2


def xoffs(n: int, tool: str, timeout: float) -> tuple:
    end = time.time() + timeout
    while True:
        q = qdisc(tool)
        x = (q["prio"][1]["xoff_ports"], q["prio"][2]["xoff_ports"])
        if x == tracked(n) or time.time() > end:
            return x


def released(got: list, n: int, want_xoff: bool) -> tuple:
    """Ports that got an XON for their priority (and, with @want_xoff, an
    XOFF for it before), and ports past the slots that got any frame (the
    qdisc takes its slots in the order the ports' first packets came: the
    first 32 of each priority)."""
    good = stray = 0
    for i, frames in enumerate(got):
        p = prio_of(i, n)
        if slot_of(i, n) >= SLOTS:
            stray += bool(frames)
            continue
        xon = any(e & (1 << p) and t[p] == 0 for e, t in frames)
        xoff = any(e & (1 << p) and t[p] != 0 for e, t in frames)
        good += xon and (xoff or not want_xoff)
    return good, stray, sum(len(f) for f in got)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ports", type=int, default=64)
    ap.add_argument("--tool", required=True)
    a = ap.parse_args()
    n = a.ports
    setup(n, a.tool)
    caps = captures(n)
    socks = []
    for i in range(n):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        s.bind((f"q{i}", 0))
        socks.append(s)
    ok = True

    want = tracked(n)
    over = sum(per_prio(n)) - sum(want)  # ports never paused

    # 1. `change` turns PFC off: the timer sends the XONs.
    fill(n, socks)
    x = xoffs(n, a.tool, 10)
    ok &= check("ports in XOFF on priorities 1 and 2", x == want, f"{x}, want {want}")
    q = qdisc(a.tool)
    # every packet of a port past the slots is counted (3 each)
    ok &= check("traffic from ports past the 32 slots counted as untracked",
                q["pfc_untracked"] == 3 * over, f"pfc_untracked {q['pfc_untracked']}, "
                f"{over} ports past the slots sent 3 packets each")
    text = sh(a.tool, "qdisc", "show", "dev", "out0")
    ok &= check("qdisc show names pfc_untracked", f"pfc_untracked {3 * over}" in text,
                next((ln.strip() for ln in text.splitlines() if "pfc_untracked" in ln), "absent"))
    sh(a.tool, "qdisc", "change", "dev", "out0", "pfc", "none")
    got = drain(caps, 2)
    good, stray, frames = released(got, n, True)
    ok &= check("change pfc none: every port with a slot got XOFF then XON, the others nothing",
                good == sum(want) and stray == 0,
                f"{good} of {sum(want)} ports, {stray} of {over} past the slots got frames, "
                f"{frames} PFC frames")
    q = qdisc(a.tool)
    ok &= check("no port left in XOFF", q["prio"][1]["xoff_ports"] + q["prio"][2]["xoff_ports"] == 0,
                f"{q['prio'][1]['xoff_ports']} + {q['prio'][2]['xoff_ports']}")

    # 2. `del`: destroy releases them.
    sh(a.tool, "qdisc", "del", "dev", "out0")
    sh(a.tool, "qdisc", "add", "dev", "out0", "pfc", "0x06", "link_speed", "1mbit", "delay", "0us",
       "xoff", "2000", "xon", "1000", "headroom", "64KiB", "limit", "4MiB")
    drain(caps, 0.5)
    fill(n, socks)
    x = xoffs(n, a.tool, 10)
    ok &= check("again in XOFF", x == want, f"{x}")
    drain(caps, 0.5)
    sh("tc", "qdisc", "del", "dev", "out0", "root")
    got = drain(caps, 2)
    good, stray, frames = released(got, n, False)
    ok &= check("tc qdisc del: every port with a slot got XON", good == sum(want) and stray == 0,
                f"{good} of {sum(want)} ports, {stray} others, {frames} frames")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
