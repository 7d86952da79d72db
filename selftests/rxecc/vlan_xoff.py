#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""vlan_xoff.py DEV [PRIO]: wait up to 10 s for a PFC XOFF of PRIO
(default 2) to reach DEV (a raw socket of every protocol, so before any
untagging) and say whether it came tagged: exit 0 untagged, 1 tagged, and a
message when none came (security.sh: a pfc port answers through a VLAN
with untagged pause frames). Host tests: test_vlan_xoff.py."""
import socket
import struct
import sys
import time

SOL_PACKET, PACKET_AUXDATA, TP_STATUS_VLAN_VALID = 263, 8, 0x10
PFC_DST = bytes.fromhex("0180c2000001")
PFC_HEAD = b"\x88\x08\x01\x01"      # MAC control, opcode PFC


def xoff_for(frame, prio):
    """frame (from the Ethernet header on) is a PFC frame that pauses prio
    (its class enabled, a time not 0)."""
    if frame[:6] != PFC_DST or frame[12:16] != PFC_HEAD or len(frame) < 34:
        return False
    enable, *times = struct.unpack("!H8H", frame[16:34])
    return bool(enable & (1 << prio) and times[prio])


def tagged(ancdata):
    """The kernel stripped a VLAN tag from the frame (PACKET_AUXDATA's
    tp_status)."""
    return any(struct.unpack_from("=I", d)[0] & TP_STATUS_VLAN_VALID
               for lvl, typ, d in ancdata if lvl == SOL_PACKET and typ == PACKET_AUXDATA)


def main(argv):
    dev, prio = argv[1], int(argv[2]) if len(argv) > 2 else 2
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # ETH_P_ALL: before untagging
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.bind((dev, 0))
    s.settimeout(10)
    end = time.time() + 10
    while time.time() < end:
        f, anc, _, _ = s.recvmsg(2048, 64)
        if xoff_for(f, prio):
            t = tagged(anc)
            print(f"XOFF for priority {prio} on {dev},", "tagged" if t else "untagged")
            return 1 if t else 0
    return f"no XOFF for priority {prio} reached {dev}"


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: vlan_xoff.py DEV [PRIO]")
    sys.exit(main(sys.argv))
