#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UCX (Debian's ucx-utils 1.13) over rxecc between fabric hosts, UCX
# forced onto the rxecc devices: UCX_NET_DEVICES=hI:1, UCX_IB_GID_INDEX the
# RoCEv2 GID of the host's address (which GID UCX picks by itself differs
# between its versions, openucx/ucx#5045; the test pins it), UCX_TLS as
# below.
#   - ucx_info -d lists rc_verbs and ud_verbs on the rxecc device;
#   - ucx_perftest tag_bw and tag_lat over RC (UCX_TLS=rc,self: RC QPs,
#     wired up over UD datagrams) and tag_bw over UD alone (ud,self) on the
#     IPv4 GID; tag_bw over both on the IPv6 GID.
# UCX's UD checks each datagram's destination address in the receive
# buffer's network header, where the completion's sl says it is (mlx5's
# RoCE packet type, patch 0021); with rxe's sl 0 it dropped every IPv4
# datagram and the endpoints timed out ("UD endpoint ...: unhandled timeout
# error"); the IPv6 runs pass either way (UCX reads 16 bytes there). Each
# run must exit 0 with its final line; SENDs must have arrived
# (rdma_recvs).
#   - Open MPI 4.1 over UCX (pml ucx, no other transport) runs rxecc-mpi,
#     MPI_Allreduce and MPI_Alltoall with every element checked, as 4 ranks
#     on 4 hosts (each rank must have run in its host's namespace): mpirun
#     in host 1's namespace starts its daemons in the others through
#     netns_rsh.sh (a remote shell that enters the namespace holding the
#     host's address); each rank gets its host's device and GID on its own
#     command line (`env UCX_NET_DEVICES=... rxecc-mpi`: the devices of
#     every namespace are visible in each, rdma's netns mode is shared).
source "$(dirname "$0")/../../lib/shell/lib.sh"
source "$(dirname "$0")/../../lib/shell/fabric.sh"
need_root
command -v ucx_perftest >/dev/null || ktap_exit_skip "ucx_perftest is not installed (ucx-utils)"

ktap_header
ktap_plan 5

modules_unload >/dev/null 2>&1
rxecc_load || { ktap_fail "load rdma_rxecc"; ktap_finished; }
fabric_init
{ fabric_add_host 1 && fabric_add_host 2; } || { ktap_fail "fabric hosts 1 and 2"; ktap_finished; }

devices() {
	local t out rc=0
	out=$(fabric_in 1 ucx_info -d 2>&1)
	for t in rc_verbs ud_verbs; do
		grep -A1 "Transport: $t" <<<"$out" | grep -q "Device: h1:1" || { echo "no $t on h1:1"; rc=1; }
	done
	return "$rc"
}
ktap_result "ucx_info -d: rc_verbs and ud_verbs on the rxecc device" devices

PORT=13337
# perf NAME TLS FAMILY TEST: one ucx_perftest h1 -> h2 over each host's
# RoCEv2 GID of address family FAMILY (4 or 6). Its own connection (to
# exchange addresses) is TCP over IPv4: ucx_perftest 1.13 resolves no IPv6
# server name.
perf() {
	local name=$1 tls=$2 fam=$3 test=$4 srv rc=0 addr env
	addr=$(fabric_ip 2)
	env=(UCX_TLS="$tls" UCX_WARN_UNUSED_ENV_VARS=n)
	PORT=$((PORT + 1))
	fabric_in 2 env UCX_NET_DEVICES=h2:1 UCX_IB_GID_INDEX="$(fabric_gid 2 "$fam")" "${env[@]}" \
		timeout "$(scaled_time 60)" ucx_perftest -p "$PORT" >"$LOGDIR/$name.server.log" 2>&1 &
	srv=$!
	wait_for 15 tcp_listening_on "$(fabric_ns 2)" "$PORT" || rc=1
	fabric_in 1 env UCX_NET_DEVICES=h1:1 UCX_IB_GID_INDEX="$(fabric_gid 1 "$fam")" "${env[@]}" \
		timeout "$(scaled_time 60)" \
		ucx_perftest "$addr" -p "$PORT" -t "$test" -s 65536 -n 200 >"$LOGDIR/$name.client.log" 2>&1 ||
		{ rc=1; grep -m3 -E "Fatal|ERROR|error" "$LOGDIR/$name.client.log"; }
	wait "$srv" || { rc=1; grep -m3 -E "Fatal|ERROR|error" "$LOGDIR/$name.server.log"; }
	grep -q '^Final:' "$LOGDIR/$name.client.log" || rc=1
	echo "$name: $(grep '^Final:' "$LOGDIR/$name.client.log" | tr -s ' ')"
	return "$rc"
}

rc_v4() {
	snap 1:rdma_recvs 2:rdma_recvs
	perf rc-bw rc,self 4 tag_bw && perf rc-lat rc,self 4 tag_lat || return 1
	echo "SENDs received (UD wireup, RC): h1 +$(delta 1:rdma_recvs), h2 +$(delta 2:rdma_recvs)"
	delta_at_least 1:rdma_recvs 1 && delta_at_least 2:rdma_recvs 1
}
ktap_result "ucx_perftest tag_bw and tag_lat over RC (UD wireup), IPv4 RoCEv2 GID" rc_v4
ud_v4() {
	snap 2:rdma_recvs
	perf ud-bw ud,self 4 tag_bw || return 1
	delta_at_least 2:rdma_recvs 200
}
ktap_result "ucx_perftest tag_bw over UD alone, IPv4 RoCEv2 GID" ud_v4
v6() {
	perf rc6-bw rc,self 6 tag_bw && perf ud6-bw ud,self 6 tag_bw
}
ktap_result "ucx_perftest tag_bw over RC (UD wireup) and over UD alone, IPv6 RoCEv2 GID" v6

MPI_PROG=$RXECC_TOP/build/userspace/rxecc-mpi
mpi() {
	local i apps=() out=$LOGDIR/mpi.json hosts=(1 2 3 4) counters=() rc=0
	command -v mpirun >/dev/null || { ktap_skip_this "mpirun is not installed (openmpi-bin)"; return 0; }
	[ -x "$MPI_PROG" ] || { echo "$MPI_PROG is missing (libopenmpi-dev, make userspace)"; return 1; }
	{ fabric_add_host 3 && fabric_add_host 4; } || { echo "fabric hosts 3 and 4"; return 1; }
	for i in "${hosts[@]}"; do
		[ ${#apps[@]} -eq 0 ] || apps+=(:)
		# each rank notes its namespace first: it must be its host's
		# shellcheck disable=SC2016,SC2054 # (expanded by the rank's sh; UCX_TLS is a list)
		apps+=(-np 1 --host "$(fabric_ip "$i")" sh -c 'ip netns identify >"$0" && exec "$@"'
			"$LOGDIR/mpi-ns.$i" env UCX_NET_DEVICES="$(fabric_dev "$i"):1"
			UCX_IB_GID_INDEX="$(fabric_gid "$i")" UCX_TLS=rc,self UCX_WARN_UNUSED_ENV_VARS=n
			"$MPI_PROG" --json --min-bytes 4096 --max-bytes 65536 --iters 5)
		counters+=("$i:rdma_sends" "$i:rdma_recvs")
	done
	snap "${counters[@]}"
	fabric_in 1 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout -k 10 "$(scaled_time 120)" mpirun --mca plm_rsh_agent "$RXECC_TOP/selftests/rxecc/netns_rsh.sh" \
		--mca plm_rsh_no_tree_spawn 1 --mca pml ucx --mca btl self "${apps[@]}" >"$out" ||
		{ echo "mpirun exited $?"; rc=1; }
	cat "$out"
	# a row per size of each collective, 4 ranks and 5 iterations each, every element right
	python3 "$RXECC_TOP/selftests/rxecc/coll_check.py" mpi "$out" 4 5 || rc=1
	# every rank ran in its host's namespace, and its traffic went through
	# its host's rxecc device (all-to-all alone sends some 100 per rank)
	for i in "${hosts[@]}"; do
		echo "h$i: namespace $(cat "$LOGDIR/mpi-ns.$i" 2>/dev/null), SENDs +$(delta "$i:rdma_sends")," \
			"received +$(delta "$i:rdma_recvs")"
		[ "$(cat "$LOGDIR/mpi-ns.$i" 2>/dev/null)" = "$(fabric_ns "$i")" ] || rc=1
		delta_at_least "$i:rdma_sends" 150 && delta_at_least "$i:rdma_recvs" 150 || rc=1
	done
	return "$rc"
}
ktap_result "Open MPI over UCX: MPI_Allreduce and MPI_Alltoall checked, 4 ranks on 4 hosts" mpi

ktap_finished
