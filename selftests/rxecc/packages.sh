#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages `make deb` builds (build/deb/), installed as a user
# installs them: dpkg -i of rxecc-dkms and rxecc-utils, whose postinst has
# DKMS derive and build rdma_rxecc and sch_pfc for the running kernel from
# /usr/src/rxecc-VERSION; then `rdma link add ... type rxecc` and
# `tc qdisc add ... pfc` load them by their aliases, perftest runs over the
# device, the packaged tool shows it, and dpkg --purge leaves nothing behind.
# Test setup, not the packages': the guest sees every kernel the host has,
# and DKMS builds for the running and the newest one; the others' module
# directories are hidden (so one build, under TCG), and /lib/modules/$KV is
# a small tree of the modules the test loads (depmod over all of them takes
# a minute in a TCG guest; see install.sh).
source "$(dirname "$0")/../../lib/shell/lib.sh"
need_root
KV=$(uname -r)
DEBS=${RXECC_DEBS:-$RXECC_TOP/build/deb}

ktap_header
ktap_plan 11
dkms_deb=$(find "$DEBS" -maxdepth 1 -name 'rxecc-dkms_*_all.deb' 2>/dev/null | sort -V | tail -n 1)
utils_deb=$(find "$DEBS" -maxdepth 1 -name 'rxecc-utils_*_amd64.deb' 2>/dev/null | sort -V | tail -n 1)
if [ -z "$dkms_deb" ] || [ -z "$utils_deb" ]; then
	ktap_exit_skip "no packages in $DEBS (make deb)"
fi
command -v dkms >/dev/null || ktap_exit_skip "dkms is not installed (make deb installs it)"
version=$(dpkg-deb -f "$dkms_deb" Version)
ktap_diag "packages: $(basename "$dkms_deb") $(basename "$utils_deb"), kernel $KV"
modules_unload >/dev/null 2>&1
veth_up d0 10.0.0.1/24 || ktap_exit_skip "cannot create a veth pair"
veth_up d1 10.0.1.1/24 || ktap_exit_skip "cannot create a veth pair"

# dkms uses process substitution (<(...)), which needs /dev/fd; the guest's
# /dev has none. No debconf questions.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd || ktap_exit_skip "cannot make /dev/fd"
export DEBIAN_FRONTEND=noninteractive

# Hide the other kernels' module directories (DKMS would build for the newest).
for d in /lib/modules/*; do
	[ "$d" = "/lib/modules/$KV" ] || mount -t tmpfs none "$d" || ktap_exit_skip "cannot hide $d"
done

# A module tree with what the test loads and the running kernel's headers
# (DKMS builds against /lib/modules/$KV/build).
MODTREE=/tmp/modtree
small_module_tree() {
	local src=/lib/modules/$KV f
	local mods=(ib_core ib_uverbs rdma_ucm rdma_cm udp_tunnel ip6_udp_tunnel veth crc32_generic)
	rm -rf "$MODTREE" && mkdir -p "$MODTREE" &&
		cp "$src"/modules.order "$src"/modules.builtin "$src"/modules.builtin.modinfo "$MODTREE"/ || return 1
	cp -P "$src/build" "$MODTREE/build" || return 1
	for f in $(modprobe --show-depends -a "${mods[@]}" | awk '$1 == "insmod" { print $2 }' | sort -u); do
		install -D -m 644 "$f" "$MODTREE/${f#"$src"/}" || return 1
	done
	mount --bind "$MODTREE" "$src" || return 1
	depmod "$KV"
}
small_module_tree || ktap_exit_skip "cannot build the test's module tree"
[ -e "/lib/modules/$KV/build/Makefile" ] || ktap_exit_skip "no headers for $KV"

t0=$SECONDS
install_packages() {
	local out rc
	out=$(dpkg -i "$dkms_deb" "$utils_deb" 2>&1)
	rc=$?
	echo "$out" | tail -n 15
	return "$rc"
}
ktap_result "dpkg -i rxecc-dkms rxecc-utils (DKMS builds for $KV)" install_packages
ktap_diag "dpkg -i took $((SECONDS - t0))s"
ktap_result "dkms status: rxecc/$version installed for $KV" \
	bash -c "dkms status rxecc/$version -k $KV | tee /dev/stderr | grep -q ': installed'"
ktap_result "the aliases resolve to DKMS's modules (updates/dkms)" \
	bash -c "modinfo -F filename rdma-link-rxecc | grep -q '^/lib/modules/$KV/updates/dkms/rdma_rxecc.ko' &&
		modinfo -F filename sch_pfc | grep -q '^/lib/modules/$KV/updates/dkms/sch_pfc.ko'"
ktap_result "rdma link add type rxecc autoloads rdma_rxecc" \
	bash -c '! [ -d /sys/module/rdma_rxecc ] && source '"$(dirname "$0")"'/../../lib/shell/lib.sh &&
		rdma_link_add x0 rxecc d0 && [ -d /sys/module/rdma_rxecc ]'
# shellcheck disable=SC2016 # expanded by the inner bash -c, not here
ktap_result "perftest over the packaged module (ib_send_bw, 2 MiB)" \
	bash -c 'source '"$(dirname "$0")"'/../../lib/shell/lib.sh; g=$(wait_gid x0 10.0.0.1) &&
		peer_pair pkg ib_send_bw -d x0 -x "$g" -s 65536 -n 32 -F -- \
			ib_send_bw -d x0 -x "$g" -s 65536 -n 32 -F 10.0.0.1'
packaged_tool() {
	local out
	out=$(/usr/sbin/rxecc dcqcn show dev x0) || return 1
	echo "$out" | head -2
	echo "$out" | grep -q "^dev x0 " || return 1
	out=$(man -w rxecc 2>&1)
	echo "man -w rxecc: $out"
	[ "$(readlink -f "$out")" = /usr/share/man/man8/rxecc.8.gz ] &&
		[ -f /usr/share/bash-completion/completions/rxecc ]
}
ktap_result "rxecc-utils: the tool shows the device; man page and completion" packaged_tool
ktap_result "tc qdisc add ... pfc autoloads sch_pfc" \
	bash -c '! [ -d /sys/module/sch_pfc ] && tc qdisc add dev d1 root pfc && [ -d /sys/module/sch_pfc ] &&
		/usr/sbin/rxecc qdisc show dev d1 | grep -q "^qdisc pfc" && tc qdisc del dev d1 root'
ktap_result "the modules unload" \
	bash -c 'rdma link delete x0 && modprobe -r sch_pfc rdma_rxecc &&
		! [ -d /sys/module/rdma_rxecc ] && ! [ -d /sys/module/sch_pfc ]'
t0=$SECONDS
ktap_result "dpkg --purge rxecc-dkms rxecc-utils" dpkg --purge rxecc-dkms rxecc-utils
ktap_diag "dpkg --purge took $((SECONDS - t0))s"
left_behind() {
	local f left=0
	# (6.12's DKMS installs .ko.xz: Debian compresses that kernel's modules)
	for f in "/usr/src/rxecc-$version" /var/lib/dkms/rxecc "/lib/modules/$KV/updates/dkms/rdma_rxecc.ko"* \
		"/lib/modules/$KV/updates/dkms/sch_pfc.ko"* /usr/sbin/rxecc /usr/share/man/man8/rxecc.8.gz \
		/usr/share/bash-completion/completions/rxecc; do
		if [ -e "$f" ]; then
			echo "left behind: $f"
			left=1
		fi
	done
	return "$left"
}
ktap_result "nothing of the packages is left" left_behind
ktap_result "after the purge, type rxecc loads nothing" \
	bash -c '! modinfo rdma-link-rxecc && ! rdma link add x0 type rxecc netdev d0 && ! [ -d /sys/module/rdma_rxecc ]'
modules_unload >/dev/null 2>&1
ktap_finished
