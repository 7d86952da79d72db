#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stress with verified traffic running (rxecc-verbs h2 -> h1, every byte and
# completion checked):
#   - QP churn: 1200 RC QPs created, half connected over loopback with one
#     checked SEND per pair, destroyed, in batches of 100 (qp_churn.py,
#     pyverbs); the device's QP, CQ, MR and PD counts come back;
#   - rdma link delete of a host's device in the middle of its transfer: its
#     program gets an error (no hang), the other hosts go on, the device comes
#     back with rdma link add and works;
#   - rmmod rdma_rxecc while QPs are in use is refused and changes nothing;
#     once they are closed it unloads.
# ci/selftests.sh fails the run on any kernel splat.
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
VERBS_SUMMARY=$LOGDIR/stress-summary.txt
source "$(dirname "$0")/verbs.sh"
need_root
HERE=$(cd "$(dirname "$0")" && pwd)
CHURN_QPS=${CHURN_QPS:-1200}

ktap_header
ktap_plan 5

verbs_fabric 3

live_start() { verbs_live_start "$@"; }
live_stop() { verbs_live_stop "$1"; }

res_counts() {	# "qp Q cq C mr M pd P" of h1 (rdma res show)
	rdma -j res show | python3 "$RXECC_TOP/lib/python/rxecc_show.py" res h1
}

# ---- QP churn ---------------------------------------------------------------------
churn() {
	local before after rc=0 g
	live_start live-19700 2 19700 || return 1
	before=$(res_counts)
	g=$(fabric_gid 1) || return 1
	fabric_in 1 timeout 600 python3 "$HERE/qp_churn.py" h1 "$g" --qps "$CHURN_QPS" \
		>"$LOGDIR/churn.json" || rc=1
	cat "$LOGDIR/churn.json"
	after=$(res_counts)
	echo "h1 resources before: $before; after: $after"
	[ -n "$before" ] && [ "$before" = "$after" ] || rc=1
	live_stop live-19700 || rc=1
	echo "QP churn: $(cat "$LOGDIR/churn.json")" >>"$VERBS_SUMMARY"
	return "$rc"
}
ktap_result "QP churn: $CHURN_QPS RC QPs created, connected, used and destroyed during verified traffic; resources back" churn

# ---- rdma link delete during traffic -----------------------------------------------
link_delete() {
	local rc=0 t0 c d
	live_start live-19710 2 19710 || return 1
	live_start live-19711 3 19711 10 || return 1
	t0=$SECONDS
	# rxe has no disassociate: the delete waits until h3's program closes
	# its device, which it does on RDMA_CM_EVENT_DEVICE_REMOVAL.
	fabric_in 3 timeout 120 rdma link delete h3 &
	d=$!
	wait "${VERBS_C[live-19711]}"
	c=$?
	echo "h3's client: exit code $c after $((SECONDS - t0)) s"
	tail -n 2 "$LOGDIR/live-19711.c.err"
	[ "$c" -ne 0 ] && [ "$c" -lt 124 ] || rc=1	# its own error, not timeout's kill
	wait "$d" || { echo "rdma link delete h3 failed"; rc=1; }
	echo "link delete done after $((SECONDS - t0)) s"
	wait "${VERBS_S[live-19711]}"
	echo "h1's server for h3: exit code $?"
	tail -n 2 "$LOGDIR/live-19711.s.err"
	[ -e /sys/class/infiniband/h3 ] && rc=1
	live_stop live-19710 || rc=1
	fabric_in 3 rdma link add h3 type rxecc netdev eth0 || return 1
	wait_gid h3 "$(fabric_ip 3)" >/dev/null || return 1
	live_start live-19712 3 19712 || return 1
	live_stop live-19712 || rc=1
	return "$rc"
}
ktap_result "rdma link delete during a transfer: that program gets an error, h2's transfer is verified, h3 works again after link add" link_delete

# ---- module unload with users ----------------------------------------------------------
rmmod_busy() {
	local rc=0
	live_start live-19720 2 19720 || return 1
	if rmmod rdma_rxecc 2>"$LOGDIR/rmmod.err"; then
		echo "rmmod succeeded while QPs were in use"
		rc=1
	fi
	cat "$LOGDIR/rmmod.err"
	grep -qi "in use" "$LOGDIR/rmmod.err" || rc=1
	[ -e /sys/class/infiniband/h1 ] && [ -e /sys/module/rdma_rxecc ] || rc=1
	sleep 2
	live_stop live-19720 || rc=1
	return "$rc"
}
ktap_result "rmmod rdma_rxecc while QPs are in use: refused (in use), the transfer goes on verified" rmmod_busy

unload_after() {
	sleep 1
	timeout 60 rmmod rdma_rxecc || return 1
	[ ! -e /sys/class/infiniband/h1 ] && [ ! -e /sys/module/rdma_rxecc ]
}
ktap_result "once no QP is in use, rdma_rxecc unloads and takes its devices with it" unload_after

reload() {	# and the module comes back clean on a fresh fabric host
	rxecc_load || return 1
	for i in 1 2; do fabric_in "$i" rdma link add "h$i" type rxecc netdev eth0 || return 1; done
	wait_gid h1 "$(fabric_ip 1)" >/dev/null && wait_gid h2 "$(fabric_ip 2)" >/dev/null || return 1
	live_start live-19730 2 19730 || return 1
	sleep 2
	live_stop live-19730
}
ktap_result "reloaded, h1 and h2 re-added: a verified transfer" reload

ktap_diag "$(cat "$VERBS_SUMMARY")"
ktap_finished
