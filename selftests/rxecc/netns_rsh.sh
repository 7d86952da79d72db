#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Open MPI's remote shell (mpirun --mca plm_rsh_agent) for "hosts" that are
# network namespaces of this machine: HOST is an IPv4 address, and the
# command (orted's, quoted for a shell as ssh would pass it) runs in the
# namespace that has that address.
# usage: netns_rsh.sh HOST COMMAND...
# Exactly one namespace may hold the address.
host=$1
shift
found=''
for ns in $(ip netns list | cut -d' ' -f1); do
	if ip -n "$ns" -o -4 addr show | grep -qF " inet $host/"; then
		[ -z "$found" ] || {
			echo "netns_rsh.sh: namespaces $found and $ns both have the address $host" >&2
			exit 255
		}
		found=$ns
	fi
done
[ -n "$found" ] || { echo "netns_rsh.sh: no network namespace has the address $host" >&2; exit 255; }
exec ip netns exec "$found" /bin/sh -c "$*"
