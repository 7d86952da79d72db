#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sample the statistics of every pfc qdisc in some network namespaces,
from one process: a rtnetlink socket per namespace (made inside it, through
setns), a qdisc dump on each every INTERVAL seconds, until SIGTERM or
SIGINT.

  pfc_sampler.py [--interval S] [--hw DEV --counters C,...] NAME=NETNS...

One line per namespace per sample on stdout: "TIME NAME JSON", TIME the
CLOCK_MONOTONIC seconds of the dump (the clock of the kernel's trace_clock
mono and of /proc/uptime), NAME as given, JSON a list with one object per
pfc qdisc: {"netdev": ..., "handle": ..., "prio": [8 objects]}, each
priority's keys named as `rxecc -j qdisc show` names them (tx_packets,
backlog, pause_rx, wd_storms, ...). With --hw (repeated), also a line
"TIME hw:DEV JSON" per rdma device DEV and sample, JSON {COUNTER: value}
of its port 1's hw_counters named by --counters. A process per sample (`rxecc -j qdisc
show` in a loop) managed one sample in half a second per namespace on the
emulated guest under load; this manages the interval."""
import argparse
import ctypes
import json
import os
import signal
import socket
import struct
import sys
import time

CLONE_NEWNET = 0x40000000
RTM_GETLINK, RTM_GETQDISC, RTM_NEWQDISC = 18, 38, 36
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
IFLA_IFNAME = 3
TCA_KIND, TCA_STATS2 = 1, 7
TCA_STATS_APP = 4
NUM_PRIO = 8
# struct tc_pfc_xstats: prio[8] of struct tc_pfc_prio_stats, four u64 port
# counters, wd[8] of struct tc_pfc_wd_stats, then the u64 port counters of
# TAIL_KEYS (uapi/linux/sch_pfc.h; the struct only grows at its end).
PRIO_KEYS = ("tx_bytes", "tx_packets", "backlog", "qlen", "drops", "ecn_marked",
             "pause_tx", "xon_tx", "pause_tx_duration_us", "pause_rx",
             "pause_rx_duration_us", "pause_rx_transition", "xoff_ports")
PORT_KEYS = ("pfc_tx_errors", "pfc_rx_ignored", "pfc_rx_malformed", "pfc_rx_rejected")
TAIL_KEYS = ("pfc_untracked",)
WD_KEYS = ("wd_storm", "wd_storms", "wd_restorations", "wd_drops", "wd_pause_ignored",
           "wd_storm_duration_us")
NS_KEYS = {"pause_tx_duration_us", "pause_rx_duration_us", "wd_storm_duration_us"}


def messages(data):
    """The netlink messages of one datagram: (type, seq, payload after the
    header) each (also pfc_tc_fuzz.py's and rx_stall.py's)."""
    off = 0
    while off + 16 <= len(data):
        length, mtype, _, seq, _ = struct.unpack_from("=IHHII", data, off)
        if length < 16:
            raise OSError("malformed netlink message")
        yield mtype, seq, data[off + 16:off + length]
        off += (length + 3) & ~3


def attrs(buf):
    """{type: payload} of a run of netlink attributes (also rx_stall.py's)."""
    out, off = {}, 0
    while off + 4 <= len(buf):
        length, typ = struct.unpack_from("=HH", buf, off)
        if length < 4:
            break
        out[typ & 0x3FFF] = buf[off + 4:off + length]
        off += (length + 3) & ~3
    return out


class Netns:
    """A rtnetlink socket made inside network namespace PATH."""

    def __init__(self, path):
        libc = ctypes.CDLL(None, use_errno=True)
        with open("/proc/self/ns/net", "rb") as home, open(path, "rb") as there:
            if libc.setns(there.fileno(), CLONE_NEWNET):
                raise OSError(ctypes.get_errno(), f"setns {path}")
            try:
                self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                                          socket.NETLINK_ROUTE)
            finally:
                if libc.setns(home.fileno(), CLONE_NEWNET):
                    raise OSError(ctypes.get_errno(), "setns back")
        self.seq = 0
        self.names = {}

    def dump(self, typ, body):
        """The messages of one dump: (type, payload after the header)."""
        self.seq += 1
        self.sock.send(struct.pack("=IHHII", 16 + len(body), typ, NLM_F_REQUEST | NLM_F_DUMP,
                                   self.seq, 0) + body)
        msgs = []
        while True:
            for mtype, seq, payload in messages(self.sock.recv(1 << 20)):
                if seq != self.seq:
                    continue
                if mtype == NLMSG_DONE:
                    return msgs
                if mtype == NLMSG_ERROR:
                    err = struct.unpack_from("=i", payload)[0]
                    if err:
                        raise OSError(-err, "netlink dump")
                    continue
                msgs.append((mtype, payload))

    def ifname(self, ifindex):
        if ifindex not in self.names:
            for _, p in self.dump(RTM_GETLINK, struct.pack("=BxHiII", 0, 0, 0, 0, 0)):
                idx = struct.unpack_from("=i", p, 4)[0]
                name = attrs(p[16:]).get(IFLA_IFNAME, b"?\0")
                self.names[idx] = name.rstrip(b"\0").decode()
        return self.names.get(ifindex, str(ifindex))

    def qdiscs(self):
        out = []
        for mtype, p in self.dump(RTM_GETQDISC, struct.pack("=BxxxiIII", 0, 0, 0, 0, 0)):
            if mtype != RTM_NEWQDISC:
                continue
            _, ifindex, handle, _, _ = struct.unpack_from("=BxxxiIII", p)
            a = attrs(p[20:])
            if a.get(TCA_KIND, b"").rstrip(b"\0") != b"pfc":
                continue
            app = attrs(a.get(TCA_STATS2, b"")).get(TCA_STATS_APP, b"")
            n = len(PRIO_KEYS) * NUM_PRIO + len(PORT_KEYS) + len(WD_KEYS) * NUM_PRIO
            v = list(struct.unpack_from(f"={len(app) // 8}Q", app))[:n]
            v += [0] * (n - len(v))
            prios = []
            for prio in range(NUM_PRIO):
                one = {"prio": prio}
                base = prio * len(PRIO_KEYS)
                one.update(zip(PRIO_KEYS, v[base:base + len(PRIO_KEYS)]))
                base = len(PRIO_KEYS) * NUM_PRIO + len(PORT_KEYS) + prio * len(WD_KEYS)
                one.update(zip(WD_KEYS, v[base:base + len(WD_KEYS)]))
                for k in NS_KEYS:
                    one[k] //= 1000
                prios.append(one)
            out.append({"netdev": self.ifname(ifindex), "handle": handle >> 16, "prio": prios})
        return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between samples")
    ap.add_argument("--hw", action="append", default=[], metavar="DEV",
                    help="an rdma device whose port counters to sample too")
    ap.add_argument("--counters", default="", metavar="C,...",
                    help="the hw_counters of each --hw device")
    ap.add_argument("netns", nargs="*", metavar="NAME=NETNS")
    a = ap.parse_args(argv)
    counters = [c for c in a.counters.split(",") if c]
    if bool(a.hw) != bool(counters) or not (a.netns or a.hw):
        ap.error("namespaces, or --hw with --counters, or both")
    for c in counters + a.hw:
        if not c.replace("_", "").replace("-", "").isalnum():
            ap.error(f"'{c}' is not a device or counter name")
    hw = []
    for dev in a.hw:
        files = []
        for c in counters:
            path = f"/sys/class/infiniband/{dev}/ports/1/hw_counters/{c}"
            try:
                files.append((c, open(path, "rb", buffering=0)))  # pylint: disable=consider-using-with
            except OSError as e:
                print(f"pfc_sampler: {dev}: {c}: {e.strerror}", file=sys.stderr)
                return 1
        hw.append((dev, files))
    spaces = []
    for spec in a.netns:
        name, sep, ns = spec.partition("=")
        if not sep or not name or not ns:
            ap.error(f"'{spec}': NAME=NETNS")
        path = ns if ns.startswith("/") else os.path.join("/run/netns", ns)
        try:
            spaces.append((name, Netns(path)))
        except OSError as e:
            print(f"pfc_sampler: {spec}: {e}", file=sys.stderr)
            return 1
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    nxt = time.monotonic()
    while not stop:
        for name, ns in spaces:
            try:
                qd = ns.qdiscs()
            except OSError as e:
                print(f"pfc_sampler: {name}: {e}", file=sys.stderr)
                return 1
            print(f"{time.monotonic():.6f} {name} {json.dumps(qd, separators=(',', ':'))}",
                  flush=True)
        for dev, files in hw:
            vals = {}
            try:
                for c, f in files:
                    f.seek(0)
                    vals[c] = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue	# the device went away
            print(f"{time.monotonic():.6f} hw:{dev} {json.dumps(vals, separators=(',', ':'))}",
                  flush=True)
        nxt += a.interval
        time.sleep(max(0.0, nxt - time.monotonic()))
    for _, files in hw:
        for _, f in files:
            f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
