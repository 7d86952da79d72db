#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Systematic fault injection into rxecc's control path (fault.sh).

  fault_inject.py link NDEV [--max N]        rdma link add (netlink NEWLINK)
  fault_inject.py verbs DEV GID_INDEX [--max N]   open, PD, CQ, MR, QP,
                                             connect (INIT/RTR/RTS), SEND

For each operation, and N = 1, 2, ...: everything the operation needs is
set up first without faults; then /proc/thread-self/fail-nth makes the
N-th fault-injection point (failslab, fail_page_alloc) that this thread's
system calls reach fail, the operation runs, and the file tells whether the
fault was injected. N grows until an operation completes without reaching
the N-th point: every allocation on its path has then failed once. Each
injected failure must come back as an error (an exception from pyverbs, a
netlink error, a completion with an error status) or be absorbed (the
operation succeeds anyway); a crash, a hang or a leak fails fault.sh.
(A failure can also reach this process's own memory management, mmap or brk:
a MemoryError is an error returned too.) Everything is torn down (without
faults) after each try. Prints JSON per
operation: points (the N that reached nothing), errors, absorbed.
"""
import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qp_churn import connect  # noqa: E402  pylint: disable=wrong-import-position

# <rdma/rdma_netlink.h>: NETLINK_RDMA, RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK
# and the attributes DEV_NAME, NDEV_NAME, LINK_TYPE.
NETLINK_RDMA = 20
NLDEV_NEWLINK = (5 << 10) + 3
ATTR_DEV_NAME, ATTR_NDEV_NAME, ATTR_LINK_TYPE = 2, 51, 65
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2


class FailNth:
    """/proc/thread-self/fail-nth, kept open: arming it is one write."""

    def __init__(self):
        self.fd = os.open("/proc/thread-self/fail-nth", os.O_RDWR)

    def arm(self, n):
        os.pwrite(self.fd, str(n).encode(), 0)

    def disarm(self):
        """True if the armed fault was injected; leaves nothing armed."""
        left = int(os.pread(self.fd, 32, 0).decode().strip() or "0")
        os.pwrite(self.fd, b"0", 0)
        return left == 0


def attr(kind, value):
    data = value.encode() + b"\0"
    return struct.pack("=HH", 4 + len(data), kind) + data + bytes(-len(data) % 4)


def newlink_msg(dev, ndev, seq):
    body = attr(ATTR_DEV_NAME, dev) + attr(ATTR_LINK_TYPE, "rxecc") + attr(ATTR_NDEV_NAME, ndev)
    return struct.pack("=IHHII", 16 + len(body), NLDEV_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, seq, 0) + body


def netlink_ack(sock):
    """The errno of the kernel's answer (0: success)."""
    data = sock.recv(65536)
    _, kind = struct.unpack("=IH", data[:6])
    if kind != NLMSG_ERROR:
        raise RuntimeError(f"netlink: unexpected answer type {kind}")
    return -struct.unpack("=i", data[16:20])[0]


def run_systematic(name, setup, op, teardown, maxn, fail):
    """Fail the 1st, 2nd, ... injection point of op(); returns the summary."""
    errors = absorbed = 0
    for n in range(1, maxn + 1):
        state = setup()
        fail.arm(n)
        err = None
        try:
            op(state)
        except TimeoutError:
            raise   # a hang, not an error report
        except (PyverbsError, OSError, RuntimeError, MemoryError) as ex:
            err = ex
        finally:
            hit = fail.disarm()
        teardown(state)
        if not hit:
            if err is not None:
                raise RuntimeError(f"{name}: failed without an injected fault: {err}")
            return {"op": name, "points": n - 1, "errors": errors, "absorbed": absorbed}
        if err is not None:
            errors += 1
        else:
            absorbed += 1
    raise RuntimeError(f"{name}: still reaching injection points after {maxn}")


def link_main(a, fail):
    dev = "fi0"

    def setup():
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_RDMA)
        s.bind((0, 0))
        return {"sock": s, "msg": newlink_msg(dev, a.ndev, 1)}

    def op(st):
        st["sock"].send(st["msg"])
        try:
            err = netlink_ack(st["sock"])
        except OSError:
            # The request was taken; its answer could not be allocated
            # (ENOBUFS on the socket): the outcome is the device's presence.
            st["unanswered"] = True
            raise
        if err:
            raise OSError(err, os.strerror(err))
        st["added"] = True

    def teardown(st):
        st["sock"].close()
        if os.path.exists(f"/sys/class/infiniband/{dev}"):
            if not st.get("added") and not st.get("unanswered"):
                raise RuntimeError(f"{dev} exists although rdma link add failed")
            subprocess.run(["rdma", "link", "delete", dev], check=True)
            for _ in range(100):
                if not os.path.exists(f"/sys/class/infiniband/{dev}"):
                    break
                time.sleep(0.1)

    return [run_systematic("rdma link add", setup, op, teardown, a.max, fail)]


def verbs_main(a, fail):
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ

    def build(upto):
        """The objects an operation needs, made without faults."""
        st = {}
        if upto == "open":
            return st
        st["ctx"] = Context(name=a.dev)
        st["gid"] = st["ctx"].query_gid(port_num=1, index=a.gid_index)
        if upto == "pd":
            return st
        st["pd"] = PD(st["ctx"])
        if upto == "cq":
            return st
        st["cq"] = CQ(st["ctx"], 16)
        if upto in ("mr",):
            return st
        st["mr"] = MR(st["pd"], 4096, access)
        st["init"] = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=st["cq"], rcq=st["cq"], cap=cap,
                                sq_sig_all=1)
        if upto == "qp":
            return st
        st["x"], st["y"] = QP(st["pd"], st["init"]), QP(st["pd"], st["init"])
        if upto == "connect":
            return st
        connect(st["x"], st["y"].qp_num, st["gid"], a.gid_index)
        connect(st["y"], st["x"].qp_num, st["gid"], a.gid_index)
        return st

    def close(st):
        for k in ("x", "y", "qp", "mr", "mr2", "cq", "cq2", "pd", "pd2", "ctx2", "ctx"):
            if k in st:
                st[k].close()

    def send(st):
        mr = st["mr"]
        mr.write(bytes(range(64)), 64, 2048)
        st["y"].post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)]))
        st["x"].post_send(SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1,
                                 sg=[SGE(mr.buf + 2048, 64, mr.lkey)]))
        # The send's completion, and the receive's unless the send failed
        # (a QP that failed to send moves to the error state; nothing arrives).
        got, deadline = {}, time.monotonic() + 30
        while 2 not in got or (got[2] == e.IBV_WC_SUCCESS and 1 not in got):
            if time.monotonic() > deadline:
                raise TimeoutError(f"completions after 30 s: {got}")
            n, wcs = st["cq"].poll(2)
            for wc in wcs[:max(n, 0)]:
                got[wc.wr_id] = wc.status
        if any(v != e.IBV_WC_SUCCESS for v in got.values()):
            raise RuntimeError(f"completion status {got}")
        if mr.read(64, 0) != bytes(range(64)):
            raise RuntimeError("the SEND arrived but its data differs")

    ops = [
        ("open", "open", lambda st: st.__setitem__("ctx2", Context(name=a.dev))),
        ("PD", "pd", lambda st: st.__setitem__("pd2", PD(st["ctx"]))),
        ("CQ", "cq", lambda st: st.__setitem__("cq2", CQ(st["ctx"], 16))),
        ("MR", "mr", lambda st: st.__setitem__("mr2", MR(st["pd"], 65536, access))),
        ("QP", "qp", lambda st: st.__setitem__("qp", QP(st["pd"], st["init"]))),
        ("connect", "connect", lambda st: (connect(st["x"], st["y"].qp_num, st["gid"], a.gid_index),
                                           connect(st["y"], st["x"].qp_num, st["gid"], a.gid_index))),
        ("SEND", "send", send),
    ]
    out = []
    for name, upto, op in ops:
        out.append(run_systematic(name, lambda u=upto: build(u), op, close, a.max, fail))
    return out


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("link")
    p.add_argument("ndev")
    p.add_argument("--max", type=int, default=400)
    p = sub.add_parser("verbs")
    p.add_argument("dev")
    p.add_argument("gid_index", type=int)
    p.add_argument("--max", type=int, default=400)
    a = ap.parse_args()
    fail = FailNth()
    res = link_main(a, fail) if a.cmd == "link" else verbs_main(a, fail)
    for r in res:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
