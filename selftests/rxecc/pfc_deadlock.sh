#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PFC deadlock: a cyclic buffer dependency (Hu et al., "Deadlocks in
# Datacenter Networks: Why Do They Form, and How to Avoid Them", HotNets
# 2016; Guo et al., SIGCOMM 2016, saw it in production). Four switches in a
# ring (fabric_ring), one host on each, every route one way round the ring;
# each host writes to the host two switches on (h1 -> h3, h2 -> h4, h3 -> h1,
# h4 -> h2), so every ring link carries two flows and is the bottleneck, and
# each ring port's queue holds packets from the port before it. Every link
# runs at RATE (the hosts' through a token bucket on their egress, as the
# lab's), so each ring link gets twice what it can send. The ring ports are
# pfc qdiscs with PFC on priority 3; the hosts honour PFC.
#   - PFC alone: the ring freezes. Every ring port holds packets, is paused
#     by the next switch and sends none, for seconds, and nothing is dropped:
#     no packet moves until the flows' QPs give up.
#   - the PFC watchdog (drop action) on the ring ports: storms are detected,
#     the queues dropped, and the flows move again; no freeze outlasts the
#     detection time by much.
# DCQCN with PFC on the ring is a measurement, not a check (whether the ring
# freezes then depends on how fast the first burst passes XOFF): the lab's
# `make demo SCENARIO=deadlock` runs it (mode dcqcn+pfc).
# The operator's view of each run (per 100 ms: packets sent, PFC frames,
# drops, ECN marks, backlog of every ring port) is in $LOGDIR/deadlock-*.tsv.
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
need_root
HERE=$(cd "$(dirname "$0")" && pwd)
T=$RXECC_TOOL
DUR=${DUR:-6}
RATE=${RATE:-$(scaled_rate 20)}	# Mbit/s of every ring link
TCLASS=104			# DSCP 26: priority 3 through the default DSCP map
QP_TIMEOUT=18			# 1.07 s: a frozen QP retries for 8.6 s before it gives up
SWITCHES="sw sw2 sw3 sw4"
RING=sw:to-sw2,sw2:to-sw3,sw3:to-sw4,sw4:to-sw
# Ring ports: buffers as pfc.sh's two-hop test's switch-to-switch ports.
QUEUE="link_speed ${RATE}mbit limit 256KiB xoff 24KiB xon 12KiB headroom 384KiB"

ktap_header
ktap_plan 2

modules_unload >/dev/null 2>&1
# shellcheck disable=SC2015 # fail when either module does not load
rxecc_load && pfc_load || { ktap_fail "load rdma_rxecc and sch_pfc"; ktap_finished; }
command -v python3 >/dev/null || { ktap_fail "python3 is installed"; ktap_finished; }

ring_setup() {
	local s i=1
	fabric_init
	for s in $SWITCHES; do
		[ "$s" = sw ] || fabric_add_switch "$s" || return 1
		fabric_add_host "$i" rxecc "$s" || return 1
		i=$((i + 1))
	done
	# shellcheck disable=SC2086 # the switches, one word each
	fabric_ring $SWITCHES || return 1
	# Each host sends at most RATE, as a NIC's line rate; its QPs keep out
	# of this bucket once it holds 16 KiB (tx_qlimit) rather than overflow
	# it.
	for i in 1 2 3 4; do
		fabric_in "$i" tc qdisc replace dev eth0 root tbf rate "${RATE}mbit" burst 8kb limit 64kb ||
			return 1
	done
}
ring_setup || { ktap_fail "four switches in a ring, a host on each"; ktap_finished; }

# ring_ports ARGS...: every ring port a pfc qdisc at RATE with ARGS.
ring_ports() {
	local p
	for p in ${RING//,/ }; do
		fabric_sw_in "${p%%:*}" tc qdisc del dev "${p#*:}" root 2>/dev/null
		# shellcheck disable=SC2086 # option lists
		fabric_sw_in "${p%%:*}" "$T" qdisc add dev "${p#*:}" rate "$RATE" pfc 0x08 $QUEUE "$@" ||
			return 1
	done
}

# ring_stop: the flows and the sampler of a run, stopped (also when the run
# failed half-way). fabric_qdisc_sampler is a function: its job is a subshell
# whose child is the sampler, which ends on SIGTERM.
ring_stop() {
	if [ -n "${SAMPLER:-}" ]; then
		pkill -TERM -P "$SAMPLER"
		kill -TERM "$SAMPLER" 2>/dev/null
		wait "$SAMPLER" 2>/dev/null
	fi
	pkill -KILL -x ib_write_bw
	[ ${#PIDS[@]} -eq 0 ] || wait "${PIDS[@]}" 2>/dev/null
	SAMPLER='' PIDS=()
}
PIDS=()

# ring_run NAME WD...: the four flows for DUR seconds, PFC on and DCQCN off,
# the ring ports sampled every 0.1 s; WD: the ring ports' watchdog options.
# Leaves $LOGDIR/deadlock-NAME.json (the summary) and .tsv (the table).
ring_run() {
	local name=$1 i dst
	shift
	ring_ports kmax 0 "$@" || return 1
	fabric_dcqcn_all set ecn ect0 rp_enable none np_enable none pfc_enable 0x08 \
		link_speed "${RATE}mbit" tx_qlimit 16KiB || return 1
	for i in 1 2 3 4; do
		fabric_in "$i" timeout $((DUR + 60)) ib_write_bw -d "h$i" -x "$(fabric_gid "$i")" -F \
			-s 65536 -D "$DUR" -p $((18800 + i)) --tclass="$TCLASS" -u "$QP_TIMEOUT" \
			>"$LOGDIR/deadlock-$name.s$i.log" 2>&1 &
		PIDS+=($!)
	done
	for i in 1 2 3 4; do
		wait_for 15 tcp_listening_on "$(fabric_ns "$i")" $((18800 + i)) || { ring_stop; return 1; }
	done
	fabric_qdisc_sampler 0.1 >"$LOGDIR/deadlock-$name.samples" &
	SAMPLER=$!
	# (its first samples before the load: python starts slowly here)
	wait_for 30 test -s "$LOGDIR/deadlock-$name.samples" || { ring_stop; return 1; }
	for i in 1 2 3 4; do
		dst=$(((i + 1) % 4 + 1))
		fabric_in "$i" timeout $((DUR + 60)) ib_write_bw -d "h$i" -x "$(fabric_gid "$i")" -F \
			-s 65536 -D "$DUR" -p $((18800 + dst)) --tclass="$TCLASS" -u "$QP_TIMEOUT" \
			"$(fabric_ip "$dst")" >"$LOGDIR/deadlock-$name.c$i.log" 2>&1 &
		PIDS+=($!)
	done
	# The load's time, and a margin; a frozen flow's perftest does not end
	# by itself before its QP gives up (8.6 s), so it is stopped.
	sleep $((DUR + 1))
	ring_stop
	python3 "$RXECC_TOP/lib/python/pfc_timeline.py" table 3 "$LOGDIR/deadlock-$name.samples" --ports "$RING" \
		>"$LOGDIR/deadlock-$name.tsv" &&
		python3 "$RXECC_TOP/lib/python/pfc_timeline.py" summary 3 "$LOGDIR/deadlock-$name.samples" --ports "$RING" \
			>"$LOGDIR/deadlock-$name.json" || return 1
	python3 "$RXECC_TOP/lib/python/pfc_timeline.py" line "$LOGDIR/deadlock-$name.json"
}

# pfc_deadlock_check.py checks the summaries (and prints each run's frozen
# spans): one Python start a run.
pfc_alone() {
	ring_run pfc || return 1
	python3 "$HERE/pfc_deadlock_check.py" deadlocked "$LOGDIR/deadlock-pfc.json"
}
ktap_result "PFC alone: the ring deadlocks (every ring port holds packets and sends none for 2 s or more), no drop" pfc_alone

watchdog() {
	ring_run pfc-wd wd_detection 200 wd_action drop || return 1
	python3 "$HERE/pfc_deadlock_check.py" broken "$LOGDIR/deadlock-pfc-wd.json" "$LOGDIR/deadlock-pfc.json"
}
ktap_result "PFC watchdog (detection 200 ms, drop): storms detected, the deadlock broken (no freeze of 1 s, over twice the packets)" watchdog

ktap_finished
