#!/bin/bash
# `make soak` (not in `make check`): the congestion workload for SOAK_TIME
# seconds (default 600) in rounds of SOAK_ROUND (default 30) in one guest
# (ci/guest/soak.sh), then a report of anything that grew: kernel memory
# (Slab, SUnreclaim), RDMA resources left behind, counters that must stay 0,
# switch drops, and whether every round's data was verified.
# Output: OUT/soak/soak.tsv (one line per round), OUT/soak/report.txt.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out}
time=${SOAK_TIME:-600}
round=${SOAK_ROUND:-30}
echo "soak: one guest, the DCQCN + PFC incast (h2 h3 h4 -> h1, verified) plus QP churn for ${time} s in ${round} s rounds"
"$top/ci/vm.sh" --name soak --smp 2 --timeout $((time + 600)) -- \
	env SOAK_TIME="$time" SOAK_ROUND="$round" "$top/ci/guest/soak.sh"
rc=$?
rm -rf "$out/soak"
mkdir -p "$out"
cp -r "$top/build/vm/runs/soak/g0/soak" "$out/soak" 2>/dev/null ||
	{ echo "soak: the guest wrote nothing (logs in build/vm/runs/soak)" >&2; exit 1; }
python3 "$top/ci/soak_report.py" "$out/soak/soak.tsv" | tee "$out/soak/report.txt"
rep=${PIPESTATUS[0]}
grep -E 'WARNING|BUG|Oops|lockdep|refcount_t|list_(add|del) corruption' \
	"$top/build/vm/runs/soak/g0/console.log" && { echo "soak: kernel splat in the guest log" >&2; exit 1; }
[ $rc -eq 0 ] && [ "$rep" -eq 0 ]
