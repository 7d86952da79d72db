#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The UDP source ports of RoCEv2 packets in a capture against the rule
that should have chosen them (the device's udp_sport policy, rxecc_sport.c).

  sport_check.py perftest POLICY PCAP CLIENT_IP SERVER_IP LOG[,ud]...
      each LOG is a perftest client's output (its QPs' and the server's QP
      numbers, in connection order). RC: each QP's packets both ways (data
      from the client, acknowledgements from the server) carry one port,
      the policy's; UD (",ud"): the client's datagrams.
  sport_check.py cm PCAP CLIENT_JSON,SERVER_JSON,CLIENT_IP,SERVER_IP[,LABEL]...
      rxecc-verbs' reports of rdma_cm connections: both ends' QPs have the
      same flow label, LABEL if given, else rdma_cm's hash of its ports;
      both ends' packets carry rdma_flow_label_to_udp_sport() of it, and
      over IPv6 the label itself in the IPv6 header.
Prints one line per QP and direction; exits 1 when a packet or a flow
breaks the rule, or a flow is missing from the capture.

The rules, from include/rdma/ib_verbs.h and rxe (facts, written here again):
rdma_get_udp_sport(fl, lqpn, rqpn) folds the 20-bit flow label (computed
from both QP numbers when 0) to 14 bits | 0xC000; rxe's own port is
0xC000 | hash_32(qpn, 14).
"""
import json
import re
import subprocess
import sys

FLOW_LABEL_MASK = 0xFFFFF
GOLDEN_RATIO_32 = 0x61C88647


def calc_flow_label(lqpn, rqpn):
    """rdma_calc_flow_label(): symmetric in the two QP numbers."""
    v = (lqpn * rqpn) & 0xFFFFFFFFFFFFFFFF
    v ^= v >> 20
    v ^= v >> 40
    return v & FLOW_LABEL_MASK


def flow_label_to_sport(fl):
    """rdma_flow_label_to_udp_sport()."""
    low, high = fl & 0x3FFF, fl & 0xFC000
    return (low ^ (high >> 14)) | 0xC000


def get_udp_sport(fl, lqpn, rqpn):
    """rdma_get_udp_sport()."""
    return flow_label_to_sport(fl or calc_flow_label(lqpn, rqpn))


def qpn_sport(qpn):
    """rxe's: 0xC000 + (hash_32(qpn, 14) & 0x3fff)."""
    return 0xC000 + ((((qpn * GOLDEN_RATIO_32) & 0xFFFFFFFF) >> 18) & 0x3FFF)


def cm_flow_label(src_port, dst_port):
    """rdma_cm's flow label of a connection without an IPv6 one."""
    return (src_port * 31 + dst_port) & FLOW_LABEL_MASK


def packets(pcap):
    """(source address, UDP source port, BTH destination QP, IPv6 flow
    label or None) per packet."""
    out = subprocess.run(
        ["tshark", "-r", pcap, "-Y", "infiniband", "-T", "fields", "-E", "occurrence=f",
         "-e", "ip.src", "-e", "ipv6.src", "-e", "udp.srcport", "-e", "infiniband.bth.destqp",
         "-e", "ipv6.flow"],
        check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        v4, v6, sport, dqp, flow = line.split("\t")
        yield v4 or v6, int(sport), int(dqp, 16), int(flow, 16) if flow else None


def check(pcap, flows):
    """flows: {(source address, destination QP): (name, expected port,
    expected IPv6 flow label or None)}."""
    seen = {k: {} for k in flows}
    for src, sport, dqp, flow in packets(pcap):
        if (src, dqp) in seen:
            ports = seen[(src, dqp)]
            ports[(sport, flow)] = ports.get((sport, flow), 0) + 1
    ok = True
    for key, (name, want, label) in flows.items():
        ports = seen[key]
        good = bool(ports) and all(p == want and (label is None or f == label) for p, f in ports)
        ok &= good
        got = ", ".join(f"{p:#06x}{'' if f is None else f' label {f:#x}'} x{n}"
                        for (p, f), n in sorted(ports.items(), key=str)) or "no packet"
        exp = f"{want:#06x}{'' if label is None else f' label {label:#x}'}"
        print(f"{name}: expected {exp}, seen {got}{'' if good else '  <- wrong'}")
    return ok


def perftest_qpns(log):
    text = open(log).read()
    local = [int(q, 16) for q in re.findall(r"local address:.*?QPN (0x[0-9a-f]+)", text)]
    remote = [int(q, 16) for q in re.findall(r"remote address:.*?QPN (0x[0-9a-f]+)", text)]
    if not local or len(local) != len(remote):
        sys.exit(f"{log}: {len(local)} local and {len(remote)} remote QP numbers")
    return list(zip(local, remote))


def perftest(args):
    policy, pcap, cip, sip = args[:4]
    flows = {}
    for spec in args[4:]:
        log, _, kind = spec.partition(",")
        for lqpn, rqpn in perftest_qpns(log):
            if policy == "qpn":
                there, back = qpn_sport(lqpn), qpn_sport(rqpn)
            else:
                there = back = get_udp_sport(0, lqpn, rqpn)
            flows[(cip, rqpn)] = (f"{kind or 'rc'} QP {lqpn:#x} -> {rqpn:#x}", there, None)
            if kind != "ud":
                flows[(sip, lqpn)] = (f"{kind or 'rc'} QP {rqpn:#x} -> {lqpn:#x}", back, None)
    return check(pcap, flows)


def last_json(path):
    return json.loads(open(path).read().strip().splitlines()[-1])["qp"]


def cm(args):
    pcap = args[0]
    flows, ok = {}, True
    for spec in args[1:]:
        cj, sj, cip, sip, *label = spec.split(",")
        c, s = last_json(cj), last_json(sj)
        want = int(label[0]) if label else cm_flow_label(c["cm_src_port"], c["cm_dst_port"])
        print(f"{cj}: flow label client {c['flow_label']:#x}, server {s['flow_label']:#x}, "
              f"expected {want:#x}")
        ok &= c["flow_label"] == want and s["flow_label"] == want
        ok &= c["remote_qpn"] == s["qpn"] and s["remote_qpn"] == c["qpn"]
        port = get_udp_sport(want, c["qpn"], s["qpn"])
        v6 = want if ":" in cip else None
        flows[(cip, s["qpn"])] = (f"client QP {c['qpn']:#x} -> {s['qpn']:#x}", port, v6)
        flows[(sip, c["qpn"])] = (f"server QP {s['qpn']:#x} -> {c['qpn']:#x}", port, v6)
    return check(pcap, flows) and ok


def main():
    cmds = {"perftest": (perftest, 5), "cm": (cm, 2)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) - 2 < cmds[sys.argv[1]][1]:
        sys.exit(__doc__)
    sys.exit(0 if cmds[sys.argv[1]][0](sys.argv[2:]) else 1)


if __name__ == "__main__":
    main()
