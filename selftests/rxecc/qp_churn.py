#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""QP create/destroy churn on one RDMA device with pyverbs (stress.sh).

  qp_churn.py DEV GID_INDEX --qps N [--batch B]

In batches of B, creates B RC QPs, connects them in pairs to each other
over the device's own GID (loopback: INIT, RTR, RTS), sends one 64-byte
SEND from each pair's first QP to its second and checks it arrived, leaves
every fourth pair in INIT (never connected), then destroys them all. Prints
JSON: QPs created, connected, messages checked, seconds. Any failure raises.
"""
import argparse
import json
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

MSG = 64


def connect(qp, dest, gid, gid_index):
    a = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
    a.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
    qp.to_init(a)
    if dest is None:
        return False
    a = QPAttr(qp_state=e.IBV_QPS_RTR, path_mtu=e.IBV_MTU_1024)
    a.dest_qp_num = dest
    a.rq_psn = 0
    a.max_dest_rd_atomic = 1
    a.min_rnr_timer = 12
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=gid_index), is_global=1, port_num=1)
    qp.to_rtr(a)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.timeout = 14
    a.retry_cnt = 7
    a.rnr_retry = 7
    a.sq_psn = 0
    a.max_rd_atomic = 1
    qp.to_rts(a)
    return True


def poll(cq, n, deadline):
    got = []
    while len(got) < n:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(got)} of {n} completions")
        k, wcs = cq.poll(n - len(got))
        got += wcs[:k] if k > 0 else []
    for wc in got:
        if wc.status != e.IBV_WC_SUCCESS:
            raise RuntimeError(f"completion status {wc.status} (wr_id {wc.wr_id})")
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dev")
    ap.add_argument("gid_index", type=int)
    ap.add_argument("--qps", type=int, default=1200)
    ap.add_argument("--batch", type=int, default=100)
    a = ap.parse_args()
    t0 = time.monotonic()
    created = connected = checked = 0
    with Context(name=a.dev) as ctx:
        gid = ctx.query_gid(port_num=1, index=a.gid_index)
        pd = PD(ctx)
        cq = CQ(ctx, 4 * a.batch)
        mr = MR(pd, 2 * MSG * a.batch, e.IBV_ACCESS_LOCAL_WRITE)   # receive, then send halves
        cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap, sq_sig_all=1)
        while created < a.qps:
            n = min(a.batch, a.qps - created) // 2 * 2
            qps = [QP(pd, init) for _ in range(n)]
            created += n
            pairs = []
            for i in range(0, n, 2):
                x, y = qps[i], qps[i + 1]
                live = (i // 2) % 4 != 3
                connect(x, y.qp_num if live else None, gid, a.gid_index)
                connect(y, x.qp_num if live else None, gid, a.gid_index)
                if live:
                    pairs.append((i // 2, x, y))
                    connected += 2
            pattern = {k: bytes((created + k + j) & 0xff for j in range(MSG)) for k, _, _ in pairs}
            for k, x, y in pairs:
                mr.write(bytes(MSG), MSG, k * MSG)
                mr.write(pattern[k], MSG, (a.batch + k) * MSG)
                y.post_recv(RecvWR(wr_id=2 * k, num_sge=1, sg=[SGE(mr.buf + k * MSG, MSG, mr.lkey)]))
            for k, x, y in pairs:
                x.post_send(SendWR(wr_id=2 * k + 1, opcode=e.IBV_WR_SEND, num_sge=1,
                                   sg=[SGE(mr.buf + (a.batch + k) * MSG, MSG, mr.lkey)]))
            wcs = poll(cq, 2 * len(pairs), time.monotonic() + 60)
            recvs = [w for w in wcs if w.wr_id % 2 == 0]
            if len(recvs) != len(pairs) or any(w.byte_len != MSG for w in recvs):
                raise RuntimeError("a SEND did not arrive whole")
            for k, _, _ in pairs:
                if mr.read(MSG, k * MSG) != pattern[k]:
                    raise RuntimeError(f"pair {k}: the received data differs")
            checked += len(recvs)
            for qp in qps:
                qp.close()
        mr.close()
        cq.close()
        pd.close()
    print(json.dumps({"created": created, "connected": connected, "messages_checked": checked,
                      "seconds": round(time.monotonic() - t0, 1)}))


if __name__ == "__main__":
    main()
