#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make demo`, the congestion lab (ci/demo.sh). One guest, the
# namespace fabric (lib/shell/fabric.sh): senders h2..h(N+1) write to
# h1 through the switch port swp1, the bottleneck (qdisc pfc at RATE, RED-style
# ECN marking, PFC per mode); a probe host h(N+2) measures latency to h1
# through the same port. The scenario (SCENARIO.sh, written by ci/lab/lab.py)
# gives the fabric, the workload and the modes; per mode MODE, LAB_OUT/MODE/
# gets:
#   swp1.pcap          the bottleneck's egress (headers), for goodput
#   qdisc.json         `rxecc -j qdisc show dev swp1` after the run
#   dcqcn.json         `rxecc -j dcqcn show` of the first sender, as the mode
#                      set it (the host simulation's parameters)
#   before.txt after.txt   counters of every host: "hI NAME VALUE"
#   trace.txt          the tracepoints rxecc_rate (every sender's DCQCN rate)
#                      and sch_pfc:pfc_queue (the bottleneck's backlog of the
#                      RoCE priority after every packet)
#   probe.tsv          the probe's pings (rxecc-verbs --test ping): "SENT RTT"
#                      per ping, in ns, SENT on CLOCK_MONOTONIC
#   probe.json         the probe's summary (both ends checked every ping's data)
#   load-start, load-done   the load's window (seconds since boot =
#                      CLOCK_MONOTONIC)
#   cI.log sI.log      the perftest clients and servers
# Progress lines start with "lab:".
# shellcheck source=../../lib/shell/lib.sh
source "$RXECC_TOP/lib/shell/lib.sh"
# shellcheck source=../../lib/shell/fabric.sh
source "$RXECC_TOP/lib/shell/fabric.sh"
# shellcheck source=/dev/null
source "${1:?usage: lab.sh SCENARIO.sh}" || exit 1
LAB_OUT=${LAB_OUT:-/mnt/out/lab}
T=$RXECC_TOOL
TR=/sys/kernel/tracing
PRIO=$((DSCP >> 3))		# through the default DSCP map
TCLASS=$((DSCP << 2))
SENDER_HOSTS=$(seq 2 $((SENDERS + 1)))
PROBE_HOST=$((SENDERS + 2))
say() { echo "lab: $*"; }

V=$RXECC_TOP/build/userspace/rxecc-verbs
mkdir -p "$LAB_OUT"
modules_unload >/dev/null 2>&1
rxecc_load && pfc_load || exit 1
mountpoint -q $TR || mount -t tracefs none $TR || exit 1
# The tracepoints are switched on once, here, before any traffic, and each
# mode only starts and stops the recording (tracing_on). Switching an event
# on or off patches the kernel's code (static calls, text_poke_bp); under
# TCG a vCPU busy in the patched code can keep the other waiting in its
# IPI for ever (a soft lockup in text_poke_bp_batch, seen in this lab). For
# the same reason no comm recording: it would hook the scheduler's
# tracepoints, patched the same way.
trace_setup() {
	echo 0 >$TR/tracing_on &&
		echo 0 >$TR/options/record-cmd &&
		echo mono >$TR/trace_clock &&
		echo 16384 >$TR/buffer_size_kb &&
		echo 1 >$TR/events/rxecc/rxecc_rate/enable &&
		# the bottleneck's queue of the RoCE priority after every packet
		echo "prio == $PRIO" >$TR/events/sch_pfc/pfc_queue/filter &&
		echo 1 >$TR/events/sch_pfc/pfc_queue/enable
}
trace_setup || exit 1
fabric_init
hosts="1 $SENDER_HOSTS"
[ "$PROBE" = 1 ] && hosts+=" $PROBE_HOST"
for i in $hosts; do fabric_add_host "$i" || exit 1; done
# Every host link at LINK, as a NIC's: a token bucket on each host's egress
# (a burst of a few packets), which the QPs keep out of when it holds 16 KiB
# (tx_qlimit, set per mode) instead of overflowing it.
if [ "$SHAPE_HOSTS" = 1 ]; then
	for i in $hosts; do
		fabric_in "$i" tc qdisc replace dev eth0 root tbf rate "$LINK" burst 8kb limit 64kb || exit 1
	done
fi
# shellcheck disable=SC2153,SC2086 # RATE comes from the scenario; SENDER_HOSTS (seq's lines) split into words on purpose
say "fabric: h1 <- swp1 (${RATE} Mbit/s) <- senders $(echo h$SENDER_HOSTS | sed 's/ / h/g')" \
	"$([ "$PROBE" = 1 ] && echo "and the probe h$PROBE_HOST")"

COUNTERS="np_cnp_sent np_ecn_marked_roce_packets rp_cnp_handled rp_tx_deferred rp_pace_late_us rp_pace_idle_us completer_retry_err
	duplicate_request rx_prio${PRIO}_pause rx_prio${PRIO}_pause_duration tx_pfc_deferred
	rcvd_pkts sent_pkts"
counters() {
	local i c
	for i in $hosts; do
		for c in $COUNTERS; do echo "h$i $c $(port_counter "h$i" "$c")"; done
	done
}

# mode_set MODE: the switch port and every endpoint as the mode says.
# MUTANT (make lab-mutants) breaks a mechanism while the mode still claims
# it: no_pfc (the switch port sends and honours no PFC), no_cut (DCQCN's
# rp_min_rate at the line rate: a CNP cuts nothing), no_watchdog (no switch
# watchdog).
mode_set() {
	local m=$1 pfc=none mask=none wd
	wd=${M_WD[$m]}
	[ "${M_PFC[$m]}" = 1 ] && { pfc=$((1 << PRIO)); mask=$pfc; }
	[ "$MUTANT" = no_pfc ] && pfc=none
	[ "$MUTANT" = no_watchdog ] && wd=0
	fabric_sw tc qdisc del dev swp1 root 2>/dev/null
	fabric_sw "$T" qdisc add dev swp1 rate "$RATE" pfc "$pfc" link_speed "$LINK" \
		limit "$BUFFER" xoff "$XOFF" xon "$XON" headroom "$HEADROOM" \
		kmin "$KMIN" kmax "$KMAX" pmax "$PMAX" \
		wd_detection "$wd" wd_action "${M_WD_ACTION[$m]}" || return 1
	local prof=(profile "${M_PROFILE[$m]}") qlimit=0
	[ "$SCALE" = 1 ] && [ "${M_PROFILE[$m]}" != lab ] && prof+=(scale "$LINK" speedup "$SPEEDUP")
	[ "$SHAPE_HOSTS" = 1 ] && qlimit=16KiB
	fabric_dcqcn_all "${prof[@]}" || return 1
	if [ "${M_DCQCN[$m]}" = 1 ]; then
		fabric_dcqcn_all set rp_enable all np_enable all || return 1
	else
		fabric_dcqcn_all set rp_enable none np_enable none || return 1
	fi
	fabric_dcqcn_all set pfc_enable "$mask" link_speed "$LINK" tx_qlimit "$qlimit" \
		device_stall_critical_watermark "${M_STALL[$m]}" || return 1
	if [ -n "${M_SET[$m]}" ]; then
		# shellcheck disable=SC2086 # the mode's NAME VALUE pairs, split on purpose
		fabric_dcqcn_all set ${M_SET[$m]} || return 1
	fi
	if [ "$MUTANT" = no_cut ] && [ "${M_DCQCN[$m]}" = 1 ]; then
		fabric_dcqcn_all set rp_min_rate_kbps "$LINK_KBPS" || return 1
	fi
}

# uptime: seconds since boot, the base of CLOCK_MONOTONIC (no suspend here),
# which the trace uses too.
uptime() { local up _; read -r up _ </proc/uptime; echo "$up"; }

# probe_start DIR: the probe host pings h1 (rxecc-verbs --test ping,
# PROBE_SIZE bytes, one at a time, on an RC QP of the RoCE priority) until
# probe_stop; every ping's send time and round trip go to DIR/probe.tsv. It
# sleeps on a completion channel rather than spinning, so that it does not
# take one of the guest's two CPUs from the fabric.
probe_start() {
	local dir=$1
	fabric_in 1 timeout $((DURATION + 120)) "$V" server -p 18750 --timeout 60 \
		>"$dir/probe-server.json" 2>"$dir/probe-server.err" &
	PROBE_SERVER=$!
	wait_for 20 grep -q listening "$dir/probe-server.err" || return 1
	fabric_in "$PROBE_HOST" timeout $((DURATION + 120)) "$V" client "$(fabric_ip 1)" -p 18750 \
		--test ping --poll event --size "$PROBE_SIZE" --duration $((DURATION + 60)) --tos $TCLASS \
		--ack-timeout "$QP_TIMEOUT" --timeout 60 --samples "$dir/probe.tsv" \
		>"$dir/probe.json" 2>"$dir/probe.err" &
	PROBE_CLIENT=$!
}

# probe_stop DIR: SIGINT ends the pinging; the client reports and exits.
probe_stop() {
	local dir=$1 rc=0
	pkill -INT -f "^[^ ]*rxecc-verbs client .*--samples $(ere_quote "$dir/probe.tsv")" 2>/dev/null
	wait_exit "$PROBE_CLIENT" 90 "$dir/stuck.txt" || rc=1
	wait_exit "$PROBE_SERVER" 90 "$dir/stuck.txt" || rc=1
	return $rc
}

# wait_exit PID SECONDS FILE: wait for background job PID; one that has not
# ended after SECONDS is killed, and FILE gets where every rxecc-verbs
# process was (state, kernel stack), so that a stuck run says why.
wait_exit() {
	local pid=$1 n=$(($2 * 10)) p
	while kill -0 "$pid" 2>/dev/null && [ $n -gt 0 ]; do
		sleep 0.1
		n=$((n - 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		for p in $(pgrep -f rxecc-verbs); do
			echo "== $p: $(tr '\0' ' ' </proc/"$p"/cmdline)"
			grep -E '^(State|Name)' /proc/"$p"/status
			cat /proc/"$p"/stack 2>/dev/null
		done >>"$3"
		say "a probe process did not end in $2 s: killed (see $3)"
		pkill -KILL -f rxecc-verbs
		wait "$pid"
		return 1
	fi
	wait "$pid"
}

# senders_sent: the packets the senders have sent, all together.
senders_sent() {
	local i n=0
	for i in $SENDER_HOSTS; do n=$((n + $(port_counter "h$i" sent_pkts))); done
	echo $n
}

# load_window DIR: DIR/load-start when the senders have sent 200 packets more
# than now (the probe's do not count); run_mode writes DIR/load-done at the end.
load_window() {
	local base n=0
	base=$(senders_sent)
	while [ "$(senders_sent)" -lt $((base + 200)) ] && [ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	uptime >"$1/load-start"
}

run_mode() {
	local m=$1 dir="$LAB_OUT/$1" i k pids=() rc=0 cap n=0
	mkdir -p "$dir"
	mode_set "$m" || { say "$m: configuration failed"; return 1; }
	fabric_in 2 "$T" -j dcqcn show dev "$(fabric_dev 2)" >"$dir/dcqcn.json" ||
		{ say "$m: reading h2's DCQCN parameters failed: no simulation"; rm -f "$dir/dcqcn.json"; }
	counters >"$dir/before.txt"
	for i in $SENDER_HOSTS; do
		fabric_in 1 timeout $((DURATION + 90)) ib_write_bw -d h1 -x "$(fabric_gid 1)" -F \
			-s "$MESSAGE" -D $((DURATION - 2 * (i - 2) * STAGGER)) -p $((18700 + i)) \
			--tclass=$TCLASS -u "$QP_TIMEOUT" \
			>"$dir/s$i.log" 2>&1 &
		pids+=($!)
		n=$((n + 1))
		wait_for 20 tcp_listening "$(fabric_ns 1)" $n
	done
	fabric_sw timeout $((DURATION + 90)) dumpcap -q -P -i swp1 -s 80 -w "$dir/swp1.pcap" >/dev/null 2>&1 &
	cap=$!
	echo >$TR/trace
	echo 1 >$TR/tracing_on
	if [ "$PROBE" = 1 ]; then
		probe_start "$dir" || { say "$m: the probe did not start (see $m/probe-server.err)"; rc=1; }
	fi
	sleep 1
	say "$m: ${SENDERS} senders for ${DURATION} s$([ "$PROBE" = 1 ] && echo ", probe running")"
	# perftest's clients poll their completions without pause; at the lowest
	# priority they leave the CPUs to the fabric, whose work (softirqs,
	# ksoftirqd) would otherwise wait behind them: at nice 0, the senders
	# reached 43 % of the port and the probe's median was 12 ms with an
	# empty queue, at nice 19 68 % and 0.9 ms.
	# With STAGGER, sender k (h2 is 0) starts k * STAGGER s after the first
	# and sends 2 k * STAGGER s less: they join one at a time and leave in
	# reverse order, STAGGER s apart (perftest's margins are the same for all).
	for i in $SENDER_HOSTS; do
		k=$((i - 2))
		(
			sleep $((k * STAGGER))
			client_run "$dir/c$i.log" ip netns exec "$(fabric_ns "$i")" nice -n 19 ib_write_bw \
				-d "h$i" -x "$(fabric_gid "$i")" -F -s "$MESSAGE" -D $((DURATION - 2 * k * STAGGER)) \
				-p $((18700 + i)) --tclass=$TCLASS -u "$QP_TIMEOUT" "$(fabric_ip 1)" >/dev/null
		) &
		pids+=($!)
	done
	rm -f "$dir/load-done" "$dir/load-start"
	# the capture's clock against the trace's
	python3 -c 'import time; print(time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC))' \
		>"$dir/clock-offset"
	load_window "$dir" &
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	uptime >"$dir/load-done"
	if [ "$PROBE" = 1 ]; then
		probe_stop "$dir" || { say "$m: the probe failed (see $m/probe.err)"; rc=1; }
	fi
	echo 0 >$TR/tracing_on
	cp $TR/trace "$dir/trace.txt"
	grep -q 'entries-in-buffer/entries-written: \([0-9]*\)/\1 ' $TR/trace ||
		say "$m: the trace buffer overflowed: $(grep -m1 entries-in-buffer $TR/trace)"
	sleep 1
	capture_stop "$dir/swp1.pcap"
	wait $cap 2>/dev/null
	counters >"$dir/after.txt"
	fabric_sw "$T" -j qdisc show dev swp1 >"$dir/qdisc.json"
	say "$m: done$([ $rc -ne 0 ] && echo " (a perftest run failed: see $m/c*.log)")"
	return $rc
}

# calibrate: the probe alone for CALIBRATION_S s before the modes, no load,
# the first mode's port (LAB_OUT/_calibration/probe.tsv, a name no mode can
# take): its floor, what a ping costs the emulation with nothing queued
# (calibration() in ci/lab/rxecc_lab/scenarios/incast.py).
CALIBRATION_S=${CALIBRATION_S:-6}
calibrate() {
	local dir=$LAB_OUT/_calibration rc=0
	mkdir -p "$dir"
	mode_set "${MODES[0]}" || return 1
	if ! probe_start "$dir"; then
		# the server that never listened, not only its subshell
		pkill -f "^[^ ]*rxecc-verbs server -p 18750" 2>/dev/null
		wait "$PROBE_SERVER" 2>/dev/null
		return 1
	fi
	say "calibration: the probe alone for ${CALIBRATION_S} s"
	sleep "$CALIBRATION_S"
	probe_stop "$dir" || rc=1
	return $rc
}

fail=0
if [ "$PROBE" = 1 ]; then
	calibrate || { say "calibration: the probe failed (see _calibration/probe.err)"; fail=1; }
fi
for m in "${MODES[@]}"; do run_mode "$m" || fail=1; done
fabric_destroy
modules_unload >/dev/null 2>&1
exit $fail
