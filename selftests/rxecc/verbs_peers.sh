#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Real verbs peers against one rdma_rxecc device (loopback through the
# device): perftest bandwidth and latency tests with and without rdma_cm,
# RC and UD, IPv4 and IPv6 GIDs; ibv_rc/ud_pingpong with buffer checks;
# rping with data validation; qperf over rdma_cm.
source "$(dirname "$0")/../../lib/shell/lib.sh"
need_root

IP=10.0.0.1
IP6=fd00::1
BW_ITERS=${BW_ITERS:-300}
LAT_ITERS=${LAT_ITERS:-300}

ktap_header
ktap_plan 25

modules_unload >/dev/null 2>&1
veth_up d0 $IP/24 $IP6/64 || ktap_exit_skip "cannot create a veth pair"
# shellcheck disable=SC2015 # fail when either step fails
rxecc_load && rdma_link_add x0 rxecc d0 || {
	ktap_fail "set up rdma_rxecc device x0"
	ktap_finished
}
# shellcheck disable=SC2015 # fail when either GID is missing
G4=$(wait_gid x0 "$IP") && G6=$(wait_gid x0 "$IP6") || {
	ktap_fail "RoCEv2 GIDs of $IP and $IP6 on x0"
	ktap_finished
}
ktap_diag "x0 on d0: IPv4 GID index $G4, IPv6 GID index $G6"

# perftest NAME TOOL COLUMN ARGS...: a server/client pair with identical
# arguments; both must succeed and one side must report a positive value.
perftest() {
	local name=$1 tool=$2 column=$3
	shift 3
	perftest_measured "$name" "$column" \
		peer_pair "$name" "$tool" -d x0 -F "$@" -- "$tool" -d x0 -F "$@" "$IP"
}
BW="BW average[MB/sec]"
# Atomics move 8 B each: their bandwidth rounds to 0.00 MB/s on a slow guest
# (the debug kernel: about 500 per second), their message rate does not.
MPPS="MsgRate[Mpps]"
LAT="t_typical[usec]"

for t in write read send; do
	ktap_result "ib_${t}_bw RC 64 KiB, IPv4 GID" \
		perftest "${t}_bw" "ib_${t}_bw" "$BW" -x "$G4" -s 65536 -n "$BW_ITERS"
done
ktap_result "ib_atomic_bw RC fetch-and-add" perftest atomic_bw ib_atomic_bw "$MPPS" -x "$G4" -n 1000
ktap_result "ib_atomic_bw RC compare-and-swap" \
	perftest atomic_cs_bw ib_atomic_bw "$MPPS" -x "$G4" -n 1000 -A CMP_AND_SWAP
ktap_result "ib_send_lat RC 2 B" perftest send_lat ib_send_lat "$LAT" -x "$G4" -s 2 -n "$LAT_ITERS"
ktap_result "ib_write_lat RC 2 B" perftest write_lat ib_write_lat "$LAT" -x "$G4" -s 2 -n "$LAT_ITERS"
ktap_result "ib_read_lat RC 2 B" perftest read_lat ib_read_lat "$LAT" -x "$G4" -s 2 -n "$LAT_ITERS"
ktap_result "ib_send_bw UD 1 KiB" perftest ud_send_bw ib_send_bw "$BW" -x "$G4" -c UD -s 1024 -n "$BW_ITERS"
ktap_result "ib_send_lat UD 2 B" perftest ud_send_lat ib_send_lat "$LAT" -x "$G4" -c UD -s 2 -n "$LAT_ITERS"
ktap_result "ib_write_bw UC 64 KiB" perftest uc_write_bw ib_write_bw "$BW" -x "$G4" -c UC -s 65536 -n "$BW_ITERS"
ktap_result "ib_write_bw RC 64 KiB, IPv6 GID" \
	perftest write_bw6 ib_write_bw "$BW" -x "$G6" -s 65536 -n "$BW_ITERS"
ktap_result "ib_write_bw RC 2 QPs" perftest write_bw_q2 ib_write_bw "$BW" -x "$G4" -s 65536 -q 2 -n "$BW_ITERS"

# Through rdma_cm: the CM resolves the GID from the IP address.
for t in write read send; do
	ktap_result "ib_${t}_bw RC via rdma_cm (-R)" \
		perftest "${t}_bw_cm" "ib_${t}_bw" "$BW" -R -s 65536 -n "$BW_ITERS"
done
ktap_result "ib_atomic_bw via rdma_cm (-R)" perftest atomic_bw_cm ib_atomic_bw "$MPPS" -R -n 1000
ktap_result "ib_send_lat via rdma_cm (-R)" perftest send_lat_cm ib_send_lat "$LAT" -R -s 2 -n "$LAT_ITERS"
ktap_result "ib_write_lat via rdma_cm (-R)" perftest write_lat_cm ib_write_lat "$LAT" -R -s 2 -n "$LAT_ITERS"
ktap_result "ib_send_bw UD via rdma_cm (-R)" \
	perftest ud_send_bw_cm ib_send_bw "$BW" -R -c UD -s 1024 -n "$BW_ITERS"

ktap_result "ibv_rc_pingpong 4 KiB, buffers checked" \
	peer_pair rc_pingpong ibv_rc_pingpong -d x0 -g "$G4" -s 4096 -n 500 -c -- \
	ibv_rc_pingpong -d x0 -g "$G4" -s 4096 -n 500 -c $IP
ktap_result "ibv_ud_pingpong 1 KiB, buffers checked" \
	peer_pair ud_pingpong ibv_ud_pingpong -d x0 -g "$G4" -s 1024 -n 500 -c -- \
	ibv_ud_pingpong -d x0 -g "$G4" -s 1024 -n 500 -c $IP

rping_check() {
	peer_pair rping rping -s -a "$IP" -C 50 -S 1024 -V -- rping -c -a "$IP" -C 50 -S 1024 -V -v || return 1
	local n
	n=$(grep -c "ping data:" "$LOGDIR/rping.client.log")
	echo "client printed $n verified pings"
	[ "$n" -eq 50 ]
}
ktap_result "rping 50 x 1 KiB, data validated on both sides" rping_check

qperf_check() {
	local log="$LOGDIR/qperf.client.log"
	qperf >"$LOGDIR/qperf.server.log" 2>&1 &
	local spid=$! rc=1 try
	for try in $(seq 1 20); do
		sleep 0.5
		timeout 60 qperf "$IP" -cm1 -t 2 -m 64K rc_bw rc_lat >"$log" 2>&1 && { rc=0; break; }
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	cat "$log"
	[ "$rc" -eq 0 ] && grep -qE "bw *= *[0-9.]+ [KMG]B/sec" "$log" && grep -qE "latency *= *[0-9.]+ (ms|us|ns|sec)" "$log"
}
ktap_result "qperf -cm1 rc_bw rc_lat" qperf_check

counters_check() {
	local s r
	s=$(port_counter x0 sent_pkts) r=$(port_counter x0 rcvd_pkts)
	echo "sent_pkts $s rcvd_pkts $r"
	[ "$s" -gt 100000 ] && [ "$r" -gt 100000 ]
}
ktap_result "port counters saw the traffic (sent_pkts, rcvd_pkts)" counters_check

rdma statistic show link x0/1 | ktap_diag "$(cat)"
modules_unload >/dev/null 2>&1
ktap_finished
