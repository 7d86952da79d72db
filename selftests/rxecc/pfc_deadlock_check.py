#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of pfc_deadlock.sh, on the summaries of its runs (the JSON of
lib/python/pfc_timeline.py summary); the host tests are
test_pfc_deadlock_check.py. Each prints "frozen spans: [[FROM, TO], ...]"
(the run's frozen windows, s from its start) first.

  deadlocked SUMMARY
      PFC alone: the ring froze for 2 s or more, and no ring port dropped
      a packet (neither its queue nor its watchdog)
  broken SUMMARY ALONE
      the watchdog on: it saw a storm and dropped packets, no freeze lasted
      1 s, and the ring ports sent over twice the packets of ALONE (the
      summary of the run with PFC alone)
"""
import argparse
import json
import sys


def frozen_line(s):
    return f"frozen spans: {s['frozen']}"


def deadlocked(s):
    """The ring of summary s froze for 2 s or more and dropped nothing."""
    return s["longest_frozen"] >= 2.0 and all(x["drops"] == 0 and x["wd_drops"] == 0 for x in s["ports"].values())


def broken(s, alone):
    """The watchdog broke the deadlock of alone in summary s: a storm
    detected, packets dropped, no freeze of 1 s, over twice the packets
    sent."""
    p = list(s["ports"].values())
    sent = sum(x["tx_packets"] for x in p)
    sent_alone = sum(x["tx_packets"] for x in alone["ports"].values())
    return (sum(x["wd_storms"] for x in p) >= 1 and sum(x["wd_drops"] for x in p) > 0
            and s["longest_frozen"] < 1.0 and sent > 2 * sent_alone)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("deadlocked").add_argument("summary")
    p = sub.add_parser("broken")
    p.add_argument("summary")
    p.add_argument("alone")
    a = ap.parse_args(argv[1:])
    s = load(a.summary)
    print(frozen_line(s))
    if a.cmd == "deadlocked":
        return 0 if deadlocked(s) else 1
    return 0 if broken(s, load(a.alone)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
