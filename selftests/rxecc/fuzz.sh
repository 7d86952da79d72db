#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Packet fuzzing of an rxecc device with live QPs (roce_fuzz.py, fixed
# seeds): h2 moves verified data to h1 with rxecc-verbs (every byte and
# completion checked) while h3 sends malformed RoCEv2 packets at h1 from a
# raw socket (mutated BTH fields, unknown opcodes, transport versions,
# truncated and short packets, wrong pads, bad ICRC, oversized and
# IP-fragmented packets, unknown, zero, destroyed and multicast QP numbers,
# a foreign P_Key, CNPs with random, stale or multicast QPs, from the wrong
# host, with a foreign P_Key or malformed, CE-marked packets with a wrong
# PSN), some spoofing h2's address, over IPv4, priority-tagged from the
# switch's port, and (another live transfer) IPv6; the switch sends random
# MAC control frames to h1's port (PFC, 802.3x PAUSE, other opcodes, to
# other addresses or VLAN-tagged), and h1 the same to a pfc qdisc's port.
#   - every packet is dropped and counted: each drop counter of h1 grows by
#     exactly what the fuzzer sent for it;
#   - the live transfer passes all its checks; no CNP reached h1's rate
#     limiter, and no forged CE mark made h1 send a CNP (np_cnp_sent +0);
#     no kernel splat (ci/selftests.sh);
#   - PFC frames count per priority not enabled (ignored), as malformed or
#     as not from the link partner (rejected), and pause only enabled
#     priorities.
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
VERBS_SUMMARY=$LOGDIR/fuzz-summary.txt
source "$(dirname "$0")/verbs.sh"
need_root
HERE=$(cd "$(dirname "$0")" && pwd)
FUZZ=${FUZZ:-2500}		# RoCE packets per round (every kind some 150 times)
PFC_FUZZ=${PFC_FUZZ:-2000}	# PFC frames

ktap_header
ktap_plan 6

verbs_fabric 3 pfc

DROPS="rx_drop_malformed rx_drop_dgid rx_drop_unknown_qp rx_drop_qp_state rx_drop_addr_mismatch
	rx_drop_key_mismatch rx_icrc_encapsulated rp_cnp_ignored rp_cnp_handled rx_pfc_ignored
	rp_cnp_drop_pkey_mismatch np_ecn_marked_roce_packets np_cnp_sent
	rx_pfc_malformed rx_pfc_rejected rx_prio3_pause"
snap_drops() { local c; for c in $DROPS; do snap "1:$c"; done; }
# check_expect JSON: every counter of h1 grew by what the fuzzer expected
# (counters it did not name by 0).
check_expect() {
	local c deltas=()
	for c in $DROPS; do deltas+=("$c=$(delta "1:$c")"); done
	python3 "$HERE/fuzz_check.py" expect "$1" "${deltas[@]}"
}

# live_start NAME [ADDR]: h2 -> h1 (h1's ADDR) until live_stop (verbs.sh);
# LIVE_QPN: h1's QP of it.
verbs_qp_on_h1() { [[ $(fabric_in 1 rdma res show qp link h1/1) == *rxecc-verbs* ]]; }
live_start() {
	verbs_live_start "$1" 2 19600 60 "${2:-$(fabric_ip 1)}" || return 1
	wait_for 20 verbs_qp_on_h1 || return 1
	LIVE_QPN=$(fabric_in 1 rdma -j res show qp link h1/1 |
		python3 "$RXECC_TOP/lib/python/rxecc_show.py" qpns --type RC --comm rxecc-verbs --sep ,)
	[ -n "$LIVE_QPN" ] && echo "live QP of h1: $LIVE_QPN"
}
# live_stop NAME: stop the live transfer; if it did not end clean, the two
# devices' non-zero counters and QP states say where it stood.
live_stop() {
	verbs_live_stop "$1" && return 0
	local i
	for i in 1 2; do
		echo "h$i: $(cd "/sys/class/infiniband/h$i/ports/1/hw_counters" && grep -H . -- * | grep -v ':0$' | tr '\n' ' ')"
		fabric_in "$i" rdma res show qp link "h$i/1" | grep -v " GSI\| SMI" | head -4
	done
	return 1
}

# A destroyed QP's number (a "stale" QP): h1's QP of a short transfer.
stale_qpns() {
	fabric_in 1 timeout 60 "$VERBS" server -p 19601 --timeout 30 >/dev/null 2>"$LOGDIR/stale.err" &
	local s=$!
	wait_for 10 grep -q listening "$LOGDIR/stale.err" || return 1
	fabric_in 2 "$VERBS" client "$(fabric_ip 1)" -p 19601 --count 10 >/dev/null &
	local c=$!
	wait_for 20 verbs_qp_on_h1
	STALE=$(fabric_in 1 rdma -j res show qp link h1/1 |
		python3 "$RXECC_TOP/lib/python/rxecc_show.py" qpns --type RC --sep ,)
	wait $c $s
	echo "stale QPs of h1: $STALE"
}

# roce_round SEED [6|tagged]: from h3 over IPv4 or IPv6, or from the switch's
# port to h1 as priority-tagged Ethernet frames (IPv4; some of them to a
# multicast group h1 has joined).
roce_round() {
	local seed=$1 sn rc=0 ip=fabric_ip from=(fabric_in 3) how=()
	case ${2:-4} in
	6) ip=fabric_ip6 ;;
	tagged)
		# h1 joins 239.1.2.3 at the IP level (an address with autojoin;
		# it also becomes a GID of h1's device), so that multicast
		# packets and CNPs to the group reach the device. No QP attaches
		# to it: rxe has no group there.
		from=(fabric_sw)
		how=(--tagged swp1 --dmac "$(fabric_in 1 cat /sys/class/net/eth0/address)" --mcast 239.1.2.3)
		fabric_in 1 ip addr add 239.1.2.3/32 dev eth0 autojoin || return 1
		;;
	esac
	snap_drops
	sn=$(softnet_drops)
	"${from[@]}" python3 "$HERE/roce_fuzz.py" roce --src "$($ip 3)" --peer "$($ip 2)" \
		--dst "$($ip 1)" --live "$LIVE_QPN" --stale "$STALE" --count "$FUZZ" --seed "$seed" \
		"${how[@]}" >"$LOGDIR/fuzz-$seed.json" || rc=1
	sleep 1
	[ "${2:-4}" != tagged ] || fabric_in 1 ip addr del 239.1.2.3/32 dev eth0
	[ "$rc" -eq 0 ] || return 1
	cat "$LOGDIR/fuzz-$seed.json"
	echo "receive backlog drops: $(($(softnet_drops) - sn))"
	check_expect "$LOGDIR/fuzz-$seed.json" || rc=1
	echo "seed $seed: $FUZZ RoCE packets $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kinds"])' \
		"$LOGDIR/fuzz-$seed.json"), each counted" >>"$VERBS_SUMMARY"
	return "$rc"
}

# ---- RoCE ---------------------------------------------------------------------
stale_qpns >"$LOGDIR/stale.log" 2>&1
STALE=$(sed -n 's/^stale QPs of h1: //p' "$LOGDIR/stale.log")
roce_fuzz() {
	live_start roce || return 1
	local rc=0
	roce_round 1 || rc=1
	roce_round 2 || rc=1
	roce_round 3 tagged || rc=1
	live_stop roce || rc=1
	return "$rc"
}
ktap_result "RoCE fuzz (3 x $FUZZ packets, seeds 1 to 3, the third priority-tagged): every packet dropped and counted by reason, the live QP's data verified" roce_fuzz

# The same over IPv6: the live transfer on h1's IPv6 GID, the fuzzer's
# packets with IPv6 headers (and valid UDP checksums).
roce_fuzz6() {
	live_start roce6 "$(fabric_ip6 1)" || return 1
	local rc=0
	roce_round 4 6 || rc=1
	live_stop roce6 || rc=1
	return "$rc"
}
ktap_result "RoCE fuzz over IPv6 ($FUZZ packets, seed 4): every packet dropped and counted by reason, the live QP's data verified" roce_fuzz6

no_throttle() {
	# h1's QP handled no CNP: none of the fuzzer's CNPs (random or stale
	# QP, off-path source, bad ICRC or length) reached its rate limiter.
	[ "$(delta 1:rp_cnp_handled)" -eq 0 ] &&
		[ "$(cnt 1 rp_cnp_handled)" -eq 0 ]
}
ktap_result "no fuzzed CNP was acted on (h1 rp_cnp_handled 0)" no_throttle

# ---- PFC ------------------------------------------------------------------------
pfc_fuzz() {	# h1 has PFC off: every enabled priority of a frame is ignored
	local rc=0
	fabric_dcqcn 1 set pfc_enable none || return 1
	live_start pfc || return 1
	snap_drops
	fabric_sw python3 "$HERE/roce_fuzz.py" pfc swp1 --count "$PFC_FUZZ" --seed 3 \
		>"$LOGDIR/pfc-fuzz.json" || rc=1
	sleep 1
	cat "$LOGDIR/pfc-fuzz.json"
	check_expect "$LOGDIR/pfc-fuzz.json" || rc=1
	live_stop pfc || rc=1
	echo "PFC: $PFC_FUZZ frames, each counted" >>"$VERBS_SUMMARY"
	return "$rc"
}
ktap_result "PFC fuzz ($PFC_FUZZ random and malformed frames, PFC off): counted, nothing paused, live data verified" pfc_fuzz

# The same generator at sch_pfc's receive path: h1 sends the frames to its
# switch port, whose pfc qdisc has PFC on priority 3 only, while the live
# transfer crosses that port towards h1. Every frame is counted by the
# qdisc (malformed; per priority, ignored or a pause of priority 3), and
# the transfer survives the pauses, each up to 65535 quanta at 10 Gbit/s.
qdisc_fuzz() {
	local rc=0 before after
	fabric_sw "$RXECC_TOOL" qdisc add dev swp1 pfc 0x08 || return 1
	live_start qdisc || { fabric_sw tc qdisc del dev swp1 root; return 1; }
	qx() { fabric_sw "$RXECC_TOOL" -j qdisc show dev swp1; }
	before=$(qx)
	fabric_in 1 python3 "$HERE/roce_fuzz.py" pfc eth0 --count "$PFC_FUZZ" --seed 5 --enabled 0x08 \
		>"$LOGDIR/qdisc-fuzz.json" || rc=1
	sleep 1
	after=$(qx)
	cat "$LOGDIR/qdisc-fuzz.json"
	python3 "$HERE/fuzz_check.py" qdisc "$LOGDIR/qdisc-fuzz.json" "$before" "$after" || rc=1
	live_stop qdisc || rc=1
	fabric_sw tc qdisc del dev swp1 root || rc=1
	echo "PFC at sch_pfc: $PFC_FUZZ frames, each counted" >>"$VERBS_SUMMARY"
	return "$rc"
}
ktap_result "PFC fuzz at a pfc qdisc's receive path ($PFC_FUZZ frames, PFC on priority 3): counted, priority 3 paused, live data verified" qdisc_fuzz

pfc_enabled_only() {	# h1 has PFC on priority 3 only
	local rc=0
	fabric_dcqcn 1 set pfc_enable 0x08 || return 1
	snap_drops
	# XOFF for every priority but 3, then XOFF for 3 (then XON); the
	# expectation, printed before anything is sent, goes to the file
	fabric_sw python3 "$HERE/roce_fuzz.py" pfc-enabled swp1 >"$LOGDIR/pfc-enabled.json" || rc=1
	# (the counters were read 0.9 s after the frames when a python3 start
	# came first: keep that settle time)
	sleep 1
	check_expect "$LOGDIR/pfc-enabled.json" || rc=1
	fabric_dcqcn 1 set pfc_enable none
	return "$rc"
}
ktap_result "PFC frames pause only the priorities PFC is enabled for (7 others ignored per frame)" pfc_enabled_only

ktap_diag "$(cat "$VERBS_SUMMARY")"
ktap_finished
