#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make install` puts rdma_rxecc and sch_pfc under extra/ for the running
# kernel, after which `rdma link add ... type rxecc` loads rdma_rxecc by its
# alias and `tc qdisc add ... pfc` loads sch_pfc, and the rxecc
# tool, its man page and bash completion under /usr/local; `make uninstall`
# takes them away again. Runs `make` in the repo, so the module must be built.
source "$(dirname "$0")/lib.sh"
need_root
KV=$(uname -r)

ktap_header
ktap_plan 9
[ -f "$RXECC_MODULE" ] || ktap_exit_skip "the module is not built"
modules_unload >/dev/null 2>&1
load_rdma_core
veth_up d0 10.0.0.1/24 || ktap_exit_skip "cannot create a veth pair"

t0=$SECONDS
ktap_result "make install" make -C "$RXECC_TOP" --no-print-directory install KVER="$KV" \
	MODULE="$RXECC_MODULE" PFC_MODULE="$PFC_MODULE"
ktap_diag "make install took $((SECONDS - t0))s (depmod)"
ktap_result "modinfo finds rdma_rxecc under extra/" \
	bash -c "modinfo -n rdma_rxecc | grep -qx /lib/modules/$KV/extra/rdma_rxecc.ko"
ktap_result "rdma link add type rxecc autoloads rdma_rxecc" \
	bash -c '! [ -d /sys/module/rdma_rxecc ] && source '"$(dirname "$0")"'/lib.sh && rdma_link_add x0 rxecc d0 && [ -d /sys/module/rdma_rxecc ]'
ktap_result "the autoloaded device works (ibv_rc_pingpong)" \
	bash -c 'source '"$(dirname "$0")"'/lib.sh; g=$(wait_gid x0 10.0.0.1) &&
		peer_pair inst ibv_rc_pingpong -d x0 -g $g -n 50 -c -- ibv_rc_pingpong -d x0 -g $g -n 50 -c 10.0.0.1'
installed_tool() {
	local out
	out=$(/usr/local/sbin/rxecc dcqcn show dev x0) || return 1
	echo "$out" | head -2
	echo "$out" | grep -q "^dev x0 " || return 1
	# man finds the page through the standard PATH (man-db maps .../sbin to .../share/man).
	out=$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin man -w rxecc 2>&1)
	echo "man -w rxecc: $out"
	[ "$(readlink -f "$out")" = /usr/local/share/man/man8/rxecc.8 ] || return 1
	[ -f /usr/local/share/bash-completion/completions/rxecc ]
}
ktap_result "the installed rxecc tool shows the device; man page and completion installed" installed_tool
ktap_result "tc qdisc add ... pfc autoloads sch_pfc; the installed tool shows it" \
	bash -c '! [ -d /sys/module/sch_pfc ] && tc qdisc add dev d0 root pfc && [ -d /sys/module/sch_pfc ] &&
		/usr/local/sbin/rxecc qdisc show dev d0 | grep -q "^qdisc pfc" && tc qdisc del dev d0 root &&
		modprobe -r sch_pfc'
ktap_result "modprobe -r rdma_rxecc with a device removes it" \
	bash -c 'modprobe -r rdma_rxecc && ! [ -d /sys/module/rdma_rxecc ] && [ -z "$(ls /sys/class/infiniband)" ]'
t0=$SECONDS
ktap_result "make uninstall" make -C "$RXECC_TOP" --no-print-directory uninstall KVER="$KV"
ktap_diag "make uninstall took $((SECONDS - t0))s"
ktap_result "after uninstall, type rxecc no longer loads anything" \
	bash -c '! modinfo rdma_rxecc && ! modinfo sch_pfc && ! rdma link add x0 type rxecc netdev d0 && ! [ -d /sys/module/rdma_rxecc ] &&
		! [ -e /usr/local/sbin/rxecc ] && ! [ -e /usr/local/share/man/man8/rxecc.8 ]'
modules_unload >/dev/null 2>&1
ktap_finished
