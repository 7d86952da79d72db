#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise ci/guest/incast.sh: incast_report.py DIR RATE (e.g. 50mbit)."""
import os
import re
import struct
import sys

PAYLOAD = 1024  # bytes of payload per data packet (path MTU 1024, 64 KiB messages)


def rate_bps(rate):
    m = re.fullmatch(r"([0-9.]+)([kmg]?)bit", rate.lower())
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]


def counters(path):
    c = {}
    for line in open(path):
        host, name, value = line.split()
        c[(host, name)] = int(value)
    return c


def frames(pcap):
    """(time, bytes captured) of every Ethernet frame in a classic pcap file
    (dumpcap -P), read directly: tshark's full dissection of a capture of
    100 000 packets takes a minute or more on an emulated CPU."""
    with open(pcap, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D, 0xD4C3B2A1, 0x4D3CB2A1):
        raise ValueError(f"{pcap}: not a classic pcap file (capture with dumpcap -P)")
    order = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    link = struct.unpack(order + "I", data[20:24])[0]
    if link != 1:   # Ethernet
        return
    off = 24
    while off + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack(order + "IIII", data[off:off + 16])
        yield sec + frac / (1e9 if nano else 1e6), data[off + 16:off + 16 + caplen]
        off += 16 + caplen


def roce(pkt):
    """True for a RoCEv2 packet over IPv4 without options, with its BTH."""
    return (len(pkt) >= 14 + 20 + 8 + 12 and pkt[12:14] == b"\x08\x00" and pkt[14] == 0x45
            and pkt[23] == 17 and pkt[36:38] == b"\x12\xb7")


def ip_str(b):
    return ".".join(str(x) for x in b)


def packets(pcap):
    """(time, source IP, destination IP, (BTH destination QP, PSN)) of every
    RoCEv2 packet with payload (not an ACK, atomic ACK or CNP) over IPv4."""
    for t, pkt in frames(pcap):
        # Ethernet, IPv4 (no options), UDP to 4791, BTH: PSN in bytes 9..11
        if not roce(pkt) or pkt[42] in (0x11, 0x12, 0x81):
            continue
        qpn = int.from_bytes(pkt[42 + 5:42 + 8], "big")
        psn = int.from_bytes(pkt[42 + 9:42 + 12], "big")
        yield t, ip_str(pkt[26:30]), ip_str(pkt[30:34]), (qpn, psn)


def goodput(pcap, dst="10.0.1.1"):
    """Per sender (IP): bit/s of distinct data packets (by QP and PSN) to
    `dst`, over the time every sender was sending; and that time."""
    pkts = {}
    for t, src, d, key in packets(pcap):
        if d == dst:
            pkts.setdefault(src, []).append((t, key))
    if not pkts:
        return {}, 0.0
    start = max(p[0][0] for p in pkts.values())
    end = min(p[-1][0] for p in pkts.values())
    flows = {}
    for src, p in sorted(pkts.items()):
        seen = {key for t, key in p if start <= t <= end}
        flows[src] = len(seen) * PAYLOAD * 8 / (end - start) if end > start else 0.0
    return flows, end - start


def jain(x):
    s, q = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * q) if q else 0.0


def qdisc(path):
    text = open(path).read()
    drops = re.search(r"dropped (\d+)", text)
    marks = re.search(r"marked (\d+)", text)
    return int(drops.group(1)) if drops else 0, int(marks.group(1)) if marks else 0


def main():
    base, rate = sys.argv[1], sys.argv[2]
    port = rate_bps(rate)
    print("3:1 incast, h2 h3 h4 -> h1 through a %s port marking CE (RED ecn), ib_write_bw 64 KiB" % rate)
    print("%-5s %9s %6s %-26s %6s %6s %7s %7s %8s %9s %8s" % (
        "mode", "goodput", "port%", "per flow Mbit/s", "Jain", "drops", "marks", "CNPs",
        "handled", "deferred", "retrans"))
    for mode in ("off", "lab", "mlx5", "paper"):
        d = os.path.join(base, mode)
        if not os.path.isdir(d):
            continue
        flows, window = goodput(os.path.join(d, "swp1.pcap"))
        b, a = counters(os.path.join(d, "before.txt")), counters(os.path.join(d, "after.txt"))
        delta = lambda h, n: a[(h, n)] - b[(h, n)]
        senders = ("h2", "h3", "h4")
        drops, marks = qdisc(os.path.join(d, "qdisc.txt"))
        total = sum(flows.values())
        print("%-5s %9.1f %5.0f%% %-26s %6.3f %6d %7d %7d %8d %9d %8d" % (
            mode, total / 1e6, 100 * total / port,
            " ".join("%.1f" % (v / 1e6) for v in flows.values()),
            jain(list(flows.values())), drops, marks, delta("h1", "np_cnp_sent"),
            sum(delta(h, "rp_cnp_handled") for h in senders),
            sum(delta(h, "rp_tx_deferred") for h in senders),
            sum(delta(h, "completer_retry_err") for h in senders)))
    print("goodput: distinct data packets x %d B at the switch port over the %.1f s all flows ran"
          % (PAYLOAD, window))


if __name__ == "__main__":
    main()
