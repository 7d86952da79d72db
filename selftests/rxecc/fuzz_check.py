#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of fuzz.sh; the host tests are test_fuzz_check.py.

  qdisc FUZZ.json BEFORE AFTER
      roce_fuzz.py's expectation (FUZZ.json's "expect") against what the
      pfc qdisc counted between BEFORE and AFTER (`rxecc -j qdisc show`,
      as text): malformed, ignored and rejected frames, priority 3's
      pauses
"""
import json
import sys


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


def main(argv):
    if len(argv) != 5 or argv[1] != "qdisc":
        sys.exit(__doc__)
    with open(argv[2], encoding="utf-8") as f:
        want = json.load(f)["expect"]
    ok, got, want = qdisc_delta(want, json.loads(argv[3])[0], json.loads(argv[4])[0])
    print(f"swp1's qdisc: {got}, expected {want}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
