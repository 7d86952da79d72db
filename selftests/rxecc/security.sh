#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What an unprivileged user or a host on the wire can do to rxecc and
# sch_pfc (docs/security.md says what each test guards against):
#   - sch_pfc with 64 ingress ports in XOFF on two priorities, built by an
#     unprivileged user in its own user and network namespace, releases
#     every port with an XON on `change` and on `del` (pfc_ports.py);
#   - PFC frames not from the link partner (another destination address, a
#     VLAN tag) pause nothing, at the endpoint and at the switch port, and
#     are counted; a frame to the reserved address still pauses;
#   - PFC frames are sent only out of Ethernet ports: traffic that reaches a
#     pfc port through a bridge pauses nobody through the bridge device.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fabric.sh"
need_root
HERE=$(cd "$(dirname "$0")" && pwd)
T=$RXECC_TOOL

ktap_header
ktap_plan 1

modules_unload >/dev/null 2>&1
pfc_load || { ktap_fail "load sch_pfc"; ktap_finished; }

# ---- sch_pfc: more ports in XOFF than one priority has slots -----------------
pfc_many_ports() {
	# unshare -Urn as an unprivileged user: root only in its own namespaces.
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		unshare -Urn python3 "$HERE/pfc_ports.py" --ports 64 --tool "$T"
}
ktap_result "sch_pfc: 64 ingress ports in XOFF on two priorities (an unprivileged user's namespace): change and del send every port its XON" pfc_many_ports

ktap_finished
