#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of fuzz.sh; the host tests are test_fuzz_check.py.

  expect FUZZ.json COUNTER=DELTA...
      what each of h1's counters grew by against roce_fuzz.py's
      expectation (FUZZ.json's "expect"; a counter it does not name by 0):
      a line per counter, exit 1 when one differs
  qdisc FUZZ.json BEFORE AFTER
      roce_fuzz.py's expectation (FUZZ.json's "expect") against what the
      pfc qdisc counted between BEFORE and AFTER (`rxecc -j qdisc show`,
      as text): malformed, ignored and rejected frames, priority 3's
      pauses
"""
import argparse
import json
import sys


def load_expect(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["expect"]


def counter_deltas(want, deltas):
    """(met, lines): each (counter, delta) (the delta as the shell wrote
    it; not a number: not met) against want, a counter it does not name
    by 0."""
    met, lines = True, []
    for c, d in deltas:
        w = int(want.get(c, 0))
        lines.append(f"h1 {c}: +{d} (expected +{w})")
        try:
            same = int(d) == w
        except ValueError:
            same = False
        met = met and same
    return met, lines


def qdisc_delta(want, before, after):
    """(met, got, want as compared): the qdisc's counts (before and after,
    one qdisc's JSON each) against roce_fuzz.py's expectation."""
    b, a = before, after
    got = {"rx_pfc_malformed": a["pfc_rx_malformed"] - b["pfc_rx_malformed"],
           "rx_pfc_ignored": a["pfc_rx_ignored"] - b["pfc_rx_ignored"],
           "rx_prio3_pause": a["prio"][3]["pause_rx"] - b["prio"][3]["pause_rx"],
           "rejected": a["pfc_rx_rejected"] - b["pfc_rx_rejected"]}
    want = dict(want)
    want.setdefault("rx_prio3_pause", 0)
    want["rejected"] = want.pop("rx_pfc_rejected")
    return got == want, got, want


def counter_delta(arg):
    c, sep, d = arg.partition("=")
    if not sep or not c:
        raise argparse.ArgumentTypeError(f"{arg!r} is not COUNTER=DELTA")
    return c, d


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("expect")
    e.add_argument("fuzz_json")
    e.add_argument("deltas", nargs="+", type=counter_delta, metavar="COUNTER=DELTA")
    q = sub.add_parser("qdisc")
    q.add_argument("fuzz_json")
    q.add_argument("before")
    q.add_argument("after")
    a = ap.parse_args(argv)
    want = load_expect(a.fuzz_json)
    if a.cmd == "expect":
        ok, lines = counter_deltas(want, a.deltas)
        for line in lines:
            print(line)
        return 0 if ok else 1
    ok, got, want = qdisc_delta(want, json.loads(a.before)[0], json.loads(a.after)[0])
    print(f"swp1's qdisc: {got}, expected {want}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
