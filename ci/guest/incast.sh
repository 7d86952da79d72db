#!/bin/bash
# Guest side of ci/incast.sh: a 3:1 incast on the one-guest fabric. h2, h3
# and h4 write to h1 (ib_write_bw, 64 KiB messages, DURATION seconds) through
# a switch port limited to RATE that marks CE (RED with ecn), once per mode:
#   off    DCQCN off (rp_enable = np_enable = 0; data still ECT(0))
#   lab    DCQCN on, lab profile
#   mlx5   DCQCN on, mlx5 profile
# Per mode, $INCAST_OUT/MODE/ gets the switch egress capture (swp1.pcap),
# the perftest logs and counters.txt (counter deltas, qdisc statistics).
source "$RXECC_TOP/selftests/rxecc/lib.sh"
source "$RXECC_TOP/selftests/rxecc/fabric.sh"
INCAST_OUT=${INCAST_OUT:-/mnt/out/incast}
RATE=${RATE:-50mbit}
DURATION=${DURATION:-15}
MODES=${MODES:-off lab mlx5}
SENDERS="2 3 4"

modules_unload >/dev/null 2>&1
rxecc_load || exit 1
fabric_init
for i in 1 $SENDERS; do fabric_add_host "$i" || exit 1; done

counters() {
	local i c
	for i in 1 $SENDERS; do
		for c in np_cnp_sent np_ecn_marked_roce_packets rp_cnp_handled rp_tx_deferred \
			completer_retry_err duplicate_request rcvd_pkts sent_pkts; do
			echo "h$i $c $(port_counter "h$i" $c)"
		done
	done
}

run_mode() {
	local mode=$1 dir="$INCAST_OUT/$1" i pids=()
	mkdir -p "$dir"
	fabric_mark 1 "$RATE" || return 1
	if [ "$mode" = off ]; then
		fabric_dcqcn_all profile lab && fabric_dcqcn_all set rp_enable none np_enable none || return 1
	else
		fabric_dcqcn_all profile "$mode" && fabric_dcqcn_all set rp_enable all np_enable all || return 1
	fi
	counters >"$dir/before.txt"
	# One server at a time, each listening before the next starts.
	local n=0
	for i in $SENDERS; do
		fabric_in 1 timeout $((DURATION + 60)) ib_write_bw -d h1 -x "$(fabric_gid 1)" -F -s 65536 \
			-D "$DURATION" -p $((18700 + i)) >"$dir/s$i.log" 2>&1 &
		pids+=($!)
		n=$((n + 1))
		wait_for 20 tcp_listening "$(fabric_ns 1)" $n ||
			{ echo "$mode: server for h$i not listening"; ip netns exec "$(fabric_ns 1)" ss -Hltnp; }
	done
	fabric_sw timeout $((DURATION + 60)) dumpcap -q -P -i swp1 -s 80 -w "$dir/swp1.pcap" >/dev/null 2>&1 &
	local cap=$!
	sleep 2
	for i in $SENDERS; do
		client_run "$dir/c$i.log" ip netns exec "$(fabric_ns "$i")" ib_write_bw -d "h$i" \
			-x "$(fabric_gid "$i")" -F -s 65536 -D "$DURATION" -p $((18700 + i)) "$(fabric_ip 1)" >/dev/null &
		pids+=($!)
	done
	local rc=0
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	sleep 1
	capture_stop "$dir/swp1.pcap"; wait $cap 2>/dev/null
	counters >"$dir/after.txt"
	fabric_sw tc -s qdisc show dev swp1 >"$dir/qdisc.txt"
	echo "$mode: perftest exit $rc"
	return $rc
}

fail=0
for m in $MODES; do run_mode "$m" || fail=1; done
fabric_destroy
modules_unload >/dev/null 2>&1
exit $fail
