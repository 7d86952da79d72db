#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of fault.sh; the host tests are test_fault_check.py.

  summary FILE
      fault_inject.py's output (a JSON line per operation): a line per
      operation (its injection points, how many were failed in turn, and
      how many of those came back as errors or were absorbed) and the
      faults injected in all; exit 0 when there is an operation and every
      one passed an injection point and had a fault injected
"""
import argparse
import json
import sys


def rows_of(lines):
    """fault_inject.py's JSON lines (the others left out)."""
    return [json.loads(line) for line in lines if line.startswith("{")]


def row_line(r):
    """What one operation's row says."""
    return (f"{r['op']}: {r['points']} injection points, {r['tried']} failed in turn: "
            f"{r['errors']} errors returned, {r['absorbed']} absorbed")


def total_line(rows):
    return f"{sum(r['errors'] + r['absorbed'] for r in rows)} faults injected in all"


def passed(rows):
    """There is an operation, and each passed an injection point and had a
    fault injected (an error returned or absorbed)."""
    return bool(rows and all(r["points"] > 0 and r["errors"] + r["absorbed"] > 0 for r in rows))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("summary").add_argument("file")
    a = ap.parse_args(argv)
    with open(a.file, encoding="utf-8") as f:
        rows = rows_of(f)
    for r in rows:
        print(row_line(r))
    print(total_line(rows))
    return 0 if passed(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
