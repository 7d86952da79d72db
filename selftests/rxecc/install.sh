#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make install` puts rdma_rxecc and sch_pfc under extra/ for the running
# kernel, after which `rdma link add ... type rxecc` loads rdma_rxecc by its
# alias and `tc qdisc add ... pfc` loads sch_pfc, and the rxecc
# tool, its man page and bash completion under /usr/local; `make uninstall`
# takes them away again. Runs `make` in the repo, so the module must be built.
# depmod, which both run, reads every module of the kernel: about a minute
# each in a TCG guest. So the test runs on a module tree of its own that
# holds only what it can load (the modules it names and their dependencies,
# plus modules.order and modules.builtin*), bind-mounted over the real one:
# the same depmod, modprobe and autoload paths, on some 20 files.
source "$(dirname "$0")/../../lib/shell/lib.sh"
need_root
KV=$(uname -r)

ktap_header
ktap_plan 9
[ -f "$RXECC_MODULE" ] || ktap_exit_skip "the module is not built"
modules_unload >/dev/null 2>&1
load_rdma_core
veth_up d0 10.0.0.1/24 || ktap_exit_skip "cannot create a veth pair"

# small_module_tree: /lib/modules/$KV replaced (bind mount) by a copy with
# only the modules named here, those rdma_rxecc and sch_pfc depend on, and
# their dependencies; modules.dep and the alias files come from depmod.
MODTREE=/tmp/modtree
small_module_tree() {
	# crc32_generic: rxe's ICRC asks the crypto API for "crc32", which loads it by its alias
	local src=/lib/modules/$KV f d mods=(ib_core ib_uverbs rdma_ucm udp_tunnel ip6_udp_tunnel veth crc32_generic)
	for f in "$RXECC_MODULE" "$PFC_MODULE"; do
		IFS=, read -ra d <<<"$(modinfo -F depends "$f")"
		mods+=("${d[@]}")
	done
	# A tree of ours left mounted by an earlier run of this boot hides the
	# real one (which may itself be a mount: the debug kernel's modules).
	[ ! -e "$src/.rxecc-test-tree" ] || umount "$src" || return 1
	rm -rf "$MODTREE" && mkdir -p "$MODTREE" && touch "$MODTREE/.rxecc-test-tree" &&
		cp "$src"/modules.order "$src"/modules.builtin "$src"/modules.builtin.modinfo "$MODTREE"/ || return 1
	# (no process substitution: the guest has no /dev/fd)
	for f in $(modprobe --show-depends -a "${mods[@]}" | awk '$1 == "insmod" { print $2 }' | sort -u); do
		install -D -m 644 "$f" "$MODTREE/${f#"$src"/}" || return 1
	done
	ktap_diag "module tree for the test: $(find "$MODTREE" -name "*.ko*" | wc -l) modules"
	mount --bind "$MODTREE" "$src" || return 1
	trap 'umount "/lib/modules/$KV" 2>/dev/null' EXIT
	depmod "$KV"
}
small_module_tree || ktap_exit_skip "cannot build the test's module tree"

t0=$SECONDS
ktap_result "make install" make -C "$RXECC_TOP" --no-print-directory install KVER="$KV" \
	MODULE="$RXECC_MODULE" PFC_MODULE="$PFC_MODULE"
ktap_diag "make install took $((SECONDS - t0))s (depmod on the test's module tree)"
ktap_result "modinfo finds rdma_rxecc under extra/" \
	bash -c "modinfo -n rdma_rxecc | grep -qx /lib/modules/$KV/extra/rdma_rxecc.ko"
ktap_result "rdma link add type rxecc autoloads rdma_rxecc" \
	bash -c '! [ -d /sys/module/rdma_rxecc ] && source '"$(dirname "$0")"'/../../lib/shell/lib.sh && rdma_link_add x0 rxecc d0 && [ -d /sys/module/rdma_rxecc ]'
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "the autoloaded device works (ibv_rc_pingpong)" \
	bash -c 'source '"$(dirname "$0")"'/../../lib/shell/lib.sh; g=$(wait_gid x0 10.0.0.1) &&
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
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
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
