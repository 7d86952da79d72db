#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Thousands of QPs against rxecc's per-device work: the end of a PFC pause
and the QP dump.

usage: qp_many.py DEV GID_INDEX PEER --qps N   (as root, DEV's namespace)

DEV must have PFC on priority 3 and every RoCE packet on priority 3
(roce_prio 3) and a link speed at which 65535 quanta last long (1 Mbit/s:
33.5 s). PEER is the far end of DEV's link (a veth peer).
  1. N UD QPs on DEV, in RTS (pyverbs), each with a SEND to itself ready.
  2. An XOFF for priority 3 from PEER; every QP posts its SEND: each must
     stop at the PFC gate and wait (tx_pfc_deferred grows by N, nothing
     completes).
  3. An XON from PEER: every QP is scheduled again and every SEND
     completes. rxecc_pfc_resume() once scheduled them all with the pause
     lock held and interrupts off; now one per hold of the lock. Where the
     kernel has the irqsoff tracer (the debug kernel), the longest time
     with interrupts off from the XON to the last completion is measured
     and, with --max-irqsoff-us, bounded.
  4. A QP dump of the rxecc family (root: every QP) while the QPs exist:
     each of the N exactly once. The dump lets its locks go every 64 QPs
     and finds its place again by the device's index and the QP number.
  5. An unprivileged user dumps the QPs --dumps times (it sees none of the
     N: each dump walks them all before it has a message to send); kprobes
     on mutex_lock and mutex_unlock time how long its thread holds
     rxecc_cc_mutex, which configuration and device teardown take too: it
     must have taken it once per 64 QPs walked at least, and its median hold
     is bounded by --max-hold-ms. Before the dump let its locks go every 64
     QPs, it took it once per dump, for a whole walk.
Prints JSON and one line per check; exits 1 if a check failed."""
import argparse
import collections
import json
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

from genl_fuzz import CMD_QP_GET, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, Genl
from genl_deputy import qpns

QKEY = 0x11111111
PFC_DA = bytes.fromhex("0180c2000001")
TRACING = "/sys/kernel/tracing"


def pfc(peer: str, quanta: int) -> None:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((peer, 0))
    times = [0] * 8
    times[3] = quanta
    s.send((PFC_DA + s.getsockname()[4][:6] +
            struct.pack("!HHH8H", 0x8808, 0x0101, 1 << 3, *times)).ljust(60, b"\0"))
    s.close()


def counter(dev: str, name: str) -> int:
    with open(f"/sys/class/infiniband/{dev}/ports/1/hw_counters/{name}") as f:
        return int(f.read())


def tracer(on: bool) -> bool:
    """The irqsoff tracer started (max latency reset) or stopped; False if
    the kernel has none."""
    try:
        with open(f"{TRACING}/available_tracers") as f:
            if "irqsoff" not in f.read().split():
                return False
        with open(f"{TRACING}/current_tracer", "w") as f:
            f.write("irqsoff" if on else "nop")
        if on:
            with open(f"{TRACING}/tracing_max_latency", "w") as f:
                f.write("0")
        return True
    except OSError:
        return False


def max_irqsoff() -> tuple:
    with open(f"{TRACING}/tracing_max_latency") as f:
        us = int(f.read())
    where = ""
    with open(f"{TRACING}/trace") as f:
        for line in f:
            if "=> started at:" in line or "=> ended at:" in line:
                where += line.strip().replace("=> ", "") + " "
    return us, where.strip()


def dump_qps(g: Genl, fam: int) -> tuple:
    """(error, QP numbers) of one QP dump of the rxecc family."""
    g.send(g.message(fam, CMD_QP_GET, b"", NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP))
    return qpns(g, g.seq)


def dumper(count: int) -> None:
    """Step 5's unprivileged user: @count QP dumps; prints how many QPs the
    last one had."""
    g = Genl()
    fam = g.family("rxecc")
    seen: list = []
    for _ in range(count):
        err, seen = dump_qps(g, fam)
        if err:
            sys.exit(f"qp_many: the unprivileged dump failed: error {err}")
    print(json.dumps({"seen": len(seen)}), flush=True)


def kallsym(name: str) -> str:
    """The address of kernel or module symbol @name ("" if none)."""
    with open("/proc/kallsyms") as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[2] == name:
                return w[0]
    return ""


def tw(path: str, text: str, append: bool = False) -> None:
    """Writes @text to a tracefs file (os.open: Python's append mode seeks,
    which tracefs refuses)."""
    fd = os.open(f"{TRACING}/{path}", os.O_WRONLY | (os.O_APPEND if append else os.O_TRUNC))
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


PROBES = ("qpmany_lock", "qpmany_unlock")


def hold_times(trace: str, pid: int) -> list:
    """The holds (s) in a trace of PROBES by thread @pid: lock to unlock."""
    taken = None
    held = []
    with open(trace) as f:
        for line in f:
            # "comm-PID [CPU]" or, with record-tgid, "comm-PID (TGID) [CPU]"
            m = re.search(r"-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[\d+\].*?\s(\d+\.\d+): "
                          r"qpmany_(lock|unlock):", line)
            if not m or int(m.group(1)) != pid:
                continue
            ts = float(m.group(2))
            if m.group(3) == "lock":
                taken = ts
            elif taken is not None:
                held.append(ts - taken)
                taken = None
    return sorted(held)


def trace_lost() -> int:
    """Events the trace buffer overran or dropped, all CPUs."""
    lost = 0
    for cpu in os.listdir(f"{TRACING}/per_cpu"):
        with open(f"{TRACING}/per_cpu/{cpu}/stats") as f:
            text = f.read()
        lost += sum(int(n) for n in re.findall(r"^(?:overrun|dropped events): (\d+)$", text, re.M))
    return lost


def holds(dumps: int) -> dict:
    """Step 5: how long an unprivileged user's QP dumps hold rxecc's
    configuration mutex, from kprobes on the mutex's lock and unlock (the
    dumper's entry to lock to its unlock: it takes it uncontended)."""
    addr = kallsym("rxecc_cc_mutex")
    lock = "mutex_lock_nested" if kallsym("mutex_lock_nested") else "mutex_lock"
    if not os.path.exists(f"{TRACING}/kprobe_events"):
        return {"error": "no kprobe events in this kernel"}
    if not addr or not int(addr, 16):
        return {"error": "no address of rxecc_cc_mutex in /proc/kallsyms"}
    out: dict = {}
    with open(f"{TRACING}/buffer_size_kb") as f:
        size = f.read().split()[0]
    try:
        for ev in PROBES:  # left by a run that was killed
            try:
                tw("kprobe_events", f"-:{ev}", True)
            except OSError:
                pass
        tw("kprobe_events", f"p:{PROBES[0]} {lock} lock=%di:u64", True)
        tw("kprobe_events", f"p:{PROBES[1]} mutex_unlock lock=%di:u64", True)
        for ev in PROBES:
            tw(f"events/kprobes/{ev}/filter", f"lock == 0x{addr}")
        tw("buffer_size_kb", "8192")
        tw("trace", "")
        for ev in PROBES:
            tw(f"events/kprobes/{ev}/enable", "1")
        child = subprocess.Popen([sys.executable, __file__, "--dumper", str(dumps)], user=65534,
                                 group=65534, extra_groups=[], stdout=subprocess.PIPE)
        got, _ = child.communicate(timeout=600)
        for ev in PROBES:
            tw(f"events/kprobes/{ev}/enable", "0")
        if child.returncode:
            return {"error": f"the unprivileged dumper exited {child.returncode}"}
        out.update(json.loads(got))
        held = hold_times(f"{TRACING}/trace", child.pid)
        out["lost"] = trace_lost()
    finally:
        for ev in PROBES:
            try:
                tw(f"events/kprobes/{ev}/enable", "0")
            except OSError:
                pass
        for ev in PROBES:
            try:
                tw("kprobe_events", f"-:{ev}", True)
            except OSError:
                pass
        tw("buffer_size_kb", size)
    out["holds"] = len(held)
    if held:
        out["median_hold_ms"] = round(statistics.median(held) * 1000, 3)
        out["p90_hold_ms"] = round(held[len(held) * 9 // 10] * 1000, 3)
        out["max_hold_ms"] = round(held[-1] * 1000, 3)
    return out


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--dumper":
        dumper(int(sys.argv[2]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("dev")
    ap.add_argument("gid_index", type=int)
    ap.add_argument("peer")
    ap.add_argument("--qps", type=int, default=2000)
    ap.add_argument("--max-irqsoff-us", type=int, help="bound on the irqsoff tracer's maximum")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--dumps", type=int, default=10,
                    help="step 5: the unprivileged user's dumps (0: no step 5)")
    ap.add_argument("--max-hold-ms", type=float,
                    help="step 5: bound on the median hold of the mutex")
    a = ap.parse_args()
    out: dict = {"qps": a.qps}
    t = time.monotonic()
    ctx = Context(name=a.dev)
    pd = PD(ctx)
    cq = CQ(ctx, a.qps + 8)
    mr = MR(pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    gid = ctx.query_gid(1, a.gid_index)
    ah = AH(pd, attr=AHAttr(gr=GlobalRoute(dgid=gid, sgid_index=a.gid_index), is_global=1,
                            port_num=1))
    cap = QPCap(max_send_wr=1, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
    qps = []
    for _ in range(a.qps):
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap))
        at = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
        at.qkey = QKEY
        at.pkey_index = 0
        qp.to_init(at)
        qp.to_rtr(QPAttr(qp_state=e.IBV_QPS_RTR))
        at = QPAttr(qp_state=e.IBV_QPS_RTS)
        at.sq_psn = 0
        qp.to_rts(at)
        qps.append(qp)
    out["create_s"] = round(time.monotonic() - t, 1)
    ok = True

    # 2. paused: every SEND waits at the gate
    pfc(a.peer, 0xFFFF)
    time.sleep(0.2)
    d0 = counter(a.dev, "tx_pfc_deferred")
    for i, qp in enumerate(qps):
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)])
        wr.set_wr_ud(ah, qp.qp_num, QKEY)
        qp.post_send(wr)
    deadline = time.monotonic() + a.timeout
    while counter(a.dev, "tx_pfc_deferred") - d0 < a.qps and time.monotonic() < deadline:
        time.sleep(0.2)
    out["deferred"] = counter(a.dev, "tx_pfc_deferred") - d0
    k, _ = cq.poll(1)
    out["completed_paused"] = max(k, 0)
    good = out["deferred"] >= a.qps and out["completed_paused"] == 0
    print(f"{'ok' if good else 'FAIL'}: paused: {out['deferred']} SENDs held at the PFC gate "
          f"(want {a.qps}), {out['completed_paused']} completed", flush=True)
    ok &= good

    # 3. XON: every QP runs again, every SEND completes
    traced = tracer(True)
    t = time.monotonic()
    pfc(a.peer, 0)
    got = collections.Counter()
    deadline = time.monotonic() + a.timeout
    while sum(got.values()) < a.qps and time.monotonic() < deadline:
        k, wcs = cq.poll(min(a.qps, 256))
        for wc in wcs[:max(k, 0)]:
            got[wc.status] += 1
    out["resume_s"] = round(time.monotonic() - t, 2)
    out["completed"] = got[e.IBV_WC_SUCCESS]
    out["failed"] = sum(got.values()) - got[e.IBV_WC_SUCCESS]
    if traced:
        out["max_irqsoff_us"], out["max_irqsoff_at"] = max_irqsoff()
        tracer(False)
    good = out["completed"] == a.qps and out["failed"] == 0
    print(f"{'ok' if good else 'FAIL'}: XON: {out['completed']} of {a.qps} SENDs completed in "
          f"{out['resume_s']} s, {out['failed']} failed", flush=True)
    ok &= good
    if not traced:
        print("# interrupts-off time not measured: this kernel has no irqsoff tracer")
    elif a.max_irqsoff_us is not None:
        good = out["max_irqsoff_us"] <= a.max_irqsoff_us
        print(f"{'ok' if good else 'FAIL'}: longest stretch with interrupts off from the XON "
              f"to the last completion: {out['max_irqsoff_us']} us (at most "
              f"{a.max_irqsoff_us}; {out['max_irqsoff_at']})", flush=True)
        ok &= good

    # 4. the dump: every QP once
    g = Genl()
    err, seen = dump_qps(g, g.family("rxecc"))
    mine = {qp.qp_num for qp in qps}
    counts = collections.Counter(q for q in seen if q in mine)
    out["dump_err"], out["dumped"] = err, len(counts)
    out["dumped_twice"] = sum(1 for c in counts.values() if c > 1)
    good = err == 0 and len(counts) == a.qps and out["dumped_twice"] == 0
    print(f"{'ok' if good else 'FAIL'}: QP dump: {len(counts)} of the {a.qps} QPs, "
          f"{out['dumped_twice']} more than once", flush=True)
    ok &= good

    # 5. an unprivileged user's dumps hold the configuration mutex briefly
    if a.dumps > 0:
        h = holds(a.dumps)
        out["hold"] = h
        # chunks: the walk lets the mutex go every 64 QPs, so a dump of the
        # N takes it N/64 times at least (once per dump before)
        chunks = a.dumps * (a.qps // 64)
        good = ("error" not in h and not h["lost"] and h["seen"] == 0 and
                h["holds"] >= max(chunks, 1) and
                (a.max_hold_ms is None or h["median_hold_ms"] <= a.max_hold_ms))
        if "error" in h:
            print(f"FAIL: the mutex's holds could not be measured: {h['error']}", flush=True)
        else:
            print(f"{'ok' if good else 'FAIL'}: {a.dumps} unprivileged dumps ({h['seen']} of the "
                  f"{a.qps} QPs visible) held rxecc_cc_mutex {h['holds']} times (at least "
                  f"{chunks}): median "
                  f"{h.get('median_hold_ms')} ms (at most {a.max_hold_ms}), p90 "
                  f"{h.get('p90_hold_ms')} ms, longest {h.get('max_hold_ms')} ms"
                  f"{'; the trace lost %d events' % h['lost'] if h['lost'] else ''}", flush=True)
        ok &= good
    print(json.dumps(out), flush=True)
    sys.stdout.flush()
    # (thousands of QPs: let the process exit tear them down)
    os._exit(0 if ok else 1)


if __name__ == "__main__":
    main()
