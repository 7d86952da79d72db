#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: the congestion lab. One guest, the namespace fabric: N senders
# write to one receiver through a switch port that is the bottleneck, and a
# probe host measures latency through the same port; the same workload runs
# in each mode of the scenario (default ci/lab/incast.conf: no PFC/no DCQCN,
# PFC only, DCQCN only, DCQCN + PFC). Prints the table and writes
# OUT/lab/report.{md,json} and the plots (OUT/lab/*.png).
#   ci/demo.sh [OUT]
# Environment (make demo VAR=...): SCENARIO (a scenario file), SENDERS, RATE,
# DURATION, PROFILE, MODES, and LAB_<KEY> for any other scenario key
# (LAB_XOFF=32KiB); CHECK=1 exits 3 when an expectation is not met;
# docs/lab.md.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/out}")/lab
scenario=${SCENARIO:-$top/ci/lab/incast.conf}
run=$top/build/vm/runs/demo/g0
work=$top/build/lab
mkdir -p "$work"

overrides=()
for k in SENDERS RATE DURATION PROFILE MODES; do
	[ -n "${!k:-}" ] && overrides+=("${k,,}=${!k}")
done
while IFS='=' read -r k v; do
	k=${k#LAB_}
	[ -n "$v" ] && overrides+=("${k,,}=$v")
done < <(env | grep '^LAB_[A-Z_]*=' || true)
[ -f "$scenario" ] || { echo "demo: scenario '$scenario': no such file" >&2; exit 2; }
python3 "$top/ci/lab/lab.py" scenario "$scenario" "$work/scenario.sh" "$work/scenario.json" \
	"${overrides[@]}" || exit 2
command -v gnuplot >/dev/null || { echo "demo: gnuplot is not installed (make deps)" >&2; exit 1; }

modes=$(python3 -c 'import json,sys; print(" ".join(m["name"] for m in json.load(open(sys.argv[1]))["modes"]))' \
	"$work/scenario.json")
echo "demo: booting one guest (QEMU TCG, 2 vCPUs); modes: $modes; scenario $scenario${overrides[*]:+ (${overrides[*]})}"
start=$SECONDS
rm -f "$run/output.txt"		# not the last run's progress
"$top/ci/vm.sh" --name demo --smp 2 --timeout 900 --quiet -- "$top/ci/guest/lab.sh" "$work/scenario.sh" &
pid=$!
# Progress: the guest's "lab:" lines as they come.
tail -n +1 -F --pid=$pid "$run/output.txt" 2>/dev/null | grep --line-buffered '^lab:' &
wait $pid
rc=$?
sleep 0.5
if [ $rc -ne 0 ]; then
	echo "demo: the guest run failed (exit $rc; logs in build/vm/runs/demo/g0)" >&2
	[ -d "$run/lab" ] || exit 1
	echo "demo: reporting what was recorded" >&2
fi
rm -rf "$out"
mkdir -p "$out"
cp -r "$run/lab" "$out/raw"
cp "$work/scenario.json" "$out/"
echo
python3 "$top/ci/lab/lab.py" report "$out/raw" "$out/scenario.json" "$out" || exit 1
echo "demo: $((SECONDS - start)) s"
# CHECK=1: the lab's own regression check, exit 3 when an expectation fails
if [ "${CHECK:-0}" = 1 ] && [ $rc -eq 0 ]; then
	failed=$(python3 -c 'import json, sys
print("; ".join(c["check"] for c in json.load(open(sys.argv[1]))["checks"] if not c["met"]))' \
		"$out/report.json") || exit 1
	if [ -n "$failed" ]; then
		echo "demo: expectations not met: $failed" >&2
		exit 3
	fi
	echo "demo: every expectation met"
fi
exit $rc
