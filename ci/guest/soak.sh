#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make soak`: the congestion workload over and over for
# SOAK_TIME seconds, in rounds of SOAK_ROUND seconds. A round: h2, h3, h4
# move verified data to h1 (rxecc-verbs, all operations, every byte checked)
# through swp1, the bottleneck (pfc qdisc at 50 Mbit/s with PFC on priority 3
# and ECN marking; DCQCN and PFC on at every host), while h1 churns 200 QPs
# (qp_churn.py). After each round, SOAK_OUT/soak.tsv gets one line: the
# memory the kernel holds (Slab, SUnreclaim, MemAvailable in KiB), every
# host's RDMA resources (QPs, CQs, MRs, PDs), the sum of the counters that
# must stay 0 (receive drops, CNP send errors, retry exhaustion, send
# errors) and the bytes verified. SOAK_OUT/report.txt says what grew.
# shellcheck source=../../lib/shell/lib.sh
source "$RXECC_TOP/lib/shell/lib.sh"
# shellcheck source=../../lib/shell/fabric.sh
source "$RXECC_TOP/lib/shell/fabric.sh"
SOAK_OUT=${SOAK_OUT:-/mnt/out/soak}
mkdir -p "$SOAK_OUT"
LOGDIR=$SOAK_OUT/logs
mkdir -p "$LOGDIR"
VERBS_SUMMARY=$SOAK_OUT/verified.txt
# shellcheck source=../../selftests/rxecc/verbs.sh
source "$RXECC_TOP/selftests/rxecc/verbs.sh"
SOAK_TIME=${SOAK_TIME:-600}
SOAK_ROUND=${SOAK_ROUND:-30}
T=$RXECC_TOOL
say() { echo "soak: $*"; }

modules_unload >/dev/null 2>&1
rxecc_load && pfc_load || exit 1
modprobe rdma_cm
fabric_init
for i in 1 2 3 4; do fabric_add_host $i || exit 1; done
fabric_sw "$T" qdisc replace dev swp1 rate 50 pfc 0x08 link_speed 1gbit limit 256KiB xoff 24KiB \
	xon 12KiB headroom 160KiB kmin 10KB kmax 40KB pmax 20 || exit 1
fabric_dcqcn_all profile lab && fabric_dcqcn_all set ecn ect0 rp_enable all np_enable all \
	pfc_enable 0x08 link_speed 1gbit || exit 1
GID1=$(fabric_gid 1) || exit 1

# Counters that must not move in a healthy run.
FLAT="rx_drop_malformed rx_drop_dgid rx_drop_unknown_qp rx_drop_qp_state rx_drop_addr_mismatch
	rx_drop_key_mismatch rx_icrc_encapsulated np_cnp_send_err retry_exceeded_err
	retry_rnr_exceeded_err send_err tx_pfc_send_err qp_cc_nomem"
flat_sum() {
	local s=0 i c
	for i in 1 2 3 4; do for c in $FLAT; do s=$((s + $(port_counter "h$i" "$c"))); done; done
	echo $s
}
mem() {	# "SLAB SUNRECLAIM AVAILABLE" in KiB
	awk '{ v[$1] = $2 } END { print v["Slab:"], v["SUnreclaim:"], v["MemAvailable:"] }' /proc/meminfo
}
res() {	# QPs CQs MRs PDs of all four hosts together
	rdma -j res show | python3 "$RXECC_TOP/lib/python/rxecc_show.py" res-total h
}
sw_drops() {
	fabric_sw "$T" -j qdisc show dev swp1 | python3 "$RXECC_TOP/lib/python/rxecc_show.py" qdisc-drops
}

printf 'round\tseconds\tslab_kib\tsunreclaim_kib\tavailable_kib\tqps\tcqs\tmrs\tpds\tflat_counters\tswitch_drops\tverified_bytes\tok\n' \
	>"$SOAK_OUT/soak.tsv"
start=$SECONDS
r=0
fail=0
while [ $((SECONDS - start)) -lt "$SOAK_TIME" ]; do
	r=$((r + 1))
	fabric_in 1 timeout 300 python3 "$RXECC_TOP/selftests/rxecc/qp_churn.py" h1 "$GID1" --qps 200 \
		>"$LOGDIR/churn-$r.json" 2>&1 &
	churn=$!
	ok=1
	verbs_run "round$r" "2 3 4" --tos 104 --duration "$SOAK_ROUND" --ack-timeout 18 \
		>"$LOGDIR/round$r.txt" 2>&1 || ok=0
	wait $churn || { ok=0; say "round $r: the QP churn failed (logs/churn-$r.json)"; }
	sleep 1
	bytes=$(awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "bytes") b += $i} END {print b + 0}' \
		"$LOGDIR/round$r.txt")
	echo "$r $((SECONDS - start)) $(mem) $(res) $(flat_sum) $(sw_drops) $bytes $ok" | tr ' ' '\t' \
		>>"$SOAK_OUT/soak.tsv"
	say "round $r: $(tail -n 1 "$SOAK_OUT/soak.tsv")"
	[ $ok = 1 ] || fail=1
done
fabric_destroy
modules_unload >/dev/null 2>&1
say "unloaded; after unload: $(mem)"
exit $fail
