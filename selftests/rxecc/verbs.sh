#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Verified transfers with rxecc-verbs (userspace/verbs) on the namespace
# fabric, for the selftests and the soak. Source it after lib.sh and
# fabric.sh. Servers run on h1; each client's seed is its port.
#
#   verbs_run NAME "HOSTS" ARGS...   each host runs a client against its own
#                                    server on h1, all at once, with ARGS
#                                    (--count or --duration); fails unless
#                                    every run checked every message clean
#   verbs_live_start NAME HOST PORT [TIMEOUT [ADDR]]
#                                    HOST -> h1 until verbs_live_stop NAME
#                                    (TIMEOUT: seconds without progress, 60;
#                                    ADDR: h1's address, its IPv4 one)
#   verbs_live_stop NAME             SIGINT to the client; fails unless clean
#   verbs_summary FILE               one line from a client's JSON; fails
#                                    unless the run was clean
#   verbs_fabric N [pfc]             a test's start: rdma_rxecc (and sch_pfc)
#                                    loaded, rxecc-verbs built, rdma_cm, the
#                                    fabric with hosts 1..N; else a KTAP
#                                    failure and the end of the test
# Results: LOGDIR/NAME.{c,s}*.{json,err}; VERBS_SUMMARY (a file) gets one
# line per run.

VERBS=$RXECC_TOP/build/userspace/rxecc-verbs
VERBS_SUMMARY=${VERBS_SUMMARY:-$LOGDIR/verbs-summary.txt}
declare -A VERBS_C VERBS_S

verbs_fabric() {
	local n=$1 i
	modules_unload >/dev/null 2>&1
	if [ "${2:-}" = pfc ]; then rxecc_load && pfc_load; else rxecc_load; fi ||
		{ ktap_fail "load rdma_rxecc${2:+ and sch_pfc}"; ktap_finished; }
	[ -x "$VERBS" ] || { ktap_fail "rxecc-verbs is built ($VERBS)"; ktap_finished; }
	modprobe rdma_cm
	fabric_init
	for i in $(seq 1 "$n"); do
		fabric_add_host "$i" || { ktap_fail "fabric host $i"; ktap_finished; }
	done
	: >"$VERBS_SUMMARY"
}

verbs_summary() {
	python3 "$RXECC_TOP/selftests/rxecc/verbs_check.py" summary "$1"
}

# verbs_server NAME PORT TIMEOUT [ADDR]: a server on h1 (on ADDR only, if
# given); waits until it listens.
verbs_server() {
	fabric_in 1 timeout 900 "$VERBS" server ${4:+"$4"} -p "$2" --timeout "$3" >"$LOGDIR/$1.s.json" \
		2>"$LOGDIR/$1.s.err" &
	VERBS_S[$1]=$!
	wait_for 10 grep -q listening "$LOGDIR/$1.s.err"
}

verbs_run() {
	local name=$1 hosts=$2 i pids=() rc=0 out
	shift 2
	for i in $hosts; do
		verbs_server "$name-$i" $((19500 + i)) 60 || { echo "$name: server for h$i"; rc=1; }
	done
	for i in $hosts; do
		fabric_in "$i" timeout 900 "$VERBS" client "$(fabric_ip 1)" -p $((19500 + i)) \
			--seed $((19500 + i)) --timeout 60 "$@" >"$LOGDIR/$name-$i.c.json" \
			2>"$LOGDIR/$name-$i.c.err" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	for i in $hosts; do wait "${VERBS_S[$name-$i]}" || rc=1; done
	for i in $hosts; do
		out=$(verbs_summary "$LOGDIR/$name-$i.c.json") || rc=1
		echo "$name h$i: $out" | tee -a "$VERBS_SUMMARY"
		grep -hv listening "$LOGDIR/$name-$i.c.err" "$LOGDIR/$name-$i.s.err" 2>/dev/null | head -5
	done
	return $rc
}

verbs_live_start() {	# NAME HOST PORT [TIMEOUT [ADDR]]: ADDR, h1's, default its IPv4 one
	local name=$1 h=$2 port=$3 tmo=${4:-60} addr=${5:-$(fabric_ip 1)}
	verbs_server "$name" "$port" "$tmo" "$addr" || return 1
	fabric_in "$h" timeout 900 "$VERBS" client "$addr" -p "$port" --duration 900 \
		--seed "$port" --max-size 16384 --timeout "$tmo" >"$LOGDIR/$name.c.json" \
		2>"$LOGDIR/$name.c.err" &
	VERBS_C[$name]=$!
	VERBS_PORT[$name]=$port
	sleep 2
}
declare -A VERBS_PORT

verbs_live_stop() {
	local name=$1 rc=0 out
	pkill -INT -f "^[^ ]*rxecc-verbs client .* -p ${VERBS_PORT[$name]} " 2>/dev/null
	wait "${VERBS_C[$name]}" || rc=1
	wait "${VERBS_S[$name]}" || rc=1
	out=$(verbs_summary "$LOGDIR/$name.c.json") || rc=1
	echo "$name: $out" | tee -a "$VERBS_SUMMARY"
	return $rc
}
