#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of rxecc_show.py (ctest RxeccShow.Host): QP numbers, resource
counts and a qdisc's drops out of `rdma -j res show` and `rxecc -j qdisc
show` as iproute2 and rxecc print them."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rxecc_show as rs  # noqa: E402  pylint: disable=wrong-import-position

# `rdma -j res show qp link h1/1`: the GSI QP, a perftest's, rxecc-verbs' and a UD QP
QPS = [{"ifindex": 3, "ifname": "h1", "port": 1, "lqpn": 1, "type": "GSI", "state": "RTS", "sq-psn": 0,
        "comm": "[ib_core]"},
       {"ifindex": 3, "ifname": "h1", "port": 1, "lqpn": 17, "rqpn": 18, "type": "RC", "state": "RTS",
        "comm": "ib_write_bw", "pid": 100},
       {"ifindex": 3, "ifname": "h1", "port": 1, "lqpn": 19, "rqpn": 20, "type": "RC", "state": "RTS",
        "comm": "rxecc-verbs", "pid": 101},
       {"ifindex": 3, "ifname": "h1", "port": 1, "lqpn": 21, "type": "UD", "state": "RTS",
        "comm": "ib_write_bw", "pid": 100},
       {"ifindex": 3, "ifname": "h1", "port": 1, "lqpn": 22, "rqpn": 23, "type": "RC", "state": "RTR",
        "comm": "ib_write_bw", "pid": 100}]
# `rdma -j res show`: iproute2 6.1's flat form and the older nested one
DEVS = [{"ifindex": 3, "ifname": "h1", "pd": 3, "cq": 4, "qp": 5, "cm_id": 0, "mr": 2, "ctx": 0, "srq": 0},
        {"ifindex": 4, "ifname": "h2", "resource": {"pd": 1, "cq": 2, "qp": 3, "mr": 1}},
        {"ifindex": 5, "ifname": "keep0", "pd": 7, "cq": 7, "qp": 7, "mr": 7}]


def run(*args, stdin):
    return subprocess.run([sys.executable, os.path.join(HERE, "rxecc_show.py"), *args], input=json.dumps(stdin),
                          capture_output=True, text=True, check=False)


class Qpns(unittest.TestCase):
    def test_by_type_and_program(self):
        self.assertEqual(rs.qpns(QPS, "RC", "ib_write_bw"), [17, 22])
        self.assertEqual(rs.qpns(QPS, "RC", "rxecc-verbs"), [19])
        self.assertEqual(rs.qpns(QPS, "RC"), [17, 19, 22])
        self.assertEqual(rs.qpns(QPS), [1, 17, 19, 21, 22])

    def test_none(self):
        self.assertEqual(rs.qpns(QPS, "RC", "ib_send_bw"), [])
        self.assertEqual(rs.qpns([], "RC"), [])

    def test_the_command_line(self):
        r = run("qpns", "--type", "RC", "--comm", "ib_write_bw", stdin=QPS)
        self.assertEqual((r.returncode, r.stdout), (0, "17 22\n"), r.stderr)
        r = run("qpns", "--type", "RC", "--sep", ",", stdin=QPS)
        self.assertEqual(r.stdout, "17,19,22\n")
        self.assertEqual(run("qpns", "--type", "RC", "--comm", "nobody", stdin=QPS).stdout, "\n")


class Resources(unittest.TestCase):
    def test_one_device(self):
        self.assertEqual(rs.res(DEVS, "h1"), ["qp 5 cq 4 mr 2 pd 3"])
        self.assertEqual(rs.res(DEVS, "h2"), ["qp 3 cq 2 mr 1 pd 1"])
        self.assertEqual(rs.res(DEVS, "h3"), [])

    def test_a_count_that_moved_shows(self):
        before = rs.res(DEVS, "h1")
        after = rs.res([dict(DEVS[0], mr=3)] + DEVS[1:], "h1")
        self.assertNotEqual(before, after)

    def test_total_of_the_hosts(self):
        self.assertEqual(rs.res_total(DEVS, "h"), [8, 6, 3, 4])      # keep0 is no host
        self.assertEqual(rs.res_total(DEVS + [{"ifindex": 6}], "h"), [8, 6, 3, 4])
        self.assertEqual(rs.res_total([], "h"), [0, 0, 0, 0])

    def test_the_command_line(self):
        r = run("res", "h1", stdin=DEVS)
        self.assertEqual((r.returncode, r.stdout), (0, "qp 5 cq 4 mr 2 pd 3\n"), r.stderr)
        self.assertEqual(run("res", "h9", stdin=DEVS).stdout, "")
        self.assertEqual(run("res-total", "h", stdin=DEVS).stdout, "8 6 3 4\n")


class QdiscDrops(unittest.TestCase):
    Q = [{"kind": "pfc", "prio": [{"drops": 0}, {"drops": 3}, {"drops": 0}, {"drops": 40}] + [{"drops": 0}] * 4}]

    def test_sum(self):
        self.assertEqual(rs.qdisc_drops(self.Q), 43)
        self.assertEqual(rs.qdisc_drops([{"prio": [{"drops": 0}] * 8}]), 0)
        # every priority counts, the last one too
        self.assertEqual(rs.qdisc_drops([{"prio": [{"drops": 0}] * 7 + [{"drops": 5}]}]), 5)

    def test_the_command_line(self):
        r = run("qdisc-drops", stdin=self.Q)
        self.assertEqual((r.returncode, r.stdout), (0, "43\n"), r.stderr)
        self.assertNotEqual(run("qdisc-drops", stdin=[]).returncode, 0)     # no qdisc: an error


if __name__ == "__main__":
    unittest.main()
