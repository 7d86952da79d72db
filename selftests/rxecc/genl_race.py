#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read the rxecc generic netlink family in a loop for SECONDS while the
caller adds and deletes devices: dumps of DEV_GET, STATS_GET and QP_GET, and
DEV_GET and STATS_GET of the device NAME, the requests any user may make.

usage: genl_race.py SECONDS NAME

Every reply must be a well-formed answer or ENODEV (the named device is
gone or not there yet); every device a dump returns must have a name and a
netdev. Prints the counts; exits 1 on anything else."""
import errno
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from genl_fuzz import (A_DEV_NAME, CMD_DEV_GET, CMD_QP_GET, CMD_STATS_GET,  # noqa: E402
                       NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, Genl, attr, strz)

A_NETDEV = 4


def attrs_of(payload: bytes) -> dict:
    out = {}
    p = payload[4:]
    while len(p) >= 4:
        ln, typ = struct.unpack_from("=HH", p)
        if ln < 4:
            break
        out[typ & 0x3fff] = p[4:ln]
        p = p[(ln + 3) & ~3:]
    return out


def main() -> None:
    seconds, name = float(sys.argv[1]), sys.argv[2]
    g = Genl()
    fam = g.family("rxecc")
    counts = {"requests": 0, "devices": 0, "enodev": 0}
    end = time.time() + seconds
    bad = 0
    while time.time() < end:
        for cmd, dump in ((CMD_DEV_GET, True), (CMD_STATS_GET, True), (CMD_QP_GET, True),
                          (CMD_DEV_GET, False), (CMD_STATS_GET, False)):
            body = b"" if dump else attr(A_DEV_NAME, strz(name))
            flags = NLM_F_REQUEST | NLM_F_ACK | (NLM_F_DUMP if dump else 0)
            err, msgs = g.request(g.message(fam, cmd, body, flags=flags), g.seq)
            counts["requests"] += 1
            if err == errno.ENODEV and not dump:
                counts["enodev"] += 1
                continue
            if err not in (0, None) or (err is None and not msgs):
                print(f"cmd {cmd} dump {dump}: error {err}")
                bad += 1
                continue
            for m in msgs:
                a = attrs_of(m)
                if cmd == CMD_QP_GET:
                    continue
                counts["devices"] += 1
                if not a.get(A_DEV_NAME, b"\0")[:-1] or not a.get(A_NETDEV, b"\0")[:-1]:
                    print(f"cmd {cmd}: a device without a name or netdev: {a}")
                    bad += 1
    print(" ".join(f"{k} {v}" for k, v in counts.items()), f"bad {bad}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
