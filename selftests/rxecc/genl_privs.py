#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One valid request of each command of the rxecc generic netlink family,
for a privilege matrix (tool.sh runs it as root, as a user without
CAP_NET_ADMIN, as root of a user namespace in the device's network
namespace and in a network namespace of its own, and as root of another
network namespace).

usage: genl_privs.py DEV

The changing commands carry values that a caller allowed to send them may
apply (DEV_SET and DEFAULTS_SET: rp_gd 7; STATS_RESET of DEV); the caller
compares the configuration before and after. Prints one JSON line: the
errno each command got (0 for success; for the dumps, the number of
entries too)."""
import argparse
import json
import sys

from genl_fuzz import (A_DCQCN, A_DEV_NAME, CMD_DEFAULTS_GET, CMD_DEFAULTS_SET, CMD_DEV_GET,
                       CMD_DEV_SET, CMD_QP_GET, CMD_STATS_GET, CMD_STATS_RESET, NLA_F_NESTED,
                       NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, RP_GD, Genl, attr, strz, u32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dev")
    a = ap.parse_args()
    g = Genl()
    fam = g.family("rxecc")
    dev = attr(A_DEV_NAME, strz(a.dev))
    gd = attr(A_DCQCN | NLA_F_NESTED, attr(RP_GD, u32(7)))
    doit = NLM_F_REQUEST | NLM_F_ACK
    dump = NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP
    requests = [
        ("dev_get", CMD_DEV_GET, dev, doit),
        ("dev_dump", CMD_DEV_GET, b"", dump),
        ("dev_set", CMD_DEV_SET, dev + gd, doit),
        ("defaults_get", CMD_DEFAULTS_GET, b"", doit),
        ("defaults_set", CMD_DEFAULTS_SET, gd, doit),
        ("stats_get", CMD_STATS_GET, dev, doit),
        ("stats_reset", CMD_STATS_RESET, dev, doit),
        ("qp_dump", CMD_QP_GET, b"", dump),
    ]
    out = {}
    for name, cmd, attrs, flags in requests:
        err, msgs = g.request(g.message(fam, cmd, attrs, flags), g.seq)
        if err is None:
            sys.exit(f"genl_privs: no answer to {name}")
        out[name] = err
        if flags & NLM_F_DUMP:
            out[name + "_entries"] = len(msgs)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
