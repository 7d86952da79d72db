#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Readings and checks of pfc_wd.sh (the pfc qdisc's watchdog); the host
tests are test_pfc_wd_check.py.

  read KEY...
      `rxecc -j qdisc show` of one qdisc on stdin: the value of each KEY
      (priority 3's if priority 3 has one, else the qdisc's) as an integer,
      one a line (a JSON boolean reads 1 or 0)
  monitor MONITOR_JSON NETDEV PRIO ACTION
      `rxecc -j monitor`'s events: the watchdog's (wd_*) are one wd_storm
      and then one wd_restored, each of NETDEV, PRIO and ACTION
  share J0 J1 T0 T1
      two `rxecc -j qdisc show` of one qdisc (J0, J1) read at T0 and T1
      (ns): the share of the time between them that priority 3 was paused
      (pause_rx_duration_us), in hundredths of a percent, rounded down
"""
import argparse
import json
import sys

PRIO = 3


def read(q, keys):
    """The value of each key of the qdisc q (its JSON), priority PRIO's if it
    has one, else the qdisc's, as an integer."""
    p = q["prio"][PRIO]
    return [int(p[k] if k in p else q[k]) for k in keys]


def wd_events(events):
    """(event, netdev, prio, wd_action) of each watchdog event (wd_*) of
    the monitor's events."""
    return [(e["event"], e["netdev"], e["prio"], e["wd_action"]) for e in events if e["event"].startswith("wd_")]


def storm_and_restored(events, netdev, prio, action):
    """The watchdog's events are one storm and then one restoration, both
    of netdev's priority prio with action."""
    return wd_events(events) == [("wd_storm", netdev, prio, action), ("wd_restored", netdev, prio, action)]


def paused_share(q0, q1, t0_ns, t1_ns):
    """Hundredths of a percent of the time from t0_ns to t1_ns that
    priority PRIO was paused, from the qdisc's JSON (q0, q1) at each."""
    p0, p1 = (q["prio"][PRIO]["pause_rx_duration_us"] for q in (q0, q1))
    return int((p1 - p0) * 10000 * 1000 // (t1_ns - t0_ns))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("read").add_argument("keys", nargs="+")
    p = sub.add_parser("monitor")
    p.add_argument("events")
    p.add_argument("netdev")
    p.add_argument("prio", type=int)
    p.add_argument("action")
    p = sub.add_parser("share")
    for a in ("j0", "j1"):
        p.add_argument(a)
    for a in ("t0", "t1"):
        p.add_argument(a, type=int)
    a = ap.parse_args(argv[1:])
    if a.cmd == "read":
        for v in read(json.load(sys.stdin)[0], a.keys):
            print(v)
        return 0
    if a.cmd == "monitor":
        with open(a.events, encoding="utf-8") as f:
            events = [json.loads(line) for line in f]
        return 0 if storm_and_restored(events, a.netdev, a.prio, a.action) else 1
    print(paused_share(json.loads(a.j0)[0], json.loads(a.j1)[0], a.t0, a.t1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
