#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make demo`, the congestion lab (ci/demo.sh). One guest, the
# namespace fabric (selftests/rxecc/fabric.sh): senders h2..h(N+1) write to
# h1 through the switch port swp1, the bottleneck (qdisc pfc at RATE, RED-style
# ECN marking, PFC per mode); a probe host h(N+2) measures latency to h1
# through the same port. The scenario (SCENARIO.sh, written by ci/lab/lab.py)
# gives the fabric, the workload and the modes; per mode MODE, LAB_OUT/MODE/
# gets:
#   swp1.pcap          the bottleneck's egress (headers), for goodput
#   qdisc.json         `rxecc -j qdisc show dev swp1` after the run
#   before.txt after.txt   counters of every host: "hI NAME VALUE"
#   queue.tsv          the bottleneck's backlog of the RoCE priority over time
#   trace.txt          the rxecc_rate tracepoint: every sender's DCQCN rate
#   probeB.log         ib_write_lat -U -C from the probe host, run B: every
#                      sample in TSC cycles (LAB_OUT/cpu_mhz: the guest's MHz)
#   probeB.end         when run B ended; load-start, load-done: the load's
#                      window (seconds since boot = CLOCK_MONOTONIC)
#   cI.log sI.log      the perftest clients and servers
# Progress lines start with "lab:".
source "$RXECC_TOP/selftests/rxecc/lib.sh"
source "$RXECC_TOP/selftests/rxecc/fabric.sh"
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

# perftest's latencies in cycles (-C): its own clock calibration fails now
# and then under TCG (inf); the report divides by the guest's TSC MHz.
mkdir -p "$LAB_OUT"
awk -F': ' '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo >"$LAB_OUT/cpu_mhz"
modules_unload >/dev/null 2>&1
rxecc_load && pfc_load || exit 1
mountpoint -q $TR || mount -t tracefs none $TR || exit 1
fabric_init
hosts="1 $SENDER_HOSTS"
[ "$PROBE" = 1 ] && hosts+=" $PROBE_HOST"
for i in $hosts; do fabric_add_host "$i" || exit 1; done
say "fabric: h1 <- swp1 (${RATE} Mbit/s) <- senders $(echo h$SENDER_HOSTS | sed 's/ / h/g')" \
	"$([ "$PROBE" = 1 ] && echo "and the probe h$PROBE_HOST")"

COUNTERS="np_cnp_sent np_ecn_marked_roce_packets rp_cnp_handled rp_tx_deferred completer_retry_err
	duplicate_request rx_prio${PRIO}_pause rx_prio${PRIO}_pause_duration tx_pfc_deferred
	rcvd_pkts sent_pkts"
counters() {
	local i c
	for i in $hosts; do
		for c in $COUNTERS; do echo "h$i $c $(port_counter "h$i" "$c")"; done
	done
}

# mode_set MODE: the switch port and every endpoint as the mode says.
mode_set() {
	local m=$1 pfc=none mask=none
	[ "${M_PFC[$m]}" = 1 ] && { pfc=$((1 << PRIO)); mask=$pfc; }
	fabric_sw tc qdisc del dev swp1 root 2>/dev/null
	# shellcheck disable=SC2086
	fabric_sw "$T" qdisc add dev swp1 rate "$RATE" pfc "$pfc" link "$LINK" \
		limit "$BUFFER" xoff "$XOFF" xon "$XON" headroom "$HEADROOM" \
		kmin "$KMIN" kmax "$KMAX" pmax "$PMAX" || return 1
	fabric_dcqcn_all profile "${M_PROFILE[$m]}" || return 1
	if [ "${M_DCQCN[$m]}" = 1 ]; then
		fabric_dcqcn_all set rp_enable all np_enable all || return 1
	else
		fabric_dcqcn_all set rp_enable none np_enable none || return 1
	fi
	fabric_dcqcn_all set pfc_enable "$mask" link_speed "$LINK" || return 1
	if [ -n "${M_SET[$m]}" ]; then
		# shellcheck disable=SC2086
		fabric_dcqcn_all set ${M_SET[$m]} || return 1
	fi
}

# The backlog of the RoCE priority at swp1 every SAMPLE_MS: "seconds bytes"
# (CLOCK_MONOTONIC, the clock the trace uses too).
queue_sampler() {
	fabric_sw python3 - "$T" "$PRIO" "$SAMPLE_MS" "$1" <<'EOF'
import json, subprocess, sys, time
tool, prio, period, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1000, sys.argv[4]
with open(out, "w") as f:
    while True:
        t = time.clock_gettime(time.CLOCK_MONOTONIC)
        r = subprocess.run([tool, "-j", "qdisc", "show", "dev", "swp1"], capture_output=True, text=True)
        if r.returncode != 0:
            break
        p = json.loads(r.stdout)[0]["prio"][prio]
        f.write(f"{t:.6f}\t{p['backlog']}\n")
        f.flush()
        time.sleep(max(0.0, period - (time.clock_gettime(time.CLOCK_MONOTONIC) - t)))
EOF
}

# uptime: seconds since boot, the base of CLOCK_MONOTONIC (no suspend here),
# which the trace and the queue samples use too.
uptime() { local up _; read -r up _ </proc/uptime; echo "$up"; }

# probe_loop DIR: the probe host pings h1 (ib_write_lat, PROBE_SIZE bytes,
# runs of PROBE_BATCH pings, each sample printed in order) until
# DIR/load-done appears; perftest prints its samples only at the end of a
# run, so runs are short. DIR/probeB.end: when run B ended (uptime); the
# report places each ping in time from there (pings are back to back).
probe_loop() {
	local dir=$1 b=0 port srv ok=0
	while [ ! -e "$dir/load-done" ]; do
		b=$((b + 1))
		port=$((18750 + b % 50))
		fabric_in 1 timeout 120 ib_write_lat -d h1 -x "$(fabric_gid 1)" -F -C -s "$PROBE_SIZE" \
			-n "$PROBE_BATCH" -U -p $port --tclass=$TCLASS -u "$QP_TIMEOUT" \
			>"$dir/probe-s$b.log" 2>&1 &
		srv=$!
		wait_for 20 bash -c "ip netns exec $(fabric_ns 1) ss -Hltn | grep -q ':$port '"
		fabric_in "$PROBE_HOST" timeout 120 ib_write_lat -d "h$PROBE_HOST" \
			-x "$(fabric_gid "$PROBE_HOST")" -F -C -s "$PROBE_SIZE" -n "$PROBE_BATCH" -U \
			-p $port --tclass=$TCLASS -u "$QP_TIMEOUT" "$(fabric_ip 1)" >"$dir/probe$b.log" 2>&1 &&
			ok=$((ok + 1))
		uptime >"$dir/probe$b.end"
		wait "$srv"
	done
	echo "$ok of $b probe runs completed" >"$dir/probe.txt"
	[ "$ok" -gt 0 ]
}

# load_window DIR: DIR/load-start when h1 has received 200 packets more
# than now (the senders are on); run_mode writes DIR/load-done at the end.
load_window() {
	local base
	base=$(port_counter h1 rcvd_pkts)
	wait_for 60 bash -c "[ \$(cat /sys/class/infiniband/h1/ports/1/hw_counters/rcvd_pkts) -ge $((base + 200)) ]"
	uptime >"$1/load-start"
}

run_mode() {
	local m=$1 dir="$LAB_OUT/$1" i pids=() rc=0 cap qs n=0 probe=
	mkdir -p "$dir"
	mode_set "$m" || { say "$m: configuration failed"; return 1; }
	counters >"$dir/before.txt"
	for i in $SENDER_HOSTS; do
		fabric_in 1 timeout $((DURATION + 90)) ib_write_bw -d h1 -x "$(fabric_gid 1)" -F \
			-s "$MESSAGE" -D "$DURATION" -p $((18700 + i)) --tclass=$TCLASS -u "$QP_TIMEOUT" \
			>"$dir/s$i.log" 2>&1 &
		pids+=($!)
		n=$((n + 1))
		wait_for 20 bash -c "[ \$(ip netns exec $(fabric_ns 1) ss -Hltn | wc -l) -ge $n ]"
	done
	fabric_sw timeout $((DURATION + 90)) dumpcap -q -P -i swp1 -s 80 -w "$dir/swp1.pcap" >/dev/null 2>&1 &
	cap=$!
	echo 0 >$TR/tracing_on
	echo mono >$TR/trace_clock
	echo 8192 >$TR/buffer_size_kb
	echo >$TR/trace
	echo 1 >$TR/events/rxecc/rxecc_rate/enable
	echo 1 >$TR/tracing_on
	queue_sampler "$dir/queue.tsv" &
	qs=$!
	sleep 1
	say "$m: ${SENDERS} senders for ${DURATION} s$([ "$PROBE" = 1 ] && echo ", probe running")"
	for i in $SENDER_HOSTS; do
		client_run "$dir/c$i.log" ip netns exec "$(fabric_ns "$i")" ib_write_bw -d "h$i" \
			-x "$(fabric_gid "$i")" -F -s "$MESSAGE" -D "$DURATION" -p $((18700 + i)) \
			--tclass=$TCLASS -u "$QP_TIMEOUT" "$(fabric_ip 1)" >/dev/null &
		pids+=($!)
	done
	rm -f "$dir/load-done" "$dir/load-start"
	load_window "$dir" &
	if [ "$PROBE" = 1 ]; then
		probe_loop "$dir" &
		probe=$!
	fi
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	uptime >"$dir/load-done"
	[ -z "$probe" ] || wait "$probe" || rc=1
	echo 0 >$TR/events/rxecc/rxecc_rate/enable
	cp $TR/trace "$dir/trace.txt"
	kill "$qs" 2>/dev/null
	sleep 1
	capture_stop "$dir/swp1.pcap"
	wait $cap 2>/dev/null
	counters >"$dir/after.txt"
	fabric_sw "$T" -j qdisc show dev swp1 >"$dir/qdisc.json"
	say "$m: done$([ $rc -ne 0 ] && echo " (a perftest run failed: see $m/c*.log)")"
	return $rc
}

fail=0
for m in "${MODES[@]}"; do run_mode "$m" || fail=1; done
fabric_destroy
modules_unload >/dev/null 2>&1
exit $fail
