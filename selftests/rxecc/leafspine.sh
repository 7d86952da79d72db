#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The leaf-spine fabric (fabric_leafspine in fabric.sh): 2 spines, 4 leaves,
# 2 hosts per leaf, rdma_rxecc on every host, every switch port a pfc qdisc
# (fabric_pfc_ports).
#   - the builder: how long it takes (reported); the first host of each
#     leaf reaches every host of the other leaves over IPv4 and IPv6 (ping),
#     and RDMA from h1 on lf1 to h8 on lf4 (ibv_rc_pingpong over the RoCEv2
#     GID, buffers checked);
#   - ECMP: 16 RC QPs from h1 to h8 (ib_write_bw -q 16) with
#     fib_multipath_hash_policy 0 (L3: source and destination address)
#     take one spine, every byte over one of lf1's two uplinks; with 1 (L4:
#     the UDP source port too) they spread over both, because each QP has
#     its own source port (rdma_get_udp_sport() of its QP numbers, which
#     Debian's 6.1 rxe already uses for connected QPs).
#   - the UDP source port (udp_sport, rxecc_sport.c; sport_check.py reads
#     h1's captured packets): under flow_label (the default) each QP's
#     packets both ways carry rdma_get_udp_sport() of both QP numbers
#     (perftest: RC, and UD per destination); under qpn rxe's hash of the
#     sending QP's number; over rdma_cm (rxecc-verbs) the flow label rdma_cm
#     derives from its ports (IPv4) or the one the application gives its
#     IPv6 source address (--flow-label), the same at both ends, the port
#     folded from it, and over IPv6 the label in the IPv6 header. The label
#     steers: L4 ECMP takes each label's connection over one spine, the
#     same one again for the same label, and some label over each spine.
# Neither ECMP run may lose a packet in the CPU's receive backlog (softnet drops:
# the fabric's veths have no other queue; fabric_leafspine sizes it).
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
need_root
ITERS=${ITERS:-100}	# 16 KiB messages per QP

ktap_header
ktap_plan 9

modules_unload >/dev/null 2>&1
{ rxecc_load && pfc_load; } || { ktap_fail "load rdma_rxecc and sch_pfc"; ktap_finished; }
fabric_init

build() {
	local t0=$SECONDS s n=0
	fabric_leafspine 4 2 2 || return 1
	echo "leaf-spine with 2 spines, 4 leaves, 8 hosts built in $((SECONDS - t0)) s"
	# every egress a pfc port (1 Gbit/s, PFC off: faster than the guest moves data)
	fabric_pfc_ports 1000 pfc none || return 1
	for s in "${FABRIC_SWITCHES[@]}"; do
		n=$((n + $(tc -n "$(fabric_sw_ns "$s")" qdisc show | grep -c '^qdisc pfc')))
	done
	echo "$n pfc ports (8 towards hosts, 16 on the 8 leaf-spine links)"
	[ "$n" -eq 24 ]
}
ktap_result "fabric_leafspine 4 2 2: 2 spines, 4 leaves, 8 hosts with an rxecc device each; every switch port a pfc qdisc" build
ktap_diag "$(head -n 1 "$LOGDIR/step-1.log")"

reach() {
	local i j rc=0
	for i in 1 3 5 7; do
		for j in 1 2 3 4 5 6 7 8; do
			[ "${FABRIC_SWITCH_OF[$i]}" != "${FABRIC_SWITCH_OF[$j]}" ] || continue
			fabric_in "$i" ping -c 1 -W 3 -q "$(fabric_ip "$j")" >/dev/null ||
				{ echo "h$i -> h$j (IPv4)"; rc=1; }
			fabric_in "$i" ping -6 -c 1 -W 3 -q "$(fabric_ip6 "$j")" >/dev/null ||
				{ echo "h$i -> h$j (IPv6)"; rc=1; }
		done
	done
	fabric_in 8 timeout 60 ibv_rc_pingpong -d h8 -g "$(fabric_gid 8)" -n 50 -c \
		>"$LOGDIR/ls-pingpong.server.log" 2>&1 &
	local pp=$!
	wait_for 15 tcp_listening "$(fabric_ns 8)" 1 || rc=1
	client_run "$LOGDIR/ls-pingpong.client.log" ip netns exec "$(fabric_ns 1)" \
		ibv_rc_pingpong -d h1 -g "$(fabric_gid 1)" -n 50 -c "$(fabric_ip 8)" || rc=1
	wait "$pp" || rc=1
	return "$rc"
}
ktap_result "each leaf's first host reaches every host of the other leaves (IPv4, IPv6); RDMA h1 (lf1) -> h8 (lf4) across a spine" reach

# spread POLICY: 16 QPs h1 -> h8 under that hash policy (ACK timeout 2^18
# x 4.096 us = 1.07 s: under the emulator acknowledgements can come later
# than perftest's default 67 ms, and go-back-N retries then multiplied the
# bytes sent 30-fold in one run); SHARES is the
# percentage of the bytes lf1 sent up that each spine carried. Fails if the
# transfer failed, carried less than its data, or lost packets in a backlog.
spread() {
	local a0 b0 a b rc=0 bw
	fabric_ecmp_hash "$1" || return 1
	a0=$(fabric_tx_bytes lf1 to-sp1) || return 1
	b0=$(fabric_tx_bytes lf1 to-sp2) || return 1
	local sd0 r0 o0 d0
	sd0=$(softnet_drops) r0=$(port_counter h1 completer_retry_err) o0=$(port_counter h8 out_of_sequence)
	d0=$(port_counter h8 duplicate_request)
	fabric_in 8 timeout "$(scaled_time 180)" ib_write_bw -d h8 -x "$(fabric_gid 8)" -F -q 16 \
		-s 16384 -n "$ITERS" -u 18 -p 18800 >"$LOGDIR/ls-ecmp$1.server.log" 2>&1 &
	bw=$!
	wait_for 15 tcp_listening "$(fabric_ns 8)" 1 || rc=1
	client_run "$LOGDIR/ls-ecmp$1.client.log" ip netns exec "$(fabric_ns 1)" \
		ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -q 16 -s 16384 -n "$ITERS" -u 18 -p 18800 \
		"$(fabric_ip 8)" >/dev/null || rc=1
	wait "$bw" || rc=1
	a=$(($(fabric_tx_bytes lf1 to-sp1) - a0)) b=$(($(fabric_tx_bytes lf1 to-sp2) - b0))
	SHARES="$((100 * a / (a + b + 1))) $((100 * b / (a + b + 1)))"
	local sd=$(($(softnet_drops) - sd0))
	echo "softnet drops +$sd; h1 completer_retry_err" \
		"+$(($(port_counter h1 completer_retry_err) - r0)); h8 out_of_sequence" \
		"+$(($(port_counter h8 out_of_sequence) - o0)), duplicate_request +$(($(port_counter h8 duplicate_request) - d0))"
	grep -h "BW average" -A1 "$LOGDIR/ls-ecmp$1.client.log" | tail -n 1
	echo "policy $1: lf1 -> sp1 $a bytes, -> sp2 $b bytes (percent: $SHARES)"
	# at least the data: 16 QPs x ITERS x 16 KiB
	[ "$rc" -eq 0 ] && [ $((a + b)) -ge $((16 * ITERS * 16384)) ] && [ "$sd" -eq 0 ]
}
# L3: perftest's TCP setup has the same addresses, so only neighbour
# discovery crosses the other spine. L4: each QP's source port comes from its
# QP numbers and the hash seed is random per boot; one spine carrying at most
# one QP of 16 (under 10 %) has a probability of about 5e-4.
l3() {
	spread 0 || return 1
	# shellcheck disable=SC2086 # two numbers
	set -- $SHARES
	[ "$1" -ge 99 ] || [ "$2" -ge 99 ]
}
ktap_result "ECMP, L3 hash: 16 QPs h1 -> h8 all on one spine" l3
l4() {
	spread 1 || return 1
	# shellcheck disable=SC2086 # two numbers
	set -- $SHARES
	[ "$1" -ge 10 ] && [ "$2" -ge 10 ]
}
ktap_result "ECMP, L4 hash: 16 QPs h1 -> h8 over both spines (each QP its own UDP source port)" l4

# ---- the UDP source port ----------------------------------------------------
SPORT_CHECK="python3 $RXECC_TOP/lib/python/sport_check.py"
VERBS=$RXECC_TOP/build/userspace/rxecc-verbs

# cap_start NAME / cap_stop NAME: h1's RoCE packets (headers only, both
# ways) in $LOGDIR/NAME.pcap.
cap_start() {
	fabric_in 1 timeout "$(scaled_time 200)" dumpcap -q -i eth0 -s 96 -f 'udp port 4791' \
		-w "$LOGDIR/$1.pcap" >"$LOGDIR/$1.dumpcap" 2>&1 &
	CAP=$!
	capture_ready "$LOGDIR/$1.pcap"
}
cap_stop() {
	sleep 0.5
	capture_stop "$LOGDIR/$1.pcap"
	wait "$CAP" 2>/dev/null
	return 0
}

# perftest_run NAME PROG ARGS...: PROG (a perftest) h1 -> h8, its client's
# output in $LOGDIR/NAME.client.log.
perftest_run() {
	local name=$1 prog=$2 srv rc=0
	shift 2
	fabric_in 8 timeout "$(scaled_time 120)" "$prog" -d h8 -x "$(fabric_gid 8)" -F "$@" \
		-p 18801 >"$LOGDIR/$name.server.log" 2>&1 &
	srv=$!
	wait_for 15 tcp_listening "$(fabric_ns 8)" 1 || rc=1
	client_run "$LOGDIR/$name.client.log" ip netns exec "$(fabric_ns 1)" \
		"$prog" -d h1 -x "$(fabric_gid 1)" -F "$@" -p 18801 "$(fabric_ip 8)" >/dev/null || rc=1
	wait "$srv" || rc=1
	return "$rc"
}

# perftest_sport POLICY: h1 and h8 under udp_sport POLICY; 4 RC QPs h1 -> h8
# (ib_write_bw) and one UD QP (ib_send_bw -c UD); the ports of h1's captured
# packets checked against the policy's rule.
perftest_sport() {
	local name=sport-$1 rc=0
	fabric_dcqcn 1 set udp_sport "$1" && fabric_dcqcn 8 set udp_sport "$1" || return 1
	cap_start "$name" || return 1
	perftest_run "$name-rc" ib_write_bw -q 4 -s 4096 -n 50 || rc=1
	perftest_run "$name-ud" ib_send_bw -c UD -s 512 -n 200 || rc=1
	cap_stop "$name"
	$SPORT_CHECK perftest "$1" "$LOGDIR/$name.pcap" "$(fabric_ip 1)" "$(fabric_ip 8)" \
		"$LOGDIR/$name-rc.client.log" "$LOGDIR/$name-ud.client.log,ud" || rc=1
	return "$rc"
}
sport_flow_label() {
	local rc=0 pp
	fabric_in 1 "$RXECC_TOOL" -j dcqcn show dev h1 | grep -q '"udp_sport":"flow_label"' ||
		{ echo "h1's udp_sport is not flow_label by default"; rc=1; }
	# h8 makes one QP more than h1, so that the two ends' QP numbers differ
	# (a rule that reads only one of them shows)
	fabric_in 8 timeout 30 ibv_rc_pingpong -d h8 -g "$(fabric_gid 8)" -p 18802 >/dev/null 2>&1 &
	pp=$!
	wait_for 15 tcp_listening_on "$(fabric_ns 8)" 18802 || rc=1
	kill_tree "$pp"
	wait "$pp" 2>/dev/null
	perftest_sport flow_label || rc=1
	return "$rc"
}
ktap_result "udp_sport flow_label (default): each QP's packets both ways on rdma_get_udp_sport() of both QP numbers; UD per destination" sport_flow_label
sport_qpn() {
	local rc=0
	perftest_sport qpn || rc=1
	fabric_in 1 "$RXECC_TOOL" -j dcqcn show dev h1 | grep -q '"udp_sport":"qpn"' ||
		{ echo "h1's udp_sport does not read back as qpn"; rc=1; }
	fabric_dcqcn 1 set udp_sport flow_label && fabric_dcqcn 8 set udp_sport flow_label || rc=1
	return "$rc"
}
ktap_result "udp_sport qpn: every packet of a QP on rxe's hash of its own QP number (RC both ways, UD)" sport_qpn

# cm_run NAME PORT ADDR [LABEL]: one rxecc-verbs connection h1 -> h8 at ADDR
# (h8's), with the IPv6 flow label LABEL if given; CM_SPECS gets its
# sport_check.py argument; SPINE is the spine that carried 90 % or more of
# what lf1 sent up (0 if none did).
cm_run() {
	local name=$1 a0 b0 a b srv rc=0 src
	a0=$(fabric_tx_bytes lf1 to-sp1) b0=$(fabric_tx_bytes lf1 to-sp2)
	fabric_in 8 timeout "$(scaled_time 120)" "$VERBS" server "$3" -p "$2" --timeout 60 \
		>"$LOGDIR/$name.s.json" 2>"$LOGDIR/$name.s.err" &
	srv=$!
	wait_for 10 grep -q listening "$LOGDIR/$name.s.err" || rc=1
	fabric_in 1 timeout "$(scaled_time 120)" "$VERBS" client "$3" -p "$2" --count 100 \
		--max-size 4096 --timeout 60 ${4:+--flow-label "$4"} >"$LOGDIR/$name.c.json" \
		2>"$LOGDIR/$name.c.err" || { cat "$LOGDIR/$name.c.err"; rc=1; }
	wait "$srv" || { cat "$LOGDIR/$name.s.err"; rc=1; }
	a=$(($(fabric_tx_bytes lf1 to-sp1) - a0)) b=$(($(fabric_tx_bytes lf1 to-sp2) - b0))
	SPINE=0
	[ $((10 * a)) -ge $((9 * (a + b))) ] && SPINE=1
	[ $((10 * b)) -ge $((9 * (a + b))) ] && SPINE=2
	src=$(fabric_ip 1)
	[[ $3 != *:* ]] || src=$(fabric_ip6 1)
	CM_SPECS+=("$LOGDIR/$name.c.json,$LOGDIR/$name.s.json,$src,$3${4:+,$4}")
	echo "$name: lf1 -> sp1 $a bytes, -> sp2 $b bytes: spine ${SPINE/#0/none}"
	return "$rc"
}
cm_label() {
	local rc=0 l first='' seen=''
	CM_SPECS=()
	fabric_ecmp_hash 1 || return 1
	cap_start cm || return 1
	cm_run cm-v4 19601 "$(fabric_ip 8)" || rc=1
	# IPv6 labels until a connection went over each spine (16 on one
	# spine: 1 in 2^15 boots, the hash seed being random)
	for l in $(seq 1 16); do
		cm_run "cm-fl$l" $((19610 + l)) "$(fabric_ip6 8)" "$l" || rc=1
		[ "$SPINE" -ne 0 ] || { rc=1; continue; }
		[ -n "$first" ] || first="$l:$SPINE"
		[[ $seen == *$SPINE* ]] || seen+=$SPINE
		[ ${#seen} -lt 2 ] || break
	done
	[ ${#seen} -eq 2 ] || { echo "every label took the same spine"; rc=1; }
	cm_run cm-again 19630 "$(fabric_ip6 8)" "${first%%:*}" || rc=1
	[ "$SPINE" = "${first#*:}" ] || { echo "flow label ${first%%:*} changed spine"; rc=1; }
	cap_stop cm
	$SPORT_CHECK cm "$LOGDIR/cm.pcap" "${CM_SPECS[@]}" || rc=1
	return "$rc"
}
ktap_result "rdma_cm: both ends' flow label from rdma_cm's ports (IPv4) or the application's IPv6 label, the port folded from it; the label steers L4 ECMP" cm_label

# ---- collectives ------------------------------------------------------------
COLL=$RXECC_TOP/build/userspace/rxecc-coll
# coll OP: rxecc-coll OP among the 8 hosts (one rank each), 4 KiB to 64 KiB;
# every rank must end with 0 (every element of every iteration right) and
# rank 0 report every size.
coll() {
	local op=$1 i pids=() rc=0 hosts='' n
	for i in $(seq 1 8); do hosts+=${hosts:+,}$(fabric_ip "$i"); done
	for i in $(seq 1 8); do
		fabric_in "$i" timeout "$(scaled_time 120)" "$COLL" --rank $((i - 1)) --hosts "$hosts" \
			--op "$op" --min-bytes 4096 --max-bytes 65536 --iters 5 --warmup 1 --timeout 60 --json \
			>"$LOGDIR/coll-$op.$i.json" 2>"$LOGDIR/coll-$op.$i.err" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	cat "$LOGDIR"/coll-"$op".*.err
	python3 "$RXECC_TOP/selftests/rxecc/coll_check.py" coll "$LOGDIR/coll-$op.1.json" 8 || rc=1
	return "$rc"
}
allreduce() { coll allreduce; }
ktap_result "rxecc-coll ring all-reduce, 8 ranks on 4 leaves: every element of every iteration the sum" allreduce
alltoall() { coll alltoall; }
ktap_result "rxecc-coll all-to-all, 8 ranks on 4 leaves: every chunk of every iteration from its sender" alltoall

ktap_finished
