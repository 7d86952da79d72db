#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics over rxecc: the kernel's NVMe/RDMA target (nvmet-rdma)
# and host (nvme-rdma, driven by nvme-cli), the kernel consumers users run.
#   - a target configured through configfs: a subsystem open to any host, a
#     namespace backed by a RAM disk (brd: nvmet's block device backend),
#     an rdma port on the target's address, port 4420;
#   - nvme discover lists the subsystem; nvme connect makes its namespace a
#     block device on the host;
#   - data written with O_DIRECT (16 MiB, then pieces of 4 KiB to 1 MiB at
#     unaligned-to-1-MiB offsets over it and past it) and read back with
#     O_DIRECT, compared with a model of the disk; the target's RAM disk
#     holds the same bytes;
#   - the I/O went through the two rxecc devices and over the veth between
#     them (RDMA READs for writes, RDMA WRITEs for reads: the data both ways);
#   - nvme disconnect, configfs torn down in reverse, nvme-rdma and
#     nvmet-rdma unloaded, and rdma_rxecc unloads (no reference left).
# Both ULPs make their rdma_cm IDs in the initial network namespace, so host
# and target share it: two veth ends, each with an rxecc device, and policy
# routes that send traffic between the two local addresses out of the veth
# instead of through the loopback (the local table after them), static
# neighbours and accept_local for the packets that arrive from a local source.
source "$(dirname "$0")/../../lib/shell/lib.sh"
need_root

NQN=nqn.2026-12.io.rxecc:nvmeof-selftest
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5c0e4e1a-9f63-4b0e-8a43-72c1a6d1f2b5
HOST_IP=10.77.0.1 TGT_IP=10.77.0.2 PORT=4420
HOST_DEV=nvh TGT_DEV=nvt HOST_NET=nvh0 TGT_NET=nvt0
NVMET=/sys/kernel/config/nvmet
SUBSYS=$NVMET/subsystems/$NQN PORTDIR=$NVMET/ports/1
DISK_MB=32
WORK=$(mktemp -d /dev/shm/nvmeof.XXXXXX)
BLK=

ktap_header
ktap_plan 13

cleanup() {
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	rm -f "$PORTDIR/subsystems/$NQN" 2>/dev/null
	[ ! -d "$SUBSYS/namespaces/1" ] || echo 0 >"$SUBSYS/namespaces/1/enable" 2>/dev/null
	rmdir "$SUBSYS/namespaces/1" "$SUBSYS" "$PORTDIR" 2>/dev/null
	rm -rf "$WORK"
	local_pair_unroute
	ip link del "$HOST_NET" 2>/dev/null
}
trap cleanup EXIT

mac_of() { cat "/sys/class/net/$1/address"; }
# route_via IP NETDEV: what this machine sends to IP leaves through NETDEV
route_via() {
	local r
	r=$(ip route get "$1") && echo "$r"
	[[ $r == *" dev $2 "* ]]
}

# the veth pair, one rxecc device on each end, and the routes that make the
# host's packets to the target (and back) cross the veth
setup_devices() {
	local d
	modules_unload || return 1
	rxecc_load || return 1
	ip link add "$HOST_NET" type veth peer name "$TGT_NET" || return 1
	ip addr add "$HOST_IP/32" dev "$HOST_NET" && ip addr add "$TGT_IP/32" dev "$TGT_NET" || return 1
	ip link set "$HOST_NET" up && ip link set "$TGT_NET" up || return 1
	ip neigh replace "$TGT_IP" lladdr "$(mac_of "$TGT_NET")" dev "$HOST_NET" nud permanent || return 1
	ip neigh replace "$HOST_IP" lladdr "$(mac_of "$HOST_NET")" dev "$TGT_NET" nud permanent || return 1
	local_pair_routes "$HOST_IP" "$HOST_NET" "" "$TGT_IP" "$TGT_NET" "" || return 1
	ip rule show
	route_via "$TGT_IP" "$HOST_NET" && route_via "$HOST_IP" "$TGT_NET" || return 1
	rdma_link_add "$HOST_DEV" rxecc "$HOST_NET" && rdma_link_add "$TGT_DEV" rxecc "$TGT_NET" || return 1
	wait_gid "$HOST_DEV" "$HOST_IP" && wait_gid "$TGT_DEV" "$TGT_IP" || return 1
	rdma link show
	# no other RDMA device for the ULPs to use
	for d in /sys/class/infiniband/*; do
		case ${d##*/} in "$HOST_DEV" | "$TGT_DEV") ;; *) echo "another device: ${d##*/}"; return 1 ;; esac
	done
}
ktap_result "rdma_rxecc: devices $HOST_DEV and $TGT_DEV on a veth pair, traffic between them over the veth" \
	setup_devices

load_ulps() {
	local m
	modprobe configfs || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config || return 1
	modprobe brd rd_nr=1 rd_size=$((DISK_MB * 1024)) max_part=0 || return 1
	wait_for 10 test -b /dev/ram0 || return 1
	for m in nvmet nvmet-rdma nvme-rdma; do modprobe "$m" || return 1; done
	for m in nvmet nvmet_rdma nvme_rdma nvme_fabrics; do module_loaded "$m" || { echo "$m?"; return 1; }; done
	[ -d "$NVMET" ] && [ -c /dev/nvme-fabrics ]
}
ktap_result "modprobe nvmet nvmet-rdma nvme-rdma; a ${DISK_MB} MiB RAM disk (brd) for the target" load_ulps

configure_target() {
	mkdir "$SUBSYS" || return 1
	echo 1 >"$SUBSYS/attr_allow_any_host" || return 1
	mkdir "$SUBSYS/namespaces/1" || return 1
	echo /dev/ram0 >"$SUBSYS/namespaces/1/device_path" || return 1
	echo 1 >"$SUBSYS/namespaces/1/enable" || return 1
	mkdir "$PORTDIR" || return 1
	echo rdma >"$PORTDIR/addr_trtype" && echo ipv4 >"$PORTDIR/addr_adrfam" &&
		echo "$TGT_IP" >"$PORTDIR/addr_traddr" && echo "$PORT" >"$PORTDIR/addr_trsvcid" || return 1
	ln -s "$SUBSYS" "$PORTDIR/subsystems/$NQN" || return 1
	# the port listens: an rdma_cm ID on the target's device
	local ids
	ids=$(rdma resource show cm_id) && echo "$ids"
	grep "link $TGT_DEV/" <<<"$ids" | grep "state LISTEN" | grep -q "src-addr $TGT_IP:$PORT"
}
ktap_result "nvmet: subsystem, namespace on /dev/ram0 and rdma port $TGT_IP:$PORT (configfs)" configure_target

discover() {
	local out
	out=$(timeout "$(scaled_time 60)" nvme discover -t rdma -a "$TGT_IP" -s "$PORT" --hostnqn="$HOSTNQN") ||
		{ echo "$out"; return 1; }
	echo "$out"
	grep -qE "^subnqn: +$NQN\$" <<<"$out" && grep -qE "^traddr: +$TGT_IP\$" <<<"$out" &&
		grep -qE "^trtype: +rdma\$" <<<"$out"
}
ktap_result "nvme discover -t rdma -a $TGT_IP -s $PORT lists the subsystem" discover

# find_blk: the block device of the subsystem's namespace, in BLK
find_blk() {
	local b
	for b in /sys/block/nvme*; do
		[ -b "/dev/${b##*/}" ] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		BLK=/dev/${b##*/}
		return 0
	done
	return 1
}
connect() {
	local c ctrl=
	timeout "$(scaled_time 60)" nvme connect -t rdma -n "$NQN" -a "$TGT_IP" -s "$PORT" --hostnqn="$HOSTNQN" ||
		return 1
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NQN" ] && ctrl=$c
	done
	[ -n "$ctrl" ] || { echo "no controller of $NQN"; return 1; }
	echo "${ctrl##*/}: transport $(cat "$ctrl/transport"), $(cat "$ctrl/address"), state $(cat "$ctrl/state")"
	[ "$(cat "$ctrl/transport")" = rdma ] && grep -q "traddr=$TGT_IP," "$ctrl/address" || return 1
	wait_for "$(scaled_time 30)" find_blk || { ls -l /sys/block; return 1; }
	find_blk
	echo "namespace: $BLK, $(($(blockdev --getsize64 "$BLK") >> 20)) MiB"
	[ "$(blockdev --getsize64 "$BLK")" = $((DISK_MB << 20)) ]
}
ktap_result "nvme connect -t rdma -n NQN -a $TGT_IP -s $PORT: the namespace is a block device" connect

COUNTERS=()
snap_traffic() {
	local d k
	for d in $HOST_DEV $TGT_DEV; do
		for k in sent_pkts rcvd_pkts; do COUNTERS+=("$d:$k:$(port_counter "$d" "$k")"); done
	done
	for d in $HOST_NET $TGT_NET; do
		for k in tx_bytes rx_bytes; do COUNTERS+=("$d:$k:$(cat "/sys/class/net/$d/statistics/$k")"); done
	done
}
snap_traffic
head -c $((DISK_MB << 20)) /dev/zero >"$WORK/model"
head -c $((16 << 20)) /dev/urandom >"$WORK/pattern"

# put KIB_OFFSET KIB_LENGTH PATTERN_KIB_OFFSET: a piece of the pattern
# written to the namespace with O_DIRECT, and into the model
put() {
	dd if="$WORK/pattern" of="$BLK" bs=1k skip="$3" seek="$1" count="$2" oflag=direct status=none || return 1
	dd if="$WORK/pattern" of="$WORK/model" bs=1k skip="$3" seek="$1" count="$2" conv=notrunc status=none
}
write_16m() {
	[ -n "$BLK" ] || return 1
	dd if="$WORK/pattern" of="$BLK" bs=1M count=16 oflag=direct || return 1
	dd if="$WORK/pattern" of="$WORK/model" bs=1M count=16 conv=notrunc status=none || return 1
	dd if="$BLK" of="$WORK/back" bs=1M count=16 iflag=direct || return 1
	echo "written $(head -c $((16 << 20)) "$WORK/model" | md5sum), read $(md5sum <"$WORK/back")"
	cmp "$WORK/back" "$WORK/pattern"
}
ktap_result "16 MiB written with O_DIRECT, read back with O_DIRECT: the same" write_16m

pieces() {
	local p o l s rc=0
	[ -n "$BLK" ] || return 1
	# KiB offset:length:pattern offset; inside the 16 MiB and past it, over
	# 1 MiB boundaries, the last block of the disk
	for p in 4:4:100 1020:8:333 2060:132:4000 9000:1028:7 20484:1028:12000 $((DISK_MB * 1024 - 4)):4:50; do
		IFS=: read -r o l s <<<"$p"
		put "$o" "$l" "$s" || { echo "write $p failed"; rc=1; }
	done
	# small reads of pieces, then the whole disk
	for p in 1020:8 2060:132 $((DISK_MB * 1024 - 4)):4; do
		IFS=: read -r o l <<<"$p"
		if ! dd if="$BLK" of="$WORK/piece" bs=1k skip="$o" count="$l" iflag=direct status=none ||
			! dd if="$WORK/model" of="$WORK/want" bs=1k skip="$o" count="$l" status=none ||
			! cmp "$WORK/piece" "$WORK/want"; then
			echo "piece $p differs"
			rc=1
		fi
	done
	dd if="$BLK" of="$WORK/back" bs=1M iflag=direct status=none || return 1
	echo "model $(md5sum <"$WORK/model"), disk $(md5sum <"$WORK/back")"
	cmp "$WORK/back" "$WORK/model" || rc=1
	return "$rc"
}
ktap_result "pieces of 4 KiB to 1 MiB at odd offsets, each read back, and the whole disk: as written" pieces

# the bytes are on the target's disk (not only in the host's view)
on_target() {
	dd if=/dev/ram0 of="$WORK/target" bs=1M iflag=direct status=none || return 1
	echo "target's /dev/ram0: $(md5sum <"$WORK/target")"
	cmp "$WORK/target" "$WORK/model" || return 1
	# (and they are what was written: the pattern's fourth MiB, which no
	# piece overwrote)
	dd if="$WORK/target" of="$WORK/piece" bs=1M skip=3 count=1 status=none &&
		dd if="$WORK/pattern" of="$WORK/want" bs=1M skip=3 count=1 status=none &&
		cmp "$WORK/piece" "$WORK/want"
}
ktap_result "the target's RAM disk holds the same bytes" on_target

# traffic: how much each counter grew since snap_traffic. Host to target
# (the target's RDMA READs of written data) at least the 16 MiB written,
# target to host (its RDMA WRITEs of read data) at least the 48 MiB read;
# in packets, at most 4 KiB each (the largest RoCE MTU).
traffic() {
	local c name k v0 v rc=0 min w=$((16 << 20)) r=$((48 << 20))
	rdma resource show qp | grep -E "link ($HOST_DEV|$TGT_DEV)/" | grep -vE "lqpn (0|1) " | head -n 12
	for c in "${COUNTERS[@]}"; do
		IFS=: read -r name k v0 <<<"$c"
		case $name:$k in
		"$HOST_NET:tx_bytes" | "$TGT_NET:rx_bytes") min=$w ;;
		"$HOST_NET:rx_bytes" | "$TGT_NET:tx_bytes") min=$r ;;
		"$HOST_DEV:sent_pkts" | "$TGT_DEV:rcvd_pkts") min=$((w / 4096)) ;;
		*) min=$((r / 4096)) ;;
		esac
		if [ -e "/sys/class/net/$name" ]; then
			v=$(cat "/sys/class/net/$name/statistics/$k")
		else
			v=$(port_counter "$name" "$k")
		fi
		echo "$name $k +$((v - v0)) (at least $min)"
		[ $((v - v0)) -ge "$min" ] || rc=1
	done
	return "$rc"
}
ktap_result "the I/O went over $HOST_DEV and $TGT_DEV and through the veth, both ways" traffic

disconnect() {
	local out
	out=$(nvme disconnect -n "$NQN") || { echo "$out"; return 1; }
	echo "$out"
	grep -q "disconnected 1 controller" <<<"$out" || return 1
	wait_for 10 eval '! find_blk' || return 1
	BLK=
}
ktap_result "nvme disconnect -n NQN: the controller and the block device go" disconnect

unconfigure() {
	rm "$PORTDIR/subsystems/$NQN" || return 1
	rmdir "$PORTDIR" || return 1
	echo 0 >"$SUBSYS/namespaces/1/enable" || return 1
	rmdir "$SUBSYS/namespaces/1" && rmdir "$SUBSYS" || return 1
	[ -z "$(ls -A "$NVMET/subsystems")" ] && [ -z "$(ls -A "$NVMET/ports")" ] || return 1
	! rdma resource show cm_id | grep -q "$TGT_IP:$PORT"
}
ktap_result "nvmet configfs torn down in reverse: link, port, namespace, subsystem" unconfigure

unload_ulps() {
	local m
	rmmod nvme_rdma nvmet_rdma || return 1
	# (6.12's nvmet uses nvme_core too: nvme_core after both; it, and
	# 6.12's nvme_keyring and nvme_auth, only if nothing else uses them)
	for m in nvme_fabrics nvmet brd; do ! module_loaded "$m" || rmmod "$m" || return 1; done
	for m in nvme_core nvme_auth nvme_keyring; do ! module_loaded "$m" || rmmod "$m" 2>/dev/null; done
	for m in nvme_rdma nvmet_rdma nvmet nvme_fabrics; do ! module_loaded "$m" || { echo "$m left"; return 1; }; done
}
ktap_result "rmmod nvme-rdma nvmet-rdma (and nvme-fabrics, nvmet)" unload_ulps

unload_rxecc() {
	rdma link delete "$HOST_DEV" && rdma link delete "$TGT_DEV" || return 1
	wait_for 10 no_ib_devices || return 1
	rmmod rdma_rxecc || { lsmod | grep -E "rdma_rxecc|ib_core"; return 1; }
	! module_loaded rdma_rxecc
}
ktap_result "rdma link delete, rmmod rdma_rxecc: no reference left" unload_rxecc

ktap_finished
