#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PFC on the one-guest fabric (fabric.sh) with the switch-port qdisc pfc
# (sch_pfc.ko), configured with `rxecc qdisc`:
#   - bad qdisc configurations are refused with a message and change nothing;
#     a good one reads back, tc lists its classes, `tc qdisc del` removes it;
#   - an endpoint honours PFC: hand-made XOFF frames stop h2's priority 3
#     while its priority 1 keeps flowing, XON resumes it, counters match;
#   - 3:1 incast (h2, h3, h4 -> h1) through a rate-limited port, four modes:
#     no PFC/no DCQCN (drops), PFC (no drop, no retransmission, data verified
#     by rping -V, PFC frames decoded by tshark), DCQCN only, PFC + DCQCN;
#   - an endpoint sends PFC: h1, whose received packets wait in the CPU's
#     input queue past pfc_rx_xoff, pauses the switch port towards it, which
#     honours the frames (and none are sent with pfc_rx_xoff 0);
#   - an endpoint keeps out of its own full egress qdisc with tx_qlimit;
#   - pause propagation through two switch hops, and a victim flow that shares
#     the uplink but not the congested port, paused by PFC all the same.
# The per-mode numbers go to the log and to $LOGDIR/pfc-report.txt.
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
need_root
HERE=$(cd "$(dirname "$0")" && pwd)
T=$RXECC_TOOL
DUR=${DUR:-6}
RATE=${RATE:-$(scaled_rate 50)}	# Mbit/s at the congested port
TCLASS=104			# DSCP 26: priority 3 through the default DSCP map
P=3

ktap_header
ktap_plan 12

modules_unload >/dev/null 2>&1
# shellcheck disable=SC2015 # fail when either module does not load
rxecc_load && pfc_load || { ktap_fail "load rdma_rxecc and sch_pfc"; ktap_finished; }
for t in tshark python3 rping; do
	command -v $t >/dev/null || { ktap_fail "$t is installed"; ktap_finished; }
done
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
modprobe rdma_cm

fabric_init
for i in 1 2 3 4; do
	fabric_add_host $i || { ktap_fail "fabric host $i"; ktap_finished; }
done
# rdma_cm connections (rping) of every host carry DSCP 26 too.
roce_tos() {
	local d=/sys/kernel/config/rdma_cm/h$1
	mkdir -p "$d" && echo $TCLASS > "$d/ports/1/default_roce_tos"
}
for i in 1 2 3 4; do roce_tos $i || { ktap_fail "rdma_cm ToS of h$i"; ktap_finished; }; done

# qstat SWITCH PORT KEY [PRIO]: a value of `rxecc -j qdisc show` (per
# priority if PRIO is given).
qstat() {
	# shellcheck disable=SC2086 # ${4:-} unquoted on purpose: no PRIO passes no argument, not an empty one
	fabric_sw_in "$1" "$T" -j qdisc show dev "$2" | python3 -c '
import json, sys
q = json.load(sys.stdin)[0]
print(q["prio"][int(sys.argv[2])][sys.argv[1]] if len(sys.argv) > 2 else q[sys.argv[1]])' "$3" ${4:-}
}

# ---- configuration ---------------------------------------------------------
bad_config() {
	local out rc ok=0 before after
	check() {	# EXPECTED-TEXT ARGS...: refused with exit 6 and a message containing it
		local want=$1
		shift
		out=$(fabric_sw "$T" qdisc "$@" 2>&1)
		rc=$?
		echo "rxecc qdisc $*: exit $rc: $out"
		[ "$rc" -eq 6 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && [[ $out == *"$want"* ]] || ok=1
	}
	check "xon 100000 above xoff 50000" add dev swp1 xoff 50KB xon 100KB
	check "xoff 65536 above limit 50000" add dev swp1 limit 50KB
	check "headroom 163840 below" add dev swp1 pfc all delay 10ms
	# 1 Tbit/s for 1 s: 125 GB, more than 64 bits hold on the way in bits x ns
	check "headroom 1000000000 below 125000003028 bytes" add dev swp1 pfc all link_speed 1000gbit \
		delay 1s headroom 1000000000
	check "kmin 60000 above kmax 20000" add dev swp1 kmin 60KB kmax 20KB
	fabric_sw "$T" qdisc show dev swp1 >/dev/null 2>&1
	[ $? -eq 3 ] || { echo "a refused add left a qdisc behind"; ok=1; }
	fabric_sw "$T" qdisc add dev swp1 rate 100 pfc 0x08 || return 1
	before=$(fabric_sw "$T" -j qdisc show dev swp1 | python3 "$HERE/pfc_check.py" config) ||
		{ echo "the qdisc's configuration could not be read"; ok=1; }
	check "prio 3: xon 40000 above xoff" change dev swp1 prio 3 xon 40KB xoff 30KB
	check "quanta" change dev swp1 quanta 0
	after=$(fabric_sw "$T" -j qdisc show dev swp1 | python3 "$HERE/pfc_check.py" config) ||
		{ echo "the qdisc's configuration could not be read after the changes"; ok=1; }
	[ "$before" = "$after" ] || { echo "a refused change changed the qdisc"; ok=1; }
	return "$ok"
}
ktap_result "qdisc: bad configurations are refused (exit 6, one line naming the problem) and change nothing" bad_config

good_config() {
	fabric_sw "$T" qdisc change dev swp1 rate 75 pfc 0,0,0,1,1,0,0,0 trust dscp link_speed 1gbit \
		delay 50us quanta 1000 limit 512KiB prio 3 xoff 30000 xon 10000 headroom 60KB \
		kmin 5KB kmax 40KB pmax 50% || return 1
	fabric_sw "$T" qdisc show dev swp1
	# one python3 for all the values (a start takes seconds in a guest)
	fabric_sw "$T" -j qdisc show dev swp1 | python3 "$HERE/pfc_check.py" values "rate_bps 75000000" \
		"pfc_enable 24" "link_speed 1000" "delay_ns 50000" "quanta 1000" "limit 524288 3" \
		"xoff 30000 3" "xon 10000 3" "headroom 60000 3" "kmin 5000 3" "kmax 40000 3" "pmax 50 3" \
		"limit 524288 0" "xoff 65536 0" || return 1
	[ "$(fabric_sw tc -s class show dev swp1 | grep -c '^class pfc')" -eq 8 ] || return 1
	fabric_sw tc qdisc del dev swp1 root || return 1
	fabric_sw tc qdisc show dev swp1 | grep -q 'qdisc pfc' && return 1
	fabric_sw "$T" qdisc show dev swp1 2>&1
	[ $? -eq 3 ]
}
ktap_result "qdisc: every setting reads back, tc lists 8 classes, tc qdisc del removes it" good_config

# ---- the endpoint honours PFC ----------------------------------------------
# h2 sends to h1 on priority 3 (DSCP 26) and priority 1 (DSCP 8) at once; a
# script in the switch sends XOFF for priority 3 out of swp2 every 5 ms for a
# second, then XON. h2's link speed is set to 100 Mbit/s, so that each XOFF
# pauses for 335 ms: a script on a busy emulated CPU may oversleep its 5 ms
# by more than the 33.5 ms of 1 Gbit/s, which would let the pause lapse and
# h2 send on priority 3 in the middle, as it should. The capture is h2's own:
# it sees a frame as the stack hands it to rxecc, after any wait in a busy
# CPU's receive backlog. The injector starts before the flows (a Python
# start takes seconds on the debug kernel) and injects once h2 has sent
# 2000 packets and a second has passed, well inside the flows' time.
tclass_of() { if [ "$1" = 3 ]; then echo "$TCLASS"; else echo 32; fi; }	# DSCP 26 / 8
endpoint_pause() {
	local pids=() cap inj i rc=0 frames d s0 deadline go=$LOGDIR/ep.go
	d=$(scaled_time 6)
	rm -f "$go"
	fabric_dcqcn 2 set pfc_enable 0x08 link_speed 100mbit rp_enable none np_enable none || return 1
	snap 2:rx_prio3_pause 2:rx_prio1_pause 2:rx_prio3_pause_duration 2:tx_pfc_deferred 2:rx_pfc_ignored
	for i in 3 1; do
		fabric_in 1 timeout $((d + 114)) ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -s 4096 -D "$d" \
			-p $((18710 + i)) --tclass="$(tclass_of "$i")" >"$LOGDIR/ep.s$i.log" 2>&1 &
		pids+=($!)
	done
	wait_for 15 tcp_listening "$(fabric_ns 1)" 2
	fabric_in 2 timeout $((d + 60)) dumpcap -q -P -i eth0 -s 64 \
		-f "(src host $(fabric_ip 2) and udp dst port 4791) or ether proto 0x8808" \
		-w "$LOGDIR/ep.h2.pcap" >/dev/null 2>&1 &
	cap=$!
	fabric_sw python3 "$HERE/pfc_inject.py" swp2 --prio "$P" --period 0.005 --duration 1.0 \
		--go "$go" --go-timeout $((d + 60)) >"$LOGDIR/ep.inject.json" &
	inj=$!
	sleep 2
	s0=$(cnt 2 sent_pkts)
	for i in 3 1; do
		client_run "$LOGDIR/ep.c$i.log" ip netns exec "$(fabric_ns 2)" ib_write_bw -d h2 \
			-x "$(fabric_gid 2)" -F -s 4096 -D "$d" -p $((18710 + i)) --tclass="$(tclass_of "$i")" \
			"$(fabric_ip 1)" >/dev/null &
		pids+=($!)
	done
	deadline=$((SECONDS + $(scaled_time 15)))
	while [ "$(cnt 2 sent_pkts)" -lt $((s0 + 2000)) ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
	sleep 1
	touch "$go"
	wait "$inj" || rc=1
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	sleep 1
	capture_stop "$LOGDIR/ep.h2.pcap"; wait "$cap" 2>/dev/null
	cat "$LOGDIR/ep.inject.json"
	frames=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frames"])' "$LOGDIR/ep.inject.json")
	echo "h2: rx_prio3_pause +$(delta 2:rx_prio3_pause) (frames sent $frames)," \
		"rx_prio1_pause +$(delta 2:rx_prio1_pause), rx_prio3_pause_duration" \
		"+$(delta 2:rx_prio3_pause_duration) us, tx_pfc_deferred +$(delta 2:tx_pfc_deferred)"
	python3 "$HERE/pfc_check.py" pause "$LOGDIR/ep.h2.pcap" "$P" "$(fabric_ip 2)" 26 8 \
		"$(delta 2:rx_prio3_pause_duration)" || rc=1
	[ "$rc" -eq 0 ] && [ "$(delta 2:rx_prio3_pause)" -eq "$frames" ] &&
		[ "$(delta 2:rx_prio1_pause)" -eq 0 ] && [ "$(delta 2:tx_pfc_deferred)" -gt 0 ]
}
ktap_result "endpoint: PFC stops h2's priority 3 for the pause while priority 1 flows; XON resumes it; counters match the frames" endpoint_pause
fabric_dcqcn 2 set link_speed auto

# ---- 3:1 incast, four modes ------------------------------------------------
SENDERS="2 3 4"
# Pause frames are timed at 1 Gbit/s on every port and host (65535 quanta =
# 33.5 ms, refreshed every 16.8 ms): at the 10 Gbit/s veth reports (3.4 ms)
# a refresh that waits behind a full receive backlog of this emulated CPU
# can come after the pause it renews has lapsed.
LINK="link_speed 1gbit"
QUEUE="$LINK limit 256KiB xoff 24KiB xon 12KiB headroom 160KiB"
MARK="kmin 10KB kmax 40KB pmax 20"
INCAST_COUNTERS="2:completer_retry_err 3:completer_retry_err 4:completer_retry_err 1:duplicate_request \
2:rx_prio3_pause 3:rx_prio3_pause 4:rx_prio3_pause 2:rx_prio3_pause_duration 3:rx_prio3_pause_duration \
4:rx_prio3_pause_duration 2:rp_cnp_handled 3:rp_cnp_handled 4:rp_cnp_handled 1:np_cnp_sent"
# The transport timeout of the incast QPs: 4.096 us * 2^18 = 1.07 s, not
# perftest's 67 ms. A lossless fabric holds packets in paused queues for
# longer than 67 ms (three senders' windows behind a 50 Mbit/s port, pauses
# propagated over two hops); a timeout there resends data that was only
# waiting, into the same queues. Losses (no PFC) are recovered by NAKs.
# On a slower kernel (RXECC_RATE_SCALE) 4.3 s: the debug kernel retransmitted
# with 1.07 s in the PFC-only incast, with no drop anywhere.
QP_TIMEOUT=18
[ "${RXECC_RATE_SCALE:-1}" -le 1 ] || QP_TIMEOUT=20
RPING_COUNT=100			# rping -V during the PFC-only incast: pings ...
RPING_SIZE=8192			# ... of this many bytes (client and server)
REPORT=$LOGDIR/pfc-report.txt
: >"$REPORT"

# mode_set PFC DCQCN (on|off each): the switch port towards h1 and the hosts.
mode_set() { fabric_cc_mode swp1 "$RATE" "$QUEUE" "$MARK" "$1" "$2"; }

# incast NAME [VERIFY]: h2, h3, h4 write to h1 for DUR seconds (ib_write_bw,
# 64 KiB messages, DSCP 26); with VERIFY each also runs rping -V to h1 at
# the same time. Writes the mode's line of the report.
incast() {
	local name=$1 verify=${2:-} i pids=() rc=0 caps=() cap sn
	# shellcheck disable=SC2086 # intended splitting of the counter list
	snap $INCAST_COUNTERS
	sn=$(softnet_drops)
	fabric_sw tc qdisc del dev swp1 root 2>/dev/null
	mode_set "${name%%+*}" "${name##*+}" || return 1
	fabric_sw timeout 100 dumpcap -q -P -i swp1 -s 80 -w "$LOGDIR/$name.swp1.pcap" >/dev/null 2>&1 &
	cap=$!
	for i in $SENDERS; do
		fabric_in 1 timeout 120 ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -s 65536 -D "$DUR" \
			-p $((18700 + i)) --tclass="$TCLASS" -u "$QP_TIMEOUT" >"$LOGDIR/$name.s$i.log" 2>&1 &
		pids+=($!)
	done
	if [ -n "$verify" ]; then
		# One server per client: rping's persistent server (-P) can give
		# two connect requests that come together the same cm_id, and
		# then fails one of them (rdma_create_qp: Invalid argument).
		RPING_SERVERS=()
		for i in $SENDERS; do
			fabric_in 1 timeout 120 rping -s -a "$(fabric_ip 1)" -p $((18790 + i)) -S "$RPING_SIZE" \
				>"$LOGDIR/$name.rping-s$i.log" 2>&1 &
			RPING_SERVERS+=($!)
		done
		for i in $SENDERS; do
			fabric_in "$i" timeout 60 dumpcap -q -i eth0 -f 'ether proto 0x8808' \
				-w "$LOGDIR/$name.h$i.pcap" >/dev/null 2>&1 &
			caps+=($!)
		done
	fi
	wait_for 15 tcp_listening "$(fabric_ns 1)" 3
	if [ -n "$verify" ]; then
		# Connected before the load starts, verifying data all through it.
		for i in $SENDERS; do
			# (each verified ping's line, cut short: 8 KB of letters)
			fabric_in "$i" timeout 100 rping -c -v -V -a "$(fabric_ip 1)" -p $((18790 + i)) -C "$RPING_COUNT" -S "$RPING_SIZE" \
				2>&1 | cut -c1-60 >"$LOGDIR/$name.rping$i.log" &
			pids+=($!)
		done
	fi
	sleep 1
	for i in $SENDERS; do
		client_run "$LOGDIR/$name.c$i.log" ip netns exec "$(fabric_ns "$i")" ib_write_bw -d "h$i" \
			-x "$(fabric_gid "$i")" -F -s 65536 -D "$DUR" -p $((18700 + i)) --tclass="$TCLASS" -u "$QP_TIMEOUT" \
			"$(fabric_ip 1)" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || { echo "$name: a transfer failed (pid $i)"; rc=1; }; done
	if [ -n "$verify" ]; then
		kill "${RPING_SERVERS[@]}" 2>/dev/null; wait "${RPING_SERVERS[@]}" 2>/dev/null
	fi
	sleep 1
	for i in $SENDERS; do [ -z "$verify" ] || capture_stop "$LOGDIR/$name.h$i.pcap"; done
	capture_stop "$LOGDIR/$name.swp1.pcap"
	wait "${caps[@]}" "$cap" 2>/dev/null
	fabric_sw "$T" -j qdisc show dev swp1 >"$LOGDIR/$name.qdisc.json"
	qd_load "$name.qdisc"
	fabric_sw "$T" qdisc show dev swp1
	local k
	for k in $INCAST_COUNTERS; do echo "$name: h${k%%:*} ${k#*:} +$(delta "$k")"; done >"$LOGDIR/$name.counters"
	BACKLOG_DROPS=$(($(softnet_drops) - sn))
	python3 "$HERE/pfc_check.py" report "$name" "$LOGDIR" "$LOGDIR/$name.swp1.pcap:$(fabric_ip 1)" |
		sed "s/\$/; receive backlog drops $BACKLOG_DROPS/" | tee -a "$REPORT"
	return "$rc"
}
# qd_load NAME: priority 3's counters, "drops" (of all priorities) and
# "frames" (priority 3's XOFF and XON sent) from $LOGDIR/NAME.json (`rxecc
# -j qdisc show`; pfc_check.py qdisc-counters) into QD, read by qd NAME KEY:
# one Python start per file (each costs about a second in the guest), in the
# test's own shell.
declare -gA QD=()
qd_load() {
	local k v
	while read -r k v; do QD[$1:$k]=$v; done <<<"$(python3 "$HERE/pfc_check.py" qdisc-counters "$LOGDIR/$1.json")"
}
qd() { echo "${QD[$1:$2]:?no value $2 of $1}"; }
drops() { qd "$1.qdisc" drops; }
pfc_frames() { qd "$1.qdisc" frames; }
retries() { echo $(($(delta 2:completer_retry_err) + $(delta 3:completer_retry_err) + $(delta 4:completer_retry_err))); }

no_pfc() {
	incast off+off || return 1
	echo "switch drops $(drops off+off), sender retransmissions $(retries)"
	[ "$(drops off+off)" -gt 0 ] && [ "$(retries)" -gt 0 ]
}
ktap_result "3:1 incast, no PFC, no DCQCN: the switch drops packets and senders retransmit (counted)" no_pfc

pfc_only() {
	incast on+off verify || return 1
	local i n
	# Every ping of every client came back verified (-V stops at the first
	# mismatch; -v prints each verified ping), and the server saw no error.
	for i in $SENDERS; do
		n=$(grep -c '^ping data: ' "$LOGDIR/on+off.rping$i.log")
		echo "h$i: rping -V: $n of $RPING_COUNT pings of $RPING_SIZE bytes verified"
		[ "$n" -eq "$RPING_COUNT" ] || return 1
		! grep -qiE 'fail|mismatch|error' "$LOGDIR/on+off.rping$i.log" || return 1
	done
	for i in $SENDERS; do
		! grep -qiE 'fail|error' "$LOGDIR/on+off.rping-s$i.log" || { cat "$LOGDIR/on+off.rping-s$i.log"; return 1; }
	done
	echo "switch drops $(drops on+off), receive backlog drops $BACKLOG_DROPS, PFC frames" \
		"$(pfc_frames on+off), sender retransmissions $(retries)"
	[ "$(drops on+off)" -eq 0 ] && [ "$BACKLOG_DROPS" -eq 0 ] && [ "$(pfc_frames on+off)" -gt 0 ] &&
		[ "$(retries)" -eq 0 ] &&
		[ "$(delta 2:rx_prio3_pause)" -gt 0 ] && [ "$(delta 3:rx_prio3_pause)" -gt 0 ] &&
		[ "$(delta 4:rx_prio3_pause)" -gt 0 ]
}
ktap_result "3:1 incast, PFC: nothing dropped or retransmitted, every sender paused, every transfer completes, rping -V verifies its data" pfc_only

decoded() {
	python3 "$HERE/pfc_check.py" frames "$LOGDIR/on+off.qdisc.json" "$P" 65535 \
		"$LOGDIR"/on+off.h{2,3,4}.pcap
}
ktap_result "tshark decodes the switch's PFC frames: class-enable vector 0x0008, quanta 65535 (XOFF) or 0 (XON), as many as the qdisc counted" decoded

dcqcn_only() {
	incast off+on || return 1
	echo "switch drops $(drops off+on), CNPs sent by h1 +$(delta 1:np_cnp_sent)"
	[ "$(delta 1:np_cnp_sent)" -gt 0 ] && [ "$(delta 2:rp_cnp_handled)" -gt 0 ]
}
ktap_result "3:1 incast, DCQCN only: every transfer completes, CNPs sent and handled" dcqcn_only

pfc_dcqcn() {
	incast on+on || return 1
	echo "switch drops $(drops on+on), receive backlog drops $BACKLOG_DROPS, retransmissions" \
		"$(retries); PFC frames: PFC only $(pfc_frames on+off), PFC + DCQCN $(pfc_frames on+on)"
	[ "$(drops on+on)" -eq 0 ] && [ "$BACKLOG_DROPS" -eq 0 ] && [ "$(retries)" -eq 0 ] &&
		[ "$(delta 1:np_cnp_sent)" -gt 0 ]
}
ktap_result "3:1 incast, PFC + DCQCN: nothing dropped or retransmitted, every transfer completes, CNPs sent" pfc_dcqcn
ktap_diag "$(cat "$REPORT")"

# ---- the endpoint sends PFC ------------------------------------------------
# The three senders write to h1 through swp1 without a port rate, so h1's
# receive processing is the bottleneck and its packets wait in the CPU's
# input queue. With pfc_rx_xoff 0 h1 sends nothing; with 1 ms/200 us it sends
# XOFF for priority 3, and the qdisc on swp1 (h1's link partner) receives and
# honours every frame, pausing the senders in turn: nothing is dropped. With
# pfc_rx_xoff 1 us the send timer runs (on these guests) more than 1 us after the
# packet that asked for the XOFF (a slow host's case: the debug kernel's at
# 100 us); the XOFF still goes out.
incast_to_h1() {	# SECONDS
	local pids=() i rc=0
	for i in $SENDERS; do
		fabric_in 1 timeout 120 ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -s 65536 -D "$1" \
			-p $((18730 + i)) --tclass="$TCLASS" -u "$QP_TIMEOUT" >"$LOGDIR/tx.s$i.log" 2>&1 &
		pids+=($!)
	done
	wait_for 15 tcp_listening "$(fabric_ns 1)" 3
	for i in $SENDERS; do
		client_run "$LOGDIR/tx.c$i.log" ip netns exec "$(fabric_ns "$i")" ib_write_bw -d "h$i" \
			-x "$(fabric_gid "$i")" -F -s 65536 -D "$1" -p $((18730 + i)) --tclass="$TCLASS" \
			-u "$QP_TIMEOUT" "$(fabric_ip 1)" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return "$rc"
}
endpoint_sends() {
	local rc=0 off sent xoff_us late got paused drops
	fabric_sw tc qdisc del dev swp1 root 2>/dev/null
	# shellcheck disable=SC2086 # intended splitting of the queue options ($QUEUE)
	fabric_sw "$T" qdisc add dev swp1 pfc 0x08 $QUEUE || return 1
	fabric_dcqcn_all set rp_enable none np_enable none pfc_enable 0x08 link_speed 1gbit || return 1
	snap 1:tx_prio3_pause
	incast_to_h1 3 || rc=1
	off=$(delta 1:tx_prio3_pause)
	fabric_dcqcn 1 set pfc_rx_xoff 1ms pfc_rx_xon 200us || return 1
	snap 1:tx_prio3_pause 1:tx_prio3_pause_duration
	incast_to_h1 4 || rc=1
	sleep 1
	sent=$(delta 1:tx_prio3_pause) xoff_us=$(delta 1:tx_prio3_pause_duration)
	fabric_dcqcn 1 set pfc_rx_xoff 1us pfc_rx_xon 0 || return 1
	incast_to_h1 2 || rc=1
	sleep 1
	fabric_dcqcn 1 set pfc_rx_xoff 0 pfc_rx_xon 0 || rc=1
	late=$(($(delta 1:tx_prio3_pause) - sent))
	got=$(qstat sw swp1 pause_rx 3)
	paused=$(qstat sw swp1 pause_rx_duration_us 3)
	drops=$(qstat sw swp1 drops)
	echo "pfc_rx_xoff 0: h1 sent $off PFC frames; 1 ms/200 us: h1 sent $sent for priority 3" \
		"(in XOFF $xoff_us us); 1 us/0: $late; swp1 received $got and was paused $paused us;" \
		"swp1 sent $(qstat sw swp1 pause_tx 3) XOFF to the senders; swp1 drops $drops"
	fabric_sw tc qdisc del dev swp1 root
	[ "$rc" -eq 0 ] && [ "$off" -eq 0 ] && [ "$sent" -gt 0 ] && [ "$late" -gt 0 ] &&
		[ "$got" -eq $((sent + late)) ] && [ "$paused" -gt 0 ] && [ "$drops" -eq 0 ]
}
ktap_result "endpoint sends PFC: h1's receive backlog wait past pfc_rx_xoff pauses the switch port towards it, frame for frame, none without it" endpoint_sends

# ---- the endpoint's own egress queue ----------------------------------------
# h2's netdev gets a token bucket (tbf, 20 Mbit/s: scaled_rate; 64 KB of queue) that h2's
# writes overflow: with tx_qlimit 0 the qdisc drops rxecc's packets (each one
# rolled back and retried: tx_local_retry); with tx_qlimit 16KiB the QP waits
# while the queue holds that much (tx_queue_deferred) and nothing is dropped.
egress_run() {	# TX_QLIMIT PORT: "drops retries deferrals"
	local qd
	fabric_dcqcn 2 set tx_qlimit "$1" || return 1
	fabric_in 2 tc qdisc replace dev eth0 root tbf rate "$(scaled_rate 20)mbit" burst 32kb \
		limit 64kb || return 1
	snap 2:tx_local_retry 2:tx_queue_deferred
	fabric_in 1 timeout 60 ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -s 65536 -D 3 -p "$2" \
		--tclass="$TCLASS" -u "$QP_TIMEOUT" >"$LOGDIR/egress.s$2.log" 2>&1 &
	wait_for 15 tcp_listening_on "$(fabric_ns 1)" "$2"
	client_run "$LOGDIR/egress.c$2.log" ip netns exec "$(fabric_ns 2)" ib_write_bw -d h2 \
		-x "$(fabric_gid 2)" -F -s 65536 -D 3 -p "$2" --tclass="$TCLASS" -u "$QP_TIMEOUT" \
		"$(fabric_ip 1)" >&2 || return 1
	wait || return 1
	qd=$(fabric_in 2 tc -s qdisc show dev eth0 | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1)
	fabric_in 2 tc qdisc del dev eth0 root
	echo "${qd:-x} $(delta 2:tx_local_retry) $(delta 2:tx_queue_deferred)"
}
egress_queue() {
	local off on
	fabric_dcqcn_all set rp_enable none np_enable none pfc_enable none link_speed 1gbit || return 1
	off=$(egress_run 0 18801) || return 1
	on=$(egress_run 16KiB 18802) || return 1
	fabric_dcqcn 2 set tx_qlimit 0 || return 1
	# shellcheck disable=SC2086 # intended splitting: the six numbers egress_run printed, three each
	set -- $off $on
	echo "tx_qlimit 0: tbf dropped $1, tx_local_retry $2, tx_queue_deferred $3;" \
		"tx_qlimit 16KiB: tbf dropped $4, tx_local_retry $5, tx_queue_deferred $6"
	[ "$1" -gt 0 ] && [ "$2" -gt 0 ] && [ "$3" -eq 0 ] && [ "$4" -eq 0 ] && [ "$5" -eq 0 ] &&
		[ "$6" -gt 0 ]
}
ktap_result "egress queue: tx_qlimit keeps h2's QP out of its own full qdisc (drops without it, none with it)" egress_queue

# ---- two hops, a victim ----------------------------------------------------
# h2, h3 -> h5 (congested port sw2:swp5) and the victim h4 -> h6 (sw2:swp6,
# not congested) all cross the uplink sw:to-sw2 -> sw2.
fabric_sw tc qdisc del dev swp1 root 2>/dev/null
fabric_add_switch sw2
for i in 5 6; do
	fabric_add_host $i rxecc sw2 || { ktap_fail "fabric host $i"; ktap_finished; }
	roce_tos $i
done
fabric_uplink sw sw2 || { ktap_fail "uplink between the switches"; ktap_finished; }
# Switch-to-switch ports: more headroom. A port's XOFF leaves from a soft
# hrtimer; with six namespaces of traffic on two emulated CPUs that timer
# can run several ms late, and the uplink brings 150 Mbit/s: 160 KiB lasts
# 8.7 ms of it (a CI run once dropped 4 packets at sw2:swp5 that way).
# 384 KiB covers 21 ms.
HOP_QUEUE="$LINK limit 256KiB xoff 24KiB xon 12KiB headroom 384KiB"
HOP_COUNTERS="2:rx_prio3_pause 3:rx_prio3_pause 4:rx_prio3_pause 2:completer_retry_err \
3:completer_retry_err 4:completer_retry_err 5:np_cnp_sent"

# hops NAME: the three flows for DUR seconds, PFC on and DCQCN off.
hops() {
	local name=$1 pids=() rc=0 pair src dst caps=() i
	# shellcheck disable=SC2086 # intended splitting of the counter list
	snap $HOP_COUNTERS
	for s in "sw2 swp5 rate $RATE" "sw2 swp6" "sw to-sw2 rate $((RATE * 3))"; do
		# shellcheck disable=SC2086 # intended splitting of the port's words (switch, port, tbf options)
		set -- $s
		fabric_sw_in "$1" tc qdisc del dev "$2" root 2>/dev/null
		# shellcheck disable=SC2046,SC2086 # $HOP_QUEUE and the marking are option words: split on purpose
		fabric_sw_in "$1" "$T" qdisc add dev "$2" "${@:3}" pfc 0x08 $HOP_QUEUE kmax 0 || return 1
	done
	fabric_dcqcn_all set ecn ect0 rp_enable none np_enable none pfc_enable 0x08 link_speed 1gbit ||
		return 1
	for pair in 2:5 3:5 4:6; do
		src=${pair%:*} dst=${pair#*:}
		fabric_in "$dst" timeout 120 ib_write_bw -d "h$dst" -x "$(fabric_gid "$dst")" -F -s 65536 \
			-D "$DUR" -p $((18720 + src)) --tclass="$TCLASS" -u "$QP_TIMEOUT" >"$LOGDIR/$name.s$src.log" 2>&1 &
		pids+=($!)
	done
	wait_for 15 tcp_listening "$(fabric_ns 5)" 2 && wait_for 15 tcp_listening "$(fabric_ns 6)" 1
	for i in 5 6; do
		fabric_sw_in sw2 timeout 100 dumpcap -q -P -i "swp$i" -s 80 -w "$LOGDIR/$name.swp$i.pcap" \
			>/dev/null 2>&1 &
		caps+=($!)
	done
	sleep 1
	for pair in 2:5 3:5 4:6; do
		src=${pair%:*} dst=${pair#*:}
		client_run "$LOGDIR/$name.c$src.log" ip netns exec "$(fabric_ns "$src")" ib_write_bw \
			-d "h$src" -x "$(fabric_gid "$src")" -F -s 65536 -D "$DUR" -p $((18720 + src)) \
			--tclass="$TCLASS" -u "$QP_TIMEOUT" "$(fabric_ip "$dst")" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	sleep 1
	for i in 5 6; do capture_stop "$LOGDIR/$name.swp$i.pcap"; done
	wait "${caps[@]}" 2>/dev/null
	fabric_sw_in sw2 "$T" -j qdisc show dev swp5 >"$LOGDIR/$name.swp5.json"
	fabric_sw_in sw2 "$T" -j qdisc show dev swp6 >"$LOGDIR/$name.swp6.json"
	fabric_sw_in sw "$T" -j qdisc show dev to-sw2 >"$LOGDIR/$name.uplink.json"
	qd_load "$name.swp5" && qd_load "$name.swp6" && qd_load "$name.uplink"
	fabric_sw_in sw2 "$T" qdisc show dev swp5
	fabric_sw_in sw "$T" qdisc show dev to-sw2
	python3 "$HERE/pfc_check.py" report "$name" "$LOGDIR" "$LOGDIR/$name.swp5.pcap:$(fabric_ip 5)" |
		tee -a "$REPORT"
	return "$rc"
}
j() { qd "$@"; }

two_hops() {
	hops hop-pfc || return 1
	echo "sw2:swp5 XOFF sent $(j hop-pfc.swp5 pause_tx); uplink sw:to-sw2 PFC received" \
		"$(j hop-pfc.uplink pause_rx), paused $(j hop-pfc.uplink pause_rx_duration_us) us," \
		"XOFF sent $(j hop-pfc.uplink pause_tx); h2/h3/h4 rx_prio3_pause +$(delta 2:rx_prio3_pause)" \
		"+$(delta 3:rx_prio3_pause) +$(delta 4:rx_prio3_pause); drops $(j hop-pfc.swp5 drops)" \
		"$(j hop-pfc.uplink drops)"
	[ "$(j hop-pfc.swp5 pause_tx)" -gt 0 ] && [ "$(j hop-pfc.uplink pause_rx)" -gt 0 ] &&
		[ "$(j hop-pfc.uplink pause_rx_duration_us)" -gt 0 ] &&
		[ "$(j hop-pfc.uplink pause_tx)" -gt 0 ] && [ "$(delta 2:rx_prio3_pause)" -gt 0 ] &&
		[ "$(delta 3:rx_prio3_pause)" -gt 0 ] && [ "$(j hop-pfc.swp5 drops)" -eq 0 ] &&
		[ "$(j hop-pfc.uplink drops)" -eq 0 ]
}
ktap_result "pause propagates through two switch hops: congested port -> uplink paused -> senders paused, no drop" two_hops
VICTIM_PAUSES=$(delta 4:rx_prio3_pause)

# The victim of the same run: its own port (sw2:swp6) is not congested and
# sends no XOFF, yet it is paused, by the uplink's pauses for h5's traffic.
# What DCQCN changes for it (its goodput against PFC alone's) is the lab's
# check: make demo SCENARIO=victim.
victim() {
	local a
	a=$(python3 "$HERE/pfc_check.py" goodput h4 "$LOGDIR/hop-pfc.swp6.pcap:$(fabric_ip 6)")
	echo "victim h4 -> h6 with PFC: $a Mbit/s, paused by $VICTIM_PAUSES PFC frames;" \
		"its own port sw2:swp6 sent $(j hop-pfc.swp6 pause_tx) XOFF" | tee -a "$REPORT"
	[ "$VICTIM_PAUSES" -gt 0 ] && [ "$(j hop-pfc.swp6 pause_tx)" -eq 0 ]
}
ktap_result "victim flow sharing the uplink: paused by PFC though its own port sends no XOFF (head-of-line blocking)" victim

fabric_destroy
modules_unload
ktap_finished
