#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of rxecc_measure (ci/host-tests.sh runs them): captures in
classic pcap and pcapng written here, RoCEv2 over IPv4 and IPv6 with and
without VLAN tags, goodput, Jain's index and percentiles."""
import os
import socket
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rxecc_measure as m  # noqa: E402  pylint: disable=wrong-import-position


def bth(qpn, psn, opcode=0x0A):
    return bytes([opcode, 0, 0xFF, 0xFF, 0]) + qpn.to_bytes(3, "big") + b"\x00" + psn.to_bytes(3, "big")


def ether(etype, vlans=()):
    out = b"\x02" * 6 + b"\x04" * 6
    for tpid, vid in vlans:
        out += struct.pack("!HH", tpid, vid)
    return out + struct.pack("!H", etype)


def roce4(src, dst, qpn, psn, opcode=0x0A, tos=0x6A, vlans=(), options=b""):
    """Ethernet, IPv4 (with `options`), UDP to 4791, BTH, 16 B payload."""
    rest = struct.pack("!HHHH", 49152, 4791, 8 + 12 + 16, 0) + bth(qpn, psn, opcode) + bytes(16)
    ihl = 5 + len(options) // 4
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, ihl * 4 + len(rest), 0, 0, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst)) + options
    return ether(0x0800, vlans) + ip + rest


def roce6(src, dst, qpn, psn, opcode=0x0A, tclass=0x6A, vlans=()):
    """Ethernet, IPv6, UDP to 4791, BTH, 16 B payload."""
    rest = struct.pack("!HHHH", 49152, 4791, 8 + 12 + 16, 0) + bth(qpn, psn, opcode) + bytes(16)
    ip = struct.pack("!IHBB16s16s", (6 << 28) | (tclass << 20) | 0x12345, len(rest), 17, 64,
                     socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst))
    return ether(0x86DD, vlans) + ip + rest


def pcap(path, pkts, order="<", nano=False, link=1):
    with open(path, "wb") as f:
        f.write(struct.pack(order + "IHHiIII", 0xA1B23C4D if nano else 0xA1B2C3D4, 2, 4, 0, 0, 256, link))
        for t, data in pkts:
            sec, frac = int(t), round((t - int(t)) * (1e9 if nano else 1e6))
            f.write(struct.pack(order + "IIII", sec, frac, len(data), len(data)) + data)


def block(order, btype, body):
    body += bytes(-len(body) % 4)
    n = 12 + len(body)
    return struct.pack(order + "II", btype, n) + body + struct.pack(order + "I", n)


def option(order, code, value):
    return struct.pack(order + "HH", code, len(value)) + value + bytes(-len(value) % 4)


def shb(order):
    return block(order, 0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1))


def idb(order, link=1, tsresol=None):
    opts = option(order, 2, b"eth0")
    if tsresol is not None:
        opts += option(order, 9, bytes([tsresol]))
    return block(order, 1, struct.pack(order + "HHI", link, 0, 256) + opts + option(order, 0, b""))


def epb(order, iface, ts, data):
    return block(order, 6, struct.pack(order + "IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(data),
                                       len(data)) + data)


class Reader(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()    # pylint: disable=consider-using-with
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_classic_pcap_both_orders_and_resolutions(self):
        pkts = [(100.25, roce4("10.0.2.1", "10.0.1.1", 17, 5)), (101.5, b"\x00" * 20)]
        for order in "<>":
            for nano in (False, True):
                with self.subTest(order=order, nano=nano):
                    pcap(self.path("a.pcap"), pkts, order, nano)
                    got = list(m.frames(self.path("a.pcap")))
                    self.assertEqual([d for _, d in got], [d for _, d in pkts])
                    for (t, _), (want, _) in zip(got, pkts):
                        self.assertAlmostEqual(t, want, places=6)

    def test_not_ethernet_empty_and_not_a_capture(self):
        pcap(self.path("sll.pcap"), [(1.0, b"\x00" * 40)], link=113)
        self.assertEqual(list(m.frames(self.path("sll.pcap"))), [])
        open(self.path("empty.pcap"), "wb").close()
        self.assertEqual(list(m.frames(self.path("empty.pcap"))), [])
        with open(self.path("text"), "w", encoding="utf-8") as f:
            f.write("not a capture, but long enough to be read as one\n")
        with self.assertRaises(ValueError):
            list(m.frames(self.path("text")))

    def test_pcapng_sections_interfaces_and_resolutions(self):
        a = roce4("10.0.2.1", "10.0.1.1", 17, 1)
        b = roce6("fd00::2:1", "fd00::1:1", 18, 2)
        data = (shb("<") + idb("<") + idb("<", link=113) + idb("<", tsresol=9)
                + epb("<", 0, 1_500_000, a)               # 1.5 s in us (the default)
                + epb("<", 1, 2_000_000, b"\x00" * 30)    # not Ethernet: left out
                + epb("<", 2, 3_250_000_000, b)           # 3.25 s in ns
                + block("<", 5, b"\x00" * 8)              # statistics: skipped
                # a second section, big-endian, 2^-10 s units
                + shb(">") + idb(">", tsresol=0x80 | 10) + epb(">", 0, 4 * 1024 + 512, a))
        with open(self.path("a.pcapng"), "wb") as f:
            f.write(data + data[:30])                     # and a block cut short
        got = list(m.frames(self.path("a.pcapng")))
        self.assertEqual([d for _, d in got], [a, b, a])
        self.assertEqual([t for t, _ in got], [1.5, 3.25, 4.5])

    def test_roce_ipv4_ipv6_and_vlan(self):
        r = m.roce(roce4("10.0.2.1", "10.0.1.1", 0x123456, 0xABCDEF, tos=(26 << 2) | 3))
        self.assertEqual((r.src, r.dst, r.dscp, r.ecn, r.opcode, r.qpn, r.psn),
                         ("10.0.2.1", "10.0.1.1", 26, 3, 0x0A, 0x123456, 0xABCDEF))
        r = m.roce(roce4("10.0.2.1", "10.0.1.1", 7, 8, options=b"\x01" * 8,
                         vlans=[(0x88A8, 100), (0x8100, 3)]))
        self.assertEqual((r.src, r.qpn, r.psn), ("10.0.2.1", 7, 8))
        r = m.roce(roce6("fd00::2:1", "fd00::1:1", 9, 10, opcode=0x81, tclass=(48 << 2) | 2,
                         vlans=[(0x8100, 5)]))
        self.assertEqual((r.src, r.dst, r.dscp, r.ecn, r.opcode, r.qpn, r.psn),
                         ("fd00::2:1", "fd00::1:1", 48, 2, 0x81, 9, 10))
        # not RoCE: another UDP port, ARP, cut short before the BTH
        other = bytearray(roce4("10.0.2.1", "10.0.1.1", 1, 1))
        other[14 + 20 + 2:14 + 20 + 4] = (53).to_bytes(2, "big")
        self.assertIsNone(m.roce(bytes(other)))
        self.assertIsNone(m.roce(ether(0x0806) + bytes(28)))
        self.assertIsNone(m.roce(roce6("fd00::2:1", "fd00::1:1", 1, 1)[:14 + 40 + 8 + 6]))

    def test_packets_are_the_data_packets(self):
        pkts = [(1.0, roce4("10.0.2.1", "10.0.1.1", 17, 1)),
                (1.1, roce4("10.0.1.1", "10.0.2.1", 17, 1, opcode=0x11)),     # ACK
                (1.2, roce4("10.0.1.1", "10.0.2.1", 17, 0, opcode=0x81)),     # CNP
                (1.3, roce6("fd00::2:1", "fd00::1:1", 18, 2, vlans=[(0x8100, 3)]))]
        pcap(self.path("p.pcap"), pkts)
        self.assertEqual(list(m.packets(self.path("p.pcap"))),
                         [(1.0, "10.0.2.1", "10.0.1.1", (17, 1)),
                          (1.3, "fd00::2:1", "fd00::1:1", (18, 2))])


class Figures(unittest.TestCase):
    def test_goodput_counts_distinct_packets_while_all_send(self):
        a, b, dst = "10.0.2.1", "10.0.3.1", "10.0.1.1"
        pkts = [(t / 10, a, dst, (17, t)) for t in range(0, 21)]           # 0..2 s
        pkts += [(1 + t / 10, b, dst, (18, t % 5)) for t in range(0, 21)]  # 1..3 s, 5 distinct
        pkts += [(1.5, "10.0.4.1", "10.0.9.9", (1, 1))]                    # elsewhere
        flows, window = m.goodput(sorted(pkts), dst)
        self.assertAlmostEqual(window, 1.0)
        self.assertEqual(list(flows), [a, b])
        self.assertAlmostEqual(flows[a], 11 * m.PAYLOAD * 8)                 # 1.0 .. 2.0 s
        self.assertAlmostEqual(flows[b], 5 * m.PAYLOAD * 8)
        flows, window = m.goodput(sorted(pkts), dst, skip=0.5)
        self.assertAlmostEqual(window, 0.5)
        self.assertAlmostEqual(flows[a], 6 * m.PAYLOAD * 8 / 0.5)
        # a source of srcs that sent nothing: no common window
        self.assertEqual(m.goodput(pkts, dst, {a: "h2", "10.0.5.1": "h5"}),
                         ({"10.0.2.1": 0.0, "10.0.5.1": 0.0}, 0.0))
        self.assertEqual(m.goodput([], dst), ({}, 0.0))

    def test_jain(self):
        self.assertEqual(m.jain([5.0, 5.0, 5.0]), 1.0)
        self.assertAlmostEqual(m.jain([9.0, 0.0, 0.0]), 1 / 3)
        self.assertAlmostEqual(m.jain(iter([2.0, 1.0])), 0.9)
        self.assertEqual(m.jain([]), 0.0)
        self.assertEqual(m.jain([0.0, 0.0]), 0.0)

    def test_percentile_is_nearest_rank(self):
        v = list(range(1, 101))
        self.assertEqual(m.percentile(v, 50), 50)
        self.assertEqual(m.percentile(v, 99), 99)
        self.assertEqual(m.percentile(v, 99.9), 100)
        self.assertEqual(m.percentile(v, 0), 1)
        self.assertEqual(m.percentile(v, 100), 100)
        self.assertEqual(m.percentile([7], 50), 7)
        self.assertIsNone(m.percentile([], 50))
        # exactly: 99.9 % of 1000 is 999 (0.999 * 1000 is 999.0000000000001 in floats)
        w = list(range(1, 1001))
        self.assertEqual(m.percentile(w, 99.9), 999)
        self.assertEqual(m.percentile(list(range(1, 10001)), 99.9), 9990)


if __name__ == "__main__":
    unittest.main()
