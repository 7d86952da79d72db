#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""UDP datagrams from ordinary sockets (no privilege needed), for
security.sh; the host tests (what is sent, not the sending) are
test_udp_send.py.

  dscp DST --dscp N [--bind ADDR] [--count 20] [--size 1000] [--port 9]
      COUNT datagrams of SIZE zero bytes to DST:PORT with DSCP N (IP_TOS
      N << 2), from ADDR when given (IPv4)
  short GID6 OTHER6 GID4
      what rxe 6.1 panicked on (patch 0018), to the RoCE port: over IPv6
      (one socket), 4 bytes (too short for a BTH) to GID6 and 40 bytes to
      OTHER6 (an address of the host that is not one of its GIDs); over
      IPv4, 4 bytes to GID4 with a Record Route option (IP_OPTIONS needs
      no privilege), as IPv4 keeps its control block only for a packet
      with options
"""
import argparse
import socket
import sys
from collections import namedtuple

ROCE_PORT = 4791
# Record Route: type 7, length 7, pointer 4, one empty slot; then End of List
RECORD_ROUTE = bytes([7, 7, 4, 0, 0, 0, 0, 0])

# A socket to open: its family, its options (level, name, value), the
# address to bind it to (None: none) and its datagrams (data, address).
Sock = namedtuple("Sock", "family options bind datagrams")


def dscp_plan(dst, dscp, bind=None, count=20, size=1000, port=9):
    return [Sock(socket.AF_INET, [(socket.IPPROTO_IP, socket.IP_TOS, dscp << 2)],
                 (bind, 0) if bind else None, [(bytes(size), (dst, port))] * count)]


def short_plan(gid6, other6, gid4):
    return [Sock(socket.AF_INET6, [], None, [(b"abcd", (gid6, ROCE_PORT)), (bytes(40), (other6, ROCE_PORT))]),
            Sock(socket.AF_INET, [(socket.IPPROTO_IP, socket.IP_OPTIONS, RECORD_ROUTE)], None,
                 [(b"abcd", (gid4, ROCE_PORT))])]


def send(plan):
    for p in plan:
        with socket.socket(p.family, socket.SOCK_DGRAM) as s:
            for level, name, value in p.options:
                s.setsockopt(level, name, value)
            if p.bind:
                s.bind(p.bind)
            for data, addr in p.datagrams:
                s.sendto(data, addr)


def parser():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dscp")
    d.add_argument("dst")
    d.add_argument("--dscp", type=int, required=True)
    d.add_argument("--bind")
    d.add_argument("--count", type=int, default=20)
    d.add_argument("--size", type=int, default=1000)
    d.add_argument("--port", type=int, default=9)
    s = sub.add_parser("short")
    s.add_argument("gid6")
    s.add_argument("other6")
    s.add_argument("gid4")
    return ap


def plan_of(a):
    if a.cmd == "dscp":
        return dscp_plan(a.dst, a.dscp, a.bind, a.count, a.size, a.port)
    return short_plan(a.gid6, a.other6, a.gid4)


def main(argv=None):
    send(plan_of(parser().parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
