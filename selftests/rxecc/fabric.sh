#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A small RoCEv2 fabric inside one machine: hosts and one L3 switch, each a
# network namespace. Source it after lib.sh.
#
#   fabric_init                     the switch namespace; cleanup on exit (also on failure)
#   fabric_add_host I [TYPE]        host I (1..250): namespace, veth to switch port swpI,
#                                   10.0.I.1/24 and fd00:0:0:I::1/64 (gateway .254 / ::fe),
#                                   an rdma device named hI of link TYPE (default rxecc)
#   fabric_mtu I MTU                the MTU of host I's link (both ends)
#   fabric_shape I RATE [LIMIT]     tbf at the switch port towards host I (e.g. 100mbit):
#                                   that port becomes a bottleneck
#   fabric_mark I RATE [MIN MAX]    a congestion point for DCQCN at the switch port towards
#                                   host I: tbf at RATE, then RED marking CE on ECT packets
#                                   when its average queue is between MIN and MAX bytes
#                                   (default 20000 60000); TCP bypasses both (own band)
#   fabric_ns I / fabric_ip I / fabric_ip6 I / fabric_dev I
#                                   namespace, IPv4, IPv6 address and rdma device of host I
#   fabric_gid I [6]                the RoCEv2 GID index of host I's IPv4 (or IPv6) address
#   fabric_in I CMD...              run CMD in host I's namespace
#   fabric_sw CMD...                run CMD in the switch namespace
#   fabric_destroy                  delete every device and namespace it made
#
# Names carry a per-run prefix (FABRIC_PREFIX, default rxf<pid>-) so that
# parallel runs do not collide. RoCEv2 is routed: the switch forwards IPv4
# and IPv6 between its ports, so hosts talk through one L3 hop.

FABRIC_PREFIX=${FABRIC_PREFIX:-rxf$$-}
FABRIC_HOSTS=()

fabric_ns() { echo "${FABRIC_PREFIX}h$1"; }
fabric_sw_ns() { echo "${FABRIC_PREFIX}sw"; }
fabric_ip() { echo "10.0.$1.1"; }
fabric_ip6() { echo "fd00:0:0:$1::1"; }
fabric_dev() { echo "h$1"; }
fabric_in() { local i=$1; shift; ip netns exec "$(fabric_ns "$i")" "$@"; }
fabric_sw() { ip netns exec "$(fabric_sw_ns)" "$@"; }

fabric_init() {
	ip netns add "$(fabric_sw_ns)" || return 1
	trap fabric_destroy EXIT
	fabric_sw ip link set lo up
	fabric_sw sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
}

fabric_add_host() {
	local i=$1 type=${2:-rxecc} ns
	ns=$(fabric_ns "$i")
	ip netns add "$ns" || return 1
	FABRIC_HOSTS+=("$i")
	ip link add eth0 netns "$ns" type veth peer name "swp$i" netns "$(fabric_sw_ns)" || return 1
	fabric_in "$i" ip link set lo up
	fabric_in "$i" ip addr add "$(fabric_ip "$i")/24" dev eth0
	fabric_in "$i" ip addr add "$(fabric_ip6 "$i")/64" dev eth0 nodad
	fabric_in "$i" ip link set eth0 up
	fabric_in "$i" ip route add default via "10.0.$i.254"
	fabric_in "$i" ip -6 route add default via "fd00:0:0:$i::fe"
	fabric_sw ip addr add "10.0.$i.254/24" dev "swp$i"
	fabric_sw ip addr add "fd00:0:0:$i::fe/64" dev "swp$i" nodad
	fabric_sw ip link set "swp$i" up
	# In-order delivery: a veth hands a packet to the receive backlog of the
	# CPU that transmits it, and two CPUs transmitting one flow's packets
	# reorder them (the switch port's qdisc is dequeued from whichever CPU
	# runs it). RoCE assumes an in-order fabric, so steer every port's
	# receive processing to CPU 0 (RPS).
	fabric_in "$i" sh -c 'echo 1 > /sys/class/net/eth0/queues/rx-0/rps_cpus'
	fabric_sw sh -c "echo 1 > /sys/class/net/swp$i/queues/rx-0/rps_cpus"
	fabric_in "$i" rdma link add "$(fabric_dev "$i")" type "$type" netdev eth0 || return 1
	wait_for 10 grep -q ACTIVE "/sys/class/infiniband/$(fabric_dev "$i")/ports/1/state" || return 1
	wait_gid "$(fabric_dev "$i")" "$(fabric_ip "$i")" >/dev/null &&
		wait_gid "$(fabric_dev "$i")" "$(fabric_ip6 "$i")" >/dev/null
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
	local min=${3:-20000} max=${4:-60000} dev="swp$1"
	fabric_sw tc qdisc del dev "$dev" root 2>/dev/null
	# Band 2 (everything but TCP): tbf, then RED marking CE on ECT packets.
	# Band 1: TCP (perftest's and rdma_cm's connection setup), which is not
	# ECN-capable, so that RED does not drop it while RoCE fills the queue.
	fabric_sw tc qdisc add dev "$dev" root handle 1: prio bands 2 \
		priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 || return 1
	fabric_sw tc qdisc add dev "$dev" parent 1:2 handle 2: tbf rate "$2" burst 32kb limit 1mb || return 1
	fabric_sw tc qdisc add dev "$dev" parent 2:1 handle 20: red limit 1000000 \
		min "$min" max "$max" avpkt 1000 burst $(((2 * min + max) / 3000)) probability 0.2 \
		ecn bandwidth "$2" || return 1
	fabric_sw tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
		match ip protocol 6 0xff flowid 1:1 &&
		fabric_sw tc filter add dev "$dev" parent 1: protocol ipv6 prio 2 u32 \
			match ip6 protocol 6 0xff flowid 1:1
}

# fabric_backlog I: bytes sent so far and bytes queued now at the switch port
# towards host I, on one line.
fabric_backlog() {
	fabric_sw tc -s qdisc show dev "swp$1" |
		awk '/Sent/ && !s {s = $2} /backlog/ && !b {b = $2; sub(/b$/, "", b)} END {print s + 0, b + 0}'
}

fabric_destroy() {
	local i
	for i in "${FABRIC_HOSTS[@]}"; do
		[ -e "/sys/class/infiniband/$(fabric_dev "$i")" ] && rdma link delete "$(fabric_dev "$i")" 2>/dev/null
		ip netns del "$(fabric_ns "$i")" 2>/dev/null
	done
	FABRIC_HOSTS=()
	ip netns del "$(fabric_sw_ns)" 2>/dev/null
	return 0
}
