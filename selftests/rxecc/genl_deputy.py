#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Whose rights does a QP dump of the rxecc family run with: the requester's,
or those of whoever reads the socket?

usage: genl_deputy.py DEV --qps N   (as root, in DEV's network namespace)

A child that dropped every privilege (uid 65534) creates N RC QPs of its own
on DEV (pyverbs; uverbs is open to every user), then this process (root: an
administrator of the namespace) N more. The child asks for a QP dump and
hands the socket over (SCM_RIGHTS) without reading it; this process reads
it. The child's own QPs fill the first message, which the kernel builds
while the request is sent; the rest is built as the socket is read, by
this process. The dump must hold the child's QPs and none of this
process's: the requester is neither an administrator nor their owner. The
dump once judged each message by the task reading it, and the reader's
rights (owner, administrator) served the unprivileged requester.
Also this process's own dump must show every QP (an administrator's).
Prints what was seen (JSON); exits 1 if a check failed."""
import argparse
import json
import os
import socket
import struct
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr

from genl_fuzz import CMD_QP_GET, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, Genl

DUMP = NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP
ATTR_QP, QP_A_QPN = 13, 2  # include/uapi/rdma/rxecc_netlink.h


def tlvs(buf: bytes):
    while len(buf) >= 4:
        ln, typ = struct.unpack_from("=HH", buf)
        if ln < 4:
            return
        yield typ & 0x3FFF, buf[4:ln]
        buf = buf[(ln + 3) & ~3:]


def qpns(g: Genl, seq: int) -> tuple:
    """(error, QP numbers) of the dump answering @seq."""
    err, msgs = g.replies(seq, timeout=10)
    out = []
    for m in msgs:
        for typ, v in tlvs(m[4:]):
            if typ == ATTR_QP:
                out += [struct.unpack("=I", q[:4])[0] for t, q in tlvs(v) if t == QP_A_QPN]
    return err, out


def make_qps(dev: str, n: int) -> tuple:
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 4)
    cap = QPCap(max_send_wr=1, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
    qps = [QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)) for _ in range(n)]
    return (ctx, pd, cq, qps), {q.qp_num for q in qps}


def requester(sock: socket.socket, dev: str, n: int) -> None:
    """The child: drop privileges, make QPs, ask, hand the socket over."""
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    keep, mine = make_qps(dev, n)
    sock.send(json.dumps(sorted(mine)).encode() + b"\n")
    sock.recv(1)  # the parent made its QPs
    g = Genl()
    fam = g.family("rxecc")
    g.send(g.message(fam, CMD_QP_GET, b"", DUMP))
    socket.send_fds(sock, [str(g.seq).encode()], [g.s.fileno()])
    sock.recv(1)  # the parent read the dump
    del keep
    os._exit(0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dev")
    ap.add_argument("--qps", type=int, default=300)
    a = ap.parse_args()
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        parent.close()
        try:
            requester(child, a.dev, a.qps)
        finally:
            os._exit(1)
    child.close()
    f = parent.makefile("rb")
    line = f.readline()
    if not line:
        sys.exit("genl_deputy: the unprivileged child made no QPs")
    theirs = set(json.loads(line))
    keep, mine = make_qps(a.dev, a.qps)
    parent.send(b"x")
    msg, fds, _, _ = socket.recv_fds(parent, 64, 1)
    handed = Genl.__new__(Genl)
    handed.s = socket.socket(fileno=fds[0])
    err, seen = qpns(handed, int(msg))
    parent.send(b"x")
    os.waitpid(pid, 0)
    g = Genl()
    fam = g.family("rxecc")
    g.send(g.message(fam, CMD_QP_GET, b"", DUMP))
    own_err, own = qpns(g, g.seq)
    out = {"qps_each": a.qps, "handed_err": err, "handed_child": len(theirs & set(seen)),
           "handed_owner": len(mine & set(seen)), "own_err": own_err,
           "own_owner": len(mine & set(own))}
    print(json.dumps(out), flush=True)
    good1 = err == 0 and out["handed_child"] == a.qps and out["handed_owner"] == 0
    print(f"{'ok' if good1 else 'FAIL'}: the unprivileged requester's dump, read by the owner: "
          f"{out['handed_child']} of its {a.qps} QPs, {out['handed_owner']} of the reader's (want 0)")
    good2 = own_err == 0 and out["own_owner"] == a.qps
    print(f"{'ok' if good2 else 'FAIL'}: the administrator's own dump: {out['own_owner']} of its "
          f"{a.qps} QPs")
    del keep
    sys.exit(0 if good1 and good2 else 1)


if __name__ == "__main__":
    main()
