#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Malformed RoCEv2 packets and PFC frames at an rxecc device, reproducible
from a seed, for the guest selftests (integrity.sh, fuzz.sh).

  roce_fuzz.py roce --src OWN --peer PEER --dst DST --live QPN[,QPN] [--stale QPN,...]
                    --count N --seed S [--rate PPS] [--tagged IFACE --dmac MAC [--mcast GROUP]]
  roce_fuzz.py pfc IFACE --count N --seed S [--enabled MASK] [--rate PPS]
  roce_fuzz.py pfc-enabled IFACE

Every packet is one the device must drop, and which of its counters it must
count it in is known: the tool prints JSON {"sent": N, "kinds": {...},
"expect": {counter: packets}}. The IP and UDP headers are always valid, so
every packet reaches the RoCE receive path (UDP port 4791; IPv4 with UDP
checksum 0, or IPv6, with a valid UDP checksum, when the addresses are
IPv6 ones). With --tagged, the IPv4 packets go out of IFACE (the link to
the device) as Ethernet frames to MAC with an 802.1Q priority tag (VID 0,
a random PCP), as RoCE carries its priority on a port without VLANs;
with --mcast, half the mcast and cnp_mcast packets go to GROUP, an IPv4
multicast group the device's host has joined (to its multicast MAC).

RoCE kinds (raw IP socket; OWN is this host, PEER the live QPs' peer):
  truncated     UDP payload shorter than a BTH                 rx_drop_malformed
  opcode        an opcode rxe has no entry for                 rx_drop_malformed
  tver          transport version not 0                        rx_drop_malformed
  short         shorter than the opcode's headers + pad + ICRC rx_drop_malformed
  unknown_qp    valid request to a QP that does not exist      rx_drop_unknown_qp
                (random, 0, or a destroyed QP's number)
  mcast         UD SEND to the multicast QP (0xFFFFFF) at a
                GID where the device has no multicast group
                (the unicast GID, or --mcast's group, which no
                QP has attached to)                            rx_drop_unknown_qp
  qp_type       UD SEND to a live RC QP                        rx_drop_qp_state
  addr          valid request to a live QP from OWN, some
                oversized (IPv4: fragmented, up to 4 KiB)      rx_drop_addr_mismatch
  pkey          from PEER (spoofed) with a foreign P_Key       rx_drop_key_mismatch
  icrc          from PEER (spoofed), bad ICRC                  rx_icrc_encapsulated
  cnp_unknown   CNP to a QP that does not exist                rp_cnp_ignored
  cnp_mcast     CNP to the multicast QP (0xFFFFFF), or to
                --mcast's group for a live QP (not the QP's
                own address)                                   rp_cnp_ignored
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
pfc qdisc): MAC control frames (EtherType 0x8808), most of them PFC
(opcode 0x0101) with random class-enable vectors and times, some with a
priority tag (VID 0). Priorities the receiver has not enabled (--enabled,
default 0: none) count one rx_pfc_ignored each, enabled ones one
rx_prioN_pause each; frames shorter than their body or with upper vector
bits set count rx_pfc_malformed. Also:
  pause         802.3x PAUSE (opcode 0x0001): all eight priorities, as a
                PFC frame enabling every one
  foreign       to another host's address, broadcast or another reserved
                group, or tagged with a VLAN ID the receiver has no VLAN
                device for: not from the link partner  rx_pfc_rejected
  opcode        another MAC control opcode: no pause    (nothing)

pfc-enabled (AF_PACKET out of IFACE, towards a device with PFC on priority 3
only; no seed): 20 XOFFs for every priority but 3, then an XOFF and an XON
for 3, each time 65535 quanta (0 for the XON) on every priority. Prints its
expectation first, {"expect": {"rx_pfc_ignored": 140, "rx_prio3_pause": 2}}
(7 ignored priorities per frame; both frames of priority 3 count), so that
it is there even when sending fails; the host tests are test_roce_fuzz.py.
"""
import argparse
import json
import os
import random
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
PFC_DA = bytes.fromhex("0180c2000001")


def kernel_line(release):
    """(major, minor) of a kernel release string such as 6.12.118+deb12-amd64."""
    major, minor = release.split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


# rxe's opcodes (rxe_opcode.c) and rxecc's CNP: everything else is unknown.
# Linux 6.2 added RC FLUSH (0x1c) and RC ATOMIC WRITE (0x1d).
KNOWN = set(range(0x00, 0x18)) | set(range(0x20, 0x2c)) | set(range(0x40, 0x55)) | {0x64, 0x65, 0x81}
if kernel_line(os.uname().release) >= (6, 2):
    KNOWN |= {0x1c, 0x1d}
UNKNOWN = [op for op in range(256) if op not in KNOWN]
RC_SEND_ONLY, RC_WRITE_ONLY, UD_SEND_ONLY, CNP = 0x04, 0x0A, 0x64, 0x81
MULTICAST_QPN = 0xFFFFFF

ROCE_KINDS = {
    "truncated": "rx_drop_malformed", "opcode": "rx_drop_malformed",
    "tver": "rx_drop_malformed", "short": "rx_drop_malformed",
    "unknown_qp": "rx_drop_unknown_qp", "qp_type": "rx_drop_qp_state",
    "addr": "rx_drop_addr_mismatch", "pkey": "rx_drop_key_mismatch",
    "icrc": "rx_icrc_encapsulated", "cnp_unknown": "rp_cnp_ignored",
    "cnp_src": "rp_cnp_ignored", "cnp_bad": "rp_cnp_ignored",
    "cnp_pkey": ("rp_cnp_ignored", "rp_cnp_drop_pkey_mismatch"),
    "mcast": "rx_drop_unknown_qp", "cnp_mcast": "rp_cnp_ignored",
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
    group = a.mcast if a.mcast and random.random() < 0.5 else None
    if kind == "mcast":
        deth = struct.pack("!II", 0x80010000, 1)
        return roce(a.src, group or a.dst, bth(UD_SEND_ONLY, MULTICAST_QPN, psn) + deth + payload,
                    ident, sport)
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
    if kind == "cnp_mcast":
        if group:
            qpn = random.choice([MULTICAST_QPN, live])
            return roce(a.peer, group, bth(CNP, qpn, 0) + bytes(16), ident, sport)
        return roce(a.peer, a.dst, bth(CNP, MULTICAST_QPN, 0) + bytes(16), ident, sport)
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


def vlan_tag(frame, vid):
    """`frame` with an 802.1Q tag (random PCP) after its addresses."""
    tci = random.randrange(8) << 13 | vid
    return frame[:12] + struct.pack("!HH", 0x8100, tci) + frame[12:]


def pfc_frame(src_mac, enabled):
    """(frame, kind, {counter: increment})"""
    r = random.random()
    if r < 0.1:         # cut inside the body
        return PFC_DA + src_mac + struct.pack("!HH", 0x8808, 0x0101) + random.randbytes(
            random.randrange(0, 16)), "malformed", {"rx_pfc_malformed": 1}
    if r < 0.2:         # upper vector bits set
        cev = random.randrange(256) | random.randrange(1, 256) << 8
        body = struct.pack("!HHH8H", 0x8808, 0x0101, cev, *random.choices(range(65536), k=8))
        return (PFC_DA + src_mac + body).ljust(60, b"\0"), "malformed", {"rx_pfc_malformed": 1}
    if r < 0.3:         # 802.3x PAUSE, some cut before its time
        if random.random() < 0.2:
            return PFC_DA + src_mac + struct.pack("!HH", 0x8808, 0x0001) + random.randbytes(
                random.randrange(0, 2)), "malformed", {"rx_pfc_malformed": 1}
        body = struct.pack("!HHH", 0x8808, 0x0001, random.randrange(65536))
        return (PFC_DA + src_mac + body).ljust(60, b"\0"), "pause", pauses(0xff, enabled)
    if r < 0.35:        # another MAC control opcode
        op = random.choice([0x0000, 0x0002, 0x0003, 0x0100, 0x0102, 0xffff])
        body = struct.pack("!HH", 0x8808, op) + random.randbytes(18)
        return (PFC_DA + src_mac + body).ljust(60, b"\0"), "opcode", {}
    cev = random.randrange(256)
    body = struct.pack("!HHH8H", 0x8808, 0x0101, cev, *random.choices(range(65536), k=8))
    frame = (PFC_DA + src_mac + body).ljust(60, b"\0")
    if r < 0.5:         # not from the link partner
        f = random.random()
        if f < 0.25:
            frame = vlan_tag(frame, random.randrange(1, 4095))
        else:
            da = random.choice([bytes.fromhex("ffffffffffff"), bytes.fromhex("0180c200000e"),
                                bytes.fromhex("0180c2000002"), bytes.fromhex("02") + random.randbytes(5)])
            frame = da + frame[6:]
        return frame, "foreign", {"rx_pfc_rejected": 1}
    if r < 0.6:
        return vlan_tag(frame, 0), "pfc_prio_tagged", pauses(cev, enabled)
    return frame, "pfc", pauses(cev, enabled)


def pauses(cev, enabled):
    """A valid frame's counts: per priority it enables, ignored or a pause."""
    out = {"rx_pfc_ignored": bin(cev & ~enabled & 0xff).count("1")}
    for prio in range(8):
        if cev & enabled & (1 << prio):
            out[f"rx_prio{prio}_pause"] = 1
    return out


# pfc-enabled's frames and what a device with PFC on priority 3 alone counts
ENABLED_ONLY = 0x08
ENABLED_ONLY_EXPECT = {"rx_pfc_ignored": 20 * 7, "rx_prio3_pause": 2}


def pfc_all(src_mac, cev, quanta):
    """A PFC frame from SRC_MAC enabling CEV, QUANTA for every priority,
    padded to 60 bytes."""
    return (PFC_DA + src_mac + struct.pack("!HHH8H", 0x8808, 0x0101, cev, *([quanta] * 8))).ljust(60, b"\0")


def enabled_only_frames(src_mac):
    """XOFF for every priority but 3, 20 times; XOFF for 3; XON for 3."""
    return ([pfc_all(src_mac, 0xf7, 0xffff)] * 20 +
            [pfc_all(src_mac, ENABLED_ONLY, 0xffff), pfc_all(src_mac, ENABLED_ONLY, 0)])


def pfc_enabled(iface):
    print(json.dumps({"expect": ENABLED_ONLY_EXPECT}), flush=True)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    for f in enabled_only_frames(mac_of(iface)):
        s.send(f)


def mac_of(iface):
    with open(f"/sys/class/net/{iface}/address") as f:
        return bytes.fromhex(f.read().strip().replace(":", ""))


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
    r.add_argument("--tagged", metavar="IFACE", help="priority-tagged frames out of IFACE")
    r.add_argument("--dmac", help="the device's MAC address (with --tagged)")
    r.add_argument("--mcast", help="an IPv4 multicast group the device's host has joined (with --tagged)")
    p = sub.add_parser("pfc")
    p.add_argument("iface")
    p.add_argument("--enabled", type=lambda v: int(v, 0), default=0)
    sub.add_parser("pfc-enabled").add_argument("iface")
    for s in (r, p):
        s.add_argument("--count", type=int, required=True)
        s.add_argument("--seed", type=int, required=True)
        s.add_argument("--rate", type=float, default=2000, help="packets per second (0: as fast as possible)")
    a = ap.parse_args()
    if a.mode == "pfc-enabled":
        pfc_enabled(a.iface)
        return
    if a.mode == "roce" and bool(a.tagged) != bool(a.dmac):
        ap.error("--tagged and --dmac go together")
    if a.mode == "roce" and a.mcast and not a.tagged:
        ap.error("--mcast needs --tagged (the switch does not route multicast)")
    random.seed(a.seed)
    kinds, expect = {}, {}
    t0 = time.monotonic()
    if a.mode == "roce":
        v6 = ":" in a.dst
        if a.tagged:
            if v6:
                ap.error("--tagged: IPv4 addresses only")
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            sock.bind((a.tagged, 0))
            dmac, smac = bytes.fromhex(a.dmac.replace(":", "")), mac_of(a.tagged)

            def send(frag):
                da = dmac
                if frag[16] >> 4 == 0xe:	# IPv4 multicast: 01:00:5e + the low 23 bits
                    da = bytes([1, 0, 0x5e, frag[17] & 0x7f, frag[18], frag[19]])
                sock.send(vlan_tag(da + smac + b"\x08\x00" + frag, 0))
        else:
            # IPPROTO_RAW: the packet carries its own IP header (IPv4 and IPv6)
            sock = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_RAW,
                                 socket.IPPROTO_RAW)
            send = lambda frag: sock.sendto(frag, (a.dst, 0))
        names = sorted(ROCE_KINDS)
        for i in range(a.count):
            kind = random.choice(names)
            pkt = roce_packet(kind, a, i & 0xffff)
            for frag in [pkt] if v6 else fragments(pkt):
                send(frag)
            kinds[kind] = kinds.get(kind, 0) + 1
            counters = ROCE_KINDS[kind]
            for c in (counters,) if isinstance(counters, str) else counters:
                expect[c] = expect.get(c, 0) + 1
            pace(i + 1, t0, a.rate)
    else:
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        sock.bind((a.iface, 0))
        src_mac = mac_of(a.iface)
        expect = {"rx_pfc_malformed": 0, "rx_pfc_ignored": 0, "rx_pfc_rejected": 0}
        for i in range(a.count):
            f, kind, counts = pfc_frame(src_mac, a.enabled)
            sock.send(f)
            kinds[kind] = kinds.get(kind, 0) + 1
            for c, n in counts.items():
                expect[c] = expect.get(c, 0) + n
            pace(i + 1, t0, a.rate)
    json.dump({"sent": a.count, "seconds": round(time.monotonic() - t0, 2), "kinds": kinds,
               "expect": expect}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
