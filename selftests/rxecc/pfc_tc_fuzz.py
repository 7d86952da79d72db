#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fuzz the options of the pfc qdisc over rtnetlink (RTM_NEWQDISC, kind
"pfc"), reproducible from a seed.

usage: pfc_tc_fuzz.py DEV --count N --seed S

Each request is a `change` (or, with no qdisc on DEV, an `add`) with a random
set of options: boundary and random values of every attribute, priorities
out of range or missing, wrong attribute lengths, unknown attributes,
repeated priority nests. After each request the configuration is read back
(RTM_GETQDISC) and compared with what it was:
  - a refused request changed nothing (and an `add` left no qdisc);
  - an accepted one set exactly the values it gave and kept the others;
  - every accepted configuration is a valid one (xon <= xoff <= limit,
    kmin <= kmax <= limit unless kmax is 0, pmax <= 100, the DSCP map in
    0..7, trust 0 or 1, headroom for the PFC priorities at least
    link x delay + 2 MTU, watchdog detection and polling 0 or 10..5000 ms,
    restoration up to 60000 ms, polling not above a detection that is set,
    restoration not below the polling interval, action 0..2), and every
    request the rules refuse is refused.
Prints counts; exits 1 on the first violation. Run as root (or user
namespace root) in DEV's network namespace.
"""
import argparse
import errno
import json
import os
import random
import socket
import struct
import subprocess
import sys

# the measurement code shared with the lab (lib/python/)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "python"))
from pfc_sampler import messages  # noqa: E402  pylint: disable=wrong-import-position

RTM_NEWQDISC, RTM_GETQDISC = 36, 38
NLM_F_REQUEST, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP = 0x1, 0x4, 0x400, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCA_KIND, TCA_OPTIONS = 1, 2
TC_H_ROOT = 0xFFFFFFFF
NLA_F_NESTED = 0x8000
# include/uapi/linux/sch_pfc.h
RATE, ENABLE, TRUST, LINK, DELAY, QUANTA, DSCP_MAP, PRIO, PAD = range(1, 10)
WD_DETECTION, WD_RESTORATION, WD_ACTION, WD_POLL = range(10, 14)
WD_KEYS = {WD_DETECTION: "wd_detection", WD_RESTORATION: "wd_restoration", WD_POLL: "wd_poll"}
P_ID, P_LIMIT, P_XOFF, P_XON, P_HEADROOM, P_KMIN, P_KMAX, P_PMAX = range(1, 9)
PRIO_KEYS = {P_LIMIT: "limit", P_XOFF: "xoff", P_XON: "xon", P_HEADROOM: "headroom",
             P_KMIN: "kmin", P_KMAX: "kmax", P_PMAX: "pmax"}
U32_EDGES = [0, 1, 2, 1000, 1514, 3028, 65535, 65536, 10**6, 10**9, 2**31, 2**32 - 1]


def attr(typ, payload):
    return struct.pack("=HH", 4 + len(payload), typ) + payload + b"\0" * ((-len(payload)) % 4)


def parse(buf):
    out = []
    while len(buf) >= 4:
        ln, typ = struct.unpack_from("=HH", buf)
        if ln < 4:
            break
        out.append((typ & 0x3FFF, buf[4:ln]))
        buf = buf[(ln + 3) & ~3:]
    return out


class Rtnl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.s.bind((0, 0))
        self.s.setsockopt(270, 11, 1)   # SOL_NETLINK, NETLINK_EXT_ACK
        self.s.setsockopt(270, 10, 1)   # NETLINK_CAP_ACK
        self.seq = 1
        self.msg = ""

    def request(self, typ, flags, body):
        self.seq += 1
        self.s.send(struct.pack("=IHHII", 16 + len(body), typ, flags, self.seq, 0) + body)
        msgs = []
        while True:
            for t, seq, payload in messages(self.s.recv(1 << 16)):
                if seq != self.seq:
                    continue
                if t == NLMSG_ERROR:
                    tlv = dict(parse(payload[20:]))
                    self.msg = tlv.get(1, b"").rstrip(b"\0").decode(errors="replace")
                    return -struct.unpack_from("=i", payload)[0], msgs
                if t == NLMSG_DONE:
                    return 0, msgs
                msgs.append((t, payload))


def tcmsg(ifindex):
    return struct.pack("=BxxxiIII", socket.AF_UNSPEC, ifindex, 0, TC_H_ROOT, 0)


def read_back(nl, ifindex):
    """The pfc qdisc's configuration on the device, or None."""
    _, msgs = nl.request(RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, tcmsg(0))
    for _, p in msgs:
        if struct.unpack_from("=i", p, 4)[0] != ifindex:
            continue
        attrs = dict(parse(p[20:]))
        if attrs.get(TCA_KIND) != b"pfc\0":
            continue
        conf = {"prio": [dict() for _ in range(8)]}
        for typ, v in parse(attrs[TCA_OPTIONS]):
            if typ == RATE:
                conf["rate"] = struct.unpack("=Q", v)[0]
            elif typ in (ENABLE, TRUST):
                conf[{ENABLE: "enable", TRUST: "trust"}[typ]] = v[0]
            elif typ in (LINK, DELAY):
                conf[{LINK: "link", DELAY: "delay"}[typ]] = struct.unpack("=I", v)[0]
            elif typ in WD_KEYS:
                conf[WD_KEYS[typ]] = struct.unpack("=I", v)[0]
            elif typ == WD_ACTION:
                conf["wd_action"] = v[0]
            elif typ == QUANTA:
                conf["quanta"] = struct.unpack("=H", v[:2])[0]
            elif typ == DSCP_MAP:
                conf["dscp"] = bytes(v)
            elif typ == PRIO:
                n = dict(parse(v))
                conf["prio"][n[P_ID][0]] = {PRIO_KEYS[k]: struct.unpack("=I", n[k])[0] for k in PRIO_KEYS}
        return conf
    return None


def valid(c, mtu):
    """None if configuration @c is one the qdisc must take, else why not."""
    if c["trust"] > 1:
        return "trust"
    if not 1 <= c["link"] <= 10**6 or c["delay"] > 10**9 or c["quanta"] < 1:
        return "port value out of range"
    if any(b > 7 for b in c["dscp"]):
        return "dscp map"
    if c["wd_detection"] > 5000 or c["wd_poll"] > 5000 or c["wd_restoration"] > 60000:
        return "watchdog time out of range"
    if c["wd_action"] > 2:
        return "watchdog action"
    if 0 < c["wd_detection"] < 10 or 0 < c["wd_poll"] < 10:
        return "watchdog time below 10 ms"
    if c["wd_detection"] and c["wd_poll"] > c["wd_detection"]:
        return "watchdog polling above detection"
    poll = c["wd_poll"] or max(c["wd_detection"] // 2, 5)
    if c["wd_detection"] and c["wd_restoration"] and c["wd_restoration"] < poll:
        return "watchdog restoration below polling"
    need = c["link"] * 10**6 * c["delay"] // (8 * 10**9) + 2 * (mtu + 14)
    for p, x in enumerate(c["prio"]):
        if x["limit"] < 1 or x["xoff"] < 1 or x["pmax"] > 100:
            return f"prio {p}: value out of range"
        if x["xon"] > x["xoff"] or x["xoff"] > x["limit"]:
            return f"prio {p}: thresholds"
        if x["kmax"] and (x["kmin"] > x["kmax"] or x["kmax"] > x["limit"]):
            return f"prio {p}: marking"
        if c["enable"] & (1 << p) and x["headroom"] < need:
            return f"prio {p}: headroom"
    return None


def u32(rng):
    return rng.choice(U32_EDGES) if rng.random() < 0.5 else rng.randrange(2**32)


def request(rng, old):
    """(options payload, the configuration it asks for, or None if malformed)."""
    new = {k: (v if k != "prio" else [dict(x) for x in v]) for k, v in old.items()}
    opts = b""
    malformed = False
    if rng.random() < 0.3:
        new["rate"] = rng.choice([0, 1, 2**63, 2**64 - 1, rng.randrange(2**64)])
        opts += attr(RATE, struct.pack("=Q", new["rate"]))
    if rng.random() < 0.4:
        new["enable"] = rng.randrange(256)
        opts += attr(ENABLE, bytes([new["enable"]]))
    if rng.random() < 0.2:
        new["trust"] = rng.choice([0, 1, 2, 255])
        opts += attr(TRUST, bytes([new["trust"]]))
    if rng.random() < 0.4:
        new["link"] = rng.choice([0, 1, 1000, 10**6, 10**6 + 1, u32(rng)])
        opts += attr(LINK, struct.pack("=I", new["link"]))
    if rng.random() < 0.4:
        new["delay"] = rng.choice([0, 1, 100000, 10**9, 10**9 + 1, u32(rng)])
        opts += attr(DELAY, struct.pack("=I", new["delay"]))
    if rng.random() < 0.2:
        new["quanta"] = rng.choice([0, 1, 65535, rng.randrange(65536)])
        opts += attr(QUANTA, struct.pack("=H", new["quanta"]))
    if rng.random() < 0.2:
        m = bytes(rng.randrange(8) for _ in range(64))
        if rng.random() < 0.3:
            m = m[:5] + bytes([rng.randrange(8, 256)]) + m[6:]
        new["dscp"] = m
        opts += attr(DSCP_MAP, m)
    for typ, name in WD_KEYS.items():
        if rng.random() < 0.2:
            lim = 60000 if typ == WD_RESTORATION else 5000
            new[name] = rng.choice([0, 1, 9, 10, 50, lim, lim + 1, rng.randrange(lim + 1), u32(rng)])
            opts += attr(typ, struct.pack("=I", new[name]))
    if rng.random() < 0.2:
        new["wd_action"] = rng.choice([0, 1, 2, 3, 255])
        opts += attr(WD_ACTION, bytes([new["wd_action"]]))
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        p = rng.randrange(8)
        nest = b""
        if rng.random() < 0.1:
            malformed = True        # no PRIO_ID, or one above 7
            if rng.random() < 0.5:
                nest += attr(P_ID, bytes([rng.randrange(8, 256)]))
        else:
            nest += attr(P_ID, bytes([p]))
        for k, name in PRIO_KEYS.items():
            if rng.random() < 0.4:
                v = u32(rng) if name != "pmax" else rng.choice([0, 50, 100, 101, u32(rng)])
                new["prio"][p][name] = v
                nest += attr(k, struct.pack("=I", v))
        opts += attr(PRIO | NLA_F_NESTED, nest)
    r = rng.random()
    if r < 0.05:                    # a u32 of the wrong length
        opts += attr(rng.choice([LINK, DELAY, WD_DETECTION, WD_POLL]), b"\1\2")
        malformed = True
    elif r < 0.08:                  # an attribute the qdisc does not know
        opts += attr(rng.randrange(WD_POLL + 1, 64), b"\0" * 4)
        malformed = True
    elif r < 0.1:                   # a map of the wrong length
        opts += attr(DSCP_MAP, bytes(rng.randrange(63)))
        malformed = True
    return opts, (None if malformed else new)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dev")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    ifindex = socket.if_nametoindex(a.dev)
    mtu = json.loads(subprocess.run(["ip", "-j", "link", "show", "dev", a.dev], check=True,
                                    capture_output=True, text=True).stdout)[0]["mtu"]
    nl = Rtnl()
    counts = {"accepted": 0, "refused": 0, "add": 0}
    for i in range(a.count):
        old = read_back(nl, ifindex)
        base = old or read_back_defaults()
        opts, want = request(rng, base)
        flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_CREATE if old is None else 0)
        counts["add"] += old is None
        err, _ = nl.request(RTM_NEWQDISC, flags,
                            tcmsg(ifindex) + attr(TCA_KIND, b"pfc\0") +
                            attr(TCA_OPTIONS | NLA_F_NESTED, opts))
        now = read_back(nl, ifindex)
        why = "malformed" if want is None else valid(want, mtu)
        if err == 0:
            counts["accepted"] += 1
            if why is not None:
                sys.exit(f"request {i}: accepted, but {why}: {want}")
            if now != want:
                sys.exit(f"request {i}: accepted, read back {now}, want {want}")
        else:
            counts["refused"] += 1
            if why is None:
                sys.exit(f"request {i}: refused ({errno.errorcode.get(err, err)}: {nl.msg}), "
                         f"but valid: {want}; options {opts.hex()}")
            if now != old:
                sys.exit(f"request {i}: refused ({why}), changed {old} -> {now}")
    print(" ".join(f"{k} {v}" for k, v in counts.items()))


def read_back_defaults():
    """The configuration a new qdisc starts from (sch_pfc.c's PFC_DEF_*)."""
    return {"rate": 0, "enable": 0, "trust": 0, "link": 10000, "delay": 100000, "quanta": 0xFFFF,
            "wd_detection": 0, "wd_restoration": 0, "wd_action": 0, "wd_poll": 0,
            "dscp": bytes(d >> 3 for d in range(64)),
            "prio": [{"limit": 1 << 20, "xoff": 64 << 10, "xon": 32 << 10, "headroom": 160 << 10,
                      "kmin": 0, "kmax": 0, "pmax": 20} for _ in range(8)]}


if __name__ == "__main__":
    main()
