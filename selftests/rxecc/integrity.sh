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
#   - 2:1 incast through a 50 Mbit/s port (scaled_rate in lib.sh) that marks
#     ECN, DCQCN on (CNPs must reach the senders);
#   - the same incast behind the pfc qdisc, PFC on priority 3 (pause frames
#     must reach the senders, the switch must drop nothing);
#   - RDMA READ responses dropped by the responder's own egress qdisc
#     (sent again, never answered with an RNR NAK);
#   - netem on both switch ports of the flow: 1 % loss, reordering,
#     duplication (the responder's and requester's counters must show that
#     the fabric did it);
#   - netem delay with one message at a time outstanding: the retransmit
#     timer never fires when nothing is lost;
#   - every acknowledgement lost for 1 s: the retransmit timer fires and
#     the requester counts it (local_ack_timeout_err, mlx5's name);
#   - in the netem runs, mlx5's sequence counters (out_of_sequence,
#     packet_seq_err; patch 0019) count at least what rxe's count;
#   - the upstream rxe fixes rxecc carries (patches 0014-0017, rxe_fixes.py):
#     a read through a memory window bound elsewhere mid-response, a
#     replayed zero-length read, an SRQ's and a QP's reported attributes;
#   - a QP destroyed while rxecc's gate holds its READ response (patch 0004).
#   - a go-back-N retry after the WQE it starts at was acknowledged, late,
#     while it was being sent again (patch 0010): the next message arrives
#     once.
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
VERBS_SUMMARY=$LOGDIR/integrity-summary.txt
source "$(dirname "$0")/verbs.sh"
need_root
T=$RXECC_TOOL
DUR=${DUR:-4}			# seconds per congested run
COUNT=${COUNT:-1000}		# messages per netem run
ACK_TIMER_COUNT=${ACK_TIMER_COUNT:-300}	# messages, one at a time, in the timer run
RATE=$(scaled_rate 50)		# Mbit/s at the congested port
TOS=104				# DSCP 26: priority 3 through the default DSCP map
# 4.096 us * 2^18 = 1.07 s: paused queues hold packets longer than 67 ms
# (see pfc.sh); netem runs use 2^14 = 67 ms so that tail losses recover fast.
ACK_TIMEOUT=18
QUEUE="link_speed 1gbit limit 256KiB xoff 24KiB xon 12KiB headroom 160KiB"
MARK="kmin 10KB kmax 40KB pmax 20"

ktap_header
ktap_plan 16

verbs_fabric 3 pfc

COUNTERS="1:duplicate_request 1:out_of_seq_request 2:completer_retry_err 2:rcvd_seq_err \
2:rp_cnp_handled 3:rp_cnp_handled 2:rx_prio3_pause 3:rx_prio3_pause 2:duplicate_request \
1:out_of_sequence 2:packet_seq_err 2:local_ack_timeout_err"

show_counters() { local k; for k in $COUNTERS; do echo "h${k%%:*} ${k#*:} +$(delta "$k")"; done; }

# ---- uncongested ------------------------------------------------------------
plain() {
	verbs_run plain 2 --count 1500
}
ktap_result "uncongested: 1500 messages of the mix, every byte and completion checked" plain

# ---- congestion -----------------------------------------------------------------

congested() {	# NAME PFC DCQCN
	local name=$1 rc=0
	fabric_cc_mode swp1 "$RATE" "$QUEUE" "$MARK" "$2" "$3" || return 1
	# shellcheck disable=SC2086 # intended splitting of the counter list
	snap $COUNTERS
	verbs_run "$name" "2 3" --tos "$TOS" --duration "$DUR" --ack-timeout "$ACK_TIMEOUT" || rc=1
	fabric_sw "$T" -j qdisc show dev swp1 >"$LOGDIR/$name.qdisc.json"
	show_counters
	# (the drops of all priorities)
	DROPS=$(python3 "$(dirname "$0")/pfc_check.py" qdisc-counters "$LOGDIR/$name.qdisc.json" |
		sed -n 's/^drops //p')
	echo "$name: switch drops $DROPS"
	fabric_sw tc qdisc del dev swp1 root
	return "$rc"
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

# ---- the responder's own egress queue ----------------------------------------
# h1's netdev gets a token bucket that its READ responses overflow (tx_qlimit
# 0, so nothing keeps them out of it): each response packet the qdisc drops
# is built again after a packet time (tx_local_retry). rxe 6.1 answered such a
# drop with an RNR NAK in the middle of the response (send_rnr_err), which
# the requester's completer did not expect there: it completed the read with
# a success status, WARNed and moved the QP to the error state.
read_drops() {
	local qd rc=0
	fabric_in 1 tc qdisc replace dev eth0 root tbf rate "$(scaled_rate 20)mbit" burst 32kb \
		limit 64kb || return 1
	snap 1:tx_local_retry 1:send_rnr_err 2:rcvd_rnr_err 2:completer_retry_err
	verbs_run readdrop 2 --op read --size 65536 --count 100 --ack-timeout 14 || rc=1
	qd=$(fabric_in 1 tc -s qdisc show dev eth0 | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1)
	fabric_in 1 tc qdisc del dev eth0 root
	echo "h1's tbf dropped ${qd:-?}; h1 tx_local_retry +$(delta 1:tx_local_retry)," \
		"send_rnr_err +$(delta 1:send_rnr_err); h2 rcvd_rnr_err +$(delta 2:rcvd_rnr_err)," \
		"completer_retry_err +$(delta 2:completer_retry_err)"
	[ "$rc" -eq 0 ] && [ "${qd:-0}" -gt 0 ] && [ "$(delta 1:tx_local_retry)" -gt 0 ] &&
		[ "$(delta 1:send_rnr_err)" -eq 0 ] && [ "$(delta 2:rcvd_rnr_err)" -eq 0 ]
}
ktap_result "READ responses dropped by the responder's own qdisc: sent again (no RNR NAK), nothing lost or corrupted" read_drops

# ---- upstream rxe fixes ---------------------------------------------------------
# rxe_fixes.py sends h1 the XOFF (and XON) for priority 3 from the switch's
# namespace that hold h1's responses while it acts. h1's
# link_speed of 1 Mbit/s makes one XOFF last 33 s, longer than any case.
rxe_fix() {	# CASE
	local rc=0
	fabric_dcqcn 1 set pfc_enable 0x08 link_speed 1mbit || return 1
	timeout "$(scaled_time 120)" python3 "$(dirname "$0")/rxe_fixes.py" "$1" \
		--resp h1 --resp-gid "$(fabric_gid 1)" --req h2 --req-gid "$(fabric_gid 2)" \
		--port swp1 --port-netns "/run/netns/$(fabric_sw_ns)" --prio 3 --tclass "$TOS" || rc=1
	fabric_dcqcn 1 set pfc_enable none link_speed auto || rc=1
	return "$rc"
}
mw_rebind() { rxe_fix mw-rebind; }
ktap_result "READ through a memory window bound to another MR mid-response: remote access error, no data the window no longer covers (0014)" mw_rebind
mw_unbind() { rxe_fix mw-unbind; }
ktap_result "READ through a memory window unbound mid-response: remote access error at the packet the requester expects (0014)" mw_unbind
zero_read() { rxe_fix zero-read; }
ktap_result "zero-length READ replayed after a retransmit: completes, the responder's QP lives on (0015)" zero_read
destroy_held() { rxe_fix destroy-held; }
ktap_result "QP destroyed while its READ response is held by a pause: the destroy returns at once, not when the pause ends (0004)" destroy_held
srq_size() { rxe_fix srq-size; }
ktap_result "SRQ creation reports the size ibv_query_srq reports (0016)" srq_size
qp_state() { rxe_fix qp-state; }
ktap_result "ibv_query_qp reports cur_qp_state RTS for a QP in RTS (0017)" qp_state

# A go-back-N retry after the WQE it starts at was acknowledged to its last
# packet while it was being sent again (rxe_fixes.py retry-acked): h2's own
# egress is a 1 Mbit/s token bucket, and with tx_qlimit h2 builds each
# packet as the last leaves, so a 32 KiB write takes 0.3 s to send.
# On a slow kernel (the debug kernel) 6.12's timer, pushed by every pass of
# the send task, may fire only after the delayed ACKs: the sequence is not
# built, and the test is skipped there; elsewhere that is a failure.
retry_acked() {
	local rc=0 skip=()
	[ "${RXECC_TIMEOUT_SCALE:-1}" -le 1 ] || skip=(--may-skip)
	fabric_in 2 tc qdisc replace dev eth0 root tbf rate 1mbit burst 2kb limit 100kb || return 1
	fabric_dcqcn 2 set tx_qlimit 1 link_speed 2mbit || rc=1
	if [ "$rc" -eq 0 ]; then
		timeout "$(scaled_time 60)" python3 "$(dirname "$0")/rxe_fixes.py" retry-acked \
			--resp h1 --resp-gid "$(fabric_gid 1)" --req h2 --req-gid "$(fabric_gid 2)" \
			--port swp1 --req-port swp2 --port-netns "/run/netns/$(fabric_sw_ns)" "${skip[@]}"
		rc=$?
		[ "$rc" -ne 4 ] || { rc=0; ktap_skip_this "the sequence was not built on this kernel (its timer fired late)"; }
	fi
	fabric_dcqcn 2 set tx_qlimit 0 link_speed auto || rc=1
	fabric_in 2 tc qdisc del dev eth0 root
	fabric_sw tc qdisc del dev swp2 root 2>/dev/null	# if the script was killed
	return "$rc"
}
ktap_result "a retry after the WQE it starts at was acknowledged while sent again: no empty packet more, the next message delivered once (0010)" retry_acked

# ---- netem ------------------------------------------------------------------
# netem on the switch ports towards h1 (requests, READ requests) and h2
# (ACKs, NAKs, READ responses, acknowledgements).
netem_run() {	# NAME COUNTER... -- NETEM ARGS
	local name=$1 c counters=() rc=0 n=0
	shift
	while [ "$1" != -- ]; do counters+=("$1"); shift; done
	shift
	for p in swp1 swp2; do fabric_sw tc qdisc replace dev "$p" root netem "$@" || return 1; done
	# shellcheck disable=SC2086 # intended splitting of the counter list
	snap $COUNTERS
	verbs_run "$name" 2 --tos "$TOS" --count "$COUNT" --ack-timeout 14 || rc=1
	fabric_sw tc -s qdisc show dev swp1 | head -3
	for p in swp1 swp2; do fabric_sw tc qdisc del dev "$p" root; done
	show_counters
	for c in "${counters[@]}"; do n=$((n + $(delta "$c"))); done
	echo "$name: ${counters[*]}: +$n"
	[ "$rc" -eq 0 ] && [ "$n" -gt 0 ]
}
# mlx5's sequence counters (patch 0019) against rxe's: out_of_sequence
# counts every request beyond the expected PSN, out_of_seq_request only
# those that got the NAK; packet_seq_err every sequence NAK taken,
# rcvd_seq_err only those beyond the oldest unacknowledged PSN. Each must
# have grown, and by no less than rxe's.
mlx5_counts() {
	local a b rc=0
	for a in 1:out_of_sequence:out_of_seq_request 2:packet_seq_err:rcvd_seq_err; do
		b=${a%%:*}:${a##*:}
		a=${a%:*}
		echo "h${a%%:*} ${a#*:} +$(delta "$a"), ${b#*:} +$(delta "$b")"
		[ "$(delta "$a")" -gt 0 ] && [ "$(delta "$a")" -ge "$(delta "$b")" ] || rc=1
	done
	return "$rc"
}
loss() { netem_run loss 2:completer_retry_err 2:rcvd_seq_err -- loss 1% && mlx5_counts; }
ktap_result "netem loss 1%: retransmitted (retries, sequence NAKs), nothing lost or corrupted; mlx5's out_of_sequence and packet_seq_err counted" loss
reorder() { netem_run reorder 1:out_of_seq_request 2:rcvd_seq_err -- delay 2ms reorder 25% 50% && mlx5_counts; }
ktap_result "netem reordering: out-of-sequence packets NAKed and resent, nothing lost or corrupted; mlx5's out_of_sequence and packet_seq_err counted" reorder
duplicate() { netem_run duplicate 1:duplicate_request 2:duplicate_request -- duplicate 3%; }
ktap_result "netem duplication 3%: duplicates recognised, nothing delivered twice" duplicate

# ---- the retransmit timer -----------------------------------------------------
# netem delays every packet 5 ms on both switch ports: a round trip of 10 ms
# and more, against an ACK timeout of 67 ms (2^14; 268 ms on a slower kernel),
# with one message at a time outstanding (and a READ beside it). Nothing is
# lost, so no timeout may fire while every message is acknowledged within
# the timeout. rxe 6.1 left a timer started for a message acknowledged since
# running for the next one, which it expired early (patch 0013). The
# client's slowest message (posted to the server's acknowledgement, which
# comes after the transport's ACK, or to a READ's completion) tells a
# timeout that fired early from one a stalled emulator earned: a run that
# resent something while a message took 85 % of the timeout or longer (rxe
# rounds the timeout down to jiffies, and a timer may fire a jiffy early)
# proves nothing and is run again, three runs at most; a run that resent
# nothing passes however slow.
ack_timer_run() {
	local rc=0 to=$1 max
	# shellcheck disable=SC2086 # the counter list is words
	snap $COUNTERS
	verbs_run acktimer 2 --count "$ACK_TIMER_COUNT" --depth 1 --poll event --ack-timeout "$to" || rc=1
	show_counters
	max=$(python3 -c '
import json, sys
print(int(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["rtt_us"]["max"]))' \
		"$LOGDIR/acktimer-2.c.json") || { echo "no round trips in the client's report"; return 1; }
	echo "slowest message: $max us"
	[ "$rc" -eq 0 ] || return 1
	[ "$(delta 2:completer_retry_err)" -eq 0 ] &&
		[ "$(delta 1:duplicate_request)" -eq 0 ] && [ "$(delta 2:duplicate_request)" -eq 0 ] && return 0
	if [ "$max" -ge $((4096 * 85 * (1 << to) / 100000)) ]; then
		echo "something was resent while a message took 85 % of the timeout or longer: this run proves nothing"
		return 2
	fi
	return 1
}
ack_timer() {
	local rc=2 to=14 i
	[ "${RXECC_TIMEOUT_SCALE:-1}" -le 1 ] || to=16
	for p in swp1 swp2; do fabric_sw tc qdisc replace dev "$p" root netem delay 5ms || return 1; done
	for i in 1 2 3; do
		ack_timer_run "$to"
		rc=$?
		[ "$rc" -eq 2 ] || break
	done
	for p in swp1 swp2; do fabric_sw tc qdisc del dev "$p" root; done
	[ "$rc" -eq 0 ]
}
ktap_result "one message at a time over a 10 ms round trip, ACK timeout 67 ms: no timeout fires, nothing resent" ack_timer

# For 1 s in the middle of a transfer, swp2 drops everything towards h2
# (ACKs, NAKs, READ responses): h2's retransmit timer (67 ms; 268 ms on a
# slower kernel) fires and h2 resends. Each retry a timeout started counts
# in local_ack_timeout_err (mlx5's name, patch 0019), a part of
# completer_retry_err.
ack_loss() {
	local rc=0 to=14 cut timeouts retries
	[ "${RXECC_TIMEOUT_SCALE:-1}" -le 1 ] || to=16
	# shellcheck disable=SC2086 # intended splitting of the counter list
	snap $COUNTERS
	# the cut starts once h2 has sent 2000 packets of the run
	(
		sent=$(port_counter h2 sent_pkts)
		wait_for "$(scaled_time 30)" above 2:sent_pkts $((sent + 2000)) || exit 1
		fabric_sw tc qdisc replace dev swp2 root netem loss 100%
		sleep "$(scaled_time 1)"
		fabric_sw tc qdisc del dev swp2 root
	) &
	cut=$!
	verbs_run ackloss 2 --tos "$TOS" --duration "$(scaled_time 4)" --ack-timeout "$to" || rc=1
	wait "$cut" || { echo "ackloss: h2 sent too little to cut"; rc=1; }
	fabric_sw tc qdisc del dev swp2 root 2>/dev/null
	show_counters
	timeouts=$(delta 2:local_ack_timeout_err) retries=$(delta 2:completer_retry_err)
	[ "$rc" -eq 0 ] && [ "${timeouts:-0}" -gt 0 ] && [ "$timeouts" -le "$retries" ]
}
ktap_result "every acknowledgement lost for a while: the ACK timer fires (local_ack_timeout_err), h2 resends, nothing lost or corrupted" ack_loss

ktap_diag "$(cat "$VERBS_SUMMARY")"
ktap_diag "$(awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "bytes") b += $i} END {print b " bytes verified in all"}' "$VERBS_SUMMARY")"
ktap_finished
