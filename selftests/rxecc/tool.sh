#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The rxecc tool and the module's generic netlink family, on a one-guest
# fabric (h1, h2 in their own namespaces; an rdma_rxe device y0 in the
# initial one):
#   - every command in text and JSON against the live module;
#   - module parameters are the load-time defaults;
#   - a set is atomic (all or nothing), announced on the "config" group;
#   - bad input of every kind: one line on stderr, its own exit code,
#     nothing changed (module not loaded, unknown device, not an rxecc
#     device, unknown parameter, wrong type, out of range, no CAP_NET_ADMIN,
#     another namespace's device; another driver's device hidden from the
#     namespace by the RDMA core's exclusive netns mode reads as no device);
#   - a change through the tool changes the packets on the wire (tshark);
#   - counters and QPs as the tool shows them while perftest runs;
#   - a fixed-seed fuzz loop of malformed netlink requests.
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
need_root
T=$RXECC_TOOL
HERE=$(cd "$(dirname "$0")" && pwd)
ERR=$LOGDIR/tool.stderr
NOCAP=(setpriv --bounding-set -net_admin --inh-caps -net_admin)

ktap_header
ktap_plan 17

[ -x "$T" ] || { ktap_fail "the tool is built ($T)"; ktap_finished; }
modules_unload >/dev/null 2>&1

# expect_fail CODE WORDS CMD...: CMD exits CODE with exactly one line on
# stderr that contains WORDS (a grep -E pattern).
expect_fail() {
	local code=$1 words=$2 rc
	shift 2
	"$@" >/dev/null 2>"$ERR"
	rc=$?
	echo "$* -> exit $rc: $(cat "$ERR")"
	[ "$rc" -eq "$code" ] && [ "$(wc -l <"$ERR")" -eq 1 ] && grep -qE "$words" "$ERR"
}
in1() { fabric_in 1 "$@"; }
# json EXPR: EXPR's values, of the JSON d on stdin, printed (a read: the
# checks are tool_check.py's).
json() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

not_loaded() {
	expect_fail 2 "rdma_rxecc module is not loaded" "$T" dcqcn show
}
ktap_result "module not loaded: exit 2, one line" not_loaded

# Module parameters set the initial defaults at load time; afterwards they
# are read only and show the current defaults.
load_defaults() {
	load_rdma_core || return 1
	if insmod "$RXECC_MODULE" rp_gd=16 2>/dev/null; then echo "rp_gd=16 accepted"; return 1; fi
	dmesg | grep -q "rp_gd: 16 is outside 0..15" || { echo "no range message"; return 1; }
	# a switch out of its range, and switches each in range that break a
	# rule across them (netlink's rule and message: xon below xoff)
	if insmod "$RXECC_MODULE" udp_sport=2 2>/dev/null; then echo "udp_sport=2 accepted"; return 1; fi
	dmesg | grep -q "udp_sport: 2 is outside 0..1" || { echo "no switch range message"; return 1; }
	if insmod "$RXECC_MODULE" pfc_rx_xon=100 pfc_rx_xoff=100 2>/dev/null; then
		echo "pfc_rx_xon 100 with pfc_rx_xoff 100 accepted"; return 1
	fi
	dmesg | grep -q "pfc_rx_xoff=100: pfc_rx_xon: not below pfc_rx_xoff" || { echo "no rule message"; return 1; }
	insmod "$RXECC_MODULE" profile=paper rp_threshold=7 pfc_enable=0x08 roce_prio=3 \
		pfc_rx_xoff=200 pfc_rx_xon=100 || return 1
	local d want="50 7 custom 8 3 200 100"
	d=$("$T" -j dcqcn show defaults) || return 1
	echo "$d"
	[ "$(echo "$d" | json 'd[0]["dcqcn"]["np_min_time_between_cnps"], d[0]["dcqcn"]["rp_threshold"], d[0]["profile"], d[0]["pfc_enable"], d[0]["roce_prio"], d[0]["pfc_rx_xoff"], d[0]["pfc_rx_xon"]')" = "$want" ] || return 1
	# a device made now starts from them
	veth_up y9v 10.9.19.1/24 >/dev/null && rdma link add y9 type rxecc netdev y9v || return 1
	d=$("$T" -j dcqcn show dev y9) || return 1
	rdma link delete y9
	ip link del y9v
	[ "$(echo "$d" | json 'd[0]["dcqcn"]["np_min_time_between_cnps"], d[0]["dcqcn"]["rp_threshold"], d[0]["profile"], d[0]["pfc_enable"], d[0]["roce_prio"], d[0]["pfc_rx_xoff"], d[0]["pfc_rx_xon"]')" = "$want" ] ||
		{ echo "a new device: $d"; return 1; }
	[ "$(cat /sys/module/rdma_rxecc/parameters/rp_threshold)" = 7 ] || return 1
	if echo 3 > /sys/module/rdma_rxecc/parameters/rp_threshold 2>/dev/null; then
		echo "module parameter writable"; return 1
	fi
	rmmod rdma_rxecc && rxecc_load && [ "$(cat /sys/module/rdma_rxecc/parameters/profile)" = mlx5 ]
}
ktap_result "module parameters: load-time defaults (range and the rules across switches checked, with their messages), which a new device copies; read only afterwards" load_defaults

rxe_load || { ktap_fail "load rdma_rxe"; ktap_finished; }
# shellcheck disable=SC2015 # fail when either step fails
veth_up y0v 10.9.9.1/24 >/dev/null && rdma link add y0 type rxe netdev y0v ||
	{ ktap_fail "rdma_rxe device y0"; ktap_finished; }

# The RDMA core's exclusive netns mode hides y0 from other namespaces: there
# its name must read as no device at all, as a name nobody has does (it
# once read "not an rxecc device", telling that it exists). The mode can
# change only while no other namespace exists: before the fabric's.
hidden_device() {
	local rc=0
	wait_for 10 rdma system set netns exclusive || { echo "no exclusive netns mode"; return 1; }
	if ip netns add rxhide; then
		expect_fail 3 "device 'y0': no rxecc device of that name" \
			ip netns exec rxhide "$T" stats dev y0 || rc=1
		expect_fail 3 "device 'y0': no rxecc device of that name" \
			ip netns exec rxhide "$T" dcqcn set dev y0 rp_gd 3 || rc=1
		expect_fail 3 "device 'nope': no rxecc device of that name" \
			ip netns exec rxhide "$T" stats dev nope || rc=1
		ip netns del rxhide
	else
		rc=1
	fi
	expect_fail 4 "device 'y0': not an rxecc device" "$T" stats dev y0 || rc=1
	wait_for 10 rdma system set netns shared || { echo "shared netns mode not restored"; rc=1; }
	return "$rc"
}
ktap_result "another driver's device hidden from a namespace (exclusive netns mode) reads there as no device, as an unknown name does" hidden_device

fabric_init
for i in 1 2; do
	fabric_add_host $i || { ktap_fail "fabric host $i"; ktap_finished; }
done

show_all() {
	local t j
	t=$(in1 "$T" dcqcn show) && echo "$t" || return 1
	echo "$t" | grep -q "^dev h1 index [0-9]* netdev eth0 line 10 Gbit/s profile mlx5$" || return 1
	# Every knob in the text and in the JSON, with the defaults' values (one
	# Python for all of them: each start costs a second in the guest).
	j=$(in1 "$T" -j dcqcn show dev h1) || return 1
	python3 "$HERE/tool_check.py" knobs "$t" "$j" || return 1
	[ "$(in1 "$T" -jp dcqcn show | json 'len(d)')" = 1 ] || return 1
	# From the initial namespace neither fabric device is visible.
	[ "$("$T" -j dcqcn show | json 'len(d)')" = 0 ] || return 1
	expect_fail 3 "device 'h1'" "$T" dcqcn show dev h1
}
ktap_result "dcqcn show: every knob in text and JSON, only this namespace's devices" show_all

MON=$LOGDIR/tool.monitor
set_values() {
	local j rc=0
	in1 "$T" -j monitor dev h1 interval 0.5 count "$(scaled_time 6)" >"$MON" &
	local mpid=$!
	wait_for 10 grep -q '"event":"subscribed"' "$MON" || rc=1
	in1 "$T" dcqcn set dev h1 rp_time_reset 1.5ms rp_ai_rate 2gbit rp_byte_reset 1MiB \
		rp_min_dec_fac 40% rp_clamp_tgt_rate on np_enable 0x0f ecn ect1 || rc=1
	wait "$mpid" || rc=1
	j=$(in1 "$T" -j dcqcn show dev h1) || return 1
	echo "$j"
	[ "$(echo "$j" | json 'd[0]["dcqcn"]["rp_time_reset"], d[0]["dcqcn"]["rp_ai_rate"], d[0]["dcqcn"]["rp_byte_reset"], d[0]["dcqcn"]["rp_min_dec_fac"], d[0]["dcqcn"]["rp_clamp_tgt_rate"], d[0]["np_enable"], d[0]["ecn"], d[0]["profile"]')" = \
		"1500 2000 16384 40 1 15 ect1 custom" ] || rc=1
	# h2 untouched; the monitor saw the change as one event.
	[ "$(fabric_in 2 "$T" -j dcqcn show dev h2 | json 'd[0]["profile"]')" = mlx5 ] || rc=1
	echo "monitor:"; cat "$MON"
	[ "$(grep -c '"event":"config"' "$MON")" = 1 ] && grep '"event":"config"' "$MON" | grep -q '"rp_ai_rate":2000' || rc=1
	grep -q '"event":"qp"' "$MON" || rc=1
	return "$rc"
}
ktap_result "dcqcn set: values with units, one change announced on the config group" set_values

# A change of the defaults is announced in the namespace it was made in only.
defaults_scope() {
	local rc=0 m1=$LOGDIR/tool.monitor.h1 m0=$LOGDIR/tool.monitor.init p1 p0 before
	before=$("$T" -j dcqcn show defaults | json 'd[0]["dcqcn"]["rp_threshold"]')
	# both monitors have joined the group well before the change and are
	# still there well after it, on a slow kernel too
	in1 "$T" -j monitor interval 0.5 count "$(scaled_time 12)" >"$m1" &
	p1=$!
	"$T" -j monitor interval 0.5 count "$(scaled_time 12)" >"$m0" &
	p0=$!
	wait_for "$(scaled_time 10)" grep -q '"event":"subscribed"' "$m1" || rc=1
	wait_for "$(scaled_time 10)" grep -q '"event":"subscribed"' "$m0" || rc=1
	"$T" dcqcn set defaults rp_threshold 9 || rc=1
	wait "$p1" "$p0" || rc=1
	"$T" dcqcn set defaults rp_threshold "$before" || rc=1
	echo "init namespace: $(grep -c '"event":"config"' "$m0") config events; h1's: $(grep -c '"event":"config"' "$m1")"
	[ "$(grep -c '"event":"config"' "$m0")" = 1 ] && [ "$(grep -c '"event":"config"' "$m1")" = 0 ] || rc=1
	return "$rc"
}
ktap_result "dcqcn set defaults: announced in the namespace of the change only" defaults_scope

atomic() {
	local before after rc=0
	before=$(in1 "$T" -j dcqcn show dev h1)
	expect_fail 6 "rp_gd: out of range 0\.\.15" in1 "$T" dcqcn set dev h1 rp_ai_rate 9 rp_gd 16 || rc=1
	expect_fail 6 "np_cnp_prio: out of range 0\.\.7" in1 "$T" dcqcn set dev h1 np_cnp_prio 8 ecn ect0 || rc=1
	expect_fail 6 "rp_min_dec_fac: out of range 1\.\.100" in1 "$T" dcqcn set dev h1 rp_min_dec_fac 0 || rc=1
	expect_fail 6 "rp_min_rate is above rp_max_rate" in1 "$T" dcqcn set dev h1 rp_max_rate 10 rp_min_rate 20 || rc=1
	expect_fail 6 "rp_time_reset: 'fast' is not a time" in1 "$T" dcqcn set dev h1 rp_time_reset fast || rc=1
	expect_fail 6 "ecn: 'ce' is not an ECN mode" in1 "$T" dcqcn set dev h1 ecn ce || rc=1
	expect_fail 6 "unknown profile 'mlx4'" in1 "$T" dcqcn profile dev h1 mlx4 || rc=1
	expect_fail 5 "unknown parameter 'rp_speed'" in1 "$T" dcqcn set dev h1 rp_speed 3 || rc=1
	expect_fail 1 "needs 'dev DEV' or 'defaults'" in1 "$T" dcqcn set rp_gd 3 || rc=1
	after=$(in1 "$T" -j dcqcn show dev h1)
	[ "$before" = "$after" ] || { echo "configuration changed"; rc=1; }
	return "$rc"
}
ktap_result "bad values: one line naming the parameter (the kernel's range), nothing applied" atomic

devices() {
	local rc=0 before
	before=$(in1 "$T" -j dcqcn show dev h1)
	expect_fail 3 "device 'nope': no rxecc device" in1 "$T" dcqcn set dev nope rp_gd 3 || rc=1
	expect_fail 4 "device 'y0': not an rxecc device" "$T" dcqcn set dev y0 rp_gd 3 || rc=1
	expect_fail 4 "not an rxecc device" "$T" stats dev y0 || rc=1
	# Another namespace's rxecc device does not exist for this one; another
	# driver's device the RDMA core shows everywhere (shared netns mode) is
	# named (hidden_device: exclusive mode).
	expect_fail 4 "device 'y0': not an rxecc device" in1 "$T" stats dev y0 || rc=1
	expect_fail 3 "device 'h1'" fabric_in 2 "$T" dcqcn set dev h1 rp_gd 3 || rc=1
	expect_fail 3 "device 'h2'" in1 "$T" qp show dev h2 || rc=1
	expect_fail 7 "permission denied" in1 "${NOCAP[@]}" "$T" dcqcn set dev h1 rp_gd 3 || rc=1
	expect_fail 7 "permission denied" in1 "${NOCAP[@]}" "$T" dcqcn profile dev h1 lab || rc=1
	expect_fail 7 "permission denied" in1 "${NOCAP[@]}" "$T" stats reset dev h1 || rc=1
	expect_fail 7 "permission denied" "${NOCAP[@]}" "$T" dcqcn set defaults rp_gd 3 || rc=1
	# Watching configuration changes is for the namespace's administrators.
	expect_fail 7 "permission denied: watching rxecc events" in1 "${NOCAP[@]}" "$T" monitor \
		count 1 || rc=1
	# Reading needs no privilege.
	in1 "${NOCAP[@]}" "$T" dcqcn show dev h1 >/dev/null && in1 "${NOCAP[@]}" "$T" stats >/dev/null &&
		in1 "${NOCAP[@]}" "$T" qp show >/dev/null || rc=1
	[ "$before" = "$(in1 "$T" -j dcqcn show dev h1)" ] || { echo "configuration changed"; rc=1; }
	return "$rc"
}
ktap_result "unknown device, not rxecc, other namespace, no CAP_NET_ADMIN: own exit codes, nothing applied" devices

profiles() {
	local j rc=0
	in1 "$T" dcqcn profile dev h1 lab || return 1
	j=$(in1 "$T" -j dcqcn show dev h1)
	[ "$(echo "$j" | json 'd[0]["profile"], d[0]["dcqcn"]["rp_clamp_tgt_rate"]')" = "lab 1" ] || rc=1
	# The defaults: new devices start with them, existing ones keep theirs.
	"$T" dcqcn profile defaults paper && "$T" dcqcn set defaults np_cnp_dscp 26 || rc=1
	[ "$(cat /sys/module/rdma_rxecc/parameters/np_cnp_dscp)" = 26 ] || rc=1
	fabric_add_host 3 || rc=1
	[ "$(fabric_in 3 "$T" -j dcqcn show dev h3 | json 'd[0]["profile"], d[0]["dcqcn"]["np_cnp_dscp"], d[0]["dcqcn"]["np_min_time_between_cnps"]')" = "custom 26 50" ] || rc=1
	[ "$(in1 "$T" -j dcqcn show dev h1 | json 'd[0]["profile"]')" = lab ] || rc=1
	"$T" dcqcn profile defaults mlx5 && "$T" dcqcn set defaults np_cnp_dscp 48 || rc=1
	[ "$("$T" -j dcqcn show defaults | json 'd[0]["profile"]')" = mlx5 ] || rc=1
	in1 "$T" dcqcn profile dev h1 mlx5 && in1 "$T" dcqcn set dev h1 ecn ect0 np_enable all || rc=1
	[ "$(in1 "$T" -j dcqcn show dev h1 | json 'd[0]["profile"]')" = mlx5 ] || rc=1
	return "$rc"
}
ktap_result "dcqcn profile: per device, and the defaults new devices start with" profiles

# The paper's values scaled to 50 Mbit/s (k = 800; docs/dcqcn.md), and the
# rates in kbit/s: the mlx5 names show them in whole Mbit/s.
scaled() {
	local j rc=0 want
	in1 "$T" dcqcn profile dev h1 paper scale 50mbit || return 1
	j=$(in1 "$T" -j dcqcn show dev h1)
	want="custom 44000 44000 40000 50 250 1 0 0 1020 156250 5"
	[ "$(echo "$j" | json 'd[0]["profile"], d[0]["dcqcn"]["rp_time_reset"], d[0]["dcqcn"]["rp_dce_tcp_rtt"], d[0]["dcqcn"]["np_min_time_between_cnps"], d[0]["dcqcn"]["rp_ai_rate_kbps"], d[0]["dcqcn"]["rp_hai_rate_kbps"], d[0]["dcqcn"]["rp_min_rate_kbps"], d[0]["dcqcn"]["rp_ai_rate"], d[0]["dcqcn"]["rp_min_rate"], d[0]["dcqcn"]["rp_dce_tcp_g"], d[0]["dcqcn"]["rp_byte_reset"], d[0]["dcqcn"]["rp_threshold"]')" = "$want" ] ||
		{ echo "scaled paper: $j"; rc=1; }
	# With speedup 16 (the lab's): times and the byte counter / 16, rates as before.
	in1 "$T" dcqcn profile dev h1 paper scale 50mbit speedup 16 || rc=1
	j=$(in1 "$T" -j dcqcn show dev h1)
	want="2750 2750 2500 50 250 1 9766"
	[ "$(echo "$j" | json 'd[0]["dcqcn"]["rp_time_reset"], d[0]["dcqcn"]["rp_dce_tcp_rtt"], d[0]["dcqcn"]["np_min_time_between_cnps"], d[0]["dcqcn"]["rp_ai_rate_kbps"], d[0]["dcqcn"]["rp_hai_rate_kbps"], d[0]["dcqcn"]["rp_min_rate_kbps"], d[0]["dcqcn"]["rp_byte_reset"]')" = "$want" ] ||
		{ echo "scaled paper, speedup 16: $j"; rc=1; }
	expect_fail 6 "speedup" in1 "$T" dcqcn profile dev h1 paper scale 50mbit speedup 2000 || rc=1
	# A rate that is no whole number of Mbit/s, by its mlx5 name.
	in1 "$T" dcqcn set dev h1 rp_ai_rate 1500kbit rp_hai_rate 7 || rc=1
	j=$(in1 "$T" -j dcqcn show dev h1)
	[ "$(echo "$j" | json 'd[0]["dcqcn"]["rp_ai_rate_kbps"], d[0]["dcqcn"]["rp_ai_rate"], d[0]["dcqcn"]["rp_hai_rate_kbps"]')" = "1500 1 7000" ] ||
		{ echo "rates: $j"; rc=1; }
	expect_fail 6 "no reference line rate" in1 "$T" dcqcn profile dev h1 lab scale 50mbit || rc=1
	expect_fail 1 "one rate" in1 "$T" dcqcn set dev h1 rp_ai_rate 5 rp_ai_rate_kbps 50 || rc=1
	# The module parameters show the defaults' rates in both units.
	"$T" dcqcn set defaults rp_ai_rate_kbps 2500 || rc=1
	[ "$(cat /sys/module/rdma_rxecc/parameters/rp_ai_rate_kbps) $(cat /sys/module/rdma_rxecc/parameters/rp_ai_rate)" = "2500 2" ] || rc=1
	"$T" dcqcn profile defaults mlx5 && in1 "$T" dcqcn profile dev h1 mlx5 || rc=1
	return "$rc"
}
ktap_result "dcqcn profile paper scale 50mbit: times x800, rates /800 (kbit/s); with speedup 16 times and byte counter /16; a rate in kbit/s by its mlx5 name" scaled

# ib_write_bw from h2 to h1, 300 x 4 KiB (300 packets at the default MTU).
traffic() {	# NAME
	fabric_in 1 timeout 60 ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -s 4096 -n 300 -p 18950 \
		>"$LOGDIR/$1.s.log" 2>&1 &
	local spid=$!
	wait_for 15 tcp_listening_on "$(fabric_ns 1)" 18950
	client_run "$LOGDIR/$1.c.log" ip netns exec "$(fabric_ns 2)" ib_write_bw -d h2 -x "$(fabric_gid 2)" \
		-F -s 4096 -n 300 -p 18950 "$(fabric_ip 1)" >/dev/null
	local rc=$?
	wait "$spid" || rc=1
	return "$rc"
}

# The ECN field of h2's RoCE data packets, set through the tool: one
# capture over three transfers (each a new QP of h1's), one decode.
wire_ecn() {
	local mode rc=0 seen
	fabric_in 2 timeout 120 dumpcap -i eth0 -s 96 -w "$LOGDIR/ecn.pcap" \
		-f "udp dst port 4791" >"$LOGDIR/ecn.dumpcap" 2>&1 &
	local tpid=$!
	wait_for 30 grep -q "Capturing on" "$LOGDIR/ecn.dumpcap" || rc=1
	for mode in ect1 ect0 av; do
		fabric_in 2 "$T" dcqcn set dev h2 ecn "$mode" || { rc=1; break; }
		traffic "ecn-$mode" || rc=1
	done
	sleep 0.5
	capture_stop "$LOGDIR/ecn.pcap"
	wait "$tpid"
	# runs of (count, destination QP, ECN) in capture order: one per transfer
	seen=$(tshark -r "$LOGDIR/ecn.pcap" -Y 'infiniband && ip.src == 10.0.2.1' \
		-T fields -e infiniband.bth.destqp -e ip.dsfield.ecn 2>/dev/null | uniq -c)
	echo "ecn ect1, ect0, av (count, QP, ECN):"
	echo "$seen"
	[ "$(echo "$seen" | awk '{ printf "%s ", $3 }')" = "1 2 0 " ] || rc=1
	[ "$(echo "$seen" | awk '{ print $2 }' | sort -u | wc -l)" -eq 3 ] || rc=1
	fabric_in 2 "$T" dcqcn set dev h2 ecn ect0 || rc=1
	return "$rc"
}
ktap_result "ecn set through the tool: h2's data packets carry ECT(1), ECT(0), Not-ECT on the wire" wire_ecn

stats() {
	local j rc=0
	j=$(fabric_in 2 "$T" -j stats dev h2) || return 1
	# The same counters as sysfs, every one of them (h2 is idle, so they
	# stand still between the two reads).
	echo "$j" | python3 "$HERE/tool_check.py" stats /sys/class/infiniband/h2/ports/1/hw_counters || rc=1
	fabric_in 2 "$T" stats show dev h2 | grep -E "^  (sent_pkts|np_cnp_sent|rp_cnp_handled) +[0-9]+$" || rc=1
	fabric_in 2 "$T" stats reset dev h2 || rc=1
	[ "$(port_counter h2 sent_pkts)" = 0 ] && [ "$(port_counter h2 rcvd_pkts)" = 0 ] || rc=1
	[ "$(port_counter h1 sent_pkts)" != 0 ] || { echo "h1 was reset too"; rc=1; }
	return "$rc"
}
ktap_result "stats: every counter in JSON equals sysfs; reset zeroes one device" stats

qps() {
	# The QP must outlive both snapshots: on the debug kernel, reaching RTS
	# and two tool runs took more than 6 s.
	local d rc=0 j t n
	d=$(scaled_time 6)
	fabric_in 1 timeout $((d + 54)) ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -s 4096 -D "$d" -p 18951 \
		>"$LOGDIR/qp.s.log" 2>&1 &
	local spid=$!
	wait_for 15 tcp_listening_on "$(fabric_ns 1)" 18951 || rc=1
	fabric_in 2 timeout $((d + 54)) ib_write_bw -d h2 -x "$(fabric_gid 2)" -F -s 4096 -D "$d" -p 18951 \
		"$(fabric_ip 1)" >"$LOGDIR/qp.c.log" 2>&1 &
	local cpid=$!
	wait_for 15 fabric_rc_rts 2 || rc=1
	j=$(fabric_in 2 "$T" -j qp show dev h2)
	t=$(fabric_in 2 "$T" qp show)
	# Without CAP_NET_ADMIN a user sees only the QPs of its own process.
	n=$(fabric_in 2 "${NOCAP[@]}" "$T" -j qp show dev h2 | json 'len(d)')
	echo "$t"
	echo "qp show without CAP_NET_ADMIN: $n QPs"
	[ "$n" = 0 ] || rc=1
	# perftest only keeps the QP alive: its exit status is not the tool's
	# (on the debug kernel its clock calibration can fail, r^2 < 0.9, and it
	# reports 0 MB/s and exits 1 after a transfer that went through)
	wait "$cpid" "$spid"
	echo "$j" | python3 "$HERE/tool_check.py" rts-qp || rc=1
	echo "$t" | head -1 | grep -q "^dev  *qpn  *type  *state  *dest_qpn  *prio  *limited  *rate_kbps  *target_kbps  *alpha_ppm" || rc=1
	echo "$t" | grep -qE "^h2 +[0-9]+ +RC +RTS" || rc=1
	return "$rc"
}
ktap_result "qp show: perftest's RC QP in RTS with its peer and line rate, text and JSON; hidden from a user without CAP_NET_ADMIN" qps

helps() {
	local a rc=0
	for a in "--help" "dcqcn help" "dcqcn set --help" "stats --help" "qp help" "monitor --help" "-V"; do
		# shellcheck disable=SC2086,SC2015 # $a split on purpose (a command and its words); report when either the run or the output check fails
		"$T" $a >"$LOGDIR/help.out" 2>&1 && [ -s "$LOGDIR/help.out" ] || { echo "rxecc $a"; rc=1; }
	done
	expect_fail 1 "unknown object" "$T" frob || rc=1
	expect_fail 1 "unknown option" "$T" --frob dcqcn || rc=1
	return "$rc"
}
ktap_result "--help for every command, usage errors exit 1" helps

# config_now: h1's configuration and the defaults, as JSON.
config_now() { in1 "$T" -j dcqcn show; "$T" -j dcqcn show defaults; }
# config_restore: h1 and the defaults back to the module's own settings.
config_restore() {
	local all=(rp_enable all np_enable all ecn ect0 pfc_enable none roce_prio dscp link_speed auto)
	all+=(pfc_rx_xoff 0 pfc_rx_xon 0 tx_qlimit 0 dscp2prio default)
	all+=(device_stall_critical_watermark 8000 device_stall_minor_watermark 0 udp_sport flow_label)
	in1 "$T" dcqcn profile dev h1 mlx5 && in1 "$T" dcqcn set dev h1 "${all[@]}" &&
		"$T" dcqcn profile defaults mlx5 && "$T" dcqcn set defaults "${all[@]}"
}

fuzz() {
	local before after
	before=$(config_now)
	in1 python3 "$HERE/genl_fuzz.py" h1 --count 3000 --seed 4791 || return 1
	# The fuzzer checked every rejected change; restore what it may have set.
	config_restore || return 1
	after=$(config_now)
	[ "$before" = "$after" ] || { echo "not restored: $before / $after"; return 1; }
	# The family still answers and traffic still runs.
	traffic fuzzed
}
ktap_result "netlink: 26 malformed requests get their errors, 3000 fuzzed ones (seed 4791); rejected ones change nothing" fuzz

# Each command of the family (genl_privs.py) from five callers: root; a user
# without capabilities; that user as root of a user namespace, in h1's network
# namespace (owned by the initial user namespace: no CAP_NET_ADMIN over it)
# and in a network namespace of its own; root of another network namespace.
# errno: 1 EPERM, 19 ENODEV (a device of another namespace is not there).
# Reads are open to every caller of h1's namespace; device changes need
# CAP_NET_ADMIN over it, the defaults (global) CAP_NET_ADMIN over the initial
# user namespace. A refused change changes nothing.
privileges() {
	local rc=0 unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	local others="dev_get=19 dev_set=19 defaults_get=0 stats_get=19 stats_reset=19 qp_dump=0"
	others+=" dev_dump=0 dev_dump_entries=0 qp_dump_entries=0"
	local reader="dev_get=0 dev_dump=0 dev_dump_entries=1 dev_set=1 defaults_get=0"
	reader+=" defaults_set=1 stats_get=0 stats_reset=1 qp_dump=0"
	# row NAME EXPECTED KEEPS CMD...: KEEPS "all" (h1 and the defaults), "h1"
	# (h1's configuration) or "none" must not change
	row() {
		local name=$1 want=$2 keeps=$3 got before after
		shift 3
		before=$(config_now)
		got=$("$@" python3 "$HERE/genl_privs.py" h1 2>&1)
		after=$(config_now)
		[ "$keeps" != h1 ] || { before=$(echo "$before" | head -n 1); after=$(echo "$after" | head -n 1); }
		echo "$name: $got"
		python3 "$HERE/tool_check.py" privs "$got" "$want" || rc=1
		[ "$keeps" = none ] || [ "$before" = "$after" ] || { echo "$name changed the configuration"; rc=1; }
	}
	ip netns add rxecc-privs || return 1
	row "root in h1's namespace" "dev_get=0 dev_dump=0 dev_dump_entries=1 dev_set=0 defaults_get=0 defaults_set=0 stats_get=0 stats_reset=0 qp_dump=0" none in1
	config_restore || rc=1
	row "no CAP_NET_ADMIN in h1's namespace" "$reader" all in1 "${unpriv[@]}"
	if "${unpriv[@]}" unshare -Ur true 2>/dev/null; then
		row "user-namespace root in h1's namespace" "$reader" all in1 "${unpriv[@]}" unshare -Ur
		row "user-namespace root in its own namespace" "$others defaults_set=1" all "${unpriv[@]}" unshare -Urn
	else
		echo "no user namespaces in this kernel: those two rows are not run"
	fi
	row "root in another namespace" "$others defaults_set=0" h1 ip netns exec rxecc-privs
	ip netns delete rxecc-privs
	config_restore || rc=1
	return "$rc"
}
ktap_result "netlink privileges: root, no CAP_NET_ADMIN, user-namespace root (h1's and its own namespace), another namespace: each command allowed or refused as it should, refusals change nothing" privileges

cleanup_check() {
	fabric_destroy
	rdma link delete y0
	modules_unload && expect_fail 2 "not loaded" "$T" stats
}
ktap_result "devices deleted and the module unloaded; the tool says so" cleanup_check
ktap_finished
