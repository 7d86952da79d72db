#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# When PFC goes wrong: the PFC watchdog of the switch-port qdisc pfc
# (sch_pfc.ko). A switch namespace and a host namespace joined by a veth
# pair; the switch's port towards the host has the pfc qdisc with PFC on
# priority 3, and the host storms it with XOFF frames (pfc_inject.py, one
# every 50 ms, each 65535 quanta: 3.4 s at the port's 10 Mbit/s link speed)
# while the switch pings the host with DSCP 24 (priority 3):
#   - watchdog off: the queue holds the pings for the whole storm, no storm
#     is counted (what the other tests would see without the watchdog);
#   - action drop: the storm is detected, the queue's pings are dropped and
#     so are new ones, received pauses are ignored and counted; the storm
#     ends by itself once no XOFF has come for the restoration time, after
#     which a pause holds the queue again; `rxecc monitor` reports both;
#   - action forward: the pings get through the storm, nothing is dropped;
#   - action alert: the storm is counted and logged, the pings stay queued;
#   - a partner that sends an XON for an instant before each XOFF (every
#     40 ms) keeps the queue paused 99 % of the time: a storm all the same;
#     one that lets it run a third of the time is not;
#   - `rxecc metrics` (Prometheus text format and OpenMetrics, parsed by the
#     Prometheus client library) exports the watchdog's and the endpoint's
#     storm counters with the values the tool shows.
# And the endpoint's pause-storm prevention (mlx5's stall prevention), on the
# one-guest fabric (fabric.sh): h2 and h3 write to h1 through a switch port
# that does not honour PFC, and for 3 s of it h1's receive path all but
# stops (rx_stall.py: one RoCEv2 packet through every 2 ms, the others held
# with their receive timestamps); h1 (pfc_rx_xoff 20 ms: ten releases) pauses
# the port without end:
#   - device_stall_critical_watermark 0: h1 holds XOFF for most of the run,
#     no storm event;
#   - 100 ms: each XOFF held 100 ms is a storm (a warning and an error
#     event, a log line) and ends with its XON at 100-200 ms; h1 pauses
#     again only after its backlog was short (no packet for pfc_rx_xoff):
#     under half the time in XOFF, and of the frames;
#   - link_speed 1 Tbit/s (a pause of 33.5 us): the XOFF refreshed at most
#     every 100 us.
# Then Debian's node_exporter (make deps unpacks it under build/peers, never
# installed on the host) serves h1's `rxecc metrics` through its textfile
# collector, as an operator's cron job would feed it: it parses the file and
# scrapes h1's counters with their hw_counters values. Its infiniband
# collector runs beside it; what it makes of rxecc's device is shown
# (docs/counters.md: Debian's 1.5.0 reads nothing from rxe or rxecc).
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
need_root
HERE=$(cd "$(dirname "$0")" && pwd)
T=$RXECC_TOOL
SW=wdsw
HOST=wdh
HOST_IP=10.9.0.2
TOS=0x60		# DSCP 24: priority 3 through the default DSCP map
GO=$LOGDIR/wd-go

ktap_header
ktap_plan 9

modules_unload >/dev/null 2>&1
# (rdma_rxecc for `rxecc monitor`, which joins its netlink family)
# shellcheck disable=SC2015 # fail when either module does not load
rxecc_load && pfc_load || { ktap_fail "load rdma_rxecc and sch_pfc"; ktap_finished; }
command -v python3 >/dev/null || { ktap_fail "python3 is installed"; ktap_finished; }

# bg_stop: the storm and the monitor of a mode that ended early.
bg_stop() {
	local p
	for p in ${STORM:-} ${MON:-}; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	STORM='' MON=''
}
wd_cleanup() {
	bg_stop
	ip netns del "$SW" 2>/dev/null
	ip netns del "$HOST" 2>/dev/null
}
wd_cleanup
trap wd_cleanup EXIT	# (until fabric_init sets its own)
setup() {
	ip netns add "$SW" && ip netns add "$HOST" &&
		ip -n "$SW" link add sw0 type veth peer name h0 netns "$HOST" &&
		ip -n "$SW" addr add 10.9.0.1/24 dev sw0 && ip -n "$SW" link set sw0 up &&
		ip -n "$HOST" addr add $HOST_IP/24 dev h0 && ip -n "$HOST" link set h0 up &&
		ip -n "$HOST" link set lo up &&
		"$T" -n "$SW" qdisc add dev sw0 pfc 0x08 link_speed 10mbit
}
setup || { ktap_fail "switch and host namespaces with a pfc port"; ktap_finished; }

# wd KEY...: the values of KEY (of priority 3 if it is a per-priority key)
# of the switch port, one per line; a JSON boolean reads 1 or 0.
wd() {
	"$T" -n "$SW" -j qdisc show dev sw0 | python3 "$HERE/pfc_wd_check.py" read "$@"
}
# wd_read KEY...: the values of the keys, read at once, into WD[KEY]; prints
# them.
declare -A WD
wd_read() {
	local out vals k i=0
	out=$(wd "$@") || return 1
	mapfile -t vals <<<"$out"
	[ ${#vals[@]} -eq $# ] || { echo "wd_read: no values for $*"; return 1; }
	WD=()
	for k in "$@"; do
		WD[$k]=${vals[i]}
		i=$((i + 1))
		printf '%s %s ' "$k" "${WD[$k]}"
	done
	echo
}
# metrics NS FORMAT ARGS...: `rxecc metrics` in NS, parsed by the Prometheus
# client library (prometheus or openmetrics), one "NAME{labels} VALUE" line
# per sample, into $LOGDIR/metrics.txt.
metrics() {
	local ns=$1 fmt=$2
	shift 2
	# shellcheck disable=SC2046 # no word, or the one word openmetrics
	ns_run "$ns" "$T" metrics "$@" $([ "$fmt" = openmetrics ] && echo openmetrics) \
		>"$LOGDIR/metrics.raw" || return 1
	python3 "$RXECC_TOP/userspace/tests/metrics_parse_test.py" check "$fmt" \
		<"$LOGDIR/metrics.raw" >"$LOGDIR/metrics.txt"
}
# metric_is NAME{LABELS} VALUE: a sample of the last metrics() has the value.
metric_is() {
	grep -qxF "$1 $2" "$LOGDIR/metrics.txt" ||
		{ echo "metrics: no '$1 $2' in:"; grep -F "${1%%\{*}" "$LOGDIR/metrics.txt"; return 1; }
}

# wd_is KEY OP VALUE: the value compares so (OP of test: -eq, -gt, ...).
wd_is() { test "$(wd "$1")" "$2" "$3"; }

# storm_start ARGS: XOFFs for priority 3 out of the host's port, one every
# 50 ms, for pfc_inject.py's ARGS (--duration S or --count N; then one XON
# unless --no-xon); returns once the switch port has received the first
# frame. STORM: the injector's pid.
storm_start() {
	local before
	before=$(wd pause_rx)
	rm -f "$GO"
	ip netns exec "$HOST" python3 "$HERE/pfc_inject.py" h0 --prio 3 --period 0.05 \
		--go "$GO" "$@" >>"$LOGDIR/wd-inject.json" &
	STORM=$!
	touch "$GO"
	wait_for "$(scaled_time 30)" wd_is pause_rx -gt "$before"
}
storm_wait() {
	local rc=0
	wait "$STORM" || rc=$?
	STORM=''
	return "$rc"
}

# pings N: send N echo requests of priority 3 to the host, 0.1 s apart;
# prints how many replies came within 1 s of the last.
pings() {
	ip netns exec "$SW" ping -n -Q "$TOS" -c "$1" -i 0.1 -W 1 "$HOST_IP" 2>/dev/null |
		sed -n 's/.* \([0-9]*\) received.*/\1/p'
}

# wd_set OPTIONS...: the watchdog's options; the counters start from zero
# with a fresh qdisc.
wd_set() {
	bg_stop
	"$T" -n "$SW" qdisc del dev sw0 &&
		"$T" -n "$SW" qdisc add dev sw0 pfc 0x08 link_speed 10mbit "$@"
}

# storm_pings PINGS INJECT_ARGS...: the host's address known before the
# pause (ARP is priority 0), a storm started (storm_start's ARGS), then PINGS
# pings into it; GOT: how many were answered.
storm_pings() {
	local n=$1
	shift
	[ "$(pings 1)" = 1 ] || { echo "no reply before the storm"; return 1; }
	storm_start "$@" || { echo "the port was never paused"; return 1; }
	GOT=$(pings "$n")
	echo "replies during the storm: $GOT"
}

# Each mode: a storm of 4 to 6 s; its pings go into the storm once the port
# is paused.
wd_off() {
	wd_set wd_detection 0 && storm_pings 5 --duration 4 || return 1
	wd_read qlen wd_storms wd_drops || return 1
	[ "$GOT" = 0 ] && [ "${WD[qlen]}" -ge 5 ] && [ "${WD[wd_storms]}" -eq 0 ] &&
		[ "${WD[wd_drops]}" -eq 0 ] || return 1
	storm_wait
	# the XON at its end releases the queue
	wait_for "$(scaled_time 10)" wd_is qlen -eq 0
}
ktap_result "watchdog off: a PFC storm holds priority 3's queue for its whole length, nothing is detected" wd_off

wd_drop() {
	local log
	wd_set wd_detection 100 wd_restoration 300 wd_action drop || return 1
	log=$(dmesg | wc -l)
	# (count: it ends by itself within a minute whatever happens here)
	"$T" -n "$SW" -j monitor interval 0.2 count 300 >"$LOGDIR/wd-monitor.json" &
	MON=$!
	wait_for "$(scaled_time 10)" grep -q subscribed "$LOGDIR/wd-monitor.json" || return 1
	# (ping sends a request again, later, when the qdisc drops it: the
	# storm lasts long enough for three)
	storm_pings 3 --duration 6 --no-xon || return 1
	wd_read wd_storm wd_storms wd_drops wd_pause_ignored qlen || return 1
	[ "${WD[wd_storms]}" -eq 1 ] && [ "${WD[wd_storm]}" -eq 1 ] && [ "${WD[qlen]}" -eq 0 ] &&
		[ "${WD[wd_drops]}" -ge 3 ] && [ "${WD[wd_pause_ignored]}" -gt 0 ] && [ "$GOT" = 0 ] ||
		return 1
	dmesg | tail -n +$((log + 1)) | grep "sw0: sch_pfc: PFC storm on priority 3 .*action drop" ||
		{ echo "no storm in the kernel log"; return 1; }
	storm_wait
	# no XON: the storm ends 300 ms after the last XOFF, by the watchdog
	wait_for "$(scaled_time 10)" wd_is wd_restorations -eq 1 ||
		{ echo "no restoration"; return 1; }
	wd_read wd_storm wd_storms wd_storm_duration_us wd_drops || return 1
	[ "${WD[wd_storm]}" -eq 0 ] && [ "${WD[wd_storms]}" -eq 1 ] &&
		[ "${WD[wd_storm_duration_us]}" -ge 300000 ] || return 1
	# the monitor saw the storm start and end, once each
	sleep 0.5
	bg_stop
	cat "$LOGDIR/wd-monitor.json"
	python3 "$HERE/pfc_wd_check.py" monitor "$LOGDIR/wd-monitor.json" sw0 3 drop || return 1
	# and `rxecc metrics` has the watchdog's counters
	metrics "$SW" openmetrics || return 1
	metric_is "rxecc_qdisc_prio_wd_storms_total{netdev=sw0,prio=3}" 1.0 &&
		metric_is "rxecc_qdisc_prio_wd_restorations_total{netdev=sw0,prio=3}" 1.0 &&
		metric_is "rxecc_qdisc_prio_wd_drops_total{netdev=sw0,prio=3}" "${WD[wd_drops]}.0" &&
		metric_is "rxecc_qdisc_prio_wd_storm{netdev=sw0,prio=3}" 0.0 || return 1
	# pauses are honoured again: an XOFF (of 51 ms, shorter than the
	# detection) pauses the queue instead of being ignored
	wd_read pause_rx_transition wd_pause_ignored || return 1
	set -- "${WD[pause_rx_transition]}" "${WD[wd_pause_ignored]}"
	storm_start --count 1 --quanta 1000 --no-xon || return 1
	storm_wait
	wd_read pause_rx_transition wd_pause_ignored || return 1
	[ "${WD[pause_rx_transition]}" -eq $(($1 + 1)) ] && [ "${WD[wd_pause_ignored]}" -eq "$2" ]
}
ktap_result "watchdog drop: a storm detected, the queue's packets and new ones dropped, pauses ignored; restored after the restoration time, then pauses honoured; rxecc monitor reports both, rxecc metrics counts them" wd_drop

wd_forward() {
	wd_set wd_detection 100 wd_action forward && storm_pings 5 --duration 4 || return 1
	wd_read wd_storm wd_storms wd_drops wd_pause_ignored drops || return 1
	# the first pings wait for the detection, none is lost
	[ "$GOT" = 5 ] && [ "${WD[wd_storms]}" -eq 1 ] && [ "${WD[wd_storm]}" -eq 1 ] &&
		[ "${WD[wd_drops]}" -eq 0 ] && [ "${WD[wd_pause_ignored]}" -gt 0 ] &&
		[ "${WD[drops]}" -eq 0 ] || return 1
	storm_wait
	wait_for "$(scaled_time 10)" wd_is wd_restorations -eq 1
}
ktap_result "watchdog forward: a storm detected, pauses ignored, every packet delivered during it" wd_forward

wd_alert() {
	local log
	wd_set wd_detection 100 wd_action alert || return 1
	log=$(dmesg | wc -l)
	storm_pings 5 --duration 4 || return 1
	wd_read wd_storm wd_storms wd_drops wd_pause_ignored qlen || return 1
	[ "$GOT" = 0 ] && [ "${WD[wd_storms]}" -eq 1 ] && [ "${WD[wd_storm]}" -eq 1 ] &&
		[ "${WD[qlen]}" -ge 5 ] && [ "${WD[wd_drops]}" -eq 0 ] &&
		[ "${WD[wd_pause_ignored]}" -eq 0 ] || return 1
	dmesg | tail -n +$((log + 1)) | grep -q "sw0: sch_pfc: PFC storm on priority 3 .*action alert" ||
		{ echo "no storm in the kernel log"; return 1; }
	storm_wait
	wait_for "$(scaled_time 10)" wd_is qlen -eq 0 &&
		wait_for "$(scaled_time 10)" wd_is wd_restorations -eq 1
}
ktap_result "watchdog alert: a storm detected and logged, the queue still paused" wd_alert

# blink_run GAP: priority 3's queue kept full (pings of 59000 bytes every
# 50 ms, through a port of 1 Mbit/s: two leave a second, and the host drops
# them as they come in) and paused for 5 s by a partner that sends an XON GAP
# seconds before each XOFF, every 40 ms (the watchdog polls every 100 ms:
# each poll interval holds a transition, which once restarted detection);
# sets SHARE (percent of the run paused) and STORMS. What makes "an instant"
# one: each XON lets out what the port's rate allows, and the receiver takes
# the XOFF behind it only once those packets are handed on (under an
# emulated CPU, a millisecond each for pings of 1000 bytes answered, four an
# XON: the queue ran 12 % of the time; tens of milliseconds for 59000 bytes
# answered; little for one dropped at the host's ingress).
blink_run() {
	local j0 t0 j1 t1 ping
	wd_set rate 1 wd_detection 200 wd_action alert || return 1
	ip -n "$SW" link set sw0 mtu 60000 && ip -n "$HOST" link set h0 mtu 60000 || return 1
	[ "$(pings 1)" = 1 ] || { echo "no reply before the storm"; return 1; }
	tc -n "$HOST" qdisc add dev h0 clsact &&
		tc -n "$HOST" filter add dev h0 ingress protocol ip matchall action drop || return 1
	ip netns exec "$SW" ping -n -q -Q "$TOS" -s 59000 -i 0.05 -w "$(scaled_time 120)" "$HOST_IP" >/dev/null 2>&1 &
	ping=$!
	storm_start --duration 5 --period 0.04 --blink "$1" || { kill "$ping"; return 1; }
	# 2 s inside the storm, in hundredths of a percent (the clock read right
	# after the counter, the parsing after both); the storm lasts 5 s, so
	# that a slow start of the tool does not take the window past its end
	j0=$("$T" -n "$SW" -j qdisc show dev sw0) t0=$(date +%s%N)
	sleep 2
	j1=$("$T" -n "$SW" -j qdisc show dev sw0) t1=$(date +%s%N)
	storm_wait
	SHARE=$(python3 "$HERE/pfc_wd_check.py" share "$j0" "$j1" "$t0" "$t1") || { kill "$ping"; return 1; }
	wd_read wd_storms qlen || { kill "$ping"; return 1; }
	STORMS=${WD[wd_storms]}
	kill "$ping" 2>/dev/null
	wait "$ping" 2>/dev/null
	tc -n "$HOST" qdisc del dev h0 clsact
	echo "blink $1 s: paused ${SHARE%??}.${SHARE: -2} % of the run, $STORMS storm(s)"
}
wd_blink() {
	# XON for an instant: paused 99 % of the time or more, a storm
	blink_run 0 || return 1
	if [ "$STORMS" -lt 1 ]; then
		# the watchdog's fault only if the partner did hold the queue
		[ "$SHARE" -ge 9900 ] || echo "the partner held the queue paused only ${SHARE%??}.${SHARE: -2} % of the run: the stimulus failed"
		echo "a partner pausing ${SHARE%??}.${SHARE: -2} % of the time was not flagged"
		return 1
	fi
	# XON for 20 ms before each XOFF (every 60 ms): paused two thirds of
	# the time, congestion, no storm
	blink_run 0.02 || return 1
	[ "$STORMS" -eq 0 ] || { echo "${SHARE%??}.${SHARE: -2} % of the time paused was taken for a storm"; return 1; }
}
ktap_result "watchdog: a partner that lets the queue run only an instant before each XOFF is a storm; one that lets it run a third of the time is not" wd_blink

wd_cleanup

# ---- the endpoint's pause-storm prevention ---------------------------------
fabric_init
for i in 1 2 3; do
	fabric_add_host $i || { ktap_fail "fabric host $i"; ktap_finished; }
done
fabric_dcqcn_all set rp_enable none np_enable none pfc_enable 0x08 link_speed 1gbit ||
	{ ktap_fail "fabric hosts' PFC"; ktap_finished; }

# incast SECONDS: h2 and h3 write 64 KiB messages to h1 (DSCP 26: priority 3).
incast() {
	local pids=() i rc=0
	for i in 2 3; do
		fabric_in 1 timeout 60 ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -s 65536 -D "$1" \
			-p $((18730 + i)) --tclass=104 -u 18 >"$LOGDIR/st.s$i.log" 2>&1 &
		pids+=($!)
	done
	wait_for 15 tcp_listening "$(fabric_ns 1)" 2
	for i in 2 3; do
		client_run "$LOGDIR/st.c$i.log" ip netns exec "$(fabric_ns "$i")" ib_write_bw \
			-d "h$i" -x "$(fabric_gid "$i")" -F -s 65536 -D "$1" -p $((18730 + i)) \
			--tclass=104 -u 18 "$(fabric_ip 1)" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return "$rc"
}

# stall_start / stall_stop: h1's receive path all but stops (its RoCEv2
# packets go through rx_stall.py's netfilter queue, one let through every
# 2 ms; room for all the senders can have outstanding, so none is dropped)
# and runs again (fabric_destroy, the exit trap, stops a stall left running).
stall_start() {
	fabric_stall_prepare 1 "$LOGDIR/stall" --release 2 --maxlen 32768 && fabric_stall_start
}
stall_stop() {
	local rc=0
	fabric_stall_stop || rc=1
	echo "rx_stall: $(tail -n 1 "$LOGDIR/stall.json")"
	return "$rc"
}

# storm_run CRITICAL: an incast of 4 s with h1's critical watermark, h1's
# receive path stalled for its first 3 s of traffic; sets FRAMES, XOFF_MS,
# WARN and ERR (what h1 sent and counted during it).
storm_run() {
	local load rc=0 sent
	fabric_dcqcn 1 set pfc_rx_xoff 20ms pfc_rx_xon 0 device_stall_critical_watermark "$1" ||
		return 1
	snap 1:tx_prio3_pause 1:tx_prio3_pause_duration 1:tx_pause_storm_warning_events \
		1:tx_pause_storm_error_events
	stall_start || { stall_stop; return 1; }
	sent=$(port_counter h2 sent_pkts)
	incast 4 &
	load=$!
	if wait_for "$(scaled_time 30)" above 2:sent_pkts $((sent + 100)); then
		sleep 3
	else
		echo "h2 sent nothing"
		rc=1
	fi
	stall_stop || rc=1
	wait "$load" || rc=1
	# the XON once the backlog is empty
	fabric_dcqcn 1 set pfc_rx_xoff 0 || return 1
	FRAMES=$(delta 1:tx_prio3_pause) XOFF_MS=$(($(delta 1:tx_prio3_pause_duration) / 1000))
	WARN=$(delta 1:tx_pause_storm_warning_events) ERR=$(delta 1:tx_pause_storm_error_events)
	echo "critical $1 ms: h1 sent $FRAMES PFC frames, in XOFF $XOFF_MS ms; storm warnings $WARN, errors $ERR"
	return "$rc"
}

stall_off() {
	storm_run 0 || return 1
	OFF_MS=$XOFF_MS OFF_FRAMES=$FRAMES
	[ "$WARN" -eq 0 ] && [ "$ERR" -eq 0 ] && [ "$XOFF_MS" -ge 2000 ]
}
ktap_result "endpoint without pause-storm prevention: a receiver that cannot drain holds its partner in XOFF for most of an incast" stall_off

stall_on() {
	local log held t
	log=$(dmesg | wc -l)
	storm_run 100 || return 1
	# every storm ended by its XON at the watermark (the timer's lateness
	# under TCG apart), logged; no XOFF after it until the backlog was short
	held=$(dmesg | tail -n +$((log + 1)) |
		sed -n 's/.*rxecc h1: PFC pause storm: priority 3 held in XOFF for \([0-9]*\) ms.*/\1/p')
	echo "storms logged, ms in XOFF each: ${held//$'\n'/ }"
	[ -n "$held" ] || { echo "no storm in the kernel log"; return 1; }
	for t in $held; do
		[ "$t" -ge 100 ] && [ "$t" -le $((100 + 100 * ${RXECC_TIMEOUT_SCALE:-1})) ] || return 1
	done
	[ "$ERR" -ge 1 ] && [ "$WARN" -ge "$ERR" ] && [ "$XOFF_MS" -le $((OFF_MS / 2)) ] &&
		[ "$FRAMES" -le $((OFF_FRAMES / 2)) ] || return 1
	# `rxecc metrics` (format 0.0.4) has h1's storm counters: the values of
	# hw_counters/, which do not change while it reads them
	local l="device=h1,netdev=eth0,port=1" before after vals
	sleep 0.5
	before="$(port_counter h1 tx_pause_storm_error_events) $(port_counter h1 tx_pause_storm_warning_events) $(port_counter h1 tx_prio3_pause)"
	metrics "$(fabric_ns 1)" prometheus dev h1 || return 1
	after="$(port_counter h1 tx_pause_storm_error_events) $(port_counter h1 tx_pause_storm_warning_events) $(port_counter h1 tx_prio3_pause)"
	[ "$before" = "$after" ] || { echo "counters moved: $before / $after"; return 1; }
	read -r -a vals <<<"$after"
	set -- "${vals[@]}"
	metric_is "rxecc_port_tx_pause_storm_error_events_total{$l}" "$1.0" &&
		metric_is "rxecc_port_tx_pause_storm_warning_events_total{$l}" "$2.0" &&
		metric_is "rxecc_port_tx_prio_pause_total{$l,prio=3}" "$3.0"
}
ktap_result "endpoint pause-storm prevention: XOFF held 100 ms is a storm (warning and error events, a log line) ended by its XON at 100-200 ms; under half the time in XOFF; rxecc metrics exports the counters" stall_on

# At link_speed 1 Tbit/s the largest pause lasts 33.5 us: h1's refresh of
# its XOFF once came every 16.8 us for as long as it held it. It comes
# every 100 us at most (pfc_refresh_test.cpp checks the arithmetic).
stall_fast_link() {
	local rc=0
	fabric_dcqcn 1 set link_speed 1000000 || return 1
	storm_run 0 || rc=1
	fabric_dcqcn 1 set link_speed 1gbit || rc=1
	[ "$rc" -eq 0 ] || return 1
	echo "h1 in XOFF $XOFF_MS ms at 1 Tbit/s: $FRAMES PFC frames (at most one per 100 us)"
	[ "$XOFF_MS" -ge 1000 ] && [ "$FRAMES" -le $((XOFF_MS * 10 * 5 / 4 + 10)) ]
}
ktap_result "endpoint at link_speed 1 Tbit/s: its XOFF refreshed at most every 100 us while it holds it" stall_fast_link

NODE_EXPORTER=$RXECC_TOP/build/peers/prometheus-node-exporter/root/usr/bin/prometheus-node-exporter
# scrape: node_exporter's page, into $LOGDIR/node_exporter.txt.
scrape() {
	ns_run "$(fabric_ns 1)" python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:19100/metrics", timeout=5).read().decode())' \
		>"$LOGDIR/node_exporter.txt"
}
node_exporter() {
	local dir=$LOGDIR/textfile pid rc=0 c v got l='device="h1",netdev="eth0",port="1"'
	[ -x "$NODE_EXPORTER" ] || { echo "no $NODE_EXPORTER (make deps fetches it)"; return 1; }
	"$NODE_EXPORTER" --version 2>&1 | head -n 1
	mkdir -p "$dir"
	ns_run "$(fabric_ns 1)" "$T" metrics dev h1 >"$dir/rxecc.prom.tmp" || return 1
	mv "$dir/rxecc.prom.tmp" "$dir/rxecc.prom"
	# ip execs node_exporter: $! is node_exporter itself
	ip netns exec "$(fabric_ns 1)" timeout 120 "$NODE_EXPORTER" --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$dir" --collector.infiniband --log.level=debug \
		--web.listen-address=127.0.0.1:19100 >"$LOGDIR/node_exporter.log" 2>&1 &
	pid=$!
	wait_for "$(scaled_time 20)" scrape || rc=1
	kill "$pid"
	wait "$pid" 2>/dev/null
	[ "$rc" -eq 0 ] || { tail -n 5 "$LOGDIR/node_exporter.log"; return 1; }
	echo "infiniband collector: $(grep -c '^node_infiniband' "$LOGDIR/node_exporter.txt") samples," \
		"$(grep '^node_scrape_collector_success{collector="infiniband"}' "$LOGDIR/node_exporter.txt")," \
		"$(grep -o 'msg="infiniband[^"]*"' "$LOGDIR/node_exporter.log" | head -n 1)"
	grep -qx 'node_textfile_scrape_error 0' "$LOGDIR/node_exporter.txt" ||
		{ echo "textfile collector: $(grep textfile "$LOGDIR/node_exporter.txt")"; return 1; }
	# h1 is idle: its counters are those of the file. node_exporter writes
	# values of a million and more as 1.234567e+06 (mawk's %d stops at 2^31).
	for c in tx_pause_storm_error_events rcvd_pkts out_of_sequence local_ack_timeout_err; do
		v=$(port_counter h1 "$c") || return 1
		got=$(awk -v k="rxecc_port_${c}_total{$l}" '$1 == k {printf "%.0f\n", $2}' "$LOGDIR/node_exporter.txt")
		echo "rxecc_port_${c}_total{$l}: node_exporter ${got:-none}, hw_counters $v"
		[ "$got" = "$v" ] || rc=1
	done
	return "$rc"
}
ktap_result "Debian's node_exporter reads rxecc metrics through its textfile collector: h1's counters scraped with their values" node_exporter

ktap_finished
