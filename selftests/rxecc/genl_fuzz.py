#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fuzz the rxecc generic netlink family with malformed requests.

usage: genl_fuzz.py DEV [--count N] [--seed S]

First a fixed list of malformed requests with the error each must get
(unknown attributes, wrong attribute lengths, a nest without NLA_F_NESTED,
read-only attributes, a device given to the defaults, a truncated genl
header, a wrong type for a string), each one next to a valid value that must
not be applied. Then N requests (fixed seed: reproducible) straight to the family, from a
raw netlink socket: random bytes, truncated headers, random commands with
random attribute soups, and mutations of valid requests (byte flips,
truncation, bad attribute lengths, duplicated and unknown attributes,
missing NLA_F_NESTED). Every request that changes something (device set,
defaults set, counter reset) is followed by a read of the device's and the
defaults' configuration: a rejected request must have changed nothing, an
accepted one becomes the new reference. Prints counts; exits 1 on the first
violation, 0 otherwise. Run it as root in the device's network namespace.
"""
import argparse
import errno
import random
import select
import socket
import struct
import sys

NETLINK_GENERIC = 16
NETLINK_CAP_ACK = 10
NETLINK_EXT_ACK = 11
SOL_NETLINK = 270
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
NLA_F_NESTED = 0x8000
GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 0x10, 3, 1, 2

# include/uapi/rdma/rxecc_netlink.h
CMD_DEV_GET, CMD_DEV_SET, CMD_DEFAULTS_GET, CMD_DEFAULTS_SET = 1, 2, 3, 4
CMD_STATS_GET, CMD_STATS_RESET, CMD_QP_GET = 5, 6, 7
CMD_MAX = 8
A_DEV_INDEX, A_DEV_NAME, A_PROFILE, A_DCQCN = 2, 3, 6, 7
A_RP_ENABLE, A_NP_ENABLE, A_ECN = 8, 9, 10
A_PFC_ENABLE, A_ROCE_PRIO, A_DSCP2PRIO, A_LINK_SPEED = 14, 15, 16, 17
A_PFC_RX_XOFF, A_PFC_RX_XON, A_TX_QLIMIT, A_PROFILE_KBPS = 18, 19, 20, 21
A_PROFILE_SPEEDUP, A_PFC_STALL_CRITICAL, A_PFC_STALL_MINOR, A_UDP_SPORT = 22, 23, 24, 25
A_MAX = 25
DCQCN_MAX = 24
RP_AI_RATE, RP_AI_RATE_KBPS = 6, 20    # one rate, in Mbit/s and in kbit/s
CHANGING = {CMD_DEV_SET, CMD_DEFAULTS_SET, CMD_STATS_RESET}


def attr(typ, payload):
    hdr = struct.pack("=HH", 4 + len(payload), typ)
    pad = (-len(payload)) % 4
    return hdr + payload + b"\0" * pad


def u8(v):
    return struct.pack("=B", v & 0xff)


def u32(v):
    return struct.pack("=I", v & 0xffffffff)


def strz(s):
    return s.encode() + b"\0"


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.s.bind((0, 0))
        self.s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.s.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
        self.seq = 1000

    def message(self, family, cmd, attrs, flags=NLM_F_REQUEST | NLM_F_ACK, version=1):
        self.seq += 1
        body = struct.pack("=BBH", cmd, version, 0) + attrs
        return struct.pack("=IHHII", 16 + len(body), family, flags, self.seq, 0) + body

    def send(self, raw):
        try:
            self.s.send(raw)
        except OSError as e:  # the kernel refused the datagram itself
            return e.errno
        return None

    def replies(self, seq, timeout=2.0):
        """(error, [payloads]) for request `seq`; error None if no reply came."""
        out = []
        while True:
            r, _, _ = select.select([self.s], [], [], timeout)
            if not r:
                return None, out
            data = self.s.recv(1 << 17)
            off = 0
            while off + 16 <= len(data):
                ln, typ, flags, s, _ = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    break
                payload = data[off + 16:off + ln]
                off += (ln + 3) & ~3
                if s != seq:
                    continue
                if typ == NLMSG_ERROR:
                    return -struct.unpack_from("=i", payload)[0], out
                if typ == NLMSG_DONE:
                    err = struct.unpack_from("=i", payload)[0] if len(payload) >= 4 else 0
                    return -err, out
                out.append(payload)

    def request(self, raw, seq):
        err = self.send(raw)
        if err is not None:
            return err, []
        return self.replies(seq)

    def family(self, name):
        raw = self.message(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, attr(CTRL_ATTR_FAMILY_NAME, strz(name)))
        err, msgs = self.request(raw, self.seq)
        if err or not msgs:
            sys.exit("genl_fuzz: family %s not found (%s)" % (name, err))
        p = msgs[0][4:]
        while len(p) >= 4:
            ln, typ = struct.unpack_from("=HH", p)
            if typ == CTRL_ATTR_FAMILY_ID:
                return struct.unpack_from("=H", p, 4)[0]
            p = p[(ln + 3) & ~3:]
        sys.exit("genl_fuzz: no family id")


def strip_seq_free(payload):
    return payload[4:]  # the configuration attributes after the genl header


class Fuzzer:
    def __init__(self, g, fam, dev, rng):
        self.g, self.fam, self.dev, self.rng = g, fam, dev, rng
        self.counts = {}

    def count(self, k):
        self.counts[k] = self.counts.get(k, 0) + 1

    def state(self):
        """The device's and the defaults' configuration, as raw attributes."""
        out = []
        for cmd, attrs in ((CMD_DEV_GET, attr(A_DEV_NAME, strz(self.dev))), (CMD_DEFAULTS_GET, b"")):
            raw = self.g.message(self.fam, cmd, attrs)
            err, msgs = self.g.request(raw, self.g.seq)
            if err or len(msgs) != 1:
                sys.exit("genl_fuzz: reading the configuration failed (%s)" % err)
            out.append(strip_seq_free(msgs[0]))
        return out

    # --- generators ---------------------------------------------------
    def rand_bytes(self, n):
        return bytes(self.rng.getrandbits(8) for _ in range(n))

    def valid_dcqcn(self):
        r = self.rng
        inner = b"".join(attr(r.randint(1, DCQCN_MAX), u32(r.choice([0, 1, 5, 100, 1000, 2**31, 2**32 - 1])))
                         for _ in range(r.randint(1, 4)))
        return attr(A_DCQCN | NLA_F_NESTED, inner)

    def pfc_attr(self):
        """A priority/PFC attribute, now and then out of range."""
        r = self.rng
        kind = r.randrange(7)
        if kind == 6:
            return attr(A_UDP_SPORT, u8(r.randint(0, 2)))
        if kind == 5:
            return attr(r.choice([A_PFC_STALL_CRITICAL, A_PFC_STALL_MINOR]),
                        u32(r.choice([0, 1, 79, 80, 100, 8000, 8001, 2**32 - 1])))
        if kind == 4:
            return attr(r.choice([A_PFC_RX_XOFF, A_PFC_RX_XON, A_TX_QLIMIT]),
                        u32(r.choice([0, 1, 200, 1000, 1000000, 1000001, 2**30 + 1, 2**32 - 1])))
        if kind == 0:
            return attr(A_PFC_ENABLE, u8(r.getrandbits(8)))
        if kind == 1:
            return attr(A_ROCE_PRIO, u8(r.randint(0, 9)))
        if kind == 2:
            return attr(A_LINK_SPEED, u32(r.choice([0, 1, 1000, 1000000, 1000001, 2**32 - 1])))
        top = 7 if r.random() < 0.8 else 255
        return attr(A_DSCP2PRIO, bytes(r.randint(0, top) for _ in range(r.choice([64, 64, 64, 63]))))

    def soup(self, depth=0):
        r = self.rng
        parts = []
        for _ in range(r.randint(0, 6)):
            typ = r.randint(0, A_MAX + 3)
            kind = r.random()
            if kind < 0.25:
                payload = u8(r.getrandbits(8))
            elif kind < 0.5:
                payload = u32(r.getrandbits(32))
            elif kind < 0.65:
                payload = strz(r.choice([self.dev, "rxecc9", "", "x" * 80, "mlx5", "paper", "lab"]))
            elif kind < 0.8 and depth < 2:
                payload = self.soup(depth + 1)
                typ |= NLA_F_NESTED if r.random() < 0.7 else 0
            else:
                payload = self.rand_bytes(r.randint(0, 24))
            parts.append(attr(typ, payload))
        return b"".join(parts)

    def template(self):
        """A valid request of a random command (a DEV_SET aims at the device)."""
        r = self.rng
        dev = attr(A_DEV_NAME, strz(self.dev))
        cmd = r.choice([CMD_DEV_GET, CMD_DEV_SET, CMD_DEFAULTS_GET, CMD_DEFAULTS_SET,
                        CMD_STATS_GET, CMD_STATS_RESET, CMD_QP_GET])
        cfg = b""
        if r.random() < 0.3:
            cfg += attr(A_PROFILE, strz(r.choice(["mlx5", "paper", "lab", "mlx4"])))
            if r.random() < 0.5:
                cfg += attr(A_PROFILE_KBPS, u32(r.choice([0, 1, 50000, 40000000, 400000001])))
                if r.random() < 0.5:
                    cfg += attr(A_PROFILE_SPEEDUP, u32(r.choice([0, 1, 16, 1024, 1025])))
        if r.random() < 0.7:
            cfg += self.valid_dcqcn()
        if r.random() < 0.3:
            cfg += attr(r.choice([A_RP_ENABLE, A_NP_ENABLE, A_ECN]), u8(r.randint(0, 4)))
        if r.random() < 0.3:
            cfg += self.pfc_attr()
        attrs = {CMD_DEV_SET: dev + cfg, CMD_DEFAULTS_SET: cfg}.get(cmd, dev if r.random() < 0.8 else b"")
        flags = NLM_F_REQUEST | NLM_F_ACK
        if cmd in (CMD_DEV_GET, CMD_STATS_GET, CMD_QP_GET) and r.random() < 0.5:
            flags = NLM_F_REQUEST | NLM_F_DUMP
        return cmd, attrs, flags

    def mutate(self, body):
        r = self.rng
        b = bytearray(body)
        for _ in range(r.randint(1, 4)):
            op = r.random()
            if op < 0.35 and b:
                i = r.randrange(len(b))
                b[i] ^= 1 << r.randrange(8)
            elif op < 0.5 and b:
                del b[r.randrange(len(b)):]
            elif op < 0.65:
                b += self.soup()
            elif op < 0.8 and len(b) >= 4:
                i = r.randrange(0, len(b) - 3) & ~3
                struct.pack_into("=H", b, i, r.choice([0, 1, 3, 4, 5, 0xffff, len(b) + 8]))
            elif op < 0.9 and len(b) >= 4:
                i = r.randrange(0, len(b) - 3) & ~3
                struct.pack_into("=H", b, i + 2, r.getrandbits(16))
            else:
                b += bytes(b[:r.randint(0, len(b))])
        return bytes(b)

    # --- one request ----------------------------------------------------
    def one(self, reference):
        r = self.rng
        kind = r.random()
        if kind < 0.1:
            # Random bytes, or a header claiming more or less than is there.
            raw = self.rand_bytes(r.randint(0, 64))
            if r.random() < 0.5 and len(raw) >= 16:
                raw = struct.pack("=IHHII", r.choice([0, 8, 15, 16, 17, len(raw), 4096]), self.fam,
                                  NLM_F_REQUEST | NLM_F_ACK, 7, 0) + raw[16:]
            self.count("garbage")
            self.g.send(raw)
            self.g.replies(-1, timeout=0.01)  # drain whatever came back
            return reference
        if kind < 0.4:
            cmd = r.randint(0, CMD_MAX + 2)
            attrs = self.soup()
            flags = r.choice([NLM_F_REQUEST | NLM_F_ACK, NLM_F_REQUEST | NLM_F_DUMP, NLM_F_REQUEST | NLM_F_ACK | 0x20])
            self.count("soup")
        else:
            cmd, attrs, flags = self.template()
            if r.random() < 0.8:
                attrs = self.mutate(attrs)
                self.count("mutated")
            else:
                self.count("valid")
        version = 1 if r.random() < 0.9 else r.getrandbits(8)
        raw = self.g.message(self.fam, cmd, attrs, flags, version)
        if r.random() < 0.05:
            # The genl header itself cut short.
            raw = struct.pack("=IHHII", 16 + 2, self.fam, flags, self.g.seq, 0) + raw[16:18]
        err, _ = self.g.request(raw, self.g.seq)
        self.count("accepted" if err == 0 else "rejected" if err else "no reply")
        if cmd in CHANGING and flags & NLM_F_DUMP != NLM_F_DUMP:
            now = self.state()
            if err and now != reference:
                print("genl_fuzz: VIOLATION: rejected request (errno %s) changed the configuration" % err)
                print("genl_fuzz: request %s" % raw.hex())
                sys.exit(1)
            if err == 0 and cmd != CMD_STATS_RESET:
                self.count("configuration changes")
            return now
        return reference


A_NETDEV = 4
RP_GD = 16


def checks(g, fam, dev, f):
    """Malformed requests with a known answer; none may change anything."""
    devattr = attr(A_DEV_NAME, strz(dev))
    good = attr(RP_GD, u32(3))  # valid on its own: must not be applied either
    cases = [
        ("unknown top-level attribute", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good) + attr(30, u32(1)), errno.EINVAL),
        ("unknown DCQCN attribute", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good + attr(25, u32(1))), errno.EINVAL),
        ("DCQCN nest without NLA_F_NESTED", CMD_DEV_SET, devattr + attr(A_DCQCN, good), errno.EINVAL),
        ("a u32 value sent as u8", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good + attr(2, u8(1))), errno.EINVAL),
        ("a u32 value sent as u64", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good + attr(3, u32(1) + u32(0))), errno.EINVAL),
        ("ECN sent as u32", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good) + attr(A_ECN, u32(1)), errno.EINVAL),
        ("ECN out of range", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good) + attr(A_ECN, u8(3)), errno.ERANGE),
        ("UDP_SPORT out of range", CMD_DEV_SET, devattr + attr(A_UDP_SPORT, u8(2)), errno.ERANGE),
        ("UDP_SPORT sent as u32", CMD_DEV_SET, devattr + attr(A_UDP_SPORT, u32(1)), errno.EINVAL),
        ("read-only NETDEV", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good) + attr(A_NETDEV, strz("eth9")), errno.EINVAL),
        ("a device given to the defaults", CMD_DEFAULTS_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good), errno.EINVAL),
        ("device name without its NUL", CMD_DEV_SET, attr(A_DEV_NAME, dev.encode()) + attr(A_DCQCN | NLA_F_NESTED, good), errno.EINVAL),
        ("unknown profile", CMD_DEV_SET, devattr + attr(A_PROFILE, strz("mlx4")) + attr(A_DCQCN | NLA_F_NESTED, good), errno.EINVAL),
        ("no device", CMD_DEV_SET, attr(A_DCQCN | NLA_F_NESTED, good), errno.EINVAL),
        ("unknown device", CMD_DEV_SET, attr(A_DEV_NAME, strz("rxecc9")) + attr(A_DCQCN | NLA_F_NESTED, good), errno.ENODEV),
        ("a rate given in Mbit/s and in kbit/s", CMD_DEV_SET,
         devattr + attr(A_DCQCN | NLA_F_NESTED, good + attr(RP_AI_RATE, u32(5)) + attr(RP_AI_RATE_KBPS, u32(50))),
         errno.EINVAL),
        ("a kbit/s rate out of range", CMD_DEV_SET,
         devattr + attr(A_DCQCN | NLA_F_NESTED, good + attr(RP_AI_RATE_KBPS, u32(400000001))), errno.ERANGE),
        ("PROFILE_KBPS without PROFILE", CMD_DEV_SET, devattr + attr(A_PROFILE_KBPS, u32(50000)), errno.EINVAL),
        ("PROFILE_KBPS 0", CMD_DEV_SET, devattr + attr(A_PROFILE, strz("paper")) + attr(A_PROFILE_KBPS, u32(0)),
         errno.ERANGE),
        ("the lab profile scaled", CMD_DEV_SET, devattr + attr(A_PROFILE, strz("lab")) + attr(A_PROFILE_KBPS, u32(50000)),
         errno.EINVAL),
        ("PROFILE_SPEEDUP without PROFILE_KBPS", CMD_DEV_SET,
         devattr + attr(A_PROFILE, strz("paper")) + attr(A_PROFILE_SPEEDUP, u32(16)), errno.EINVAL),
        ("PROFILE_SPEEDUP 1025", CMD_DEV_SET, devattr + attr(A_PROFILE, strz("paper")) +
         attr(A_PROFILE_KBPS, u32(25000)) + attr(A_PROFILE_SPEEDUP, u32(1025)), errno.ERANGE),
        ("a critical stall watermark of 79 ms", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good) +
         attr(A_PFC_STALL_CRITICAL, u32(79)), errno.ERANGE),
        ("a minor stall watermark of 79 ms", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good) +
         attr(A_PFC_STALL_MINOR, u32(79)), errno.ERANGE),
        ("the minor stall watermark above the critical", CMD_DEV_SET, devattr + attr(A_DCQCN | NLA_F_NESTED, good) +
         attr(A_PFC_STALL_CRITICAL, u32(1000)) + attr(A_PFC_STALL_MINOR, u32(2000)), errno.ERANGE),
        ("unknown command", CMD_MAX + 3, devattr, errno.EOPNOTSUPP),
        ("attribute on a get without attributes", CMD_DEFAULTS_GET, devattr, errno.EINVAL),
    ]
    ref = f.state()
    for name, cmd, attrs, want in cases:
        raw = g.message(fam, cmd, attrs)
        err, _ = g.request(raw, g.seq)
        now = f.state()
        print("genl_fuzz: check %-40s errno %s (want %s)%s" % (name, err, want, "" if now == ref else ", CHANGED"))
        if err != want or now != ref:
            sys.exit(1)
    # The genl header itself cut short.
    raw = struct.pack("=IHHII", 18, fam, NLM_F_REQUEST | NLM_F_ACK, g.seq + 1, 0) + b"\x01\x01"
    g.seq += 1
    err, _ = g.request(raw, g.seq)
    print("genl_fuzz: check %-40s errno %s (want %s)" % ("truncated genl header", err, errno.EINVAL))
    if err != errno.EINVAL or f.state() != ref:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dev")
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=4791)
    a = ap.parse_args()
    g = Genl()
    fam = g.family("rxecc")
    f = Fuzzer(g, fam, a.dev, random.Random(a.seed))
    checks(g, fam, a.dev, f)
    ref = f.state()
    for _ in range(a.count):
        ref = f.one(ref)
    print("genl_fuzz: %d requests, seed %d: %s" % (a.count, a.seed,
          ", ".join("%s %d" % kv for kv in sorted(f.counts.items()))))


if __name__ == "__main__":
    main()
