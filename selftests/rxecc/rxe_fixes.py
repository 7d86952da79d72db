#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of the upstream rxe fixes rxecc carries (docs/rxe-fixes.md), with
pyverbs, on two devices of a fabric (integrity.sh).

  rxe_fixes.py CASE --resp DEV --resp-gid N --req DEV --req-gid N
               --port SWITCH_PORT --port-netns NETNS [--req-port PORT]
               [--prio P --tclass T] [--may-skip]

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
  retry-acked REQ writes 32 KiB (32 packets) then SENDs 64 B, through its
              own egress qdisc of 1 Mbit/s (set up by the caller, with
              tx_qlimit, so that each packet waits for the wire). The
              switch port to REQ, REQ_PORT, delays everything 450 ms: REQ's
              timer (268 ms; from the last packet sent on 6.12, whose send
              task pushes it on each pass, from the first on 6.1) sends
              both again, and the ACK of the write's last packet arrives
              while the write is being sent again. REQ_PORT then drops
              everything (REQ's link_speed of 2 Mbit/s paces its checks of
              the egress queue) until REQ's timer fires again.
              That retry must send the SEND alone and RESP receive it once:
              a retry that sent the acknowledged write again sent one empty
              packet more, the SEND one PSN later, and RESP took it for a
              new message or NAKed it (0010).
  srq-size    an SRQ of 100 WRs: creation reports the rounded-up size that
              ibv_query_srq() reports (0016).
  qp-state    a QP in RTS: ibv_query_qp() reports cur_qp_state RTS (0017).

Prints one JSON line; exits 1 when the check fails."""
import argparse
import ctypes
import json
import os
import socket
import subprocess
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


class NotBuilt(RuntimeError):
    """retry-acked could not build its sequence (a slow kernel's timer)."""


def retry_acked(a) -> dict:
    resp, req = connected(a, 16)	# 268 ms
    size = 32768
    src = MR(req.pd, size + 64, ACCESS)
    src.write(bytes(i % 251 for i in range(size + 64)), size + 64)
    dst = MR(resp.pd, size, ACCESS)
    rbuf = MR(resp.pd, 128, ACCESS)
    for i in range(2):	# room for the SEND and for one more
        resp.qp.post_recv(RecvWR(wr_id=10 + i, num_sge=1, sg=[SGE(rbuf.buf + 64 * i, 64, rbuf.lkey)]))
    port = ReqPort(a.req_port, a.port_netns)
    try:
        return retry_acked_run((resp, req, port), src, dst, rbuf)
    finally:
        port.restore()


class ReqPort:
    """netem on the switch port towards REQ, through one `tc -batch` of the
    switch's namespace (a command takes effect in milliseconds, where
    starting tc takes a tenth of a second in a TCG guest)."""

    def __init__(self, port: str, netns: str):
        self.port = port
        self.ns = os.path.basename(netns)
        self.set = False
        self.tc = subprocess.Popen(["ip", "netns", "exec", self.ns, "tc", "-force", "-batch", "-"],
                                   stdin=subprocess.PIPE, text=True)

    def netem(self, handle: int, *args: str) -> None:
        """A new netem: its own handle, so that the one it replaces goes, with
        what it still holds."""
        self.tc.stdin.write(f"qdisc replace dev {self.port} root handle {handle}: netem "
                            f"{' '.join(args)}\n")
        self.tc.stdin.flush()
        self.set = True

    def restore(self) -> None:
        """Back to the port's default qdisc; tc ends. Safe to call again."""
        deleted = False
        if self.tc.poll() is None:
            try:
                if self.set:
                    self.tc.stdin.write(f"qdisc del dev {self.port} root\n")
                self.tc.stdin.close()
                deleted = self.tc.wait(timeout=10) == 0
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.tc.kill()
                self.tc.wait()
        if self.set and not deleted:
            subprocess.run(["ip", "netns", "exec", self.ns, "tc", "qdisc", "del", "dev", self.port,
                            "root"], check=False, stderr=subprocess.DEVNULL)
        self.set = False


def retry_acked_run(sides, src: MR, dst: MR, rbuf: MR) -> dict:
    resp, req, port = sides
    # The ACK of the write's last packet must arrive while a retry sends the
    # write again: on 6.12 from about 0.27 s to 0.55 s after the first
    # transmission (the timer runs from its last packet), on 6.1 from about
    # 0.29 s to 0.56 s (its second retry: the timer runs from the first).
    size, delay = 32768, 0.45
    port.netem(1, "delay", f"{delay * 1000:.0f}ms", "limit", "10000")
    time.sleep(0.5)
    retries = req.counter("completer_retry_err")
    sent = req.counter("sent_pkts")
    rcvd = req.counter("rcvd_pkts")
    wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(src.buf, size, src.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(dst.rkey, dst.buf)
    t0 = time.monotonic()
    req.post(wr)
    req.post(SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(src.buf + size, 64, src.lkey)], send_flags=e.IBV_SEND_SIGNALED))
    # 33 packets at 1 Mbit/s: about 0.29 s
    wait_for(lambda: req.counter("sent_pkts") >= sent + 33, 10, f"{req.dev} sent less than 33 packets")
    t_sent = time.monotonic() - t0
    try:
        wait_for(lambda: req.counter("completer_retry_err") > retries, 10,
                 f"{req.dev} sent nothing a second time")
    except RuntimeError as ex:
        n, _ = req.cq.poll()
        if n:	# acknowledged before REQ's timer fired: the sequence was not built
            raise NotBuilt(f"the write was acknowledged before {req.dev}'s timer fired "
                           f"(sent {t_sent:.3f} s)") from ex
        raise RuntimeError(f"{ex} (sent {t_sent:.3f} s)") from ex
    t_retry = time.monotonic() - t0
    # The ACKs of the first transmission (the write's last packet, the SEND)
    # come through the delay while REQ sends the write again; those of the
    # second transmission follow from t_retry + delay. Cut in between.
    wait_for(lambda: req.counter("rcvd_pkts") >= rcvd + 2, 10, f"no ACK reached {req.dev}")
    port.netem(2, "loss", "100%")
    t_cut = time.monotonic() - t0
    time.sleep(0.03)	# ib_core caches the counters for 10 ms: read them fresh
    acks = req.counter("rcvd_pkts") - rcvd
    cut_retries = req.counter("completer_retry_err")
    early, late = [], []
    before = [req.counter("sent_pkts")]

    # Until REQ's timer fires again nothing is acknowledged but what was
    # before the cut: a completion now would mean the scenario was missed.
    # What REQ has sent by then is counted, to count the retry's packets.
    def second_retry() -> bool:
        n, wcs = req.cq.poll()
        if n:
            time.sleep(0.03)
        now = req.counter("sent_pkts")
        fired = req.counter("completer_retry_err") > cut_retries
        if n:
            (late if fired else early).extend((wc.wr_id, status_name(wc.status)) for wc in wcs)
        if not fired:
            before[0] = now
        return fired
    try:
        wait_for(second_retry, 10, f"{req.dev}'s timer did not fire after the cut")
    except RuntimeError as ex:
        raise RuntimeError(f"{ex} (sent {t_sent:.3f} s, retry {t_retry:.3f} s, cut {t_cut:.3f} s, "
                           f"{acks} ACKs before the cut, completed before: {early})") from ex
    t_retry2 = time.monotonic() - t0
    time.sleep(0.05)	# the second retry sends (the next timeout is 268 ms away)
    resent = req.counter("sent_pkts") - before[0]
    port.restore()
    done = dict(early + late)
    while len(done) < 2:
        wc = req.wait("the write and the send")
        done[wc.wr_id] = status_name(wc.status)
    time.sleep(0.2)
    recvs = []
    while True:
        n, wcs = resp.cq.poll()
        if not n:
            break
        recvs.extend((wc.wr_id, status_name(wc.status), wc.byte_len) for wc in wcs)
    written = dst.read(size, 0) == src.read(size, 0)
    received = rbuf.read(64, 0) == src.read(64, size)
    times = {k: round(v, 3) for k, v in (("sent", t_sent), ("retry", t_retry), ("cut", t_cut),
                                          ("retry2", t_retry2))}
    return {"case": "retry-acked", "seconds": times, "acks_before_cut": acks,
            "sent_by_second_retry": resent,
            "requester_retries": req.counter("completer_retry_err") - retries,
            "completed_before_second_retry": early, "requester": done, "receives": recvs,
            "written_intact": written, "send_intact": received,
            "ok": not early and acks >= 2 and resent == 1 and
            list(done.values()) == ["IBV_WC_SUCCESS"] * 2 and len(recvs) == 1 and
            recvs[0][1] == "IBV_WC_SUCCESS" and written and received}


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
                                     "qp-state", "retry-acked"])
    ap.add_argument("--resp", required=True)
    ap.add_argument("--resp-gid", type=int, required=True)
    ap.add_argument("--req", required=True)
    ap.add_argument("--req-gid", type=int, required=True)
    ap.add_argument("--port", required=True)
    ap.add_argument("--port-netns", required=True)
    ap.add_argument("--req-port", default="swp2")
    ap.add_argument("--may-skip", action="store_true",
                    help="exit 4, not 1, when retry-acked cannot build its sequence")
    ap.add_argument("--prio", type=int, default=3)
    ap.add_argument("--tclass", type=int, default=104)
    a = ap.parse_args()
    run = {"mw-rebind": mw_rebind, "mw-unbind": mw_rebind, "zero-read": zero_read,
           "destroy-held": destroy_held, "srq-size": srq_size, "qp-state": qp_state,
           "retry-acked": retry_acked}[a.case]
    try:
        r = run(a)
    except NotBuilt as ex:
        r = {"case": a.case, "not_built": str(ex), "ok": False}
        print(json.dumps(r))
        sys.exit(4 if a.may_skip else 1)
    except Exception as ex:	# pylint: disable=broad-except
        r = {"case": a.case, "error": str(ex), "ok": False}
    print(json.dumps(r))
    sys.exit(0 if r["ok"] else 1)


if __name__ == "__main__":
    main()
