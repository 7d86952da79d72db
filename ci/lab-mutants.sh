#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make lab-mutants`: the lab's mechanisms broken one at a time, and the
# expectations each must fail (the host tests, ci/lab/test_lab.py, break
# the rest). Each row below runs one scenario (some of its modes) with a mechanism
# broken on purpose while every mode still claims it (the scenario key
# `mutant`, ci/guest/lab.sh and lab_fabric.sh): DCQCN that cannot cut
# (rp_min_rate at the line rate), switch ports without PFC, no switch
# watchdog, every ECMP flow on one uplink. The expectations the row names
# must come out not met, on what was measured (a check not met for want of
# data, "no qdisc counters", "not every flow finished", does not count);
# then each scenario runs unbroken with all its modes (the default run, the
# control), and every expectation that applies must be met. One guest boot
# per run (ci/demo.sh); about 20 minutes on 2 cores.
#   ci/lab-mutants.sh [OUT] [ROW...]    rows by name (default: all)
# Writes OUT/lab-mutants/ROW/ (each run's report) and OUT/lab-mutants/summary.md;
# prints one KTAP line per row and control; exits 1 if any fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$top/out}")/lab-mutants
shift $(($# > 0 ? 1 : 0))

# name | scenario | mutant | modes | the expectations that must fail (a
# pattern each, matched against the check's text; ';' between them)
ROWS=(
	"incast-no_cut|incast|no_cut|pfc dcqcn+pfc|DCQCN \+ PFC: every sender's DCQCN rate within;DCQCN \+ PFC: queue held in the marking band;against PFC only: PFC frames;against PFC only: probe p99"
	"incast-no_pfc|incast|no_pfc|pfc dcqcn+pfc|PFC only: lossless;against PFC only: PFC frames"
	"victim-no_cut|victim|no_cut|pfc dcqcn+pfc|DCQCN \+ PFC: the victim gets"
	"victim-no_pfc|victim|no_pfc|pfc dcqcn+pfc|the victim is held back by pauses"
	"deadlock-no_pfc|deadlock|no_pfc|pfc pfc+watchdog|the ring freezes"
	"deadlock-no_watchdog|deadlock|no_watchdog|pfc pfc+watchdog|the watchdog breaks the deadlock"
	"storm-no_watchdog|pfc-storm|no_watchdog|pfc watchdog|switch watchdog \(200 ms, drop\): the protection fires"
	"ecmp-one_uplink|ecmp|one_uplink|l3-arranged|the flows took the spines arranged;the free uplink's flows are not held back;the fabric is as the mode says"
)

want=("$@")
mkdir -p "$out"
summary=("| run | scenario (modes) | mutant | expectation | met |" "|---|---|---|---|---|")
n=0 fail=0 tab=$'\t'
declare -A controls
ktap() { n=$((n + 1)); echo "$1 $n $2"; }

# run NAME SCENARIO MUTANT [MODES]: one ci/demo.sh run into OUT/NAME (all
# the scenario's modes without MODES); 0 when it wrote a report.
run() {
	local name=$1 sc=$2 mut=$3 modes=${4:-} args=() shown=''
	rm -rf "${out:?}/$name"
	[ -z "$modes" ] || { args=(MODES="$modes"); shown="MODES='$modes' "; }
	echo "# $name: SCENARIO=$sc ${shown}mutant $mut"
	LAB_MUTANT=$mut "$top/ci/demo.sh" "$out/$name" SCENARIO="$sc" "${args[@]}" >"$out/$name.log" 2>&1
	[ -f "$out/$name/lab/report.json" ]
}

# checks REPORT: "MET<TAB>TEXT<TAB>MEASURED" per expectation.
checks() {
	python3 -c 'import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    print("\t".join([str(c["met"]), c["check"], str(c["measured"])]))' "$1"
}

echo "TAP version 13"
for row in "${ROWS[@]}"; do
	IFS='|' read -r name sc mut modes targets <<<"$row"
	if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then
		continue
	fi
	controls[$sc]=1
	if ! run "$name" "$sc" "$mut" "$modes"; then
		ktap "not ok" "$name: the run wrote no report (see $out/$name.log)"
		fail=1
		continue
	fi
	IFS=';' read -ra pats <<<"$targets"
	for pat in "${pats[@]}"; do
		hits=$(checks "$out/$name/lab/report.json" | grep -E "^[A-Za-z]+${tab}[^${tab}]*$pat")
		if [ -z "$hits" ]; then
			ktap "not ok" "$name: an expectation matching '$pat' was checked"
			fail=1
			continue
		fi
		while IFS=$'\t' read -r met text measured; do
			summary+=("| $name | $sc ($modes) | $mut | $text | $met ($measured) |")
			if [ "$met" = False ] && [[ ! $measured =~ ^no\ |not\ recorded|not\ every\ flow\ finished ]]; then
				ktap "ok" "$name: not met, as it must be: $text ($measured)"
			elif [ "$met" = False ]; then
				ktap "not ok" "$name: not met for want of data, not by its measure: $text ($measured)"
				fail=1
			else
				ktap "not ok" "$name: met ($met) though its mechanism is broken: $text ($measured)"
				fail=1
			fi
		done <<<"$hits"
	done
done

# the controls: each scenario of the rows unbroken, all its modes
for sc in "${!controls[@]}"; do
	name="control-$sc"
	modes="(all)"
	if ! run "$name" "$sc" none; then
		ktap "not ok" "$name: the run wrote no report (see $out/$name.log)"
		fail=1
		continue
	fi
	bad=0
	while IFS=$'\t' read -r met text measured; do
		summary+=("| $name | $sc ($modes) | none | $text | $met ($measured) |")
		[ "$met" = False ] && { bad=1; echo "# $name: not met: $text ($measured)"; }
	done < <(checks "$out/$name/lab/report.json")
	if [ $bad = 0 ] && python3 "$top/ci/lab/lab.py" verdict "$out/$name/lab/report.json" >/dev/null 2>&1; then
		ktap "ok" "$name: every expectation that applies met"
	else
		ktap "not ok" "$name: every expectation that applies met"
		fail=1
	fi
done
printf '%s\n' "${summary[@]}" >"$out/summary.md"
echo "1..$n"
echo "# summary: $out/summary.md"
exit $fail
