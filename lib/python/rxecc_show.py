#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What the selftests and ci/guest read out of `rdma -j res show` and
`rxecc -j qdisc show` (the JSON on stdin); the host tests are
test_rxecc_show.py.

  qpns [--type TYPE] [--comm COMM] [--sep SEP]
      `rdma -j res show qp ...`: the local QP numbers (lqpn) of the QPs of
      type TYPE (RC, UD, ...) that COMM opened (any, when not given),
      joined by SEP (a space)
  res DEV
      `rdma -j res show`: "qp Q cq C mr M pd P", device DEV's resources
  res-total PREFIX
      `rdma -j res show`: "Q C M P", the QPs, CQs, MRs and PDs of all the
      devices whose name starts with PREFIX together
  qdisc-drops
      `rxecc -j qdisc show dev DEV`: the drops of all the priorities of its
      (first) qdisc
"""
import argparse
import json
import sys

RESOURCES = ("qp", "cq", "mr", "pd")


def qpns(qps, qp_type=None, comm=None):
    """The lqpn of every QP (`rdma -j res show qp`'s list) of QP_TYPE and
    COMM (either left out: any)."""
    return [q["lqpn"] for q in qps
            if (qp_type is None or q.get("type") == qp_type) and (comm is None or q.get("comm") == comm)]


def res(devices, dev):
    """A line "qp Q cq C mr M pd P" per entry of `rdma -j res show` for DEV
    (older iproute2 nests the counts under "resource")."""
    out = []
    for d in devices:
        if d.get("ifname") == dev:
            r = d.get("resource", d)
            out.append(" ".join(f"{k} {r[k]}" for k in RESOURCES))
    return out


def res_total(devices, prefix):
    """[QPs, CQs, MRs, PDs] of the devices whose name starts with PREFIX."""
    t = [0] * len(RESOURCES)
    for d in devices:
        r = d.get("resource", d)
        if d.get("ifname", "").startswith(prefix):
            t = [a + r[k] for a, k in zip(t, RESOURCES)]
    return t


def qdisc_drops(qdiscs):
    """The drops of every priority of the first qdisc together."""
    return sum(p["drops"] for p in qdiscs[0]["prio"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("qpns")
    q.add_argument("--type", dest="qp_type")
    q.add_argument("--comm")
    q.add_argument("--sep", default=" ")
    sub.add_parser("res").add_argument("dev")
    sub.add_parser("res-total").add_argument("prefix")
    sub.add_parser("qdisc-drops")
    a = ap.parse_args(argv)
    j = json.load(sys.stdin)
    if a.cmd == "qpns":
        print(a.sep.join(str(n) for n in qpns(j, a.qp_type, a.comm)))
    elif a.cmd == "res":
        for line in res(j, a.dev):
            print(line)
    elif a.cmd == "res-total":
        print(" ".join(map(str, res_total(j, a.prefix))))
    else:
        print(qdisc_drops(j))
    return 0


if __name__ == "__main__":
    sys.exit(main())
