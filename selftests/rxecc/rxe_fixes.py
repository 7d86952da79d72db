#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the upstream rxe fixes rxecc carries (docs/rxe-fixes.md), with
pyverbs, on two devices of a fabric (integrity.sh).

  rxe_fixes.py CASE --resp DEV --resp-gid N --req DEV --req-gid N
               --port SWITCH_PORT --port-netns NETNS [--prio P --tclass T]

RESP is the responder (its switch port is PORT), REQ the requester; the
responder's traffic class T maps to priority P, which must be PFC-enabled on
RESP with a slow link_speed, so that one XOFF from PORT holds its responses
until this script sends the XON. The script runs in the initial namespace,
where the devices' counters are in sysfs (other namespaces see ib_core's
compatibility devices, without them), and sends the frames from a socket
opened in the switch's namespace NETNS (a path such as /run/netns/sw).
Cases:

  mw-rebind   REQ reads 8 KiB through RESP's type 1 memory window over MR A.
              While RESP is paused, it binds the window 256 times to a 4 KiB
              MR B elsewhere, until the 8-bit key comes round to the rkey
              the read carries. The read must end in a remote access error:
              the window no longer covers it (0014).
  mw-unbind   the same, but the window is bound again with length 0 (its
              rkey changes, it covers nothing): a remote access error too,
              whose NAK the requester takes in the middle of the read.
  zero-read   REQ reads 0 bytes with an arbitrary rkey; RESP is paused until
              REQ's retransmit timer has sent the request again, so RESP
              replays it. Both reads and a checked SEND after them must
              complete with success (0015).
  destroy-held  REQ reads 64 KiB from RESP while RESP is paused (its
              response held by rxecc's gate), then RESP destroys its QP:
              the destroy must return at once, not when the pause ends
              (patch 0004's rxecc_qp_destroy()).
  srq-size    an SRQ of 100 WRs: creation reports the rounded-up size that
              ibv_query_srq() reports (0016).
  qp-state    a QP in RTS: ibv_query_qp() reports cur_qp_state RTS (0017).

Prints one JSON line; exits 1 when the check fails."""
import argparse
import ctypes
import json
import os
import socket
import sys
import time
from pathlib import Path

import pyverbs.enums as e
from pyverbs.addr import GID, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

from pfc_inject import frame

ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ |
          e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_MW_BIND)


class Side:
    """One RC QP on a device, with its PD and CQ."""

    def __init__(self, dev: str, gid_index: int, timeout: int):
        self.dev = dev
        self.gid_index = gid_index
        self.timeout = timeout
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
        self.qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq,
                                         rcq=self.cq, cap=cap))
        gid = Path(f"/sys/class/infiniband/{dev}/ports/1/gids/{gid_index}").read_text()
        self.gid = gid.strip()

    def counter(self, name: str) -> int:
        return int(Path(f"/sys/class/infiniband/{self.dev}/ports/1/hw_counters/{name}").read_text())

    def connect(self, peer: "Side", tclass: int) -> None:
        a = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
        a.qp_access_flags = ACCESS
        self.qp.to_init(a)
        a = QPAttr(qp_state=e.IBV_QPS_RTR, path_mtu=e.IBV_MTU_1024)
        a.dest_qp_num = peer.qp.qp_num
        a.rq_psn = 0
        a.max_dest_rd_atomic = 4
        a.min_rnr_timer = 12
        gr = GlobalRoute(dgid=GID(peer.gid), sgid_index=self.gid_index, traffic_class=tclass)
        a.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
        self.qp.to_rtr(a)
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.timeout = self.timeout
        a.retry_cnt = 7
        a.rnr_retry = 7
        a.sq_psn = 0
        a.max_rd_atomic = 4
        self.qp.to_rts(a)

    def post(self, wr: SendWR) -> None:
        self.qp.post_send(wr)

    def wait(self, what: str, seconds: float = 30.0):
        """The next completion, or an error naming WHAT."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            n, wcs = self.cq.poll()
            if n:
                return wcs[0]
            time.sleep(0.001)
        raise RuntimeError(f"{self.dev}: no completion for {what} within {seconds:.0f} s")


CLONE_NEWNET = 0x40000000


def enter_netns(fd: int) -> None:
    if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


class Pauser:
    """XOFF and XON for one priority out of the switch port to RESP, from a
    socket of the switch's namespace."""

    def __init__(self, port: str, netns: str, prio: int):
        home = os.open("/proc/self/ns/net", os.O_RDONLY)
        there = os.open(netns, os.O_RDONLY)
        try:
            enter_netns(there)
            try:
                self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
                self.sock.bind((port, 0))
            finally:
                enter_netns(home)
        finally:
            os.close(there)
            os.close(home)
        src = self.sock.getsockname()[4][:6]
        self.xoff = frame(src, prio, 0xFFFF)
        self.xon = frame(src, prio, 0)

    def pause(self) -> None:
        self.sock.send(self.xoff)

    def resume(self) -> None:
        self.sock.send(self.xon)


def wait_for(cond, seconds: float, what: str) -> None:
    deadline = time.time() + seconds
    while not cond():
        if time.time() > deadline:
            raise RuntimeError(f"{what} within {seconds:.0f} s")
        time.sleep(0.002)


def paused(resp: Side, prio: int, pauser: Pauser) -> None:
    before = resp.counter(f"rx_prio{prio}_pause")
    pauser.pause()
    wait_for(lambda: resp.counter(f"rx_prio{prio}_pause") > before, 10, f"{resp.dev} took no XOFF")


def read_wr(mr: MR, length: int, rkey: int, addr: int, wr_id: int) -> SendWR:
    wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                sg=[SGE(mr.buf, length, mr.lkey)], send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(rkey, addr)
    return wr


def connected(a, req_timeout: int) -> tuple:
    """RESP's and REQ's QPs, each connected to the other; REQ's transport
    timeout REQ_TIMEOUT (4.096 us * 2^N)."""
    resp = Side(a.resp, a.resp_gid, 14)
    req = Side(a.req, a.req_gid, req_timeout)
    resp.connect(req, a.tclass)
    req.connect(resp, a.tclass)
    return resp, req


def mw_rebind(a) -> dict:
    resp, req = connected(a, 18)	# 1.07 s: no retry while RESP is held
    mr_a = MR(resp.pd, 8192, ACCESS)
    mr_a.write(bytes([0xA5]) * 8192, 8192)
    mr_b = MR(resp.pd, 4096, ACCESS)
    mr_b.write(bytes([0x5A]) * 4096, 4096)
    dst = MR(req.pd, 8192, ACCESS)
    dst.write(bytes([0xEE]) * 8192, 8192)
    mw = MW(resp.pd, e.IBV_MW_TYPE_1)
    pauser = Pauser(a.port, a.port_netns, a.prio)
    try:
        return mw_rebind_read(a, (resp, req, pauser), (mr_a, mr_b, dst), mw)
    finally:
        pauser.resume()
        mw.close()	# before the MRs it is bound to


def mw_rebind_read(a, sides, mrs, mw) -> dict:
    resp, req, pauser = sides
    mr_a, mr_b, dst = mrs

    def bind(mr: MR, length: int) -> int:
        resp.qp.bind_mw(mw, MWBind(MWBindInfo(mr, mr.buf, length, e.IBV_ACCESS_REMOTE_READ),
                                   e.IBV_SEND_SIGNALED))
        wc = resp.wait("bind")
        if wc.status != e.IBV_WC_SUCCESS:
            raise RuntimeError(f"bind: {status_name(wc.status)}")
        return mw.rkey

    rkey = bind(mr_a, 8192)
    paused(resp, a.prio, pauser)
    held = resp.counter("tx_pfc_deferred")
    req.post(read_wr(dst, 8192, rkey, mr_a.buf, 2))
    wait_for(lambda: resp.counter("tx_pfc_deferred") > held, 10,
             f"{resp.dev} held no read response")
    if a.case == "mw-unbind":
        bind(mr_a, 0)	# a zero-length bind: the window covers nothing
    else:
        # Each bind of a type 1 window takes the next 8-bit key: the 256th
        # bind after the one to A gives the window A's rkey again, now on B.
        for _ in range(256):
            rebound = bind(mr_b, 4096)
        if rebound != rkey:
            raise RuntimeError(f"256 binds later the rkey is {rebound:#x}, not {rkey:#x}")
    pauser.resume()
    wc = req.wait("the read")
    data = dst.read(8192, 0)
    foreign = sum(1 for i in range(8192) if data[i] not in (0xA5, 0xEE))
    return {"case": a.case, "rkey": f"{rkey:#x}", "status": status_name(wc.status),
            "bytes_not_from_the_window": foreign,
            "ok": wc.status == e.IBV_WC_REM_ACCESS_ERR}


def zero_read(a) -> dict:
    resp, req = connected(a, 14)	# 67 ms: a retry comes soon
    buf = MR(req.pd, 4096, ACCESS)
    rbuf = MR(resp.pd, 4096, ACCESS)
    pauser = Pauser(a.port, a.port_netns, a.prio)
    try:
        return zero_read_replay(a, (resp, req, pauser), buf, rbuf)
    finally:
        pauser.resume()


def zero_read_replay(a, sides, buf: MR, rbuf: MR) -> dict:
    resp, req, pauser = sides
    paused(resp, a.prio, pauser)
    retries = req.counter("completer_retry_err")
    dups = resp.counter("duplicate_request")
    req.post(read_wr(buf, 0, 0x5EED5EED, 0x1000, 1))
    wait_for(lambda: req.counter("completer_retry_err") > retries, 10,
             f"{req.dev} sent the read no second time")
    pauser.resume()
    wc1 = req.wait("the zero-length read")
    # A checked SEND: RESP's QP must still be alive after the replay.
    rbuf.write(bytes(64), 64)
    resp.qp.post_recv(RecvWR(wr_id=7, num_sge=1, sg=[SGE(rbuf.buf, 64, rbuf.lkey)]))
    msg = bytes(range(64))
    buf.write(msg, 64)
    req.post(SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(buf.buf, 64, buf.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED))
    wc2 = req.wait("the send")
    got = None
    if wc2.status == e.IBV_WC_SUCCESS:
        wc3 = resp.wait("the receive")
        got = wc3.status == e.IBV_WC_SUCCESS and rbuf.read(64, 0) == msg
    replays = resp.counter("duplicate_request") - dups
    return {"case": "zero-read", "read_status": status_name(wc1.status),
            "send_status": status_name(wc2.status), "send_received_intact": got,
            "requester_retries": req.counter("completer_retry_err") - retries,
            "responder_duplicates": replays,
            "ok": wc1.status == e.IBV_WC_SUCCESS and wc2.status == e.IBV_WC_SUCCESS and
            bool(got) and replays > 0}


def destroy_held(a) -> dict:
    resp, req = connected(a, 18)
    src = MR(resp.pd, 65536, ACCESS)
    dst = MR(req.pd, 65536, ACCESS)
    pauser = Pauser(a.port, a.port_netns, a.prio)
    try:
        paused(resp, a.prio, pauser)
        held = resp.counter("tx_pfc_deferred")
        req.post(read_wr(dst, 65536, src.rkey, src.buf, 1))
        wait_for(lambda: resp.counter("tx_pfc_deferred") > held, 10,
                 f"{resp.dev} held no read response")
        # the pause lasts 33 s at RESP's link_speed: a destroy that waits
        # for the held response returns only then
        t0 = time.monotonic()
        resp.qp.close()
        took = time.monotonic() - t0
    finally:
        pauser.resume()
    return {"case": "destroy-held", "destroy_seconds": round(took, 3), "ok": took < 5}


def srq_size(a) -> dict:
    ctx = Context(name=a.resp)
    pd = PD(ctx)
    init = SrqInitAttr(SrqAttr(max_wr=100, max_sge=1))
    srq = SRQ(pd, init)
    created, queried = init.max_wr, srq.query().max_wr
    return {"case": "srq-size", "requested": 100, "created": created, "queried": queried,
            "ok": created == queried and created >= 100}


def qp_state(a) -> dict:
    resp = Side(a.resp, a.resp_gid, 14)
    req = Side(a.req, a.req_gid, 14)
    resp.connect(req, a.tclass)
    attr, _ = resp.qp.query(e.IBV_QP_STATE | e.IBV_QP_CUR_STATE)
    return {"case": "qp-state", "qp_state": attr.qp_state, "cur_qp_state": attr.cur_qp_state,
            "ok": attr.qp_state == e.IBV_QPS_RTS and attr.cur_qp_state == e.IBV_QPS_RTS}


def status_name(status: int) -> str:
    names = {getattr(e, n): n for n in dir(e) if n.startswith("IBV_WC_") and n.endswith("_ERR")}
    names[e.IBV_WC_SUCCESS] = "IBV_WC_SUCCESS"
    return names.get(status, str(status))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["mw-rebind", "mw-unbind", "zero-read", "destroy-held", "srq-size",
                                     "qp-state"])
    ap.add_argument("--resp", required=True)
    ap.add_argument("--resp-gid", type=int, required=True)
    ap.add_argument("--req", required=True)
    ap.add_argument("--req-gid", type=int, required=True)
    ap.add_argument("--port", required=True)
    ap.add_argument("--port-netns", required=True)
    ap.add_argument("--prio", type=int, default=3)
    ap.add_argument("--tclass", type=int, default=104)
    a = ap.parse_args()
    run = {"mw-rebind": mw_rebind, "mw-unbind": mw_rebind, "zero-read": zero_read,
           "destroy-held": destroy_held, "srq-size": srq_size, "qp-state": qp_state}[a.case]
    try:
        r = run(a)
    except Exception as ex:	# pylint: disable=broad-except
        r = {"case": a.case, "error": str(ex), "ok": False}
    print(json.dumps(r))
    sys.exit(0 if r["ok"] else 1)


if __name__ == "__main__":
    main()
