#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the collectives' reports (a JSON object per message size, as
rxecc-coll and rxecc-mpi print them with --json, from 4 KiB to 64 KiB);
the host tests are test_coll_check.py.

  coll FILE RANKS
      rxecc-coll's rank 0 (leafspine.sh): a line per size; exit 0 when
      there is a row for each size from 4 KiB to 64 KiB, in order, and no
      other, each of RANKS ranks with no wrong element
  mpi FILE RANKS ITERS
      rxecc-mpi (ucx.sh), the lines that are JSON objects: a row for each
      collective (allreduce, alltoall) and size, no other, each of RANKS
      ranks and ITERS iterations with no wrong element; else exit 1 with
      what is missing or extra and the wrong rows
"""
import argparse
import json
import sys

SIZES = [4096 << k for k in range(5)]   # 4 KiB to 64 KiB
MPI_OPS = ("allreduce", "alltoall")


def coll_line(r):
    """What a row of rxecc-coll says."""
    return (f"{r['op']} {r['ranks']} ranks {r['bytes']:>6} B: time {r['time_us']:.0f} us, "
            f"algbw {r['algbw']:.4f} GB/s, busbw {r['busbw']:.4f} GB/s, slowest {r['slowest_us']:.0f} us "
            f"(rank {r['slow_rank']}), wrong {r['wrong']}")


def coll_passed(rows, ranks):
    """A row per size, in order, each of RANKS ranks with nothing wrong."""
    ok = [r["bytes"] for r in rows] == SIZES
    return ok and all(r["wrong"] == 0 and r["ranks"] == ranks for r in rows)


def mpi_error(rows, ranks, iters):
    """None when there is a row per collective and size and no other, each
    of RANKS ranks and ITERS iterations with nothing wrong; else what is
    not so."""
    want = {(op, size) for op in MPI_OPS for size in SIZES}
    got = {(r["op"], r["bytes"]) for r in rows}
    bad = [r for r in rows if r["ranks"] != ranks or r["wrong"] != 0 or r["iters"] != iters]
    if len(rows) != len(want) or got != want or bad:
        return f"{len(rows)} rows; missing or extra: {sorted(want ^ got)}; wrong: {bad}"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("coll")
    c.add_argument("file")
    c.add_argument("ranks", type=int)
    m = sub.add_parser("mpi")
    m.add_argument("file")
    m.add_argument("ranks", type=int)
    m.add_argument("iters", type=int)
    a = ap.parse_args(argv)
    with open(a.file, encoding="utf-8") as f:
        if a.cmd == "coll":
            rows = [json.loads(line) for line in f]
        else:
            rows = [json.loads(line) for line in f if line.startswith("{")]
    if a.cmd == "coll":
        for r in rows:
            print(coll_line(r))
        return 0 if coll_passed(rows, a.ranks) else 1
    err = mpi_error(rows, a.ranks, a.iters)
    if err:
        sys.exit(err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
