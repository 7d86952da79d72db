#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma_rxecc in network namespaces, on a one-guest fabric (fabric.sh): hosts
# behind one L3 switch namespace.
#   - two hosts through the switch: perftest RC/UD, with and without rdma_cm,
#     IPv4 and IPv6 GIDs (one of each kind; verbs_peers.sh runs every
#     operation); rping with data validation;
#   - 3:1 fan-in with concurrent flows: all complete, byte counts match;
#   - a namespace deleted, and a netdev moved out, while traffic runs; the
#     module unloads afterwards;
#   - stock rdma_rxe in init_net and rdma_rxecc in namespaces, both working.
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
need_root
ITERS=${ITERS:-300}

ktap_header
ktap_plan 21

modules_unload >/dev/null 2>&1
rxecc_load || { ktap_fail "load rdma_rxecc"; ktap_finished; }
fabric_init
for i in 1 2 3 4; do
	fabric_add_host $i || { ktap_fail "fabric host $i with an rxecc device"; ktap_finished; }
done
ktap_pass "fabric: switch and 4 hosts, one rxecc device each in its namespace"
sockets_per_ns() {
	! ss -Hlun sport = :4791 | grep -q . || { echo "a RoCE socket in init_net"; return 1; }
	local i
	for i in 1 2 3 4; do
		fabric_in "$i" ss -Hlun sport = :4791 | grep -q 0.0.0.0:4791 || { echo "none in h$i"; return 1; }
	done
}
ktap_result "no RoCE socket in init_net, one per host namespace" sockets_per_ns

BW="BW average[MB/sec]"
LAT="t_typical[usec]"
# shellcheck disable=SC2034 # read by name (pt's ${!gs} and ${!gc})
G1=$(fabric_gid 1) G2=$(fabric_gid 2) G1v6=$(fabric_gid 1 6) G2v6=$(fabric_gid 2 6)
# pt NAME TOOL COLUMN FAMILY ARGS...: perftest from h1 (client) to h2
# (server) through the switch; FAMILY 4 or 6 picks the GID, empty leaves it
# to rdma_cm (-R). Each side names its own device and GID index.
pt() {
	local name=$1 tool=$2 column=$3 fam=$4
	shift 4
	local gs=G2 gc=G1
	[ "$fam" != 6 ] || { gs=G2v6; gc=G1v6; }
	# Server and client get identical flags except device and GID.
	local SERVER_NS CLIENT_NS
	SERVER_NS=$(fabric_ns 2) CLIENT_NS=$(fabric_ns 1)
	perftest_measured "$name" "$column" peer_pair "$name" \
		"$tool" -d h2 ${fam:+-x ${!gs}} -F "$@" -- \
		"$tool" -d h1 ${fam:+-x ${!gc}} -F "$@" "$(fabric_ip 2)"
}

# One of each kind through the switch: verbs_peers.sh runs every operation
# on a direct link; what the switch and the namespaces add (routing, a
# device and a RoCE socket per namespace, rdma_cm resolving across them) is
# the same for each.
ktap_result "h1 -> switch -> h2: ib_write_bw RC 64 KiB, IPv4 GID" pt fab_write_bw ib_write_bw "$BW" 4 -s 65536 -n "$ITERS"
ktap_result "h1 -> switch -> h2: ib_read_bw RC 64 KiB, IPv4 GID" pt fab_read_bw ib_read_bw "$BW" 4 -s 65536 -n "$ITERS"
ktap_result "h1 -> switch -> h2: ib_send_lat RC 2 B" pt fab_send_lat ib_send_lat "$LAT" 4 -s 2 -n "$ITERS"
ktap_result "h1 -> switch -> h2: ib_send_bw UD 1 KiB" pt fab_ud_bw ib_send_bw "$BW" 4 -c UD -s 1024 -n "$ITERS"
ktap_result "h1 -> switch -> h2: ib_write_bw RC, IPv6 GID" pt fab_write_bw6 ib_write_bw "$BW" 6 -s 65536 -n "$ITERS"
ktap_result "h1 -> switch -> h2: ib_send_bw via rdma_cm" pt fab_send_bw_cm ib_send_bw "$BW" "" -R -s 65536 -n "$ITERS"
ktap_result "h1 -> switch -> h2: ib_send_bw UD via rdma_cm" pt fab_ud_bw_cm ib_send_bw "$BW" "" -R -c UD -s 1024 -n "$ITERS"

rping_fab() {
	SERVER_NS=$(fabric_ns 2) CLIENT_NS=$(fabric_ns 1) peer_pair fab_rping \
		rping -s -a "$(fabric_ip 2)" -C 50 -S 1024 -V -- rping -c -a "$(fabric_ip 2)" -C 50 -S 1024 -V -v || return 1
	[ "$(grep -c 'ping data:' "$LOGDIR/fab_rping.client.log")" -eq 50 ]
}
ktap_result "h1 -> switch -> h2: rping 50 x 1 KiB, data validated" rping_fab

# 3:1 fan-in: h2, h3 and h4 write to h1 at the same time, ITERS x 64 KiB
# each (divided by RXECC_RATE_SCALE on a slower kernel: the debug kernel did
# not finish 3 x 300 in the 120 s a client has).
fanin() {
	local i pids=() rc=0 g1 iters
	iters=$(scaled_count "$ITERS" 30)
	g1=$(fabric_gid 1)
	local before
	before=$(port_counter h1 rcvd_pkts)
	for i in 2 3 4; do
		fabric_in 1 timeout "$(scaled_time 180)" ib_write_bw -d h1 -x "$g1" -F -s 65536 -n "$iters" \
			-p $((18700 + i)) >"$LOGDIR/fanin$i.server.log" 2>&1 &
		pids+=($!)
	done
	wait_for 15 tcp_listening "$(fabric_ns 1)" 3
	for i in 2 3 4; do
		client_run "$LOGDIR/fanin$i.client.log" ip netns exec "$(fabric_ns "$i")" \
			ib_write_bw -d "h$i" -x "$(fabric_gid "$i")" -F -s 65536 -n "$iters" -p $((18700 + i)) \
			"$(fabric_ip 1)" >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	[ "$rc" -eq 0 ] || { echo "a flow failed"; return 1; }
	for i in 2 3 4; do
		local it
		it=$(perftest_value "$LOGDIR/fanin$i.server.log" "#iterations") || return 1
		echo "flow h$i -> h1: $it x 64 KiB, $(perftest_value "$LOGDIR/fanin$i.server.log" "$BW") MB/s"
		[ "$it" -eq "$iters" ] || return 1
	done
	local got want
	got=$(($(port_counter h1 rcvd_pkts) - before))
	want=$((3 * iters * 64))	# 64 KiB messages in 1 KiB (path MTU) packets
	echo "h1 received $got packets, the three flows carried $want data packets"
	[ "$got" -ge "$want" ]
}
ktap_result "3:1 fan-in to h1, concurrent ib_write_bw: all complete, byte counts match" fanin

mtu_check() {
	fabric_mtu 3 9000 || return 1
	# rxe follows the netdev MTU: 9000 bytes give the largest IB MTU, 4096.
	wait_for 10 bash -c "ibv_devinfo -d h3 | grep -q 'active_mtu:.*4096'" || { ibv_devinfo -d h3; return 1; }
	fabric_mtu 3 1500 && wait_for 10 bash -c "ibv_devinfo -d h3 | grep -q 'active_mtu:.*1024'"
}
ktap_result "fabric_mtu: h3's link at 9000 bytes gives active_mtu 4096, back at 1500 gives 1024" mtu_check
shape_check() {
	fabric_shape 1 50mbit || return 1
	fabric_sw tc qdisc show dev swp1 | tee /dev/stderr | grep -q "tbf.*rate 50Mbit" &&
		fabric_sw tc qdisc del dev swp1 root
}
ktap_result "fabric_shape: a 50 Mbit/s tbf on the switch port towards h1" shape_check

# Traffic h3 -> h4, then h4's namespace is deleted (its processes killed).
ns_delete() {
	local g3 g4 base spid
	g3=$(fabric_gid 3) g4=$(fabric_gid 4) base=$(port_counter h4 rcvd_pkts)
	fabric_in 4 timeout 120 ib_write_bw -d h4 -x "$g4" -F -s 65536 -D 60 >"$LOGDIR/del.server.log" 2>&1 &
	spid=$!
	wait_for 15 tcp_listening_on "$(fabric_ns 4)" 18515 || { kill_tree "$spid"; return 1; }
	fabric_in 3 timeout 120 ib_write_bw -d h3 -x "$g3" -F -s 65536 -D 60 "$(fabric_ip 4)" >"$LOGDIR/del.client.log" 2>&1 &
	local cpid=$!
	# the deletion comes while data flows
	wait_for 30 above 4:rcvd_pkts $((base + 1000)) ||
		{ echo "no traffic to h4"; kill_tree "$cpid"; kill_tree "$spid"; return 1; }
	echo "h4 rcvd_pkts before the deletion: $(port_counter h4 rcvd_pkts)"
	ip netns pids "$(fabric_ns 4)" | xargs -r kill -9
	ip netns del "$(fabric_ns 4)"
	wait_for 30 test ! -e /sys/class/infiniband/h4 || { echo "h4 still there"; return 1; }
	kill_tree "$cpid"	# h3's client, whose peer is gone
	wait "$cpid" 2>/dev/null
	[ -e /sys/class/infiniband/h3 ]
}
ktap_result "namespace of h4 deleted during traffic: its device goes, h3 stays" ns_delete

# Traffic h1 -> h2, then h2's netdev moves to another namespace: the device
# is unregistered under live QPs. rxe has no disassociate_ucontext, so (as
# with stock rdma_rxe) the unregistration completes once the processes that
# have the device open let go of it; here they are killed, as an application
# would exit on the errors it gets.
move_out() {
	local g1 g2 base
	g1=$(fabric_gid 1) g2=$(fabric_gid 2) base=$(port_counter h2 rcvd_pkts)
	fabric_in 2 timeout 120 ib_write_bw -d h2 -x "$g2" -F -s 65536 -D 60 >"$LOGDIR/move.server.log" 2>&1 &
	local spid=$!
	wait_for 15 tcp_listening_on "$(fabric_ns 2)" 18515 || { kill_tree "$spid"; return 1; }
	fabric_in 1 timeout 120 ib_write_bw -d h1 -x "$g1" -F -s 65536 -D 60 "$(fabric_ip 2)" >"$LOGDIR/move.client.log" 2>&1 &
	local cpid=$!
	# the move comes while data flows
	wait_for 30 above 2:rcvd_pkts $((base + 1000)) ||
		{ echo "no traffic to h2"; kill_tree "$cpid"; kill_tree "$spid"; return 1; }
	ip netns add "${FABRIC_PREFIX}away"
	fabric_in 2 ip link set eth0 netns "${FABRIC_PREFIX}away" || return 1
	# the processes keep the device open (and its unregistration waiting)
	# for a while before they are killed, as applications would
	sleep 2
	ip netns pids "$(fabric_ns 2)" | xargs -r kill -9
	kill_tree "$cpid"
	wait "$spid" "$cpid" 2>/dev/null
	wait_for 30 test ! -e /sys/class/infiniband/h2 || { echo "h2 still there"; return 1; }
	ip netns del "${FABRIC_PREFIX}away"
	[ -e /sys/class/infiniband/h1 ]
}
ktap_result "h2's netdev moved out during traffic: its device goes, h1 stays" move_out
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "surviving devices still work: h1 <-> h3 ibv_rc_pingpong" bash -c '
	source '"$(dirname "$0")"'/../../lib/shell/lib.sh; source '"$(dirname "$0")"'/../../lib/shell/fabric.sh; FABRIC_PREFIX='"$FABRIC_PREFIX"'
	SERVER_NS=$(fabric_ns 3) CLIENT_NS=$(fabric_ns 1) peer_pair survive \
		ibv_rc_pingpong -d h3 -g $(fabric_gid 3) -n 100 -c -- \
		ibv_rc_pingpong -d h1 -g $(fabric_gid 1) -n 100 -c $(fabric_ip 3)'
fabric_destroy
ktap_result "all fabric devices gone after the namespaces are deleted" \
	wait_for 30 no_ib_devices
ktap_result "rdma_rxecc unloads afterwards" timeout 60 rmmod rdma_rxecc

# Stock rdma_rxe in init_net, rdma_rxecc in namespaces, both loaded.
coexist_setup() {
	rxecc_load && fabric_init && fabric_add_host 5 && fabric_add_host 6 &&
		veth_up d0 10.9.0.1/24 && rxe_load && rdma_link_add y0 rxe d0
}
ktap_result "rdma_rxecc (hosts h5, h6) and stock rdma_rxe (y0 in init_net) both loaded" coexist_setup
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "rdma_rxe's y0 works beside rdma_rxecc" bash -c '
	source '"$(dirname "$0")"'/../../lib/shell/lib.sh; g=$(wait_gid y0 10.9.0.1) &&
	peer_pair coex_y0 ibv_rc_pingpong -d y0 -g $g -n 200 -c -- ibv_rc_pingpong -d y0 -g $g -n 200 -c 10.9.0.1'
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "rdma_rxecc's h5 -> switch -> h6 works beside rdma_rxe" bash -c '
	source '"$(dirname "$0")"'/../../lib/shell/lib.sh; source '"$(dirname "$0")"'/../../lib/shell/fabric.sh; FABRIC_PREFIX='"$FABRIC_PREFIX"'
	SERVER_NS=$(fabric_ns 6) CLIENT_NS=$(fabric_ns 5) peer_pair coex_h5 \
		ib_write_bw -d h6 -x $(fabric_gid 6) -F -n 200 -- ib_write_bw -d h5 -x $(fabric_gid 5) -F -n 200 $(fabric_ip 6)'
# rdma_rxe's unload would take rdma_rxecc's devices too (it unregisters every
# device of driver id RDMA_DRIVER_RXE): delete ours first.
fabric_destroy
modules_unload >/dev/null 2>&1
ktap_finished
