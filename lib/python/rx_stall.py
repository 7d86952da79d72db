#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A host whose receive path has all but stopped: the consumer of a
netfilter queue (NFQUEUE) that lets one packet through every --release
milliseconds, oldest first, and holds the rest (up to --maxlen; the kernel
drops what does not fit, as a NIC drops when its buffer is full). Run it in
the host's network namespace, then divert the packets to it, for instance
the RoCEv2 ones:

  nft add table inet stall
  nft add chain inet stall in '{ type filter hook input priority 0; }'
  nft add rule inet stall in udp dport 4791 queue num 0

A packet keeps the receive timestamp it got from its netdev while it waits
here, so rxecc's PFC (pfc_rx_xoff) sees every released packet as one that
waited in the receive backlog, and pauses its link partner as a stalled
RNIC would.

  rx_stall.py [--queue N] [--release MS] [--maxlen N]

Prints "bound" once it holds the queue (divert packets only after that:
a queue nobody holds drops them). On SIGTERM or SIGINT it lets every held
packet through and exits, printing one JSON line: packets held, released
while stalled, released at the end, the longest any waited (ms)."""
import argparse
import collections
import json
import select
import signal
import socket
import struct
import sys
import time

from pfc_sampler import attrs, messages

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG, NFQNL_MSG_VERDICT_BATCH = 0, 1, 2, 3
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN = 1, 2, 3
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLMSG_ERROR = 2
NF_ACCEPT = 1
SOL_NETLINK, NETLINK_NO_ENOBUFS = 270, 5


def attr(typ, payload):
    return struct.pack("=HH", 4 + len(payload), typ) + payload + b"\0" * ((-len(payload)) % 4)


class Queue:
    def __init__(self, num, maxlen):
        self.num = num
        self.seq = 0
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.setsockopt(SOL_NETLINK, NETLINK_NO_ENOBUFS, 1)
        self.sock.bind((0, 0))
        self.config(attr(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, 0)))
        self.config(attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META))
                    + attr(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", maxlen)))

    def send(self, msg, body, flags=NLM_F_REQUEST):
        self.seq += 1
        nfgen = struct.pack("!BBH", socket.AF_UNSPEC, 0, self.num)
        payload = nfgen + body
        self.sock.send(struct.pack("=IHHII", 16 + len(payload), (NFNL_SUBSYS_QUEUE << 8) | msg,
                                   flags, self.seq, 0) + payload)

    def config(self, body):
        """A configuration request, and its acknowledgement."""
        self.send(NFQNL_MSG_CONFIG, body, NLM_F_REQUEST | NLM_F_ACK)
        while True:
            for mtype, seq, payload in messages(self.sock.recv(1 << 16)):
                if mtype == NLMSG_ERROR and seq == self.seq:
                    err = struct.unpack_from("=i", payload)[0]
                    if err:
                        raise OSError(-err, f"nfqueue {self.num} configuration")
                    return

    def packets(self):
        """The ids of the queued packets the socket holds now (no wait)."""
        ids = []
        while True:
            try:
                data = self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return ids
            try:
                for mtype, _, payload in messages(data):
                    if mtype == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
                        hdr = attrs(payload[4:]).get(NFQA_PACKET_HDR)
                        if hdr:
                            ids.append(struct.unpack_from("!I", hdr)[0])
            except OSError:
                pass    # the rest of a malformed datagram: keep releasing the others

    def verdict(self, pid, batch=False):
        self.send(NFQNL_MSG_VERDICT_BATCH if batch else NFQNL_MSG_VERDICT,
                  attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, pid)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--queue", type=int, default=0, help="NFQUEUE number (default 0)")
    ap.add_argument("--release", type=float, default=10.0,
                    help="ms between two packets let through (default 10)")
    ap.add_argument("--maxlen", type=int, default=4096, help="packets held at most (default 4096)")
    a = ap.parse_args(argv)
    if not 0 <= a.queue <= 65535 or a.release <= 0 or a.maxlen < 1:
        ap.error("--queue 0-65535, --release above 0, --maxlen 1 or more")
    try:
        q = Queue(a.queue, a.maxlen)
    except OSError as e:
        print(f"rx_stall: {e}", file=sys.stderr)
        return 1
    stop = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.append(1))
    print("bound", flush=True)
    held = collections.deque()
    stats = {"held": 0, "released": 0, "released_at_end": 0, "longest_wait_ms": 0.0}
    step = a.release / 1000
    nxt = time.monotonic() + step
    while not stop:
        now = time.monotonic()
        for pid in q.packets():
            held.append((pid, now))
            stats["held"] += 1
        if now >= nxt:
            if held:
                pid, since = held.popleft()
                q.verdict(pid)
                stats["released"] += 1
                stats["longest_wait_ms"] = max(stats["longest_wait_ms"], (now - since) * 1000)
            nxt += step
            if nxt < now:
                nxt = now + step	# a late wake-up lets no burst through
        try:
            select.select([q.sock], [], [], max(0.0, nxt - time.monotonic()))
        except InterruptedError:
            pass
    for pid in q.packets():
        held.append((pid, time.monotonic()))
        stats["held"] += 1
    if held:
        q.verdict(max(pid for pid, _ in held), batch=True)
        stats["released_at_end"] = len(held)
    stats["longest_wait_ms"] = round(stats["longest_wait_ms"], 1)
    print(json.dumps(stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
