#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma_rxecc load/unload, rdma link add/delete, what userspace sees of the
# device, repeated add/delete and unload/reload cycles, lazy per-namespace
# binding of UDP 4791, and living beside the in-tree rdma_rxe.
source "$(dirname "$0")/../../lib/shell/lib.sh"
need_root
CYCLES=${CYCLES:-8}

ktap_header
ktap_plan 24

modules_unload >/dev/null 2>&1
veth_up d0 10.0.0.1/24 fd00::1/64 || ktap_exit_skip "cannot create a veth pair"
veth_up d1 10.0.1.1/24 || ktap_exit_skip "cannot create a veth pair"

ktap_result "insmod rdma_rxecc" rxecc_load
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "module alias rdma-link-rxecc, none for rxe" \
	bash -c 'modinfo -F alias "$RXECC_MODULE" | grep -qx rdma-link-rxecc &&
		! modinfo -F alias "$RXECC_MODULE" | grep -qx rdma-link-rxe'
ktap_result "no UDP 4791 socket before the first device" bash -c '! ss -Hlun sport = :4791 | grep -q .'
ktap_result "rdma link add x0 type rxecc netdev d0" rdma_link_add x0 rxecc d0
ktap_result "UDP 4791 bound (IPv4 and IPv6) once x0 exists" \
	bash -c 'ss -Hlun sport = :4791 | grep -q "0.0.0.0:4791" && ss -Hlun sport = :4791 | grep -q "\[::\]:4791"'
ktap_result "rdma link show: x0/1 ACTIVE on d0" \
	bash -c 'rdma link show x0/1 | grep -q "state ACTIVE" && rdma link show x0/1 | grep -q "netdev d0"'
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "ibv_devinfo: x0 bound to librxe, port active, Ethernet" \
	bash -c 'out=$(ibv_devinfo -d x0) && echo "$out" &&
		echo "$out" | grep -q "PORT_ACTIVE" && echo "$out" | grep -q "link_layer:.*Ethernet"'
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "uverbs ABI version of x0 is 2 (rxe's)" \
	bash -c 'for u in /sys/class/infiniband_verbs/uverbs*; do [ "$(cat $u/ibdev)" = x0 ] && [ "$(cat $u/abi_version)" = 2 ] && exit 0; done; exit 1'
ktap_result "IPv4 and IPv6 RoCEv2 GIDs on x0" \
	bash -c 'source '"$(dirname "$0")"'/../../lib/shell/lib.sh; wait_gid x0 10.0.0.1 && wait_gid x0 fd00::1 &&
		grep -q "RoCE v2" /sys/class/infiniband/x0/ports/1/gid_attrs/types/1'
ktap_result "a second device on the same netdev is refused" \
	bash -c '! rdma link add x1 type rxecc netdev d0'
ktap_result "rdma link add type rxe does not bind to rdma_rxecc" \
	bash -c '! rdma link add y0 type rxe netdev d1 && [ ! -e /sys/class/infiniband/y0 ]'
ktap_result "rdma link delete x0 removes the device" \
	bash -c 'rdma link delete x0 && ! ibv_devices | grep -qw x0 && [ ! -e /sys/class/infiniband/x0 ]'
ktap_result "UDP 4791 released with the last device" bash -c '! ss -Hlun sport = :4791 | grep -q .'

cycle_links() {
	local i
	for i in $(seq 1 "$CYCLES"); do
		rdma_link_add x0 rxecc d0 || { echo "add #$i failed"; return 1; }
		ibv_devinfo -d x0 >/dev/null || { echo "ibv_devinfo #$i failed"; return 1; }
		rdma link delete x0 || { echo "delete #$i failed"; return 1; }
	done
	[ -z "$(ls /sys/class/infiniband)" ] && ! rdma link show | grep -q .
}
ktap_result "$CYCLES link add/delete cycles leave no device" cycle_links

# Unload with a device present and a verbs user gone: the module must
# remove its own device. A short ping-pong puts QPs, CQs and MRs through it.
cycle_modules() {
	local i
	for i in $(seq 1 "$CYCLES"); do
		rxecc_load || { echo "load #$i failed"; return 1; }
		rdma_link_add x0 rxecc d0 || { echo "add #$i failed"; return 1; }
		if [ $((i % 5)) = 1 ]; then
			local g
			g=$(wait_gid x0 10.0.0.1) || { echo "no GID #$i"; return 1; }
			peer_pair "cycle$i" ibv_rc_pingpong -d x0 -g "$g" -n 20 -c -- \
				ibv_rc_pingpong -d x0 -g "$g" -n 20 -c 10.0.0.1 >/dev/null ||
				{ echo "ping-pong #$i failed"; return 1; }
		fi
		rmmod rdma_rxecc || { echo "rmmod #$i failed"; return 1; }
		[ -z "$(ls /sys/class/infiniband)" ] || { echo "device left after unload #$i"; return 1; }
	done
}
ktap_result "$CYCLES load/add/unload cycles leave no device" cycle_modules
ktap_result "no module reference leaked: ib_uverbs and ib_core unload" \
	bash -c 'modprobe -r -a rdma_ucm rdma_cm iw_cm ib_cm ib_uverbs ib_core || lsmod; ! [ -d /sys/module/ib_core ]'

# In-tree rdma_rxe binds UDP 4791 in init_net when it loads. rdma_rxecc binds
# per namespace, per device: it loads beside rdma_rxe, refuses (and says why)
# only a device that needs the port rdma_rxe holds, and leaves rdma_rxe's
# devices alone, also when it unloads.
ktap_result "stock rdma_rxe loads and creates y0" \
	bash -c 'source '"$(dirname "$0")"'/../../lib/shell/lib.sh; rxe_load && rdma_link_add y0 rxe d1'
ktap_result "insmod rdma_rxecc while rdma_rxe is loaded" rxecc_load
dmesg -C
ktap_result "rdma link add type rxecc in rdma_rxe's namespace fails" \
	bash -c '! rdma link add x0 type rxecc netdev d0 && ! [ -e /sys/class/infiniband/x0 ]'
ktap_result "the kernel log says why (port 4791 bound in that namespace, rdma_rxe)" \
	bash -c 'dmesg | grep "rdma_rxecc: d0: UDP port 4791 is already bound.*rdma_rxe"'
ktap_result "rmmod rdma_rxecc leaves rdma_rxe and its device y0 alone" \
	bash -c 'rmmod rdma_rxecc && [ -d /sys/module/rdma_rxe ] && [ -e /sys/class/infiniband/y0 ]'
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "rdma_rxe's device y0 still works" \
	bash -c 'source '"$(dirname "$0")"'/../../lib/shell/lib.sh; g=$(wait_gid y0 10.0.1.1) &&
		peer_pair y0ping ibv_rc_pingpong -d y0 -g $g -n 50 -c -- ibv_rc_pingpong -d y0 -g $g -n 50 -c 10.0.1.1'
ktap_result "after rdma_rxe unloads, rdma_rxecc makes x0 in init_net" \
	bash -c 'source '"$(dirname "$0")"'/../../lib/shell/lib.sh; modules_unload && rxecc_load && rdma_link_add x0 rxecc d0'
ktap_result "modprobe rdma_rxe fails while rdma_rxecc holds UDP 4791 in init_net" \
	bash -c '! modprobe rdma_rxe && [ -e /sys/class/infiniband/x0 ]'
modules_unload >/dev/null 2>&1
ktap_finished
