#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Open MPI's remote shell (mpirun --mca plm_rsh_agent) for "hosts" that are
# network namespaces of this machine: HOST is an IPv4 address, and the
# command (orted's, quoted for a shell as ssh would pass it) runs in the
# namespace that has that address.
# usage: netns_rsh.sh HOST COMMAND...
host=$1
shift
for ns in $(ip netns list | cut -d' ' -f1); do
	if ip -n "$ns" -o -4 addr show | grep -qF " inet $host/"; then
		exec ip netns exec "$ns" /bin/sh -c "$*"
	fi
done
echo "netns_rsh.sh: no network namespace has the address $host" >&2
exit 255
