#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Data integrity through rxecc while it throttles, pauses and retransmits.
# rxecc-verbs (userspace/verbs) moves patterned data over RC QPs with SEND,
# RDMA WRITE, WRITE with immediate and RDMA READ in a seeded mix of sizes
# (0 B to 64 KiB): the server checks every byte of every message it sees and
# the order of the messages, the client every READ, every completion and
# every acknowledgement. A run passes only if both sides checked every
# message and found nothing corrupted, lost, duplicated or out of order.
#   - uncongested, h2 -> h1;
#   - 2:1 incast through a 50 Mbit/s port that marks ECN, DCQCN on (CNPs
#     must reach the senders);
#   - the same incast behind the pfc qdisc, PFC on priority 3 (pause frames
#     must reach the senders, the switch must drop nothing);
#   - netem on both switch ports of the flow: 1 % loss, reordering,
#     duplication (the responder's and requester's counters must show that
#     the fabric did it).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fabric.sh"
need_root
V=$RXECC_TOP/build/userspace/rxecc-verbs
T=$RXECC_TOOL
DUR=${DUR:-5}			# seconds per congested run
COUNT=${COUNT:-1500}		# messages per netem run
RATE=50				# Mbit/s at the congested port
TOS=104				# DSCP 26: priority 3 through the default DSCP map
# 4.096 us * 2^18 = 1.07 s: paused queues hold packets longer than 67 ms
# (see pfc.sh); netem runs use 2^14 = 67 ms so that tail losses recover fast.
ACK_TIMEOUT=18
QUEUE="link 1gbit limit 256KiB xoff 24KiB xon 12KiB headroom 160KiB"
MARK="kmin 10KB kmax 40KB pmax 20"
SUMMARY=$LOGDIR/integrity-summary.txt

ktap_header
ktap_plan 6

modules_unload >/dev/null 2>&1
rxecc_load && pfc_load || { ktap_fail "load rdma_rxecc and sch_pfc"; ktap_finished; }
[ -x "$V" ] || { ktap_fail "rxecc-verbs is built ($V)"; ktap_finished; }
modprobe rdma_cm
fabric_init
for i in 1 2 3; do
	fabric_add_host $i || { ktap_fail "fabric host $i"; ktap_finished; }
done
: >"$SUMMARY"

cnt() { port_counter "h$1" "$2"; }
declare -A C0
snap() { local k; for k in "$@"; do C0[$k]=$(cnt ${k%%:*} ${k#*:}); done; }
delta() { echo $(($(cnt ${1%%:*} ${1#*:}) - C0[$1])); }
COUNTERS="1:duplicate_request 1:out_of_seq_request 2:completer_retry_err 2:rcvd_seq_err \
2:rp_cnp_handled 3:rp_cnp_handled 2:rx_prio3_pause 3:rx_prio3_pause 2:duplicate_request"

# verify NAME "SENDERS" ARGS...: each sender runs an rxecc-verbs client
# against its own server on h1, all at once, with ARGS; every run must pass
# its own checks. Adds the verified bytes to the summary.
verify() {
	local name=$1 senders=$2 i port pids=() srv=() rc=0 out
	shift 2
	for i in $senders; do
		port=$((19500 + i))
		fabric_in 1 timeout 180 "$V" server -p $port --timeout 60 \
			>"$LOGDIR/$name.s$i.json" 2>"$LOGDIR/$name.s$i.err" &
		srv+=($!)
		wait_for 10 grep -q listening "$LOGDIR/$name.s$i.err" || { echo "$name: server $i"; rc=1; }
	done
	for i in $senders; do
		fabric_in "$i" timeout 180 "$V" client "$(fabric_ip 1)" -p $((19500 + i)) --tos $TOS \
			--seed $((i * 7919)) --timeout 60 "$@" >"$LOGDIR/$name.c$i.json" \
			2>"$LOGDIR/$name.c$i.err" &
		pids+=($!)
	done
	for i in "${pids[@]}" "${srv[@]}"; do wait "$i" || rc=1; done
	for i in $senders; do
		out=$(python3 - "$LOGDIR/$name.c$i.json" <<'EOF'
import json, sys
try:
    j = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
except (IndexError, ValueError):
    print("no result"); sys.exit(1)
s, c = j["server_checked"], j["client_checked"]
bad = sum(x[k] for x in (s, c) for k in ("corrupt", "lost", "duplicated", "bad_completions"))
ops = " ".join(f"{k} {v}" for k, v in j["by_op"].items())
print(f"{j['messages_sent']} messages ({ops}), {s['bytes'] + c['bytes']} bytes verified, "
      f"{bad} bad, all checked: {j['all_checked']}")
sys.exit(0 if j["ok"] and bad == 0 and j["all_checked"] else 1)
EOF
		) || rc=1
		echo "$name h$i: $out" | tee -a "$SUMMARY"
		cat "$LOGDIR/$name.c$i.err" "$LOGDIR/$name.s$i.err" 2>/dev/null | grep -v listening | head -5
	done
	return $rc
}

show_counters() { local k; for k in $COUNTERS; do echo "h${k%%:*} ${k#*:} +$(delta "$k")"; done; }

# ---- uncongested ------------------------------------------------------------
plain() {
	verify plain 2 --count 2000
}
ktap_result "uncongested: 2000 messages of the mix, every byte and completion checked" plain

# ---- congestion -----------------------------------------------------------------
mode_set() {	# PFC(on|off) DCQCN(on|off)
	local pfc=none mark="kmax 0" en=none
	[ "$1" = on ] && pfc=0x08
	[ "$2" = on ] && mark=$MARK en=all
	fabric_sw "$T" qdisc replace dev swp1 rate $RATE pfc $pfc $QUEUE $mark || return 1
	fabric_dcqcn_all profile lab && fabric_dcqcn_all set ecn ect0 rp_enable $en np_enable $en \
		pfc_enable $pfc link_speed 1gbit
}

congested() {	# NAME PFC DCQCN
	local name=$1 rc=0
	mode_set "$2" "$3" || return 1
	snap $COUNTERS
	verify "$name" "2 3" --duration $DUR --ack-timeout $ACK_TIMEOUT || rc=1
	fabric_sw "$T" -j qdisc show dev swp1 >"$LOGDIR/$name.qdisc.json"
	show_counters
	DROPS=$(python3 -c 'import json,sys; print(sum(p["drops"] for p in json.load(open(sys.argv[1]))[0]["prio"]))' \
		"$LOGDIR/$name.qdisc.json")
	echo "$name: switch drops $DROPS"
	fabric_sw tc qdisc del dev swp1 root
	return $rc
}

dcqcn_run() {
	congested dcqcn off on || return 1
	[ $(($(delta 2:rp_cnp_handled) + $(delta 3:rp_cnp_handled))) -gt 0 ]
}
ktap_result "2:1 incast with DCQCN: the senders were throttled (CNPs handled), nothing lost or corrupted" dcqcn_run

pfc_run() {
	congested pfc on off || return 1
	[ $(($(delta 2:rx_prio3_pause) + $(delta 3:rx_prio3_pause))) -gt 0 ] && [ "$DROPS" -eq 0 ]
}
ktap_result "2:1 incast with PFC: the senders were paused, the switch dropped nothing, nothing lost or corrupted" pfc_run
fabric_dcqcn_all set rp_enable none np_enable none pfc_enable none

# ---- netem ------------------------------------------------------------------
# netem on the switch ports towards h1 (requests, READ requests) and h2
# (ACKs, NAKs, READ responses, acknowledgements).
netem_run() {	# NAME COUNTER... -- NETEM ARGS
	local name=$1 c counters=() rc=0 n=0
	shift
	while [ "$1" != -- ]; do counters+=("$1"); shift; done
	shift
	for p in swp1 swp2; do fabric_sw tc qdisc replace dev $p root netem "$@" || return 1; done
	snap $COUNTERS
	verify "$name" 2 --count $COUNT --ack-timeout 14 || rc=1
	fabric_sw tc -s qdisc show dev swp1 | head -3
	for p in swp1 swp2; do fabric_sw tc qdisc del dev $p root; done
	show_counters
	for c in "${counters[@]}"; do n=$((n + $(delta "$c"))); done
	echo "$name: ${counters[*]}: +$n"
	[ $rc -eq 0 ] && [ $n -gt 0 ]
}
loss() { netem_run loss 2:completer_retry_err 2:rcvd_seq_err -- loss 1%; }
ktap_result "netem loss 1%: retransmitted (retries, sequence NAKs), nothing lost or corrupted" loss
reorder() { netem_run reorder 1:out_of_seq_request 2:rcvd_seq_err -- delay 2ms reorder 25% 50%; }
ktap_result "netem reordering: out-of-sequence packets NAKed and resent, nothing lost or corrupted" reorder
duplicate() { netem_run duplicate 1:duplicate_request 2:duplicate_request -- duplicate 3%; }
ktap_result "netem duplication 3%: duplicates recognised, nothing delivered twice" duplicate

ktap_diag "$(cat "$SUMMARY")"
ktap_diag "$(awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "bytes") b += $i} END {print b " bytes verified in all"}' "$SUMMARY")"
ktap_finished
