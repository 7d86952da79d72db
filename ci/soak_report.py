#!/usr/bin/env python3
"""What grew during `make soak`: reads soak.tsv (one line per round) and
prints a report; exit 1 if a round failed its checks, a counter that must
stay 0 moved, the switch dropped, RDMA resources were left behind, or the
kernel's unreclaimable slab grew by more than LIMIT KiB from the second
round (after warm-up) to the last."""
import csv
import sys

LIMIT_KIB = 4096


def main(path):
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        print("soak: no round finished")
        return 1
    n = len(rows)
    problems = []
    first, base, last = rows[0], rows[1] if n > 1 else rows[0], rows[-1]
    print(f"soak: {n} rounds in {last['seconds']} s, "
          f"{sum(int(r['verified_bytes']) for r in rows)} bytes verified")
    for key in ("slab_kib", "sunreclaim_kib", "available_kib"):
        d = int(last[key]) - int(base[key])
        print(f"  {key}: round 1 {first[key]}, round 2 {base[key]}, round {n} {last[key]} "
              f"({d:+d} KiB since round 2, {d / max(1, n - 2):+.0f} KiB per round)")
    grew = int(last["sunreclaim_kib"]) - int(base["sunreclaim_kib"])
    if grew > LIMIT_KIB:
        problems.append(f"unreclaimable slab grew {grew} KiB (limit {LIMIT_KIB})")
    for key in ("qps", "cqs", "mrs", "pds"):
        vals = {r[key] for r in rows}
        print(f"  {key} after each round: {' '.join(r[key] for r in rows)}")
        if len(vals) > 1:
            problems.append(f"{key} left behind differ between rounds")
    for key, what in (("flat_counters", "counters that must stay 0"), ("switch_drops", "switch drops")):
        print(f"  {what}: {first[key]} -> {last[key]}")
        if int(last[key]) != 0:
            problems.append(f"{what}: {last[key]}")
    bad = [r["round"] for r in rows if r["ok"] != "1"]
    if bad:
        problems.append(f"rounds whose data or churn failed: {' '.join(bad)}")
    print("soak: " + ("; ".join(problems) if problems else "nothing grew, nothing failed"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
