#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send hand-made RoCEv2 packets (IPv4) from a raw socket, for the guest
selftests: CNPs with a chosen destination QP, source address, opcode, length
and ICRC. The ICRC is computed like the RoCEv2 spec asks (CRC-32 over eight
0xff bytes, the IP header with TOS, TTL and checksum masked, the UDP header
with the checksum masked, the BTH with the FECN/BECN byte masked, and the
payload), so a packet is accepted unless --bad-icrc is given.

  roce_pkt.py --src 10.0.1.1 --dst 10.0.2.1 --dqpn 17 [--count N]
              [--opcode 0x81] [--becn 1] [--reserved 16] [--bad-icrc]
"""
import argparse
import socket
import struct
import zlib

ROCE_PORT = 4791


def ip_header(src, dst, total_len, tos, ttl, ident, csum):
    return struct.pack("!BBHHHBBH4s4s", 0x45, tos, total_len, ident, 0x4000,
                       ttl, socket.IPPROTO_UDP, csum,
                       socket.inet_aton(src), socket.inet_aton(dst))


def checksum(data):
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def packet(a, ident):
    bth = struct.pack("!BBHBBBBBBBB", a.opcode, 0, a.pkey,
                      0x40 if a.becn else 0,
                      (a.dqpn >> 16) & 0xff, (a.dqpn >> 8) & 0xff, a.dqpn & 0xff,
                      0, (a.psn >> 16) & 0xff, (a.psn >> 8) & 0xff, a.psn & 0xff)
    payload = bytes(a.reserved)
    udp_len = 8 + len(bth) + len(payload) + 4
    total = 20 + udp_len
    udp = struct.pack("!HHHH", a.sport, ROCE_PORT, udp_len, 0)
    # ICRC: masked copies of the headers (RoCEv2, annex A17).
    masked = (b"\xff" * 8 +
              ip_header(a.src, a.dst, total, 0xff, 0xff, ident, 0xffff) +
              udp[:6] + b"\xff\xff" +
              bth[:4] + b"\xff" + bth[5:] + payload)
    icrc = zlib.crc32(masked) & 0xffffffff
    if a.bad_icrc:
        icrc ^= 0x1
    hdr = ip_header(a.src, a.dst, total, a.tos, 64, ident, 0)
    hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    return hdr + udp + bth + payload + struct.pack("<I", icrc)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--dqpn", type=lambda v: int(v, 0), required=True)
    p.add_argument("--opcode", type=lambda v: int(v, 0), default=0x81)
    p.add_argument("--pkey", type=lambda v: int(v, 0), default=0xffff)
    p.add_argument("--psn", type=lambda v: int(v, 0), default=0)
    p.add_argument("--becn", type=int, default=1)
    p.add_argument("--reserved", type=int, default=16, help="payload bytes after the BTH")
    p.add_argument("--tos", type=lambda v: int(v, 0), default=48 << 2)
    p.add_argument("--sport", type=int, default=0xf000)
    p.add_argument("--bad-icrc", action="store_true")
    p.add_argument("--count", type=int, default=1)
    a = p.parse_args()
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for i in range(a.count):
        s.sendto(packet(a, 0x1000 + i), (a.dst, 0))
    print("sent %d packet(s) opcode 0x%02x to %s qpn %d from %s" %
          (a.count, a.opcode, a.dst, a.dqpn, a.src))


if __name__ == "__main__":
    main()
