#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Refused pfc qdisc changes, as fast as they go, each with its own numbers
in its error message: does every request get its own message back?

usage: pfc_errmsg.py DEV --xoff N --count C

Each request sets priority 3's xon to a new value above XOFF (xoff N), so
that the kernel refuses it with "prio 3: xon X above xoff N". The message
is built after the request took RTNL and read (netlink_ack()) after it
released it: sch_pfc once built it in a static buffer, where a refused
request of another namespace running meanwhile could put its own numbers.
Run one instance per namespace at once, with different N. Prints the
requests made and the messages that were not the request's own (and the
first few); exits 1 on any."""
import argparse
import errno
import socket
import struct
import sys

from pfc_tc_fuzz import (NLA_F_NESTED, NLM_F_ACK, NLM_F_REQUEST, P_ID, P_XOFF, P_XON, PRIO,
                         RTM_NEWQDISC, TCA_KIND, TCA_OPTIONS, Rtnl, attr, tcmsg)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dev")
    ap.add_argument("--xoff", type=int, required=True)
    ap.add_argument("--count", type=int, default=2000)
    a = ap.parse_args()
    ifindex = socket.if_nametoindex(a.dev)
    nl = Rtnl()
    wrong = []
    for k in range(a.count):
        xon = a.xoff + 1 + k
        nest = attr(P_ID, bytes([3])) + attr(P_XOFF, struct.pack("=I", a.xoff)) + \
            attr(P_XON, struct.pack("=I", xon))
        err, _ = nl.request(RTM_NEWQDISC, NLM_F_REQUEST | NLM_F_ACK,
                            tcmsg(ifindex) + attr(TCA_KIND, b"pfc\0") +
                            attr(TCA_OPTIONS | NLA_F_NESTED, attr(PRIO | NLA_F_NESTED, nest)))
        want = f"prio 3: xon {xon} above xoff {a.xoff}"
        if err != errno.EINVAL or nl.msg != want:
            wrong.append(f"error {err} '{nl.msg}', want {errno.EINVAL} '{want}'")
    print(f"{a.dev}: {a.count} refused changes, {len(wrong)} answered with another message")
    for w in wrong[:5]:
        print(f"  {w}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
