#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The rdma-core pyverbs suite that python3-pyverbs ships, run on stock
# rdma_rxe and on rdma_rxecc in the same boot, one device each on the same
# netdev. Every test that passes on rdma_rxe must pass on rdma_rxecc.
# Both result sets are kept in $LOGDIR/pyverbs-{rxe,rxecc}.{log,results}.
source "$(dirname "$0")/../../lib/shell/lib.sh"
need_root
HERE=$(cd "$(dirname "$0")" && pwd)
SUITE=/usr/share/doc/rdma-core/tests
PY=/usr/bin/python3	# the Debian interpreter that has pyverbs

[ -f "$SUITE/run_tests.py" ] || ktap_exit_skip "python3-pyverbs's test suite is not installed"
$PY -c 'import pyverbs' 2>/dev/null || ktap_exit_skip "$PY cannot import pyverbs"

modules_unload >/dev/null 2>&1
veth_up d0 10.0.0.1/24 fd00::1/64 || ktap_exit_skip "cannot create a veth pair"

work=$(mktemp -d)
cp -r "$SUITE" "$work/tests"
gunzip -f "$work"/tests/*.gz

# run_suite MODULE TYPE DEV LOG [TEST...]: load MODULE, make DEV on d0 (in the
# namespace $NETNS if set), run the suite (or the named tests) there and
# write '<id> <status>' lines to stdout.
run_suite() {
	local module=$1 type=$2 dev=$3 log=$4 in=()
	shift 4
	[ -z "${NETNS:-}" ] || in=(ip netns exec "$NETNS")
	modules_unload || return 1
	if [ "$module" = rdma_rxecc ]; then rxecc_load; else rxe_load; fi || return 1
	"${in[@]}" rdma link add "$dev" type "$type" netdev d0 || return 1
	wait_for 10 grep -q ACTIVE "/sys/class/infiniband/$dev/ports/1/state" || return 1
	local gid
	gid=$(wait_gid "$dev" 10.0.0.1) || return 1
	(cd "$work/tests" && timeout 900 "${in[@]}" $PY run_tests.py --dev "$dev" --gid "$gid" -v "$@") >"$log" 2>&1
	"$HERE/pyverbs_results.py" "$log"
}

run_suite rdma_rxe rxe y0 "$LOGDIR/pyverbs-rxe.log" >"$LOGDIR/pyverbs-rxe.results"
rxe_ok=$?
run_suite rdma_rxecc rxecc x0 "$LOGDIR/pyverbs-rxecc.log" >"$LOGDIR/pyverbs-rxecc.results"
rxecc_ok=$?
# rdma_rxecc once more, its device on a veth inside a network namespace and
# the suite run in that namespace.
modules_unload
NS=pyv$$
# place_d0 NS: move d0 into NS (1: back to init_net) and address it again.
place_d0() {
	local from=(ip) to=(ip -n "$1")
	[ "$1" != 1 ] || { from=(ip -n "$NS"); to=(ip); }
	"${from[@]}" link set d0 netns "$1" &&
		"${to[@]}" addr add 10.0.0.1/24 dev d0 && "${to[@]}" addr add fd00::1/64 dev d0 nodad &&
		"${to[@]}" link set d0 up
}
# shellcheck disable=SC2015 # skip when any of the three steps fails
ip netns add "$NS" && ip -n "$NS" link set lo up && place_d0 "$NS" ||
	ktap_exit_skip "cannot move d0 into a namespace"
NETNS=$NS run_suite rdma_rxecc rxecc n0 "$LOGDIR/pyverbs-rxecc-netns.log" \
	>"$LOGDIR/pyverbs-rxecc-netns.results"
netns_ok=$?

count() { awk -v s="$2" '$2 == s' "$1" | wc -l; }
summary() {
	echo "$(count "$1" pass) passed, $(count "$1" skip) skipped, $(count "$1" fail) failed/errored"
}

passing_on_rxe=$(awk '$2 == "pass" { print $1 }' "$LOGDIR/pyverbs-rxe.results")
ktap_header
ktap_plan $((3 + 2 * $(echo "$passing_on_rxe" | grep -c .)))
ktap_diag "rdma_rxe:                $(summary "$LOGDIR/pyverbs-rxe.results")"
ktap_diag "rdma_rxecc:              $(summary "$LOGDIR/pyverbs-rxecc.results")"
ktap_diag "rdma_rxecc in a netns:   $(summary "$LOGDIR/pyverbs-rxecc-netns.results")"
for m in rxe rxecc rxecc-netns; do
	awk '$2 == "fail" { print "'$m' fails: " $0 }' "$LOGDIR/pyverbs-$m.results" | ktap_diag "$(cat)"
done

ran() {	# ran DESC OK RESULTS MIN_PASSED
	if [ "$2" -eq 0 ] && [ "$(count "$3" pass)" -gt "$4" ]; then ktap_pass "$1"; else ktap_fail "$1"; fi
}
ran "pyverbs suite ran on stock rdma_rxe" $rxe_ok "$LOGDIR/pyverbs-rxe.results" 50
ran "pyverbs suite ran on rdma_rxecc" $rxecc_ok "$LOGDIR/pyverbs-rxecc.results" 0
ran "pyverbs suite ran on rdma_rxecc in a network namespace" $netns_ok "$LOGDIR/pyverbs-rxecc-netns.results" 0

# compare LABEL RESULTS NETNS DEV: every test that passed on rdma_rxe passes
# here. One that did not gets two more tries (test_resize_cq is
# timing-dependent on rxe, rdma-core 197d1a4).
compare() {
	local label=$1 results=$2 netns=$3 dev=$4 t st tries
	for t in $passing_on_rxe; do
		st=$(awk -v t="$t" '$1 == t { print $2 }' "$results")
		tries=1
		while [ "$st" != pass ] && [ $tries -lt 3 ]; do
			tries=$((tries + 1))
			st=$(NETNS=$netns run_suite rdma_rxecc rxecc "$dev" "$LOGDIR/pyverbs-retry.log" "${t#tests.}" |
				awk -v t="$t" '$1 == t { print $2 }')
		done
		[ $tries -eq 1 ] || ktap_diag "$t passed on try $tries ($label)"
		if [ "$st" = pass ]; then
			ktap_pass "pyverbs $t (passes on rdma_rxe) passes on $label"
		else
			ktap_fail "pyverbs $t (passes on rdma_rxe) passes on $label"
		fi
	done
}
compare "rdma_rxecc in a netns" "$LOGDIR/pyverbs-rxecc-netns.results" "$NS" n0
modules_unload >/dev/null 2>&1
place_d0 1
compare rdma_rxecc "$LOGDIR/pyverbs-rxecc.results" "" x0

modules_unload >/dev/null 2>&1
ip netns del $NS
rm -rf "$work"
ktap_finished
