#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A small RoCEv2 fabric inside one machine: hosts and one L3 switch, each a
# network namespace. Source it after lib.sh.
#
#   fabric_init                     the switch namespace; cleanup on exit (also on failure)
#   fabric_add_switch S             another switch S (a name: sw2, ...)
#   fabric_add_host I [TYPE] [S]    host I (1..250): namespace, veth to port swpI of switch S
#                                   (default sw), 10.0.I.1/24 and fd00:0:0:I::1/64 (gateway
#                                   .254 / ::fe), an rdma device named hI of link TYPE
#                                   (default rxecc)
#   fabric_link A B                 a link between switches A and B (ports to-B in A, to-A
#                                   in B), no route over it
#   fabric_route S I NEXT           switch S routes host I's subnets to switch NEXT
#   fabric_uplink A B               fabric_link, and routes for the hosts of each switch
#                                   over it (after the hosts)
#   fabric_ring S1 S2 ... Sn        the switches in a ring, every host routed one way
#                                   round it (after the hosts)
#   fabric_leafspine K M H [TYPE]   a leaf-spine fabric: spines sp1..spM, leaves lf1..lfK,
#                                   H hosts per leaf (hosts 1..K*H), every leaf linked to
#                                   every spine, ECMP over the spines (multipath routes)
#   fabric_ecmp_hash POLICY [FIELDS]
#                                   fib_multipath_hash_policy (IPv4 and IPv6) of every
#                                   switch: 0 L3, 1 L4 (5-tuple), 3 custom (FIELDS: the
#                                   fib_multipath_hash_fields mask)
#   fabric_tx_bytes S PORT          bytes switch S sent out of PORT (its netdev counter)
#   fabric_ports S                  the ports of switch S (hosts' and links')
#   fabric_pfc_ports RATE ARGS...   every port of every switch a pfc qdisc at RATE Mbit/s
#                                   with the rxecc qdisc options ARGS
#   fabric_qdisc_sampler [INTERVAL] every pfc qdisc of every switch, sampled every INTERVAL s
#                                   (default 0.1) until SIGTERM (pfc_sampler.py)
#   fabric_mtu I MTU                the MTU of host I's link (both ends)
#   fabric_shape I RATE [LIMIT]     tbf at the switch port towards host I (e.g. 100mbit):
#                                   that port becomes a bottleneck
#   fabric_mark I RATE [MIN MAX [LIMIT]]
#                                   a congestion point for DCQCN at the switch port towards
#                                   host I: tbf at RATE, then RED marking CE on ECT packets
#                                   when its average queue is between MIN and MAX bytes
#                                   (default 20000 60000), holding LIMIT bytes at most
#                                   (default 1000000); TCP bypasses both (own band)
#   fabric_cc_mode PORT RATE QUEUE MARK PFC DCQCN
#                                   switch port PORT as the pfc qdisc (rxecc tool) at RATE
#                                   Mbit/s with the QUEUE options; PFC on priority 3 if PFC is
#                                   "on", ECN marking with the MARK options if DCQCN is "on";
#                                   every host's DCQCN (lab profile, ECT(0), on or off) and
#                                   pfc_enable to match, pauses timed at 1 Gbit/s
#   fabric_ns I / fabric_ip I / fabric_ip6 I / fabric_dev I
#                                   namespace, IPv4, IPv6 address and rdma device of host I
#   fabric_gid I [6]                the RoCEv2 GID index of host I's IPv4 (or IPv6) address
#   fabric_in I CMD...              run CMD in host I's namespace
#   fabric_sw CMD...                run CMD in the switch namespace
#   fabric_sw_in S CMD...           run CMD in switch S's namespace
#   fabric_stall_prepare I OUT [ARG...]
#                                   host I's receive stall, ready: rx_stall.py (ARGs: its
#                                   options) bound to netfilter queue 0 in I's namespace,
#                                   its summary in OUT.json, its errors in OUT.err; nothing
#                                   goes through it yet
#   fabric_stall_start              host I's RoCEv2 packets (UDP 4791) go through the queue
#                                   (one let through every --release ms: a receive path that
#                                   all but stops)
#   fabric_stall_stop               they no longer do; every held packet let through, the
#                                   consumer and the hook gone (fabric_destroy stops a stall)
#   fabric_destroy                  delete every device and namespace it made
#   cnt I NAME                      port counter NAME of host I's rdma device
#   snap I:NAME...                  remember those counters; delta I:NAME: growth since snap
#   above I:NAME VALUE              that counter is above VALUE
#   fabric_rc_rts I                 host I's device has an RC QP in RTS
#
# Names carry a per-run prefix (FABRIC_PREFIX, default rxf<pid>-) so that
# parallel runs do not collide. RoCEv2 is routed: the switch forwards IPv4
# and IPv6 between its ports, so hosts talk through one L3 hop.

FABRIC_PREFIX=${FABRIC_PREFIX:-rxf$$-}
FABRIC_HOSTS=()
FABRIC_SWITCHES=()
declare -A FABRIC_SWITCH_OF=()

fabric_ns() { echo "${FABRIC_PREFIX}h$1"; }
fabric_sw_ns() { echo "${FABRIC_PREFIX}${1:-sw}"; }
fabric_sw_in() { local s=$1; shift; ns_run "$(fabric_sw_ns "$s")" "$@"; }
fabric_ip() { echo "10.0.$1.1"; }
fabric_ip6() { echo "fd00:0:0:$1::1"; }
fabric_dev() { echo "h$1"; }
fabric_in() { local i=$1; shift; ns_run "$(fabric_ns "$i")" "$@"; }
fabric_sw() { ns_run "$(fabric_sw_ns)" "$@"; }

cnt() { port_counter "h$1" "$2"; }
# above I:NAME VALUE: host I's counter NAME is above VALUE (for wait_for: no
# process started per poll)
above() {
	local v
	read -r v <"/sys/class/infiniband/h${1%%:*}/ports/1/hw_counters/${1#*:}" && [ "$v" -gt "$2" ]
}
# fabric_rc_rts I: host I's device has an RC QP in RTS (the rxecc tool's table)
fabric_rc_rts() {
	[[ $(fabric_in "$1" "$RXECC_TOOL" qp show dev "$(fabric_dev "$1")") =~ [[:space:]]RC[[:space:]]+RTS[[:space:]] ]]
}
declare -gA FABRIC_C0=()
# snap H:NAME...: remember counters (no subshell: read into the array);
# delta H:NAME: how much one grew since.
snap() {
	local k rc=0
	for k in "$@"; do
		read -r "FABRIC_C0[$k]" <"/sys/class/infiniband/h${k%%:*}/ports/1/hw_counters/${k#*:}" ||
			{ unset "FABRIC_C0[$k]"; rc=1; }
	done
	return $rc
}
delta() {
	local v
	read -r v <"/sys/class/infiniband/h${1%%:*}/ports/1/hw_counters/${1#*:}" || return 1
	echo $((v - FABRIC_C0[$1]))
}
# delta_at_least N:COUNTER V: the counter grew by V or more since its snap.
delta_at_least() { [ "$(delta "$1")" -ge "$2" ]; }

fabric_init() {
	trap fabric_destroy EXIT
	fabric_add_switch sw
}

fabric_add_switch() {
	ip netns add "$(fabric_sw_ns "$1")" || return 1
	FABRIC_SWITCHES+=("$1")
	fabric_sw_in "$1" ip link set lo up
	fabric_sw_in "$1" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}

# fabric_mac I host|port: the MAC address of host I's eth0 or of its switch
# port swpI, fixed so that the neighbour entries need not read them.
fabric_mac() { printf '02:00:00:00:%02x:%s' "$1" "$([ "$2" = host ] && echo 01 || echo fe)"; }

fabric_add_host() {
	local i=$1 type=${2:-rxecc} sw=${3:-sw} ns hmac smac
	ns=$(fabric_ns "$i")
	hmac=$(fabric_mac "$i" host) smac=$(fabric_mac "$i" port)
	ip netns add "$ns" || return 1
	FABRIC_HOSTS+=("$i")
	FABRIC_SWITCH_OF[$i]=$sw
	ip link add eth0 netns "$ns" address "$hmac" type veth peer name "swp$i" \
		netns "$(fabric_sw_ns "$sw")" address "$smac" || return 1
	# One ip process per namespace (ip netns exec costs a few tenths of a
	# second in the guest). Static neighbours between the host and its
	# switch port: Linux 6.1's rdma_cm watches neighbour updates
	# (cma_netevent_callback) and reports RDMA_CM_EVENT_UNREACHABLE to every
	# connecting id whose destination IP and ifindex match the updated entry,
	# without comparing namespaces: the switch resolving h1's address while
	# it forwards the first CM REQ to h1 killed the client's connection
	# whenever its eth0 had the same ifindex as the switch's port (seen on
	# every first rdma_cm connection of a fabric). With no ARP in the fabric
	# there is no such update.
	ip -n "$ns" -batch - <<-EOF || return 1
		link set lo up
		addr add $(fabric_ip "$i")/24 dev eth0
		addr add $(fabric_ip6 "$i")/64 dev eth0 nodad
		link set eth0 up
		route add default via 10.0.$i.254
		route add ::/0 via fd00:0:0:$i::fe
		neigh replace 10.0.$i.254 lladdr $smac dev eth0 nud permanent
		neigh replace fd00:0:0:$i::fe lladdr $smac dev eth0 nud permanent
	EOF
	ip -n "$(fabric_sw_ns "$sw")" -batch - <<-EOF || return 1
		addr add 10.0.$i.254/24 dev swp$i
		addr add fd00:0:0:$i::fe/64 dev swp$i nodad
		link set swp$i up
		neigh replace $(fabric_ip "$i") lladdr $hmac dev swp$i nud permanent
		neigh replace $(fabric_ip6 "$i") lladdr $hmac dev swp$i nud permanent
	EOF
	# In-order delivery: a veth hands a packet to the receive backlog of the
	# CPU that transmits it, and two CPUs transmitting one flow's packets
	# reorder them (the switch port's qdisc is dequeued from whichever CPU
	# runs it). RoCE assumes an in-order fabric, so steer every port's
	# receive processing to CPU 0 (RPS).
	fabric_in "$i" sh -c 'echo 1 > /sys/class/net/eth0/queues/rx-0/rps_cpus'
	fabric_sw_in "$sw" sh -c "echo 1 > /sys/class/net/swp$i/queues/rx-0/rps_cpus"
	fabric_in "$i" rdma link add "$(fabric_dev "$i")" type "$type" netdev eth0 || return 1
	wait_for 10 grep -q ACTIVE "/sys/class/infiniband/$(fabric_dev "$i")/ports/1/state" || return 1
	wait_gid "$(fabric_dev "$i")" "$(fabric_ip "$i")" >/dev/null &&
		wait_gid "$(fabric_dev "$i")" "$(fabric_ip6 "$i")" >/dev/null
}

# fabric_link A B: switches A and B linked by to-B (in A, 10.255.N.1/30,
# fd00:ff:N::1/64) and to-A (in B, .2 / ::2), with no route over it yet.
# FABRIC_NEXT[A:B] / FABRIC_NEXT6[A:B]: B's addresses on it (A's next hop).
declare -A FABRIC_NEXT FABRIC_NEXT6
fabric_link() {
	local a=$1 b=$2 n=$((${#FABRIC_SWITCHES[@]} + ${FABRIC_UPLINKS:-0}))
	FABRIC_UPLINKS=$((${FABRIC_UPLINKS:-0} + 1))
	ip link add "to-$b" netns "$(fabric_sw_ns "$a")" type veth peer name "to-$a" \
		netns "$(fabric_sw_ns "$b")" || return 1
	ip -n "$(fabric_sw_ns "$a")" -batch - <<-EOF || return 1
		addr add 10.255.$n.1/30 dev to-$b
		addr add fd00:ff:$n::1/64 dev to-$b nodad
		link set to-$b up
	EOF
	ip -n "$(fabric_sw_ns "$b")" -batch - <<-EOF || return 1
		addr add 10.255.$n.2/30 dev to-$a
		addr add fd00:ff:$n::2/64 dev to-$a nodad
		link set to-$a up
	EOF
	fabric_sw_in "$a" sh -c "echo 1 > /sys/class/net/to-$b/queues/rx-0/rps_cpus"
	fabric_sw_in "$b" sh -c "echo 1 > /sys/class/net/to-$a/queues/rx-0/rps_cpus"
	FABRIC_NEXT[$a:$b]=10.255.$n.2 FABRIC_NEXT6[$a:$b]=fd00:ff:$n::2
	FABRIC_NEXT[$b:$a]=10.255.$n.1 FABRIC_NEXT6[$b:$a]=fd00:ff:$n::1
}

# fabric_route S I NEXT: switch S sends host I's subnets to switch NEXT, over
# their link.
fabric_route() {
	local s=$1 i=$2 next=$3
	[ -n "${FABRIC_NEXT[$s:$next]:-}" ] || { echo "fabric_route: no link $s-$next" >&2; return 1; }
	fabric_sw_in "$s" ip route replace "10.0.$i.0/24" via "${FABRIC_NEXT[$s:$next]}" &&
		fabric_sw_in "$s" ip -6 route replace "fd00:0:0:$i::/64" via "${FABRIC_NEXT6[$s:$next]}"
}

# fabric_uplink A B: fabric_link A B, and each switch routes the subnets of
# the other's hosts over it (call it after adding the hosts).
fabric_uplink() {
	local a=$1 b=$2 i
	fabric_link "$a" "$b" || return 1
	for i in "${FABRIC_HOSTS[@]}"; do
		if [ "${FABRIC_SWITCH_OF[$i]}" = "$b" ]; then
			fabric_route "$a" "$i" "$b" || return 1
		elif [ "${FABRIC_SWITCH_OF[$i]}" = "$a" ]; then
			fabric_route "$b" "$i" "$a" || return 1
		fi
	done
}

# fabric_ring S1 S2 ... Sn: the switches linked in a ring (S1-S2, ...,
# Sn-S1), and every switch routes every host it does not own to the next
# switch of the ring, one way round: traffic between any two hosts goes
# S1 -> S2 -> ... -> Sn -> S1, so a flow to a host k switches on crosses k-1
# links, and the ring's links form a cycle of buffer dependencies (what a PFC
# deadlock needs; Hu et al., HotNets 2016). Call it after adding the hosts.
fabric_ring() {
	local n=$# k s next i
	[ "$n" -ge 3 ] || { echo "fabric_ring: three switches or more" >&2; return 1; }
	local sws=("$@")
	for ((k = 0; k < n; k++)); do
		fabric_link "${sws[k]}" "${sws[(k + 1) % n]}" || return 1
	done
	for ((k = 0; k < n; k++)); do
		s=${sws[k]} next=${sws[(k + 1) % n]}
		for i in "${FABRIC_HOSTS[@]}"; do
			[ "${FABRIC_SWITCH_OF[$i]}" = "$s" ] || fabric_route "$s" "$i" "$next" || return 1
		done
	done
}

# fabric_leafspine K M H [TYPE]: spines sp1..spM and leaves lf1..lfK (after
# fabric_init; its switch sw stays unused), H hosts on each leaf: host
# (l-1)*H+j on lf<l>, port swp<host>, rdma device of link TYPE. Every leaf
# is linked to every spine (lf<l>'s port to-sp<s>, sp<s>'s to-lf<l>). A spine
# routes each host to its leaf; a leaf routes each host of another leaf over
# all spines at once, one next hop per spine (a multipath route, so the
# kernel spreads flows by fib_multipath_hash_policy: fabric_ecmp_hash). Routes
# go in one `ip -batch` per switch (fabric_leafspine 4 2 2: 80 routes).
# Limits: K*H hosts up to 250, K+M+K*M up to 255 (link subnets).
# Every port's receive processing runs on CPU 0 (RPS, for in-order
# delivery), so all of the fabric's packets in flight wait in that CPU's one
# backlog: with flows over two spines converging on a leaf, its default 1000
# packets overflowed (48731 drops, nowhere counted by a switch port, in a run
# of 16 QPs): the builder raises net.core.netdev_max_backlog (global) to
# FABRIC_BACKLOG, default 20000, as a switch's buffer would hold them.
fabric_leafspine() {
	local k=$1 m=$2 h=$3 type=${4:-rxecc} l s i leaf batch hops hops6
	if [ "$k" -lt 1 ] || [ "$m" -lt 1 ] || [ "$h" -lt 1 ] || [ $((k * h)) -gt 250 ] ||
		[ $((k + m + k * m + ${#FABRIC_SWITCHES[@]})) -gt 255 ]; then
		echo "fabric_leafspine: K*H hosts up to 250, K+M+K*M up to 255" >&2
		return 1
	fi
	FABRIC_BACKLOG0=${FABRIC_BACKLOG0:-$(sysctl -n net.core.netdev_max_backlog)}
	sysctl -qw net.core.netdev_max_backlog="${FABRIC_BACKLOG:-20000}" || return 1
	for ((s = 1; s <= m; s++)); do fabric_add_switch "sp$s" || return 1; done
	for ((l = 1; l <= k; l++)); do
		fabric_add_switch "lf$l" || return 1
		for ((i = (l - 1) * h + 1; i <= l * h; i++)); do
			fabric_add_host "$i" "$type" "lf$l" || return 1
		done
		for ((s = 1; s <= m; s++)); do fabric_link "lf$l" "sp$s" || return 1; done
	done
	for ((s = 1; s <= m; s++)); do
		batch=''
		for i in "${FABRIC_HOSTS[@]}"; do
			leaf=${FABRIC_SWITCH_OF[$i]}
			batch+="route replace 10.0.$i.0/24 via ${FABRIC_NEXT[sp$s:$leaf]}"$'\n'
			batch+="route replace fd00:0:0:$i::/64 via ${FABRIC_NEXT6[sp$s:$leaf]}"$'\n'
		done
		ip -n "$(fabric_sw_ns "sp$s")" -batch - <<<"$batch" || return 1
	done
	for ((l = 1; l <= k; l++)); do
		hops='' hops6='' batch=''
		for ((s = 1; s <= m; s++)); do
			hops+=" nexthop via ${FABRIC_NEXT[lf$l:sp$s]}"
			hops6+=" nexthop via ${FABRIC_NEXT6[lf$l:sp$s]}"
		done
		for i in "${FABRIC_HOSTS[@]}"; do
			[ "${FABRIC_SWITCH_OF[$i]}" = "lf$l" ] && continue
			batch+="route replace 10.0.$i.0/24$hops"$'\n'
			batch+="route replace fd00:0:0:$i::/64$hops6"$'\n'
		done
		ip -n "$(fabric_sw_ns "lf$l")" -batch - <<<"$batch" || return 1
	done
}

fabric_ecmp_hash() {
	local s fields=()
	[ -z "${2:-}" ] || fields=(net.ipv4.fib_multipath_hash_fields="$2" net.ipv6.fib_multipath_hash_fields="$2")
	for s in "${FABRIC_SWITCHES[@]}"; do
		fabric_sw_in "$s" sysctl -qw "${fields[@]}" net.ipv4.fib_multipath_hash_policy="$1" \
			net.ipv6.fib_multipath_hash_policy="$1" || return 1
	done
}

fabric_ports() {
	ip -n "$(fabric_sw_ns "$1")" -o link show | sed -n 's/^[0-9]*: \(swp[0-9]*\|to-[^@:]*\)[@:].*/\1/p'
}

fabric_pfc_ports() {
	local rate=$1 s p
	shift
	for s in "${FABRIC_SWITCHES[@]}"; do
		for p in $(fabric_ports "$s"); do
			fabric_sw_in "$s" "$RXECC_TOOL" qdisc replace dev "$p" rate "$rate" "$@" || return 1
		done
	done
}

fabric_tx_bytes() {
	ip netns exec "$(fabric_sw_ns "$1")" cat "/sys/class/net/$2/statistics/tx_bytes"
}

# fabric_dcqcn I set|profile ARGS...: `rxecc dcqcn` for host I's device;
# fabric_dcqcn_all: for every host's.
fabric_dcqcn() {
	local i=$1 cmd=$2
	shift 2
	fabric_in "$i" "$RXECC_TOOL" dcqcn "$cmd" dev "$(fabric_dev "$i")" "$@"
}
fabric_dcqcn_all() {
	local i
	for i in "${FABRIC_HOSTS[@]}"; do fabric_dcqcn "$i" "$@" || return 1; done
}

fabric_cc_mode() {
	local port=$1 rate=$2 queue=$3 mark="kmax 0" pfc=none en=none
	[ "$5" = on ] && pfc=0x08
	[ "$6" = on ] && mark=$4 en=all
	# shellcheck disable=SC2086 # option lists
	fabric_sw "$RXECC_TOOL" qdisc replace dev "$port" rate "$rate" pfc $pfc $queue $mark || return 1
	fabric_dcqcn_all profile lab && fabric_dcqcn_all set ecn ect0 rp_enable $en np_enable $en \
		pfc_enable $pfc link_speed 1gbit
}

fabric_gid() {
	if [ "${2:-4}" = 6 ]; then
		gid_index "$(fabric_dev "$1")" "$(fabric_ip6 "$1")"
	else
		gid_index "$(fabric_dev "$1")" "$(fabric_ip "$1")"
	fi
}

fabric_mtu() {
	fabric_in "$1" ip link set eth0 mtu "$2" && fabric_sw ip link set "swp$1" mtu "$2"
}

fabric_shape() {
	fabric_sw tc qdisc replace dev "swp$1" root tbf rate "$2" burst 32kb limit "${3:-256kb}"
}

fabric_mark() {
	local min=${3:-20000} max=${4:-60000} limit=${5:-1000000} dev="swp$1"
	fabric_sw tc qdisc del dev "$dev" root 2>/dev/null
	# Band 2 (everything but TCP): tbf, then RED marking CE on ECT packets.
	# Band 1: TCP (perftest's and rdma_cm's connection setup), which is not
	# ECN-capable, so that RED does not drop it while RoCE fills the queue.
	fabric_sw tc qdisc add dev "$dev" root handle 1: prio bands 2 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 || return 1
	fabric_sw tc qdisc add dev "$dev" parent 1:2 handle 2: tbf rate "$2" burst 32kb limit "$limit" || return 1
	fabric_sw tc qdisc add dev "$dev" parent 2:1 handle 20: red limit "$limit" \
		min "$min" max "$max" avpkt 1000 burst $(((2 * min + max) / 3000)) probability 0.2 \
		ecn bandwidth "$2" || return 1
	fabric_sw tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
		match ip protocol 6 0xff flowid 1:1 &&
		fabric_sw tc filter add dev "$dev" parent 1: protocol ipv6 prio 2 u32 \
			match ip6 protocol 6 0xff flowid 1:1
}

# fabric_backlog_sampler I: bytes sent so far and bytes queued now at the
# switch port towards host I, one line after another (0.1 s apart) until
# killed (kill_tree), from one loop inside the switch's namespace: entering
# it for each sample took over a second on the debug kernel, two samples in
# a whole run.
fabric_backlog_sampler() {
	# tc prints a size near a multiple of 1024 as Kb or Mb.
	# shellcheck disable=SC2016 # awk's fields, not the shell's
	local prog='function bytes(v) {
		if (v ~ /Mb$/) return v * 1048576
		if (v ~ /Kb$/) return v * 1024
		return v + 0
	}
	/Sent/ && !s {s = $2} /backlog/ && !b {b = bytes($2)} END {print s + 0, b}'
	# shellcheck disable=SC2016 # the inner bash's arguments
	fabric_sw bash -c 'while :; do tc -s qdisc show dev "$1" | awk "$2"; sleep 0.1; done' \
		_ "swp$1" "$prog"
}

# fabric_qdisc_sampler [INTERVAL]: every pfc qdisc of every switch, sampled
# every INTERVAL seconds (default 0.1) by one process (pfc_sampler.py) until
# it gets SIGTERM: a line "TIME SWITCH JSON" per switch and sample.
fabric_qdisc_sampler() {
	local s specs=()
	for s in "${FABRIC_SWITCHES[@]}"; do specs+=("$s=$(fabric_sw_ns "$s")"); done
	python3 "$RXECC_TOP/lib/python/pfc_sampler.py" --interval "${1:-0.1}" "${specs[@]}"
}

# A receive stall (fabric_stall_*): rx_stall.py's pid and its host. A
# consumer that did not bind is stopped at once, so that no hook ever
# diverts packets to a queue nobody reads.
FABRIC_STALL='' FABRIC_STALL_HOST=''
fabric_stall_prepare() {
	local i=$1 out=$2
	shift 2
	fabric_stall_stop
	ip netns exec "$(fabric_ns "$i")" python3 "$RXECC_TOP/lib/python/rx_stall.py" "$@" \
		>"$out.json" 2>"$out.err" &
	FABRIC_STALL=$! FABRIC_STALL_HOST=$i
	if ! wait_for "$(scaled_time 30)" grep -q bound "$out.json"; then
		echo "rx_stall.py did not start: $(cat "$out.err")" >&2
		fabric_stall_stop
		return 1
	fi
}
# fabric_running PID: PID is alive (a child that exited and has not been
# waited for yet is a zombie, which kill -0 still finds).
fabric_running() {
	local state
	state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}
fabric_stall_start() {
	[ -n "$FABRIC_STALL" ] || { echo "fabric_stall_start: no stall prepared" >&2; return 1; }
	fabric_in "$FABRIC_STALL_HOST" nft -f - <<-EOF
		add table inet rxecc_stall
		add chain inet rxecc_stall in { type filter hook input priority 0; }
		add rule inet rxecc_stall in udp dport 4791 queue num 0
	EOF
}
# The order matters: the chain is emptied first (nothing more is queued),
# the consumer then lets every held packet through, and only then does the
# hook go (Linux 6.1 warns in nf_reinject when a hook goes while its queue
# holds packets).
fabric_stall_stop() {
	local rc=0 i=$FABRIC_STALL_HOST
	[ -n "$FABRIC_STALL" ] || return 0
	if fabric_in "$i" nft list table inet rxecc_stall >/dev/null 2>&1; then
		fabric_in "$i" nft flush chain inet rxecc_stall in || rc=1
	fi
	# it lets every held packet through on SIGTERM; 10 s at most
	kill "$FABRIC_STALL" 2>/dev/null
	if ! wait_for 10 eval "! fabric_running $FABRIC_STALL"; then
		kill -KILL "$FABRIC_STALL" 2>/dev/null
		rc=1
	fi
	wait "$FABRIC_STALL" || rc=1
	FABRIC_STALL=''
	if fabric_in "$i" nft list table inet rxecc_stall >/dev/null 2>&1; then
		fabric_in "$i" nft delete table inet rxecc_stall || rc=1
	fi
	return "$rc"
}

fabric_destroy() {
	local i
	fabric_stall_stop
	for i in "${FABRIC_HOSTS[@]}"; do
		[ -e "/sys/class/infiniband/$(fabric_dev "$i")" ] && rdma link delete "$(fabric_dev "$i")" 2>/dev/null
		ip netns del "$(fabric_ns "$i")" 2>/dev/null
	done
	FABRIC_HOSTS=()
	for i in "${FABRIC_SWITCHES[@]}"; do ip netns del "$(fabric_sw_ns "$i")" 2>/dev/null; done
	FABRIC_SWITCHES=()
	FABRIC_UPLINKS=0
	FABRIC_NEXT=() FABRIC_NEXT6=()
	[ -z "${FABRIC_BACKLOG0:-}" ] || sysctl -qw net.core.netdev_max_backlog="$FABRIC_BACKLOG0"
	unset FABRIC_BACKLOG0
	return 0
}
