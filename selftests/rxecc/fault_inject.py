#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Systematic fault injection into rxecc's control path (fault.sh).

  fault_inject.py link NDEV [--budget N]     rdma link add (netlink NEWLINK)
  fault_inject.py verbs DEV GID_INDEX [--budget N]   open, PD, CQ, MR, QP,
                                             connect (INIT/RTR/RTS), SEND
  fault_inject.py config DEV QDISC_DEV [--budget N]  rxecc's netlink set
                                             (DEV's and the defaults'), the
                                             pfc qdisc's add and change on
                                             QDISC_DEV, each read back

/proc/thread-self/fail-nth makes the N-th fault-injection point (failslab,
fail_page_alloc) that this thread's system calls reach fail. For each
operation, a first run with an unreachable N counts the points it passes
when nothing fails; then, for N = 1 .. that count (or `budget` values of N
spread evenly over it when there are more), what the operation needs is set
up without faults, the N-th point is failed and the operation runs. Each
injected failure must come back as an error (an exception from pyverbs, a
netlink error, a completion with an error status; a MemoryError, when it hit
this process's own mmap or brk) or be absorbed (the operation succeeds
anyway); a crash, a hang or a leak fails fault.sh. What a try made is torn
down without faults. Prints JSON per operation: points (passed when nothing
fails), tried, errors, absorbed.
"""
import argparse
import errno
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

    def left(self):
        """How many injection points are still to pass before the armed one."""
        return int(os.pread(self.fd, 32, 0).decode().strip() or "0")

    def disarm(self):
        """True if the armed fault was injected; leaves nothing armed."""
        left = self.left()
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


def changed_iff_applied(name, st, now):
    """A set that was answered changed the configuration (read back: `now`,
    before: st["old"]) if and only if it reported success."""
    applied = bool(st.get("applied"))
    if not st.get("unanswered") and applied == (now == st["old"]):
        raise RuntimeError(f"{name}: {'applied' if applied else 'failed'}, "
                           f"but the configuration {'did not change' if now == st['old'] else 'changed'}")


def run_systematic(name, setup, op, teardown, budget, fail):
    """Fail the 1st, 2nd, ... injection point of op(); returns the summary.

    A first run with a count too high to be reached tells how many points
    op() passes when nothing fails. If there are more than `budget`, the
    tries are `budget` points spread evenly from the first to the last."""
    state = setup()
    fail.arm(1 << 30)
    try:
        op(state)
    finally:
        points = (1 << 30) - fail.left()
        fail.disarm()
    teardown(state)
    if points <= budget:
        ns = list(range(1, points + 1))
    else:
        ns = sorted({1 + round(i * (points - 1) / (budget - 1)) for i in range(budget)})
    errors = absorbed = 0
    for n in ns:
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
        if err is not None and not hit:
            raise RuntimeError(f"{name}: failed without an injected fault: {err}")
        if err is not None:
            errors += 1
        elif hit:
            absorbed += 1
    return {"op": name, "points": points, "tried": len(ns), "errors": errors, "absorbed": absorbed}


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

    return [run_systematic("rdma link add", setup, op, teardown, a.budget, fail)]


def verbs_main(a, fail):
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ
    # One context, PD, CQ and MR serve every try (an emulated debug kernel
    # takes seconds to open a device); each try makes what it changes anew.
    ctx = Context(name=a.dev)
    gid = ctx.query_gid(port_num=1, index=a.gid_index)
    pd = PD(ctx)
    cq = CQ(ctx, 64)
    mr = MR(pd, 4096, access)
    init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap, sq_sig_all=1)

    def pair(st, connected):
        st["x"], st["y"] = QP(pd, init), QP(pd, init)
        if connected:
            connect(st["x"], st["y"].qp_num, gid, a.gid_index)
            connect(st["y"], st["x"].qp_num, gid, a.gid_index)
        return st

    def close(st):
        for k in ("x", "y", "new"):
            if k in st:
                st[k].close()
        # Completions a failed try left behind.
        while cq.poll(16)[0] > 0:
            pass

    tries = iter(range(1, 1 << 30))

    def send(st):
        # Work request ids of this try only: a completion a closed QP of an
        # earlier try flushed late is not this try's.
        base = 4 * next(tries)
        rid, sid = base + 1, base + 2
        mr.write(bytes(64), 64, 0)
        mr.write(bytes(range(64)), 64, 2048)
        st["y"].post_recv(RecvWR(wr_id=rid, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)]))
        st["x"].post_send(SendWR(wr_id=sid, opcode=e.IBV_WR_SEND, num_sge=1,
                                 sg=[SGE(mr.buf + 2048, 64, mr.lkey)]))
        # The send's completion, and the receive's unless the send failed
        # (a QP that failed to send moves to the error state; nothing arrives).
        got, deadline = {}, time.monotonic() + 30
        while sid not in got or (got[sid] == e.IBV_WC_SUCCESS and rid not in got):
            if time.monotonic() > deadline:
                raise TimeoutError(f"completions after 30 s: {got}")
            n, wcs = cq.poll(2)
            for wc in wcs[:max(n, 0)]:
                if wc.wr_id in (rid, sid):
                    got[wc.wr_id] = wc.status
        if any(v != e.IBV_WC_SUCCESS for v in got.values()):
            raise RuntimeError(f"completion status {got}")
        if mr.read(64, 0) != bytes(range(64)):
            raise RuntimeError("the SEND arrived but its data differs")

    def make(key, fn):
        return lambda st: st.__setitem__(key, fn())

    ops = [
        ("open", dict, make("new", lambda: Context(name=a.dev))),
        ("PD", dict, make("new", lambda: PD(ctx))),
        ("CQ", dict, make("new", lambda: CQ(ctx, 16))),
        ("MR", dict, make("new", lambda: MR(pd, 65536, access))),
        ("QP", dict, make("new", lambda: QP(pd, init))),
        ("connect", lambda: pair({}, False),
         lambda st: (connect(st["x"], st["y"].qp_num, gid, a.gid_index),
                     connect(st["y"], st["x"].qp_num, gid, a.gid_index))),
        ("SEND", lambda: pair({}, True), send),
    ]
    out = [run_systematic(name, setup, op, close, a.budget, fail) for name, setup, op in ops]
    mr.close()
    cq.close()
    pd.close()
    ctx.close()
    return out


def config_main(a, fail):
    """rxecc's netlink set path and the pfc qdisc's add and change, each
    read back without faults after every try: a failed request changed
    nothing, one that succeeded applied its value."""
    # pylint: disable=import-outside-toplevel
    import genl_fuzz as gf
    import pfc_tc_fuzz as tf

    g = gf.Genl()
    fam = g.family("rxecc")
    dev = gf.attr(gf.A_DEV_NAME, gf.strz(a.dev))
    values = iter(range(1 << 30))	# a new pfc qdisc rate each try

    def answer(st, request):
        """(errno, None) of a request; an answer the kernel could not
        allocate (ENOBUFS on the socket, or none) leaves the outcome open."""
        try:
            return request(), None
        except OSError as ex:	# TimeoutError included
            st["unanswered"] = True
            raise OSError(errno.ENOBUFS, f"no answer: {ex}") from ex

    def genl(cmd, attrs):
        err, msgs = g.request(g.message(fam, cmd, attrs), g.seq)
        if err is None:
            raise TimeoutError(f"netlink command {cmd}: no answer")
        return err, msgs

    def conf(get, attrs):
        err, msgs = genl(get, attrs)
        if err or not msgs:
            raise RuntimeError(f"read back: errno {err}")
        return msgs[0][4:]

    def set_case(name, set_cmd, get_cmd, target):
        def gd(value):
            return gf.attr(gf.A_DCQCN | gf.NLA_F_NESTED, gf.attr(gf.RP_GD, gf.u32(value)))

        def setup():
            # rp_gd (0..15) set to 3 without faults, then the try sets 4
            err, _ = genl(set_cmd, target + gd(3))
            if err:
                raise RuntimeError(f"{name}: setting rp_gd 3 without faults: errno {err}")
            return {"old": conf(get_cmd, target), "msg": target + gd(4)}

        def op(st):
            err, _ = answer(st, lambda: genl(set_cmd, st["msg"])[0])
            if err:
                raise OSError(err, os.strerror(err))
            st["applied"] = True

        def teardown(st):
            changed_iff_applied(name, st, conf(get_cmd, target))

        return run_systematic(name, setup, op, teardown, a.budget, fail)

    out = [set_case("rxecc dcqcn set dev", gf.CMD_DEV_SET, gf.CMD_DEV_GET, dev),
           set_case("rxecc dcqcn set defaults", gf.CMD_DEFAULTS_SET, gf.CMD_DEFAULTS_GET, b"")]

    nl = tf.Rtnl()
    ifindex = socket.if_nametoindex(a.qdisc_dev)
    flags = tf.NLM_F_REQUEST | tf.NLM_F_ACK

    def qdisc(extra_flags, opts):
        err, _ = nl.request(tf.RTM_NEWQDISC, flags | extra_flags,
                            tf.tcmsg(ifindex) + tf.attr(tf.TCA_KIND, b"pfc\0") +
                            tf.attr(tf.TCA_OPTIONS | tf.NLA_F_NESTED, opts))
        return err

    def delete():
        subprocess.run(["tc", "qdisc", "del", "dev", a.qdisc_dev, "root"], capture_output=True,
                       check=False)

    def add_setup():
        delete()
        return {}

    def add_op(st):
        err, _ = answer(st, lambda: qdisc(tf.NLM_F_CREATE, tf.attr(tf.ENABLE, bytes([0x08]))))
        if err:
            raise OSError(err, os.strerror(err))
        st["applied"] = True

    def add_teardown(st):
        now = tf.read_back(nl, ifindex)
        added = bool(st.get("applied"))
        if not st.get("unanswered") and added != (now is not None):
            raise RuntimeError(f"pfc qdisc add: {'added' if added else 'failed'}, "
                               f"but the qdisc is {'there' if now else 'not there'}")
        delete()

    out.append(run_systematic("tc qdisc add pfc", add_setup, add_op, add_teardown, a.budget, fail))

    def change_setup():
        if tf.read_back(nl, ifindex) is None and qdisc(tf.NLM_F_CREATE, b""):
            raise RuntimeError("pfc qdisc add (no fault)")
        rate = 1000000 * (1 + next(values) % 1000)	# a new rate each try
        prio = tf.attr(tf.P_ID, bytes([3])) + tf.attr(tf.P_XOFF, struct.pack("=I", 40000 + rate % 9973))
        return {"old": tf.read_back(nl, ifindex),
                "opts": tf.attr(tf.RATE, struct.pack("=Q", rate)) + tf.attr(tf.PRIO | tf.NLA_F_NESTED, prio)}

    def change_op(st):
        err, _ = answer(st, lambda: qdisc(0, st["opts"]))
        if err:
            raise OSError(err, os.strerror(err))
        st["applied"] = True

    def change_teardown(st):
        changed_iff_applied("pfc qdisc change", st, tf.read_back(nl, ifindex))

    out.append(run_systematic("tc qdisc change pfc", change_setup, change_op, change_teardown,
                              a.budget, fail))
    delete()
    return out


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("link")
    p.add_argument("ndev")
    p.add_argument("--budget", type=int, default=40)
    p = sub.add_parser("verbs")
    p.add_argument("dev")
    p.add_argument("gid_index", type=int)
    p.add_argument("--budget", type=int, default=40)
    p = sub.add_parser("config")
    p.add_argument("dev")
    p.add_argument("qdisc_dev")
    p.add_argument("--budget", type=int, default=40)
    a = ap.parse_args()
    fail = FailNth()
    res = {"link": link_main, "verbs": verbs_main, "config": config_main}[a.cmd](a, fail)
    for r in res:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
