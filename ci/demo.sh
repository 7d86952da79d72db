#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: the congestion lab. One guest, the namespace fabric: N senders
# write to one receiver through a switch port that is the bottleneck, and a
# probe host measures latency through the same port; the same workload runs
# in each mode of the scenario (default ci/lab/incast.conf: no PFC/no DCQCN,
# PFC only, DCQCN only, DCQCN + PFC). The scenarios of PFC gone wrong
# (SCENARIO=deadlock, victim or pfc-storm: a ring of switches, two switches,
# a host whose receive path stalls), the leaf-spine's ECMP (SCENARIO=ecmp) and
# its collectives (SCENARIO=alltoall, allreduce) run ci/guest/lab_fabric.sh
# instead. Prints the table and writes
# OUT/lab/report.{md,json} and the plots (OUT/lab/*.png).
#   ci/demo.sh [OUT] [NAME=VALUE...]
# NAME=VALUE (make demo passes those given on its command line, never ones
# from the environment): SCENARIO (a scenario file, or the name of one in
# ci/lab: incast, convergence, deadlock, victim, pfc-storm, ecmp, alltoall,
# allreduce), SENDERS, RATE, DURATION, PROFILE, MODES (scenario keys),
# RUNS=N (N boots, each run's report in OUT/lab/run-K and the spread over
# them in OUT/lab/spread.md), CHECK=1 (exit 3 unless every expectation that
# applies was met, with RUNS in every run, and at least one applies). Any
# other scenario key from the environment as LAB_<KEY> (LAB_XOFF=32KiB):
# names the lab owns. docs/lab.md.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/out}")/lab
shift $(($# > 0 ? 1 : 0))
scenario=$top/ci/lab/incast.conf runs=1 check=0
overrides=()
# the names below are read from the arguments only: one exported in the
# environment is ignored, and said so
for k in SCENARIO RUNS CHECK SENDERS RATE DURATION PROFILE MODES; do
	[ -z "${!k:-}" ] || [[ " $* " == *" $k="* ]] ||
		echo "demo: ignoring $k=${!k} from the environment (give it on the command line: make demo $k=...)" >&2
done
for a in "$@"; do
	k=${a%%=*} v=${a#*=}
	[ "$k" != "$a" ] || { echo "demo: '$a' is not NAME=VALUE" >&2; exit 2; }
	case $k in
	SCENARIO) scenario=$v ;;
	RUNS) runs=$v ;;
	CHECK) check=$v ;;
	SENDERS | RATE | DURATION | PROFILE | MODES) [ -z "$v" ] || overrides+=("${k,,}=$v") ;;
	*) echo "demo: '$k' is not one of SCENARIO, RUNS, CHECK, SENDERS, RATE, DURATION, PROFILE, MODES (other scenario keys: LAB_<KEY>)" >&2; exit 2 ;;
	esac
done
# a bare name is one of the lab's own scenarios: SCENARIO=deadlock
[[ $scenario == */* || -f $scenario ]] || scenario=$top/ci/lab/$scenario.conf
run=$top/build/vm/runs/demo/g0
work=$top/build/lab
mkdir -p "$work"

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
topology=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["topology"])' "$work/scenario.json")
guest=$top/ci/guest/lab.sh
[ "$topology" = incast ] || guest=$top/ci/guest/lab_fabric.sh
[[ $runs =~ ^[1-9][0-9]?$ ]] || { echo "demo: RUNS '$runs': a number of runs from 1 to 99" >&2; exit 2; }
[[ $check =~ ^[01]$ ]] || { echo "demo: CHECK '$check': 0 or 1" >&2; exit 2; }
echo "demo: booting one guest (QEMU TCG, 2 vCPUs); modes: $modes; scenario $scenario${overrides[*]:+ (${overrides[*]})}"
rm -rf "$out"
mkdir -p "$out"

# one_run DIR: one guest boot running every mode, its report in DIR (DIR/raw:
# what the guest recorded). Exit status: the guest's (0 ok) or the report's.
one_run() {
	local dir=$1 pid rc start=$SECONDS
	rm -f "$run/output.txt"		# not the last run's progress
	"$top/ci/vm.sh" --name demo --smp 2 --timeout 900 --quiet -- "$guest" "$work/scenario.sh" &
	pid=$!
	# Progress: the guest's "lab:" lines as they come.
	tail -n +1 -F --pid=$pid "$run/output.txt" 2>/dev/null | grep --line-buffered '^lab:' &
	wait $pid
	rc=$?
	sleep 0.5
	if [ $rc -ne 0 ]; then
		echo "demo: the guest run failed (exit $rc; logs in build/vm/runs/demo/g0)" >&2
		[ -d "$run/lab" ] || return 1
		echo "demo: reporting what was recorded" >&2
	fi
	mkdir -p "$dir"
	cp -r "$run/lab" "$dir/raw"
	cp "$work/scenario.json" "$dir/"
	echo
	python3 "$top/ci/lab/lab.py" report "$dir/raw" "$dir/scenario.json" "$dir" || return 1
	echo "demo: $((SECONDS - start)) s"
	return $rc
}

if [ "$runs" -eq 1 ]; then
	one_run "$out"
	rc=$?
	# CHECK=1: the lab's own regression check, exit 3 when an expectation fails
	if [ "$check" = 1 ] && [ $rc -eq 0 ]; then
		python3 "$top/ci/lab/lab.py" verdict "$out/report.json"
		exit $?
	fi
	exit $rc
fi

# RUNS=N: N boots, each report in OUT/lab/run-K, then the spread over them
# (OUT/lab/spread.md); with CHECK=1, exit 3 unless every run met every one.
reports=()
for k in $(seq "$runs"); do
	echo "demo: run $k of $runs"
	one_run "$out/run-$k" || { echo "demo: run $k failed" >&2; exit 1; }
	reports+=("$out/run-$k/report.json")
done
echo
python3 "$top/ci/lab/lab.py" spread "$out/spread.md" "${reports[@]}"
case $? in
0) [ "$check" != 1 ] || echo "demo: every expectation met in every run" ;;
3)
	if [ "$check" = 1 ]; then
		echo "demo: expectations not met in every run ($out/spread.md)" >&2
		exit 3
	fi
	;;
*) exit 1 ;;
esac
exit 0
