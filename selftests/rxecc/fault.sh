#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fault injection (failslab, fail_page_alloc): needs a kernel with
# CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAULT_INJECTION_DEBUG_FS,
# such as make kernel-debug's; Debian's kernel has none of them, so in
# `make check` this skips and `make check-debug` runs it.
#   - rdma link add, and opening the device, PD, CQ, MR, QP, connecting a QP
#     (INIT/RTR/RTS) and a SEND, rxecc's netlink set path and the pfc
#     qdisc's add and change, with each of their allocation points failed
#     in turn (fault_inject.py: fail-nth, every GFP mode; up to 40 points per operation,
#     spread over its path): each failure is an
#     error to the caller or absorbed, no device or resource is left behind,
#     and the device works afterwards;
#   - verified transfers in a 2:1 incast with DCQCN while 1 % of the socket
#     buffer allocations fail (failslab on skbuff_head_cache, marked at boot: packets, ACKs,
#     CNPs, connection management): every transfer verifies every byte, the
#     requesters built the packets they had no buffer for again
#     (tx_nomem_retry, patch 0009; rxe 6.1 failed the QP), and a lost ACK or
#     response is retransmitted; the fabric moves verified data once the
#     faults stop;
#   - every allocation of a QP's rxecc state failing while the host's own
#     qdisc drops its packets: the QP is held until the device's retry
#     timer (10 ms), not rebuilt at once without end (at most 300 retries a
#     second, at most 80 % of a CPU in the kernel), and its transfer
#     verifies.
# No kernel report and no kmemleak object (ci/guest/init.sh) may follow.
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
VERBS_SUMMARY=$LOGDIR/fault-summary.txt
source "$(dirname "$0")/verbs.sh"
need_root
HERE=$(cd "$(dirname "$0")" && pwd)
FI=/sys/kernel/debug
# shellcheck disable=SC2015 # skip when either directory is missing
[ -d "$FI/failslab" ] && [ -d "$FI/fail_page_alloc" ] ||
	ktap_exit_skip "this kernel has no fault injection (failslab, fail_page_alloc): make check-debug runs this test"

ktap_header
ktap_plan 6

# Both attributes armed only through fail-nth (probability 0), for every
# GFP mode and page order; user pages (highmem flag) excluded, so that the
# Python process's own page faults do not fail. Silent: the test counts.
for a in failslab fail_page_alloc; do
	echo 0 >$FI/$a/probability
	echo 0 >$FI/$a/verbose
	echo N >$FI/$a/ignore-gfp-wait
	echo N >$FI/$a/task-filter
	echo -1 >$FI/$a/times
done
echo 0 >$FI/fail_page_alloc/min-order
echo Y >$FI/fail_page_alloc/ignore-gfp-highmem

rxecc_load || { ktap_fail "load rdma_rxecc"; ktap_finished; }
modprobe rdma_cm
veth_up d0 10.0.0.1/24 || { ktap_fail "a veth pair"; ktap_finished; }
# "1: x0: pd 1 cq 2 qp 1 cm_id 0 mr 0 ctx 0": what x0 holds.
resources() { rdma resource show | grep " $1: " | sed 's/^[0-9]*: //'; }
# json_sum FILE: fault_inject.py's rows, a line each and the faults in all;
# fails unless every operation passed injection points and had faults (its
# status read through PIPESTATUS: the tee after it would hide it).
json_sum() { python3 "$HERE/fault_check.py" summary "$1"; }

# From here to the end of the traffic test allocations fail on purpose; the
# kernel's allocation-failure reports in between are not splats
# (ci/splat-scan.sh), anything else still is.
echo "rxecc-fault: injection on" >/dev/kmsg

link_faults() {
	local rc=0
	timeout 1800 python3 "$HERE/fault_inject.py" link d0 >"$LOGDIR/link.json" 2>"$LOGDIR/link.err" || rc=1
	cat "$LOGDIR/link.err"
	json_sum "$LOGDIR/link.json" | tee -a "$VERBS_SUMMARY"
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	[ -z "$(ls /sys/class/infiniband)" ] || { echo "left behind: $(ls /sys/class/infiniband)"; rc=1; }
	return "$rc"
}
ktap_result "rdma link add with each allocation failed in turn: an error or absorbed, no device left behind" link_faults

verbs_faults() {
	local rc=0 g before after
	rdma_link_add x0 rxecc d0 && g=$(wait_gid x0 10.0.0.1) || return 1
	before=$(resources x0)
	timeout 1800 python3 "$HERE/fault_inject.py" verbs x0 "$g" >"$LOGDIR/verbs.json" 2>"$LOGDIR/verbs.err" || rc=1
	cat "$LOGDIR/verbs.err"
	json_sum "$LOGDIR/verbs.json" | tee -a "$VERBS_SUMMARY"
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	after=$(resources x0)
	echo "x0 before: $before; after: $after"
	[ "$before" = "$after" ] || rc=1
	# The device still works: a connected pair moves data.
	peer_pair fault_after ibv_rc_pingpong -d x0 -g "$g" -n 100 -c -- \
		ibv_rc_pingpong -d x0 -g "$g" -n 100 -c 10.0.0.1 >/dev/null || rc=1
	rdma link delete x0 || rc=1
	return "$rc"
}
ktap_result "open, PD, CQ, MR, QP, connect, SEND with each allocation failed in turn: errors returned, nothing leaked, the device works after" verbs_faults
config_faults() {
	local rc=0
	pfc_load || return 1
	rdma_link_add x0 rxecc d0 || return 1
	timeout 1800 python3 "$HERE/fault_inject.py" config x0 d0 >"$LOGDIR/config.json" \
		2>"$LOGDIR/config.err" || rc=1
	cat "$LOGDIR/config.err"
	json_sum "$LOGDIR/config.json" | tee -a "$VERBS_SUMMARY"
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	rdma link delete x0 || rc=1
	return "$rc"
}
ktap_result "rxecc dcqcn set (device, defaults), tc qdisc add and change pfc with each allocation failed in turn: a failed request changed nothing, an applied one applied its value" config_faults

# ---- during traffic ---------------------------------------------------------------
rdma_links_delete_all
modules_unload >/dev/null 2>&1
ip link del d0 2>/dev/null
verbs_fabric 3 pfc
declare -A BASE
for i in 1 2 3; do BASE[$i]=$(fabric_in $i rdma resource show | grep " h$i: " | sed 's/^[0-9]*: //'); done
SKB=/sys/kernel/slab/skbuff_head_cache/failslab
INJECT=300

skb_faults() {
	local rc=0 i pids=() code left injected retried
	local nomem0=$(($(port_counter h2 tx_nomem_retry) + $(port_counter h3 tx_nomem_retry)))
	# 6.1 marks a cache for failslab only at boot (slub_debug=A,CACHE;
	# make check-debug boots so).
	[ "$(cat "$SKB" 2>/dev/null)" = 1 ] ||
		{ echo "$SKB is not 1: boot with slub_debug=A,skbuff_head_cache"; return 1; }
	fabric_cc_mode swp1 50 "link_speed 1gbit limit 256KiB" "kmin 10KB kmax 40KB pmax 20" off on || return 1
	for i in 2 3; do verbs_server "skb-$i" $((19500 + i)) 30 || return 1; done
	echo Y >"$FI/failslab/cache-filter"
	echo "$INJECT" >"$FI/failslab/times"
	echo 1 >"$FI/failslab/probability"
	for i in 2 3; do
		fabric_in "$i" timeout 300 "$VERBS" client "$(fabric_ip 1)" -p $((19500 + i)) \
			--seed $((19500 + i)) --timeout 30 --tos 104 --duration 4 --ack-timeout 14 \
			>"$LOGDIR/skb-$i.c.json" 2>"$LOGDIR/skb-$i.c.err" &
		pids+=($!)
	done
	for i in 2 3; do
		wait "${pids[$((i - 2))]}"
		code=$?
		# A server whose client never connected would wait for it: not long.
		wait_for 20 gone "${VERBS_S[skb-$i]}" || kill_tree "${VERBS_S[skb-$i]}"
		wait "${VERBS_S[skb-$i]}" 2>/dev/null
		echo "h$i: exit $code: $(verbs_summary "$LOGDIR/skb-$i.c.json" 2>/dev/null ||
			grep -m1 rxecc-verbs "$LOGDIR/skb-$i.c.err")"
		# Only 0 (every byte verified) passes: a failed allocation is a
		# lost packet (retransmitted) or one built again later, never a
		# completion in error (rxe 6.1: the requester's failed the QP, and
		# a QP with older WQEs unacknowledged then stopped completing).
		[ "$code" -eq 0 ] && verbs_summary "$LOGDIR/skb-$i.c.json" >/dev/null || rc=1
	done
	left=$(cat "$FI/failslab/times")
	echo 0 >"$FI/failslab/probability"
	echo N >"$FI/failslab/cache-filter"
	injected=$((INJECT - left))
	if [ "$rc" -ne 0 ]; then	# what the devices and the CM saw
		for i in 1 2 3; do
			echo "h$i: $(grep -H . /sys/class/infiniband/h"$i"/ports/1/hw_counters/* 2>/dev/null |
				sed 's@.*/@@' | grep -v ':0$' | tr '\n' ' ')"
			echo "h$i cm: $(grep -rH . "/sys/class/infiniband_cm/h$i/1/" 2>/dev/null |
				sed 's@.*/1/@@' | grep -v ':0$' | tr '\n' ' ')"
		done
	fi
	retried=$(($(port_counter h2 tx_nomem_retry) + $(port_counter h3 tx_nomem_retry) - nomem0))
	echo "skbuff_head_cache: $injected allocations failed; h2+h3 tx_nomem_retry $retried;" \
		"h1 np_cnp_send_err $(port_counter h1 np_cnp_send_err);" \
		"completer_retry_err h2 $(port_counter h2 completer_retry_err), h3 $(port_counter h3 completer_retry_err)"
	echo "traffic: $injected socket buffer allocations failed, $retried request packets built again" >>"$VERBS_SUMMARY"
	[ "$injected" -gt 0 ] && [ "$retried" -gt 0 ] && [ "$rc" -eq 0 ]
}
ktap_result "2:1 incast with DCQCN while 1 % of socket buffer allocations fail: both transfers verified, the requesters' failed buffers retried (tx_nomem_retry)" skb_faults
echo "rxecc-fault: injection off" >/dev/kmsg

# Every allocation of a QP's rxecc state fails (failslab on the rxecc_qp
# cache) while h2's own egress qdisc (tbf, 1 Mbit/s, 8 KB) drops its
# packets: a dropped packet whose QP has no state to wait on was built
# again at once, and again, spinning in softirq for as long as both lasted.
# (rxe's destructor of the dropped packet scheduled the requester at once
# too, whatever rxecc armed.) Now the device's retry timer schedules the QP
# again 10 ms later and the gate holds it until then, whoever wakes it: it
# builds its packet about a hundred times a second at most, and the
# transfer still verifies. On this emulated debug kernel a packet built and
# dropped costs about a ms: the spin came to about 1,100 a second, with a
# CPU's worth of kernel time (104 % of one CPU), against 52 a second and 50 %.
# The guest's kernel time so far ("system+irq+softirq total", jiffies summed
# over its CPUs): a QP spinning in its tasklet shows as softirq time.
kernel_jiffies() {
	awk '/^cpu /{ print $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat
}

nostate_retry() {
	local slab=/sys/kernel/slab/rxecc_qp/failslab r0 r1 t0 ms code rc=0 k0 k1 pct
	# 6.1 marks a cache for failslab only at boot; with skbuff_head_cache
	# marked too (skb_faults), the cache filter would fail both: this test
	# needs a boot of its own with slub_debug=A,rxecc_qp
	if [ "$(cat "$slab" 2>/dev/null)" != 1 ] || [ "$(cat "$SKB" 2>/dev/null)" = 1 ]; then
		ktap_skip_this "needs a boot with the rxecc_qp cache alone marked for failslab (slub_debug=A,rxecc_qp)"
		return 0
	fi
	fabric_dcqcn_all set rp_enable none np_enable none || rc=1
	fabric_in 2 tc qdisc replace dev eth0 root tbf rate 1mbit burst 4kb limit 8kb || rc=1
	verbs_server nostate 19530 60 || rc=1
	if [ "$rc" -eq 0 ]; then
		echo Y >"$FI/failslab/cache-filter"
		echo -1 >"$FI/failslab/times"
		echo 100 >"$FI/failslab/probability"
		r0=$(port_counter h2 tx_local_retry) t0=$(date +%s%N) k0=$(kernel_jiffies)
		fabric_in 2 timeout "$(scaled_time 120)" "$VERBS" client "$(fabric_ip 1)" -p 19530 \
			--seed 19530 --timeout 30 --duration 3 --ack-timeout 14 \
			>"$LOGDIR/nostate.c.json" 2>"$LOGDIR/nostate.c.err"
		code=$?
		r1=$(port_counter h2 tx_local_retry) ms=$((($(date +%s%N) - t0) / 1000000))
		k1=$(kernel_jiffies)
		# shellcheck disable=SC2086 # two numbers each
		pct=$(set -- $k0 $k1; echo $((($3 - $1) * 100 * $(nproc) / ($4 - $2 + 1))))
		echo 0 >"$FI/failslab/probability"
		echo N >"$FI/failslab/cache-filter"
		echo "h2: exit $code: $(verbs_summary "$LOGDIR/nostate.c.json" 2>/dev/null ||
			grep -m1 rxecc-verbs "$LOGDIR/nostate.c.err")"
		echo "h2: tx_local_retry +$((r1 - r0)) in $ms ms, $(((r1 - r0) * 1000 / (ms + 1)))/s (at most 300: the timer's 100/s); kernel time (system, irq, softirq) $pct % of one CPU (at most 80)"
		[ "$code" -eq 0 ] && [ $((r1 - r0)) -gt 0 ] &&
			[ $(((r1 - r0) * 1000 / (ms + 1))) -le 300 ] && [ "$pct" -le 80 ] || rc=1
		wait_for 20 gone "${VERBS_S[nostate]}" || kill_tree "${VERBS_S[nostate]}"
		wait "${VERBS_S[nostate]}" 2>/dev/null
	fi
	fabric_in 2 tc qdisc del dev eth0 root 2>/dev/null
	return "$rc"
}
ktap_result "a QP whose state cannot be allocated, its packets dropped by the local qdisc: retried by the device's timer, not at once without end; the transfer verifies" nostate_retry

after_faults() {
	sleep 2
	verbs_run after "2 3" --count 300 || return 1
	local i now rc=0
	for i in 1 2 3; do
		now=$(fabric_in "$i" rdma resource show | grep " h$i: " | sed 's/^[0-9]*: //')
		echo "before: ${BASE[$i]}; now: $now"
		[ "$now" = "${BASE[$i]}" ] || rc=1
	done
	return "$rc"
}
ktap_result "after the faults: the fabric moves verified data, every device holds what it held before" after_faults

ktap_diag "$(cat "$VERBS_SUMMARY")"
fabric_destroy
modules_unload >/dev/null 2>&1
ktap_finished
