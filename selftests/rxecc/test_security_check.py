#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of security_check.py (ctest SecurityCheck.Host): a pfc port's
queue filled from a bridge device without PFC, or not."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import security_check as sc  # noqa: E402  pylint: disable=wrong-import-position


def qdisc(**prio1):
    p = {"backlog": 20840, "xoff_ports": 0, "pause_tx": 0, "pause_rx": 1, "tx_packets": 0, "limit": 4194304}
    p.update(prio1)
    idle = {"backlog": 0, "xoff_ports": 0, "pause_tx": 0, "pause_rx": 0, "tx_packets": 0}
    return {"kind": "pfc", "pfc_enable": 6, "prio": [idle, p] + [idle] * 6}


LINE = "prio 1: backlog 20840 B, xoff_ports 0, pause_tx 0, pause_rx 1, tx_packets 0"


class QueuedWithoutPfc(unittest.TestCase):
    def test_passes(self):
        self.assertEqual(sc.queued_without_pfc(qdisc(), 1), (True, LINE))
        self.assertTrue(sc.queued_without_pfc(qdisc(backlog=10000), 1)[0])

    def test_what_fails(self):
        for name, q in (("a port in XOFF", qdisc(xoff_ports=1)),
                        ("an XOFF sent", qdisc(pause_tx=1)),
                        ("the queue not filled", qdisc(backlog=9999)),
                        ("nothing queued", qdisc(backlog=0, tx_packets=20))):
            with self.subTest(name):
                self.assertFalse(sc.queued_without_pfc(q, 1)[0])

    def test_another_priority(self):
        ok, line = sc.queued_without_pfc(qdisc(), 0)
        self.assertFalse(ok)
        self.assertEqual(line, "prio 0: backlog 0 B, xoff_ports 0, pause_tx 0, pause_rx 0, tx_packets 0")

    def test_the_command_line(self):
        cmd = [sys.executable, os.path.join(HERE, "security_check.py"), "queued-without-pfc", "1"]
        r = subprocess.run(cmd, input=json.dumps([qdisc()]), capture_output=True, text=True, check=False)
        self.assertEqual((r.returncode, r.stdout), (0, LINE + "\n"), r.stderr)
        r = subprocess.run(cmd, input=json.dumps([qdisc(pause_tx=3)]), capture_output=True, text=True, check=False)
        self.assertEqual((r.returncode, r.stdout), (1, LINE.replace("pause_tx 0", "pause_tx 3") + "\n"))


if __name__ == "__main__":
    unittest.main()
