# SPDX-License-Identifier: GPL-2.0
"""What the selftests and the congestion lab compute in common: the RoCEv2
packets of a capture, goodput, Jain's fairness index and percentiles.

It lives in lib/python/, which the selftests (selftests/rxecc/) and the lab
(ci/lab/) both use and neither owns; imported after the one path setup, with
RXECC_TOP the repository (the lab: ci/lab/rxecc_lab/shared.py):
    sys.path.insert(0, os.path.join(RXECC_TOP, "lib", "python"))

The capture reader is written for speed on the guests' emulated CPUs (a
capture of 10^5 packets; tshark's full dissection of one takes a minute or
more there) and needs nothing outside Python's standard library: it reads
classic pcap (microsecond and nanosecond, either byte order) and pcapng
(dumpcap's default; every section and interface, each interface's time
resolution and offset) of Ethernet interfaces, and the frames' IPv4 or IPv6
headers behind any 802.1Q / 802.1ad tags.
"""
import math
import socket
import struct
from fractions import Fraction

PAYLOAD = 1024          # bytes of payload per full data packet (path MTU 1024)
ROCE_PORT = 4791        # RoCEv2's UDP destination port
LINKTYPE_ETHERNET = 1
VLAN_TYPES = (0x8100, 0x88A8, 0x9100)
# BTH opcodes of the packets that carry no data: ACK, atomic ACK, CNP
NOT_DATA = (0x11, 0x12, 0x81)

PCAP_MAGIC = {0xA1B2C3D4: 1e6, 0xA1B23C4D: 1e9}     # magic: time units per second
PCAPNG_SHB = 0x0A0D0D0A
PCAPNG_BOM = 0x1A2B3C4D


class CaptureError(ValueError):
    pass


def frames(path):
    """(time s, bytes captured) of every frame of an Ethernet interface in a
    pcap or pcapng file, in file order; a file shorter than a header holds
    none (a capture stopped before it began)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return iter(())
    if struct.unpack("<I", data[:4])[0] == PCAPNG_SHB:
        return _pcapng_frames(data, path)
    return _pcap_frames(data, path)


def _pcap_frames(data, path):
    for order in "<>":
        magic = struct.unpack(order + "I", data[:4])[0]
        if magic in PCAP_MAGIC:
            break
    else:
        raise CaptureError(f"{path}: neither a pcap nor a pcapng file")
    per_s = PCAP_MAGIC[magic]
    # the link type: the low 16 bits of the header's last word (the high
    # ones may hold FCS flags)
    if struct.unpack(order + "I", data[20:24])[0] & 0xFFFF != LINKTYPE_ETHERNET:
        return
    rec = struct.Struct(order + "IIII")
    off, end = 24, len(data)
    while off + 16 <= end:
        sec, frac, caplen, _ = rec.unpack_from(data, off)
        yield sec + frac / per_s, data[off + 16:off + 16 + caplen]
        off += 16 + caplen


def _pcapng_options(body, order):
    """{code: value} of a block's options."""
    out, off = {}, 0
    while off + 4 <= len(body):
        code, n = struct.unpack_from(order + "HH", body, off)
        if code == 0:
            break
        out.setdefault(code, body[off + 4:off + 4 + n])
        off += 4 + n + (-n % 4)
    return out


def _pcapng_frames(data, path):
    off, end = 0, len(data)
    order = "<"
    ifaces = []         # per interface of the section: (Ethernet, units per s, offset s)
    while off + 12 <= end:
        btype = struct.unpack_from(order + "I", data, off)[0]
        if btype == PCAPNG_SHB:
            # a section: its own byte order and interfaces
            bom = data[off + 8:off + 12]
            if bom == struct.pack("<I", PCAPNG_BOM):
                order = "<"
            elif bom == struct.pack(">I", PCAPNG_BOM):
                order = ">"
            else:
                raise CaptureError(f"{path}: a pcapng section with a bad byte-order magic")
            ifaces = []
        blen = struct.unpack_from(order + "I", data, off + 4)[0]
        if blen < 12 or blen % 4 or off + blen > end:
            break       # truncated (a capture cut short): what came before stands
        body = data[off + 8:off + blen - 4]
        if btype == 1 and len(body) >= 8:          # interface description
            link = struct.unpack_from(order + "H", body, 0)[0]
            opts = _pcapng_options(body[8:], order)
            per_s, tsoff = 1e6, 0
            if 9 in opts and opts[9]:               # if_tsresol
                r = opts[9][0]
                per_s = 2.0 ** (r & 0x7F) if r & 0x80 else 10.0 ** r
            if 14 in opts and len(opts[14]) == 8:   # if_tsoffset, s
                tsoff = struct.unpack(order + "q", opts[14])[0]
            ifaces.append((link == LINKTYPE_ETHERNET, per_s, tsoff))
        elif btype in (6, 2) and len(body) >= 20:  # enhanced packet, (obsolete) packet
            if btype == 6:
                iface, hi, lo, caplen = struct.unpack_from(order + "IIII", body, 0)
            else:
                iface, _, hi, lo, caplen = struct.unpack_from(order + "HHIII", body, 0)
            if iface < len(ifaces) and ifaces[iface][0]:
                _, per_s, tsoff = ifaces[iface]
                yield tsoff + ((hi << 32) | lo) / per_s, body[20:20 + caplen]
        off += blen


class Roce:
    """The headers of a RoCEv2 packet that the tests read."""
    __slots__ = ("src", "dst", "dscp", "ecn", "opcode", "qpn", "psn")

    def __init__(self, src, dst, dscp, ecn, opcode, qpn, psn):
        self.src, self.dst, self.dscp, self.ecn = src, dst, dscp, ecn
        self.opcode, self.qpn, self.psn = opcode, qpn, psn


def roce(frame):
    """A Roce of an Ethernet frame that holds a RoCEv2 packet (IPv4 or IPv6,
    UDP to 4791, its BTH captured), else None. Addresses are strings."""
    off = 12
    etype = int.from_bytes(frame[12:14], "big")
    while etype in VLAN_TYPES:
        off += 4
        etype = int.from_bytes(frame[off:off + 2], "big")
    off += 2
    if etype == 0x0800:
        if len(frame) < off + 20 or frame[off] >> 4 != 4 or frame[off + 9] != 17:
            return None
        tclass = frame[off + 1]
        src = socket.inet_ntop(socket.AF_INET, frame[off + 12:off + 16])
        dst = socket.inet_ntop(socket.AF_INET, frame[off + 16:off + 20])
        off += (frame[off] & 0xF) * 4
    elif etype == 0x86DD:
        if len(frame) < off + 40 or frame[off] >> 4 != 6 or frame[off + 6] != 17:
            return None
        tclass = ((frame[off] & 0xF) << 4) | (frame[off + 1] >> 4)
        src = socket.inet_ntop(socket.AF_INET6, frame[off + 8:off + 24])
        dst = socket.inet_ntop(socket.AF_INET6, frame[off + 24:off + 40])
        off += 40
    else:
        return None
    # UDP (8 bytes) then the BTH (12): PSN in its bytes 9..11
    if len(frame) < off + 8 + 12 or int.from_bytes(frame[off + 2:off + 4], "big") != ROCE_PORT:
        return None
    bth = off + 8
    return Roce(src, dst, tclass >> 2, tclass & 3, frame[bth],
                int.from_bytes(frame[bth + 5:bth + 8], "big"),
                int.from_bytes(frame[bth + 9:bth + 12], "big"))


def packets(path):
    """(time, source IP, destination IP, (BTH destination QP, PSN)) of every
    RoCEv2 packet with payload (not an ACK, atomic ACK or CNP) in a capture."""
    for t, frame in frames(path):
        r = roce(frame)
        if r is not None and r.opcode not in NOT_DATA:
            yield t, r.src, r.dst, (r.qpn, r.psn)


def goodput(pkts, dst, srcs=None, skip=0.0, payload=PAYLOAD):
    """Goodput to `dst` from packets() tuples: per source IP (those of `srcs`
    only, if given), bit/s of its distinct data packets (by QP and PSN) of
    `payload` bytes over the time every source was sending, less its first
    `skip` s; and that time. With `srcs`, one that sent nothing makes every
    source's goodput 0."""
    by = {}
    for t, src, d, key in pkts:
        if d == dst and (srcs is None or src in srcs):
            by.setdefault(src, []).append((t, key))
    if srcs is not None and len(by) < len(srcs):
        return {s: 0.0 for s in sorted(srcs)}, 0.0
    if not by:
        return {}, 0.0
    start = max(p[0][0] for p in by.values()) + skip
    end = min(p[-1][0] for p in by.values())
    flows = {}
    for src, p in sorted(by.items()):
        seen = {key for t, key in p if start <= t <= end}
        flows[src] = len(seen) * payload * 8 / (end - start) if end > start else 0.0
    return flows, max(0.0, end - start)


def jain(values):
    """Jain's fairness index (sum x)^2 / (n * sum x^2); 0 when every value is 0
    or there is none."""
    x = list(values)
    s, q = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * q) if q else 0.0


def percentile(sorted_values, p):
    """The nearest-rank p-th percentile of ascending values (the smallest
    value with at least p % of them at or below it); None of none. The rank
    is computed exactly: p 99.9 of 1000 values is the 999th, not the
    largest."""
    if not sorted_values:
        return None
    rank = math.ceil(Fraction(str(p)) * len(sorted_values) / 100)
    return sorted_values[min(max(rank, 1), len(sorted_values)) - 1]
