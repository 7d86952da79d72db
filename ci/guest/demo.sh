#!/bin/bash
# Guest side of `make demo` (for now): two guests, one rdma_rxecc device each
# on the link between them; guest 1 runs perftest clients against guest 0.
# Reports go to /mnt/out/demo/<test>.{server,client}.log on each guest.
source "$RXECC_TOP/selftests/rxecc/lib.sh"
ME=${RXECC_GUEST_INDEX:?}
PEER_IP=10.0.0.1
MY_IP=10.0.0.$((ME + 1))
out=/mnt/out/demo
mkdir -p $out

modules_unload >/dev/null 2>&1
ip addr add "$MY_IP/24" dev eth0 && ip link set eth0 up || exit 1
rxecc_load && rdma_link_add r0 rxecc eth0 || exit 1
g=$(wait_gid r0 "$MY_IP") || exit 1
barrier ready

tests=("ib_write_bw -s 65536 -n 400" "ib_read_bw -s 65536 -n 400" "ib_send_bw -s 65536 -n 400"
	"ib_send_lat -s 2 -n 500" "ib_write_lat -s 2 -n 500")
rc=0
port=18800
for t in "${tests[@]}"; do
	read -r tool args <<<"$t"
	port=$((port + 1))
	if [ "$ME" = 0 ]; then
		# shellcheck disable=SC2086
		timeout 180 $tool -d r0 -x "$g" -F $args -p $port >"$out/$tool.server.log" 2>&1 || rc=1
	else
		echo "demo: $tool $args"
		# shellcheck disable=SC2086
		client_run "$out/$tool.client.log" $tool -d r0 -x "$g" -F $args -p $port "$PEER_IP" >/dev/null || rc=1
	fi
done
[ "$ME" = 1 ] && rdma statistic show link r0/1 > "$out/counters.txt"
modules_unload >/dev/null 2>&1
exit $rc
