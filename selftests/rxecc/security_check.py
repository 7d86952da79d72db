#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of security.sh; the host tests are test_security_check.py.

  queued-without-pfc PRIO
      `rxecc -j qdisc show` of a pfc port on stdin, whose traffic of
      priority PRIO came in through a bridge device: one line of PRIO's
      counts; exit 0 when its queue filled (a backlog of 10000 B or more)
      with no port in XOFF and no XOFF sent
"""
import argparse
import json
import sys

MIN_BACKLOG = 10000     # bytes (security.sh sends 20 datagrams of 1000 B)


def queued_without_pfc(qdisc, prio):
    """(passed, line) of priority PRIO of a qdisc's JSON."""
    p = qdisc["prio"][prio]
    line = ("prio %d: backlog %d B, xoff_ports %d, pause_tx %d, pause_rx %d, tx_packets %d" %
            (prio, p["backlog"], p["xoff_ports"], p["pause_tx"], p["pause_rx"], p["tx_packets"]))
    return p["backlog"] >= MIN_BACKLOG and p["xoff_ports"] == 0 and p["pause_tx"] == 0, line


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("queued-without-pfc").add_argument("prio", type=int)
    a = ap.parse_args(argv)
    ok, line = queued_without_pfc(json.load(sys.stdin)[0], a.prio)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
