#!/bin/bash
# Run the guest selftests listed in selftests/rxecc/tests.list, each in its
# own guest boot (ci/vm.sh). Prints one line per KTAP result, prefixed with
# the script name (and the guest for multi-guest tests), plus one result per
# boot for "no kernel splat in the guest logs" and "ran to the end", and
# appends them to $RESULTS (default build/check/results.txt).
#   ci/selftests.sh [SCRIPT...]   only the named scripts
# RXECC_TESTS_LIST: another list (make check-packages: tests-packages.list).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
list=${RXECC_TESTS_LIST:-$top/selftests/rxecc/tests.list}
RESULTS=${RESULTS:-$top/build/check/results.txt}
mkdir -p "$(dirname "$RESULTS")"

emit() { echo "$*"; echo "$*" >> "$RESULTS"; }

# ktap_lines FILE PREFIX: the file's KTAP result lines, prefixed; checks the plan.
# A failed test's diagnostic lines (those after the previous result) go to
# stdout before it, so that a CI log says why without the guest's files.
ktap_lines() {
	local f=$1 prefix=$2 plan n=0 line diag=()
	plan=$(grep -m1 -E '^1\.\.[0-9]+' "$f" 2>/dev/null | sed 's/^1\.\.\([0-9]*\).*/\1/')
	while IFS= read -r line; do
		case "$line" in
		"not ok "*)
			[ ${#diag[@]} -eq 0 ] || printf '%s\n' "${diag[@]/#/# $prefix: }" | sed 's/: # /: /'
			;;&
		"ok "* | "not ok "*)
			n=$((n + 1))
			diag=()
			# "ok 3 desc # SKIP why" -> "ok prefix: desc # SKIP why"
			emit "$(echo "$line" | sed -E "s/^(not ok|ok) [0-9]+ /\1 $prefix: /")"
			;;
		"# "*) diag+=("$line") ;;
		esac
	done < <(grep -aE '^((not )?ok [0-9]+ |# )' "$f" 2>/dev/null)
	if [ -z "$plan" ]; then
		emit "not ok $prefix: printed a KTAP plan"
	elif [ "$plan" -ne 0 ] && [ "$n" -ne "$plan" ]; then
		emit "not ok $prefix: ran $n of $plan planned tests"
	fi
}

want=("$@")
while read -r script guests links smp tmo; do
	case "$script" in "" | \#*) continue ;; esac
	if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $script "* ]]; then
		continue
	fi
	name=${script%.sh}
	tmo=$((tmo * ${RXECC_TIMEOUT_SCALE:-1}))	# make check-debug: a slower kernel
	args=(--name "$name" --guests "$guests" --smp "$smp" --timeout "$tmo" --quiet)
	[ "$links" = - ] || for l in ${links//,/ }; do args+=(--link "$l"); done
	echo "# running $script ($guests guest(s), timeout ${tmo}s)"
	start=$SECONDS
	"$top/ci/vm.sh" "${args[@]}" -- "$top/selftests/rxecc/$script"
	rc=$?
	rundir="$top/build/vm/runs/$name"
	for g in $(seq 0 $((guests - 1))); do
		prefix=$name
		[ "$guests" -eq 1 ] || prefix="${name}[g$g]"
		ktap_lines "$rundir/g$g/output.txt" "$prefix"
	done
	if "$top/ci/splat-scan.sh" "$rundir"/g*/console.log "$rundir"/g*/dmesg.txt "$rundir"/g*/kmemleak.txt \
		"$rundir"/g*/boot-hang-*/console.log 2>/dev/null; then
		emit "ok $name: no kernel splat in the guest logs"
	else
		"$top/ci/splat-scan.sh" "$rundir"/g*/console.log "$rundir"/g*/dmesg.txt "$rundir"/g*/kmemleak.txt \
			"$rundir"/g*/boot-hang-*/console.log 2>&1 | sed 's/^/# /'
		emit "not ok $name: no kernel splat in the guest logs"
	fi
	failed_before=$(grep -c "^not ok $name" "$RESULTS")
	case $rc in
	0 | 2) emit "ok $name: ran to the end" ;;
	4)
		# the reason the script gave: its plan line "1..0 # SKIP why"; when
		# every subtest skipped, each said why already (counted there, once)
		why=$(sed -n 's/^1\.\.0 # SKIP //p' "$rundir/g0/output.txt" 2>/dev/null | head -n 1)
		if [ -z "$why" ] && grep -qE '^ok [0-9]+ (.* )?# SKIP' "$rundir/g0/output.txt" 2>/dev/null; then
			emit "ok $name: ran to the end (every subtest skipped)"
		else
			emit "ok $name: ran to the end # SKIP ${why:-the test skipped itself (no reason given)}"
		fi
		;;
	124) emit "not ok $name: ran to the end (timed out after ${tmo}s; console: $rundir/g0/console.log)" ;;
	*)
		if [ "$failed_before" -gt 0 ]; then
			emit "ok $name: ran to the end"
		else
			emit "not ok $name: ran to the end (exit $rc with no failed subtest)"
		fi
		;;
	esac
	echo "# $script: exit $rc after $((SECONDS - start))s (logs: $rundir)"
done < "$list"
