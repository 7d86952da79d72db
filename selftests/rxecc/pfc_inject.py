#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send IEEE 802.1Qbb PFC frames out of an interface (AF_PACKET): XOFF for
one priority every PERIOD seconds for DURATION seconds, then one XON.
--dst and --vlan make frames a MAC must not take from its link partner
(another destination address, a VLAN tag). --blink GAP makes a partner that
keeps a queue paused but for a moment now and then: before every XOFF but
the first, an XON, then the XOFF GAP seconds later (0: at once, both in
one sendmmsg() call, so that the receiver takes them microseconds apart
however slow this process is scheduled).
--sll-protocol P sends with skb->protocol P instead of the frame's own
EtherType (AF_PACKET takes it from the address): macvlan and ipvlan drop
PAUSE frames (by skb->protocol) instead of looping them back to siblings.
With --go FILE it starts once FILE exists (a caller can start it early, as
a Python start takes seconds on a slow emulated CPU, and say when).
Prints JSON: frames sent, the wall-clock times (as pcap timestamps) of the
first XOFF, the last XOFF and the XON, and the longest time between two
XOFFs (max_gap, s)."""
import argparse
import ctypes
import json
import os
import socket
import struct
import sys
import time

PFC_DA = bytes.fromhex("0180c2000001")


def frame(src: bytes, prio: int, quanta: int, dst: bytes = PFC_DA, vlan: int = -1) -> bytes:
    times = [0] * 8
    times[prio] = quanta
    tag = b"" if vlan < 0 else struct.pack("!HH", 0x8100, vlan)
    body = struct.pack("!HHH8H", 0x8808, 0x0101, 1 << prio, *times)
    return (dst + src + tag + body).ljust(60, b"\0")


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class MsgHdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(IoVec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class MMsgHdr(ctypes.Structure):
    _fields_ = [("hdr", MsgHdr), ("len", ctypes.c_uint)]


def send_pair(s: socket.socket, first: bytes, second: bytes) -> None:
    """Both frames out of the bound socket in one sendmmsg() call."""
    libc = ctypes.CDLL(None, use_errno=True)
    bufs = [ctypes.create_string_buffer(f, len(f)) for f in (first, second)]
    iovs = (IoVec * 2)(*[IoVec(ctypes.cast(b, ctypes.c_void_p), len(b)) for b in bufs])
    msgs = (MMsgHdr * 2)()
    for i in range(2):
        msgs[i].hdr.iov = ctypes.pointer(iovs[i])
        msgs[i].hdr.iovlen = 1
    n = libc.sendmmsg(s.fileno(), msgs, 2, 0)
    if n != 2:
        raise OSError(ctypes.get_errno(), f"sendmmsg sent {n} of 2")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("--prio", type=int, default=3)
    ap.add_argument("--quanta", type=int, default=0xFFFF)
    ap.add_argument("--period", type=float, default=0.005)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--dst", default=PFC_DA.hex(":"), help="destination MAC")
    ap.add_argument("--vlan", type=int, default=-1, help="802.1Q tag with this VID")
    ap.add_argument("--count", type=int, help="send this many XOFFs (instead of --duration)")
    ap.add_argument("--no-xon", action="store_true", help="end without the XON")
    ap.add_argument("--blink", type=float, help="an XON this long before every XOFF but the first")
    ap.add_argument("--sll-protocol", type=lambda v: int(v, 0), default=0,
                    help="skb->protocol to send with (default: the frame's EtherType)")
    ap.add_argument("--go", help="start once this file exists")
    ap.add_argument("--go-timeout", type=float, default=300.0)
    a = ap.parse_args()
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    src = s.getsockname()[4][:6]
    dst = bytes.fromhex(a.dst.replace(":", ""))
    xoff = frame(src, a.prio, a.quanta, dst, a.vlan)
    xon = frame(src, a.prio, 0, dst, a.vlan)
    to = (a.iface, a.sll_protocol)
    if a.go:
        deadline = time.time() + a.go_timeout
        while not os.path.exists(a.go):
            if time.time() > deadline:
                sys.exit(f"pfc_inject: {a.go} did not appear within {a.go_timeout:.0f} s")
            time.sleep(0.01)
    n = xons = 0
    first = time.time()
    last = first
    max_gap = 0.0
    while (n < a.count) if a.count is not None else (time.time() - first < a.duration):
        now = time.time()
        max_gap = max(max_gap, now - last)
        last = now
        if a.blink == 0 and n and not a.sll_protocol:
            send_pair(s, xon, xoff)
            xons += 1
            n += 1
            time.sleep(a.period)
            continue
        if a.blink is not None and n:
            s.sendto(xon, to)
            xons += 1
            if a.blink:
                time.sleep(a.blink)
        s.sendto(xoff, to)
        n += 1
        time.sleep(a.period)
    xon_at = time.time()
    xoffs = n
    if not a.no_xon:
        s.sendto(xon, to)
        n += 1
    print(json.dumps({"frames": n + xons, "xoff": xoffs, "blink_xon": xons,
                      "first_at": first, "last_at": last,
                      "xon_at": xon_at, "max_gap": max_gap}))


if __name__ == "__main__":
    main()
