#!/bin/bash
# Guest side of `make bench`: stock rdma_rxe and rdma_rxecc measured
# alternately in this one boot (the order flips every round, the modules are
# swapped between runs), loopback through one device on a veth:
#   ib_write_bw and ib_read_bw at 64 KiB, ib_send_lat at 2 B; rdma_rxecc with
#   DCQCN enabled as it loads (no congestion: the cost of the hooks).
# Reports go to $BENCH_OUT/<round>/<rxe|rxecc>/<test>.log.
source "$RXECC_TOP/selftests/rxecc/lib.sh"
ROUNDS=${ROUNDS:-5}
BW_ITERS=${BW_ITERS:-3000}
LAT_ITERS=${LAT_ITERS:-3000}
BENCH_OUT=${BENCH_OUT:-/mnt/out/bench}
IP=10.0.0.1

modules_unload >/dev/null 2>&1
veth_up d0 $IP/24 || exit 1
fail=0

measure() {
	local round=$1 mod=$2 dir="$BENCH_OUT/$1/$2"
	mkdir -p "$dir"
	modules_unload || return 1
	if [ "$mod" = rxecc ]; then rxecc_load; else rxe_load; fi || return 1
	rdma_link_add b0 "$mod" d0 || return 1
	if [ "$mod" = rxecc ]; then
		# rdma_rxecc as loaded: DCQCN on (mlx5 profile, ECT(0) on data, the
		# gates and hooks all in the path), no congestion on a loopback.
		local cfg
		cfg=$("$RXECC_TOOL" dcqcn show dev b0) || return 1
		echo "rdma_rxecc: $(echo "$cfg" | grep -E '^dev |^  (rp_enable|np_enable|ecn) ' | tr -s ' \n' ' ')"
		echo "$cfg" | grep -qE '^  rp_enable +0xff ' && echo "$cfg" | grep -qE '^  np_enable +0xff ' || return 1
	fi
	local g
	g=$(wait_gid b0 $IP) || return 1
	local t args
	for t in ib_write_bw ib_read_bw ib_send_lat; do
		case $t in
		*_bw) args=(-s 65536 -n "$BW_ITERS") ;;
		*_lat) args=(-s 2 -n "$LAT_ITERS") ;;
		esac
		# perftest sometimes fails to calibrate its clock under TCG and
		# reports inf: such a run is repeated (at most twice).
		local try v=
		for try in 1 2 3; do
			peer_pair "bench-$round-$mod-$t" "$t" -d b0 -x "$g" -F "${args[@]}" -- \
				"$t" -d b0 -x "$g" -F "${args[@]}" $IP >/dev/null || return 1
			cp "$LOGDIR/bench-$round-$mod-$t.client.log" "$dir/$t.log"
			v=$("$RXECC_TOP/build/userspace/rxecc-report" headline "$dir/$t.log") && break
			echo "round $round $mod $t: no valid result (try $try), repeating"
		done
		[ -n "$v" ] || return 1
		echo "round $round $mod $t: $v"
	done
}

for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="rxe rxecc"; else order="rxecc rxe"; fi
	for m in $order; do
		measure "$r" "$m" || { echo "round $r $m failed"; fail=1; }
	done
done
modules_unload >/dev/null 2>&1
exit $fail
