#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of rxecc-verbs' reports (verbs.sh, sourced by the selftests and
the soak); the host tests are test_verbs_check.py.

  summary FILE
      FILE holds a client's output, its report (JSON) the last line: one
      line says what it sent and verified; exit 0 only when the run was
      clean (ok, every message checked, nothing corrupt, lost, duplicated
      or completed in error on either side); "no result" and exit 1 when
      there is no report
"""
import argparse
import json
import sys

BAD = ("corrupt", "lost", "duplicated", "bad_completions")


def last_report(path):
    """The JSON of FILE's last line; None when it is missing, empty or not
    JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.loads(f.read().strip().splitlines()[-1])
    except (IndexError, ValueError, OSError):
        return None


def summary(j):
    """(clean, line) of a client's report."""
    s, c = j["server_checked"], j["client_checked"]
    bad = sum(x[k] for x in (s, c) for k in BAD)
    ops = " ".join(f"{k} {v}" for k, v in j["by_op"].items())
    line = (f"{j['messages_sent']} messages ({ops}), {s['bytes'] + c['bytes']} bytes verified, "
            f"{bad} bad, all checked: {j['all_checked']}")
    return bool(j["ok"] and bad == 0 and j["all_checked"]), line


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("summary").add_argument("file")
    a = ap.parse_args(argv)
    j = last_report(a.file)
    if j is None:
        print("no result")
        return 1
    ok, line = summary(j)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
