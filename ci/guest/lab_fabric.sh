#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make demo` for the scenarios of PFC gone wrong (docs/lab.md,
# "When PFC goes wrong"), the leaf-spine's ECMP ("ECMP and the UDP source
# port") and its collectives ("Collectives on the leaf-spine": all-to-all,
# all-reduce): the topology comes from SCENARIO.sh (written by
# ci/lab/lab.py), one of
#   ring     four switches in a ring, routes one way round, hI writes to the
#            host two switches on: a cyclic buffer dependency (PFC deadlock);
#            the ring ports are the congested ones
#   victim   two switches: h2, h3 (on sw) write to h5 (on sw2), whose port
#            sw2:swp5 is the congested one; the victim h4 -> h6 shares only
#            the uplink sw:to-sw2 with them (head-of-line blocking)
#   storm    two switches: h2 (on sw) writes to h1, h3 (on sw) to h4, both
#            behind sw2; STALL_AT s into the load h1's receive path all but
#            stops (rx_stall.py: one packet through every STALL_RELEASE ms),
#            so rxecc on h1 pauses its switch port (pfc_rx_xoff); the flow
#            h3 -> h4 is the victim (it shares the uplink sw -> sw2)
#   ecmp     a leaf-spine (2 leaves, 2 spines, 4 hosts each): hI (lf1) writes
#            TRANSFER bytes to hI+4 (lf2) over FLOWS_PER_PAIR QPs, all at
#            once; lf1's two uplinks (RATE) are the congested ports, and
#            the mode's ECMP hash (l3, l4) and UDP source-port policy (qpn,
#            flow_label) decide which QP takes which; the spines count each
#            flow's bytes (an nft set keyed by addresses and source port)
#   collective the same leaf-spine, rxecc-coll (COLL_OP, COLL_BYTES, COLL_ITERS)
#            among h1..h8, one rank each; every leaf port (towards the
#            hosts and the spines) is a congested port at RATE, so the leaves
#            are 2:1 oversubscribed; the spines' ports honour PFC
# A mode's watchdog (watchdog, watchdog_action) is on the CONGESTED ports,
# with watchdog_ports all on every port. Every host link runs at LINK (a
# token bucket on the host's egress). Per
# mode MODE, LAB_OUT/MODE/ gets:
#   samples            pfc_sampler.py: every pfc qdisc of every switch and the
#                      hosts' counters, every 0.1 s ("TIME NAME JSON")
#   qdiscs.json        `rxecc -j qdisc show` of every switch after the run
#   load-start, load-done, stall-start, stall-done   CLOCK_MONOTONIC seconds
#   stall.json         rx_stall.py's summary (storm)
#   flows-SPINE.json   ecmp: `nft -j list set` of SPINE's flows (packets, bytes per
#                      source, destination and UDP source port) at the end
#   flows-SPINE.log    ecmp: the same every 0.2 s ("UPTIME JSON")
#   doneI-J.K          ecmp: CLOCK_MONOTONIC seconds when the K-th flow (of all,
#                      from 1), hI -> hJ, ended
#   hash-policy route-lf1   ecmp: lf1's fib_multipath_hash_policy and its route
#                      to h5 (two next hops), as the mode left them
#   coll.json rankR.log rankR.rc   collective: rank 0's report (a JSON object),
#                      each rank's errors and exit status (124: killed at DURATION)
#   cI-J.log sI-J.log  the perftest client and server of flow hI -> hJ
# Progress lines start with "lab:".
# shellcheck source=../../lib/shell/lib.sh
source "$RXECC_TOP/lib/shell/lib.sh"
# shellcheck source=../../lib/shell/fabric.sh
source "$RXECC_TOP/lib/shell/fabric.sh"
# shellcheck source=/dev/null
source "${1:?usage: lab_fabric.sh SCENARIO.sh}" || exit 1
LAB_OUT=${LAB_OUT:-/mnt/out/lab}
T=$RXECC_TOOL
COLL=$RXECC_TOP/build/userspace/rxecc-coll
PRIO=$((DSCP >> 3))
TCLASS=$((DSCP << 2))
say() { echo "lab: $*"; }
uptime() { local up _; read -r up _ </proc/uptime; echo "$up"; }

mkdir -p "$LAB_OUT"
modules_unload >/dev/null 2>&1
rxecc_load && pfc_load || exit 1

# The topology: HOSTS, FLOWS ("SRC:DST"), CONGESTED (switch:port at RATE,
# ECN marking with DCQCN) and PORTS (switch:port, a pfc qdisc without a rate
# there to honour and send PFC and to be counted).
fabric_init
case $TOPOLOGY in
ring)
	HOSTS="1 2 3 4" FLOWS="1:3 2:4 3:1 4:2"
	CONGESTED="sw:to-sw2 sw2:to-sw3 sw3:to-sw4 sw4:to-sw"
	PORTS="sw:swp1 sw2:swp2 sw3:swp3 sw4:swp4"
	i=1
	for s in sw sw2 sw3 sw4; do
		[ $s = sw ] || fabric_add_switch $s || exit 1
		fabric_add_host $i rxecc $s || exit 1
		i=$((i + 1))
	done
	fabric_ring sw sw2 sw3 sw4 || exit 1
	# shellcheck disable=SC2153 # RATE comes from the scenario
	say "fabric: four switches in a ring (${RATE} Mbit/s links), h1 -> h3, h2 -> h4, h3 -> h1, h4 -> h2"
	;;
victim)
	HOSTS="2 3 4 5 6" FLOWS="2:5 3:5 4:6"
	CONGESTED="sw2:swp5"
	PORTS="sw:to-sw2 sw2:swp6"
	fabric_add_switch sw2 || exit 1
	for i in 2 3 4; do fabric_add_host $i || exit 1; done
	for i in 5 6; do fabric_add_host $i rxecc sw2 || exit 1; done
	fabric_uplink sw sw2 || exit 1
	say "fabric: h2, h3 -> h5 through sw2:swp5 (${RATE} Mbit/s); the victim h4 -> h6 shares the uplink sw -> sw2"
	;;
storm)
	HOSTS="1 2 3 4" FLOWS="2:1 3:4"
	CONGESTED="sw2:swp1 sw2:swp4"
	PORTS="sw:to-sw2"
	fabric_add_switch sw2 || exit 1
	for i in 2 3; do fabric_add_host $i || exit 1; done
	for i in 1 4; do fabric_add_host $i rxecc sw2 || exit 1; done
	fabric_uplink sw sw2 || exit 1
	say "fabric: h2 -> h1 and the victim h3 -> h4 over the uplink sw -> sw2 (ports ${RATE} Mbit/s);" \
		"h1's receive path stalls ${STALL_AT} s into the load"
	;;
ecmp)
	HOSTS="1 2 3 4 5 6 7 8" FLOWS=''
	for i in 1 2 3 4; do
		for ((k = 0; k < FLOWS_PER_PAIR; k++)); do FLOWS+=" $i:$((i + 4))"; done
	done
	CONGESTED="lf1:to-sp1 lf1:to-sp2"
	PORTS="sp1:to-lf2 sp2:to-lf2"
	fabric_leafspine 2 2 4 || exit 1
	for s in sp1 sp2; do
		fabric_sw_in $s nft -f - <<-EOF || exit 1
			table inet lab_ecmp {
				set flows {
					type ipv4_addr . ipv4_addr . inet_service
					flags dynamic
					size 4096
				}
				chain spine {
					type filter hook forward priority 0;
					udp dport 4791 update @flows { ip saddr . ip daddr . udp sport counter }
				}
			}
		EOF
	done
	say "fabric: leaf-spine, h1..h4 (lf1) -> h5..h8 (lf2), $FLOWS_PER_PAIR QPs each, over lf1's two" \
		"uplinks (${RATE} Mbit/s), hosts at $LINK"
	;;
collective)
	HOSTS="1 2 3 4 5 6 7 8" FLOWS='' CONGESTED='' PORTS=''
	for i in 1 2 3 4; do CONGESTED+=" lf1:swp$i lf2:swp$((i + 4))"; done
	for s in sp1 sp2; do CONGESTED+=" lf1:to-$s lf2:to-$s"; PORTS+=" $s:to-lf1 $s:to-lf2"; done
	fabric_leafspine 2 2 4 && fabric_ecmp_hash 1 || exit 1
	say "fabric: leaf-spine, rxecc-coll $COLL_OP among h1..h8 (${COLL_BYTES} B, $COLL_ITERS iterations);" \
		"every leaf port ${RATE} Mbit/s (2:1 oversubscribed)"
	;;
*)
	say "unknown topology '$TOPOLOGY'"
	exit 1
	;;
esac
ALL_FLOWS=$FLOWS	# run_mode's FLOWS: these, or (placement = arranged) its own
for i in $HOSTS; do
	fabric_in "$i" tc qdisc replace dev eth0 root tbf rate "$LINK" burst 8kb limit 64kb || exit 1
done

COUNTERS="tx_prio${PRIO}_pause,rx_prio${PRIO}_pause,np_cnp_sent,np_ecn_marked_roce_packets,rp_cnp_handled"
COUNTERS+=",completer_retry_err,tx_pause_storm_error_events"

# port_set SW:PORT ARGS...: the port a pfc qdisc with ARGS.
port_set() {
	fabric_sw_in "${1%%:*}" tc qdisc del dev "${1#*:}" root 2>/dev/null
	fabric_sw_in "${1%%:*}" "$T" qdisc add dev "${1#*:}" "${@:2}"
}

# mode_set MODE: every port and host as the mode says.
# MUTANT (make lab-mutants) breaks a mechanism while the mode still claims
# it: no_pfc (the switch ports send and honour no PFC), no_watchdog (no
# switch watchdog), no_cut (DCQCN's rp_min_rate at the line rate: a CNP cuts
# nothing), one_uplink (ecmp: lf1 routes every flow over sp1, after the
# placement was arranged).
mode_set() {
	local m=$1
	local pfc=none swpfc mark=(kmax 0) wd p prof=(profile "${M_PROFILE[$m]}") en=none
	[ "${M_PFC[$m]}" = 1 ] && pfc=$((1 << PRIO))
	swpfc=$pfc
	[ "$MUTANT" = no_pfc ] && swpfc=none
	[ "${M_DCQCN[$m]}" = 1 ] && { mark=(kmin "$KMIN" kmax "$KMAX" pmax "$PMAX"); en=all; }
	wd=(wd_detection "${M_WD[$m]}" wd_action "${M_WD_ACTION[$m]}")
	[ "$MUTANT" = no_watchdog ] && wd=(wd_detection 0)
	for p in $CONGESTED; do
		port_set "$p" rate "$RATE" pfc "$swpfc" link_speed "$LINK" limit "$BUFFER" xoff "$XOFF" xon "$XON" \
			headroom "$HEADROOM" "${mark[@]}" "${wd[@]}" || return 1
	done
	# the watchdog on the congested ports only, or (watchdog_ports all) on
	# every port
	[ "${M_WD_PORTS[$m]}" = all ] || wd=(wd_detection 0)
	for p in $PORTS; do
		port_set "$p" pfc "$swpfc" link_speed "$LINK" limit "$BUFFER" xoff "$XOFF" xon "$XON" \
			headroom "$HEADROOM" kmax 0 "${wd[@]}" || return 1
	done
	[ "$SCALE" = 1 ] && [ "${M_PROFILE[$m]}" != lab ] && prof+=(scale "$LINK" speedup "$SPEEDUP")
	fabric_dcqcn_all "${prof[@]}" || return 1
	fabric_dcqcn_all set ecn ect0 rp_enable "$en" np_enable "$en" pfc_enable "$pfc" \
		link_speed "$LINK" tx_qlimit 16KiB device_stall_critical_watermark "${M_STALL[$m]}" || return 1
	if [ -n "${M_SET[$m]}" ]; then
		# shellcheck disable=SC2086 # NAME VALUE pairs
		fabric_dcqcn_all set ${M_SET[$m]} || return 1
	fi
	if [ "$MUTANT" = no_cut ] && [ "${M_DCQCN[$m]}" = 1 ]; then
		fabric_dcqcn_all set rp_min_rate_kbps "$LINK_KBPS" || return 1
	fi
	if [ "$TOPOLOGY" = ecmp ]; then
		ecmp_routes sp1 sp2 &&
			fabric_ecmp_hash "$([ "${M_HASH[$m]}" = l3 ] && echo 0 || echo 1)" &&
			fabric_dcqcn_all set udp_sport "${M_SPORT[$m]}" || return 1
		mkdir -p "$LAB_OUT/$m"
		fabric_sw_in lf1 sysctl -n net.ipv4.fib_multipath_hash_policy >"$LAB_OUT/$m/hash-policy"
		for s in sp1 sp2; do fabric_sw_in $s nft flush set inet lab_ecmp flows || return 1; done
	fi
	if [ "$TOPOLOGY" = storm ]; then
		# h1 pauses its switch port when its receive backlog holds a packet
		# PFC_RX_XOFF ms, and resumes it once one waited 1 ms or less
		fabric_dcqcn 1 set pfc_rx_xoff "${PFC_RX_XOFF}ms" pfc_rx_xon 1ms || return 1
	fi
}

# ecmp_routes SPINE[:WEIGHT]...: lf1's routes to lf2's hosts over these
# spines (weight 1 unless given).
ecmp_routes() {
	local i s w hops='' batch=''
	for s in "$@"; do
		w=1
		[[ $s == *:* ]] && w=${s#*:}
		hops+=" nexthop via ${FABRIC_NEXT[lf1:${s%%:*}]} weight $w"
	done
	for i in 5 6 7 8; do batch+="route replace 10.0.$i.0/24$hops"$'\n'; done
	ip -n "$(fabric_sw_ns lf1)" -batch - <<<"$batch"
}

# ecmp_arrange DIR: placement = arranged: the flows (FLOWS) chosen from
# where lf1's FIB sends each host pair (ci/lab/ecmp_arrange.py; DIR/routes,
# DIR/arranged). The address hash of the 16 host pairs is fixed for the
# boot; when its halves allow no arrangement (about 1 boot in 20), the two
# next hops' weights move the boundary between them (1:2, 2:1, ...) until
# one does; DIR/weights says which.
ecmp_arrange() {
	local dir=$1 i j dev w
	for w in 1:1 1:2 2:1 1:3 3:1 2:3 3:2; do
		ecmp_routes "sp1:${w%:*}" "sp2:${w#*:}" || return 1
		: >"$dir/routes"
		for i in 1 2 3 4; do
			for j in 5 6 7 8; do
				dev=$(ip -n "$(fabric_sw_ns lf1)" route get "$(fabric_ip "$j")" from "$(fabric_ip "$i")" \
					iif "swp$i" | sed -n 's/.* dev to-\(sp[12]\) .*/\1/p')
				echo "$i $j $dev" >>"$dir/routes"
			done
		done
		# every one of the 16 host pairs, or no arrangement
		[ "$(grep -cE '^[1-4] [5-8] sp[12]$' "$dir/routes")" = 16 ] || return 1
		if python3 "$RXECC_TOP/ci/lab/ecmp_arrange.py" "$dir/routes" >"$dir/arranged" 2>"$dir/arrange.err"; then
			echo "$w" >"$dir/weights"
			FLOWS=$(cut -d' ' -f1 "$dir/arranged" | tr '\n' ' ')
			return 0
		fi
	done
	return 1
}

# h1's receive stall (storm): rx_stall.py is started before the load (its
# start takes seconds here), h1's RoCEv2 packets go through it STALL_AT s
# into the load and until it ends (fabric_stall_*, lib/shell/fabric.sh).

# coll_run DIR: rxecc-coll among HOSTS, rank r on host r+1, each for
# DURATION s at most, with the lab's QP ACK timeout; rank 0's report in
# DIR/coll.json, each rank's exit status in DIR/rankR.rc (124: killed at
# DURATION). Fails if a rank does.
coll_run() {
	local dir=$1 i r list='' pids=() rc=0 args
	for i in $HOSTS; do list+="${list:+,}$(fabric_ip "$i")"; done
	args=(--hosts "$list" --op "$COLL_OP" --min-bytes "$COLL_BYTES" --max-bytes "$COLL_BYTES"
		--iters "$COLL_ITERS" --warmup 1 --tos "$TCLASS" --ack-timeout "$QP_TIMEOUT" --timeout 60)
	# ranks 1.. in the background, then rank 0, which reports
	for i in $HOSTS; do
		r=$((i - 1))
		[ "$r" = 0 ] && continue
		{
			fabric_in "$i" timeout -k 10 "$DURATION" "$COLL" --rank $r "${args[@]}" >"$dir/rank$r.log" 2>&1
			echo $? >"$dir/rank$r.rc"
		} &
		pids+=($!)
	done
	fabric_in 1 timeout -k 10 "$DURATION" "$COLL" --rank 0 "${args[@]}" --json >"$dir/coll.json" 2>"$dir/rank0.log"
	echo $? >"$dir/rank0.rc"
	wait "${pids[@]}"
	for i in $HOSTS; do [ "$(cat "$dir/rank$((i - 1)).rc")" = 0 ] || rc=1; done
	return $rc
}

# flow_name K SRC:DST: the name of the K-th flow (from 1) in logs: SRC-DST,
# and with ecmp (several flows per pair) SRC-DST.K.
flow_name() {
	local f=$2
	if [ "$TOPOLOGY" = ecmp ]; then echo "${f%:*}-${f#*:}.$1"; else echo "${f%:*}-${f#*:}"; fi
}

run_mode() {
	local m=$1 dir="$LAB_OUT/$1" f src dst port pids=() clients=() flowlog=() sampler rc=0 specs=() hw=() s k
	local amount=(-D "$DURATION") bw=ib_write_bw
	# ecmp: a fixed transfer per flow, all flows started together; 16
	# perftest processes polling their CQs would take the guest's CPUs
	# from the fabric, so they sleep on completion events (-e), which
	# perftest offers for SEND but not for WRITE
	[ "$TOPOLOGY" = ecmp ] && amount=(-n $((TRANSFER / MESSAGE)) -e) bw=ib_send_bw
	mkdir -p "$dir"
	mode_set "$m" || { say "$m: configuration failed"; return 1; }
	FLOWS=$ALL_FLOWS
	if [ "$TOPOLOGY" = ecmp ]; then
		if [ "${M_PLACE[$m]}" = arranged ]; then
			ecmp_arrange "$dir" || { say "$m: no arrangement of the flows (see $m/routes)"; return 1; }
			say "$m: flows arranged from lf1's FIB: $FLOWS"
		fi
		if [ "$MUTANT" = one_uplink ]; then
			ecmp_routes sp1 || return 1
		fi
		ip -n "$(fabric_sw_ns lf1)" route show "$(fabric_ip 5 | sed 's/\.1$/.0/')/24" >"$dir/route-lf1"
	fi
	port=18900 k=0
	for f in $FLOWS; do
		src=${f%:*} dst=${f#*:} port=$((port + 1)) k=$((k + 1))
		fabric_in "$dst" timeout $((DURATION + 90)) "$bw" -d "h$dst" -x "$(fabric_gid "$dst")" -F \
			-s "$MESSAGE" "${amount[@]}" -p $port --tclass=$TCLASS -u "$QP_TIMEOUT" \
			>"$dir/s$(flow_name $k "$f").log" 2>&1 &
		pids+=($!)
	done
	port=18900
	for f in $FLOWS; do
		port=$((port + 1))
		wait_for 20 tcp_listening_on "$(fabric_ns "${f#*:}")" $port ||
			{ say "$m: the server of $f is not listening"; rc=1; }
	done
	for s in "${FABRIC_SWITCHES[@]}"; do specs+=("$s=$(fabric_sw_ns "$s")"); done
	for s in $HOSTS; do hw+=(--hw "h$s"); done
	python3 "$RXECC_TOP/lib/python/pfc_sampler.py" --interval 0.1 "${hw[@]}" --counters "$COUNTERS" "${specs[@]}" \
		>"$dir/samples" 2>"$dir/sampler.err" &
	sampler=$!
	wait_for 30 test -s "$dir/samples" || { say "$m: the sampler did not start"; rc=1; }
	if [ "$TOPOLOGY" = storm ]; then
		fabric_stall_prepare 1 "$dir/stall" --release "$STALL_RELEASE" ||
			{ say "$m: rx_stall.py did not start (see $m/stall.err)"; rc=1; }
	fi
	if [ "$TOPOLOGY" = collective ]; then
		say "$m: rxecc-coll $COLL_OP, 8 ranks"
	elif [ "$TOPOLOGY" = ecmp ]; then
		say "$m: $(echo "$FLOWS" | wc -w) flows of $TRANSFER bytes (at most ${DURATION} s)"
	else
		say "$m: $(echo "$FLOWS" | wc -w) flows for ${DURATION} s"
	fi
	if [ "$TOPOLOGY" = ecmp ]; then
		# each spine's per-flow byte counts every 0.2 s, for each flow's start
		# and end (stamped when nft has read them: its start-up takes a while)
		for s in sp1 sp2; do
			# shellcheck disable=SC2016 # expanded by the spine's shell
			fabric_sw_in $s sh -c 'while :; do j=$(nft -j list set inet lab_ecmp flows)
				read -r up _ </proc/uptime; echo "$up $j"; sleep 0.2; done' \
				>"$dir/flows-$s.log" 2>&1 &
			flowlog+=($!)
		done
	fi
	uptime >"$dir/load-start"
	port=18900 k=0
	for f in $FLOWS; do
		src=${f%:*} dst=${f#*:} port=$((port + 1)) k=$((k + 1))
		{
			fabric_in "$src" timeout $((DURATION + 90)) nice -n 19 "$bw" -d "h$src" \
				-x "$(fabric_gid "$src")" -F -s "$MESSAGE" "${amount[@]}" -p $port \
				--tclass=$TCLASS -u "$QP_TIMEOUT" "$(fabric_ip "$dst")" \
				>"$dir/c$(flow_name $k "$f").log" 2>&1
			[ "$TOPOLOGY" != ecmp ] || uptime >"$dir/done$(flow_name $k "$f")"
		} &
		clients+=($!)
	done
	if [ "$TOPOLOGY" = storm ]; then
		sleep "$STALL_AT"
		if fabric_stall_start; then
			uptime >"$dir/stall-start"
		else
			say "$m: the receive stall did not start (see $m/stall.err)"
			rc=1
		fi
		sleep $((DURATION + 1 - STALL_AT))
	elif [ "$TOPOLOGY" = ecmp ]; then
		# until every flow has ended, DURATION s at most (counted in the
		# shell: one process per poll, not four, to leave the CPU to the flows)
		local n=0 up deadline ended
		for f in $FLOWS; do n=$((n + 1)); done
		read -r up _ </proc/uptime
		deadline=$((${up%.*} + DURATION))
		while :; do
			ended=("$dir"/done*)
			[ -e "${ended[0]}" ] && [ ${#ended[@]} -ge $n ] && break
			read -r up _ </proc/uptime
			[ "${up%.*}" -lt "$deadline" ] || break
			sleep 0.2
		done
		sleep 0.5
		for s in sp1 sp2; do fabric_sw_in $s nft -j list set inet lab_ecmp flows >"$dir/flows-$s.json"; done
		for s in "${flowlog[@]}"; do kill_tree "$s"; done
	elif [ "$TOPOLOGY" = collective ]; then
		# (a rank that fails is a result for the report, not a failure of the run)
		coll_run "$dir" || say "$m: a rank of rxecc-coll failed (see $m/rank*.log)"
	else
		sleep $((DURATION + 1))
	fi
	uptime >"$dir/load-done"
	if [ -n "$FABRIC_STALL" ]; then
		# stall-done: every held packet let through
		if fabric_stall_stop; then
			[ ! -f "$dir/stall-start" ] || uptime >"$dir/stall-done"
		else
			say "$m: the receive stall did not stop cleanly"
		fi
	fi
	kill "$sampler"
	# A frozen flow's perftest does not end by itself before its QP gives up.
	pkill -KILL -x "$bw"
	wait "$sampler" "${pids[@]}" "${clients[@]}" "${flowlog[@]}" 2>/dev/null
	for s in "${FABRIC_SWITCHES[@]}"; do
		echo "$s $(fabric_sw_in "$s" "$T" -j qdisc show)"
	done >"$dir/qdiscs.json"
	say "$m: done"
	return $rc
}

fail=0
for m in "${MODES[@]}"; do run_mode "$m" || fail=1; done
fabric_destroy
modules_unload >/dev/null 2>&1
exit $fail
