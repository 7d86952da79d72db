#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Malformed RoCEv2 packets and PFC frames at an rxecc device, reproducible
from a seed, for the guest selftests (integrity.sh).

  roce_fuzz.py roce --src OWN --peer PEER --dst DST --live QPN[,QPN] [--stale QPN,...]
                    --count N --seed S [--rate PPS]
  roce_fuzz.py pfc IFACE --count N --seed S [--enabled MASK] [--rate PPS]

Every packet is one the device must drop, and which of its counters it must
count it in is known: the tool prints JSON {"sent": N, "kinds": {...},
"expect": {counter: packets}}. The IP and UDP headers are always valid, so
every packet reaches the RoCE receive path (UDP port 4791; IPv4 with UDP
checksum 0, or IPv6, with a valid UDP checksum, when the addresses are
IPv6 ones).

RoCE kinds (raw IP socket; OWN is this host, PEER the live QPs' peer):
  truncated     UDP payload shorter than a BTH                 rx_drop_malformed
  opcode        an opcode rxe has no entry for                 rx_drop_malformed
  tver          transport version not 0                        rx_drop_malformed
  short         shorter than the opcode's headers + pad + ICRC rx_drop_malformed
  unknown_qp    valid request to a QP that does not exist      rx_drop_unknown_qp
                (random, 0, or a destroyed QP's number)
  qp_type       UD SEND to a live RC QP                        rx_drop_qp_state
  addr          valid request to a live QP from OWN, some
                oversized (IPv4: fragmented, up to 4 KiB)      rx_drop_addr_mismatch
  pkey          from PEER (spoofed) with a foreign P_Key       rx_drop_key_mismatch
  icrc          from PEER (spoofed), bad ICRC                  rx_icrc_encapsulated
  cnp_unknown   CNP to a QP that does not exist                rp_cnp_ignored
  cnp_src       CNP to a live QP from OWN                      rp_cnp_ignored
  cnp_bad       CNP from PEER (spoofed) with a bad ICRC or
                a wrong length                                 rp_cnp_ignored
  cnp_pkey      CNP from PEER (spoofed) to a live QP with a
                foreign P_Key                                  rp_cnp_ignored,
                                                               rp_cnp_drop_pkey_mismatch
  ce_psn        CE-marked SEND from PEER (spoofed) to a live
                QP, valid but for a random PSN: counted as
                marked, and no CNP goes out for it             np_ecn_marked_roce_packets
None of them is a valid packet of a live QP: those keep running.

PFC (AF_PACKET out of IFACE, towards the device, or a switch port with a
pfc qdisc): opcode 0x0101 frames with random class-enable vectors and
times. Priorities the receiver has not enabled (--enabled, default 0: none)
count one rx_pfc_ignored each, enabled ones one rx_prioN_pause each;
frames shorter than the PFC body or with upper vector bits set count
rx_pfc_malformed.
"""
import argparse
import json
import random
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
PFC_DA = bytes.fromhex("0180c2000001")

# rxe's opcodes (rxe_opcode.c) and rxecc's CNP: everything else is unknown.
KNOWN = set(range(0x00, 0x18)) | set(range(0x20, 0x2c)) | set(range(0x40, 0x55)) | {0x64, 0x65, 0x81}
UNKNOWN = [op for op in range(256) if op not in KNOWN]
RC_SEND_ONLY, RC_WRITE_ONLY, UD_SEND_ONLY, CNP = 0x04, 0x0A, 0x64, 0x81

ROCE_KINDS = {
    "truncated": "rx_drop_malformed", "opcode": "rx_drop_malformed",
    "tver": "rx_drop_malformed", "short": "rx_drop_malformed",
    "unknown_qp": "rx_drop_unknown_qp", "qp_type": "rx_drop_qp_state",
    "addr": "rx_drop_addr_mismatch", "pkey": "rx_drop_key_mismatch",
    "icrc": "rx_icrc_encapsulated", "cnp_unknown": "rp_cnp_ignored",
    "cnp_src": "rp_cnp_ignored", "cnp_bad": "rp_cnp_ignored",
    "cnp_pkey": ("rp_cnp_ignored", "rp_cnp_drop_pkey_mismatch"),
    "ce_psn": "np_ecn_marked_roce_packets",
}


def checksum(data):
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip_header(src, dst, total, tos, ttl, ident, csum, df=True):
    return struct.pack("!BBHHHBBH4s4s", 0x45, tos, total, ident, 0x4000 if df else 0, ttl,
                       socket.IPPROTO_UDP, csum, socket.inet_aton(src), socket.inet_aton(dst))


def bth(opcode, qpn, psn, pad=0, tver=0, pkey=0xffff):
    return struct.pack("!BBHI I", opcode, (pad & 3) << 4 | (tver & 0xf), pkey, qpn & 0xffffff,
                       psn & 0xffffff)


def ip6_header(src, dst, payload_len, tclass, flow, hop):
    return struct.pack("!IHBB16s16s", 6 << 28 | (tclass & 0xff) << 20 | (flow & 0xfffff),
                       payload_len, socket.IPPROTO_UDP, hop, socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst))


def roce6(src, dst, body, sport, icrc_ok=True, tclass=0):
    """IPv6 + UDP (checksummed) + body (+ ICRC, as roce())."""
    udp_len = 8 + len(body) + (4 if icrc_ok is not None else 0)
    tail = b""
    if icrc_ok is not None:
        masked = (b"\xff" * 8 + ip6_header(src, dst, udp_len, 0xff, 0xfffff, 0xff) +
                  struct.pack("!HHH", sport, ROCE_PORT, udp_len) + b"\xff\xff" +
                  body[:4] + b"\xff" + body[5:])
        icrc = zlib.crc32(masked) & 0xffffffff
        if not icrc_ok:
            icrc ^= 1 << random.randrange(32)
        tail = struct.pack("<I", icrc)
    data = body + tail
    pseudo = (socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) +
              struct.pack("!II", udp_len, socket.IPPROTO_UDP))
    udp = struct.pack("!HHHH", sport, ROCE_PORT, udp_len, 0)
    csum = checksum(pseudo + udp + data + b"\0" * (len(data) & 1)) or 0xffff
    udp = udp[:6] + struct.pack("!H", csum)
    return ip6_header(src, dst, udp_len, tclass, random.randrange(1 << 20), 64) + udp + data


def roce(src, dst, body, ident, sport, icrc_ok=True, df=True, tos=0):
    """IPv4 + UDP + body (+ ICRC over the masked headers, RoCEv2 annex A17,
    unless body is to be sent as it is: icrc_ok None); IPv6 (roce6()) when
    the addresses are."""
    if ":" in dst:
        return roce6(src, dst, body, sport, icrc_ok, tos)
    udp_len = 8 + len(body) + (4 if icrc_ok is not None else 0)
    total = 20 + udp_len
    udp = struct.pack("!HHHH", sport, ROCE_PORT, udp_len, 0)
    tail = b""
    if icrc_ok is not None:
        masked = (b"\xff" * 8 + ip_header(src, dst, total, 0xff, 0xff, ident, 0xffff, df) +
                  udp[:6] + b"\xff\xff" + body[:4] + b"\xff" + body[5:])
        icrc = zlib.crc32(masked) & 0xffffffff
        if not icrc_ok:
            icrc ^= 1 << random.randrange(32)
        tail = struct.pack("<I", icrc)
    hdr = ip_header(src, dst, total, tos, 64, ident, 0, df)
    hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    return hdr + udp + body + tail


def fragments(pkt, mtu=1500):
    """An IPv4 packet cut into fragments that fit `mtu` (a raw socket with
    IP_HDRINCL does not fragment); the receiver reassembles them."""
    if len(pkt) <= mtu:
        return [pkt]
    hdr, data = pkt[:20], pkt[20:]
    step = (mtu - 20) // 8 * 8
    out = []
    for off in range(0, len(data), step):
        chunk = data[off:off + step]
        more = 0x2000 if off + step < len(data) else 0
        h = bytearray(hdr)
        struct.pack_into("!H", h, 2, 20 + len(chunk))
        struct.pack_into("!H", h, 6, more | (off // 8))
        struct.pack_into("!H", h, 10, 0)
        struct.pack_into("!H", h, 10, checksum(bytes(h)))
        out.append(bytes(h) + chunk)
    return out


def absent_qpn(live, stale):
    """A QP number the device does not have: a destroyed one, 0, or one
    above rxe's index range (RXE_MAX_QP_INDEX 0x20000), not multicast."""
    r = random.random()
    if stale and r < 0.3:
        return random.choice(stale)
    if r < 0.35:
        return 0
    while True:
        q = random.randrange(0x20001, 0xffffff)
        if q not in live:
            return q


def roce_packet(kind, a, ident):
    live = random.choice(a.live)
    sport = random.randrange(0xc000, 0x10000)
    payload = random.randbytes(random.choice([0, 4, 16, 64, 256, 1024]))
    psn = random.randrange(1 << 24)
    if kind == "truncated":
        return roce(a.src, a.dst, random.randbytes(random.randrange(12)), ident, sport, None)
    if kind == "opcode":
        body = bth(random.choice(UNKNOWN), live, psn) + payload
        return roce(a.src, a.dst, body, ident, sport, random.random() < 0.5)
    if kind == "tver":
        body = bth(RC_SEND_ONLY, live, psn, tver=random.randrange(1, 16)) + payload
        return roce(a.src, a.dst, body, ident, sport)
    if kind == "short":
        # a WRITE without its RETH, or a pad count the payload cannot hold
        if random.random() < 0.5:
            body = bth(RC_WRITE_ONLY, live, psn) + random.randbytes(random.randrange(12))
        else:
            body = bth(RC_SEND_ONLY, live, psn, pad=3)
        return roce(a.src, a.dst, body, ident, sport)
    if kind == "unknown_qp":
        body = bth(RC_SEND_ONLY, absent_qpn(a.live, a.stale), psn) + payload
        return roce(a.src, a.dst, body, ident, sport)
    if kind == "qp_type":
        deth = struct.pack("!II", 0x80010000, 1)     # Q_Key, source QP
        return roce(a.src, a.dst, bth(UD_SEND_ONLY, live, psn) + deth + payload, ident, sport)
    if kind == "addr":
        big = random.random() < 0.2 and ":" not in a.dst	# no IPv6 fragments here
        if big:
            payload = random.randbytes(random.randrange(1500, 4096))
        return roce(a.src, a.dst, bth(RC_SEND_ONLY, live, psn) + payload, ident, sport, df=not big)
    if kind == "pkey":
        body = bth(RC_SEND_ONLY, live, psn, pkey=random.randrange(1, 0x7fff)) + payload
        return roce(a.peer, a.dst, body, ident, sport)
    if kind == "icrc":
        return roce(a.peer, a.dst, bth(RC_SEND_ONLY, live, psn) + payload, ident, sport, False)
    cnp = bth(CNP, live, 0) + bytes(16)
    if kind == "cnp_unknown":
        return roce(a.src, a.dst, bth(CNP, absent_qpn(a.live, a.stale), 0) + bytes(16), ident, sport)
    if kind == "cnp_src":
        return roce(a.src, a.dst, cnp, ident, sport)
    if kind == "cnp_bad":
        if random.random() < 0.5:
            return roce(a.peer, a.dst, cnp, ident, sport, False)
        return roce(a.peer, a.dst, bth(CNP, live, 0) + bytes(random.choice([20, 64])), ident, sport)
    if kind == "cnp_pkey":
        foreign = random.randrange(0x10000)
        while foreign & 0x7fff == 0x7fff:
            foreign = random.randrange(0x10000)
        return roce(a.peer, a.dst, bth(CNP, live, 0, pkey=foreign) + bytes(16), ident, sport)
    if kind == "ce_psn":
        return roce(a.peer, a.dst, bth(RC_SEND_ONLY, live, psn) + payload, ident, sport, tos=3)
    raise ValueError(kind)


def pfc_frame(src_mac):
    """(frame, malformed, enable vector)"""
    r = random.random()
    if r < 0.15:        # cut inside the body
        return PFC_DA + src_mac + struct.pack("!HH", 0x8808, 0x0101) + random.randbytes(
            random.randrange(0, 16)), True, 0
    cev = random.randrange(256)
    if r < 0.3:         # upper vector bits set
        cev |= random.randrange(1, 256) << 8
    times = [random.randrange(65536) for _ in range(8)]
    body = struct.pack("!HHH8H", 0x8808, 0x0101, cev, *times)
    return (PFC_DA + src_mac + body).ljust(60, b"\0"), cev > 0xff, cev


def pace(i, t0, rate):
    if rate:
        delay = t0 + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("roce")
    r.add_argument("--src", required=True)
    r.add_argument("--peer", required=True)
    r.add_argument("--dst", required=True)
    r.add_argument("--live", required=True, type=lambda v: [int(x, 0) for x in v.split(",")])
    r.add_argument("--stale", default=[], type=lambda v: [int(x, 0) for x in v.split(",") if x])
    p = sub.add_parser("pfc")
    p.add_argument("iface")
    p.add_argument("--enabled", type=lambda v: int(v, 0), default=0)
    for s in (r, p):
        s.add_argument("--count", type=int, required=True)
        s.add_argument("--seed", type=int, required=True)
        s.add_argument("--rate", type=float, default=2000, help="packets per second (0: as fast as possible)")
    a = ap.parse_args()
    random.seed(a.seed)
    kinds, expect = {}, {}
    t0 = time.monotonic()
    if a.mode == "roce":
        v6 = ":" in a.dst
        # IPPROTO_RAW: the packet carries its own IP header (IPv4 and IPv6)
        sock = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_RAW,
                             socket.IPPROTO_RAW)
        names = sorted(ROCE_KINDS)
        for i in range(a.count):
            kind = random.choice(names)
            pkt = roce_packet(kind, a, i & 0xffff)
            for frag in [pkt] if v6 else fragments(pkt):
                sock.sendto(frag, (a.dst, 0))
            kinds[kind] = kinds.get(kind, 0) + 1
            counters = ROCE_KINDS[kind]
            for c in (counters,) if isinstance(counters, str) else counters:
                expect[c] = expect.get(c, 0) + 1
            pace(i + 1, t0, a.rate)
    else:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        sock.bind((a.iface, 0))
        mac = open(f"/sys/class/net/{a.iface}/address").read().strip()
        src_mac = bytes.fromhex(mac.replace(":", ""))
        expect = {"rx_pfc_malformed": 0, "rx_pfc_ignored": 0}
        for i in range(a.count):
            f, bad, cev = pfc_frame(src_mac)
            sock.send(f)
            kind = "malformed" if bad else "pfc"
            kinds[kind] = kinds.get(kind, 0) + 1
            if bad:
                expect["rx_pfc_malformed"] += 1
            else:
                expect["rx_pfc_ignored"] += bin(cev & ~a.enabled & 0xff).count("1")
                for prio in range(8):
                    if cev & a.enabled & (1 << prio):
                        key = f"rx_prio{prio}_pause"
                        expect[key] = expect.get(key, 0) + 1
            pace(i + 1, t0, a.rate)
    json.dump({"sent": a.count, "seconds": round(time.monotonic() - t0, 2), "kinds": kinds,
               "expect": expect}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
