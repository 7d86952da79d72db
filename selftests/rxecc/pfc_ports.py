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


def setup(n: int, tool: str) -> None:
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
    # 1 Mbit/s link: one XOFF frame (65535 quanta) pauses for 33.5 s.
    sh(tool, "qdisc", "add", "dev", "out0", "pfc", "0x06", "link", "1mbit", "delay", "0us",
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


def xoffs(n: int, tool: str, timeout: float) -> tuple:
    end = time.time() + timeout
    while True:
        q = qdisc(tool)
        x = (q["prio"][1]["xoff_ports"], q["prio"][2]["xoff_ports"])
        if x == (n // 2, n - n // 2) or time.time() > end:
            return x


def released(got: list, n: int, want_xoff: bool) -> tuple:
    """Ports that got an XON for their priority (and, with @want_xoff, an
    XOFF for it before)."""
    good = 0
    for i, frames in enumerate(got):
        p = prio_of(i, n)
        xon = any(e & (1 << p) and t[p] == 0 for e, t in frames)
        xoff = any(e & (1 << p) and t[p] != 0 for e, t in frames)
        good += xon and (xoff or not want_xoff)
    return good, sum(len(f) for f in got)


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

    # 1. `change` turns PFC off: the timer sends the XONs.
    fill(n, socks)
    x = xoffs(n, a.tool, 10)
    ok &= check("ports in XOFF on priorities 1 and 2", x == (n // 2, n - n // 2), f"{x}")
    sh(a.tool, "qdisc", "change", "dev", "out0", "pfc", "none")
    got = drain(caps, 2)
    good, frames = released(got, n, True)
    ok &= check("change pfc none: every port got XOFF then XON", good == n,
                f"{good} of {n} ports, {frames} PFC frames")
    q = qdisc(a.tool)
    ok &= check("no port left in XOFF", q["prio"][1]["xoff_ports"] + q["prio"][2]["xoff_ports"] == 0,
                f"{q['prio'][1]['xoff_ports']} + {q['prio'][2]['xoff_ports']}")

    # 2. `del`: destroy releases them.
    sh(a.tool, "qdisc", "del", "dev", "out0")
    sh(a.tool, "qdisc", "add", "dev", "out0", "pfc", "0x06", "link", "1mbit", "delay", "0us",
       "xoff", "2000", "xon", "1000", "headroom", "64KiB", "limit", "4MiB")
    drain(caps, 0.5)
    fill(n, socks)
    x = xoffs(n, a.tool, 10)
    ok &= check("again in XOFF", x == (n // 2, n - n // 2), f"{x}")
    drain(caps, 0.5)
    sh("tc", "qdisc", "del", "dev", "out0", "root")
    got = drain(caps, 2)
    good, frames = released(got, n, False)
    ok &= check("tc qdisc del: every port got XON", good == n, f"{good} of {n} ports, {frames} frames")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
