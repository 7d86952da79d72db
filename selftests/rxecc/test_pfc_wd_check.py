#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of pfc_wd_check.py (ctest PfcWdCheck.Host): pfc_wd.sh's
reading of the watchdog's values, its check of the monitor's events and
the share of a run paused, on made-up qdiscs and events."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pfc_wd_check as wc  # noqa: E402  pylint: disable=wrong-import-position


def qdisc(**prio3):
    """A qdisc of `rxecc -j qdisc show` (the keys pfc_wd.sh reads), with
    prio3's values in priority 3."""
    prio = [{"prio": p, "qlen": 0, "drops": 0, "pause_rx": 0, "pause_rx_duration_us": 0, "wd_storm": False,
             "wd_storms": 0, "wd_drops": 0} for p in range(8)]
    prio[3].update(prio3)
    return {"netdev": "sw0", "drops": 99, "wd_action": "drop", "wd_detection_ms": 100, "prio": prio}


def run(*args, stdin=""):
    r = subprocess.run([sys.executable, os.path.join(HERE, "pfc_wd_check.py")] + list(args), input=stdin,
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout


class Read(unittest.TestCase):
    def test_priority_3s_then_the_qdiscs(self):
        q = qdisc(qlen=5, drops=3, wd_storm=True, wd_storms=2)
        # drops: priority 3's (3), not the qdisc's (99); a boolean is 1 or 0
        self.assertEqual(wc.read(q, ["qlen", "drops", "wd_storm", "wd_storms", "wd_detection_ms"]), [5, 3, 1, 2, 100])
        self.assertEqual(wc.read(qdisc(), ["wd_storm"]), [0])

    def test_an_unknown_key_or_a_word(self):
        with self.assertRaises(KeyError):
            wc.read(qdisc(), ["nope"])
        with self.assertRaises(ValueError):
            wc.read(qdisc(), ["wd_action"])

    def test_the_command_line(self):
        self.assertEqual(run("read", "qlen", "wd_storm", stdin=json.dumps([qdisc(qlen=7, wd_storm=True)])),
                         (0, "7\n1\n"))
        self.assertNotEqual(run("read", "qlen", "nope", stdin=json.dumps([qdisc()]))[0], 0)


def event(name, netdev="sw0", prio=3, action="drop"):
    return {"event": name, "time": 1.0, "netdev": netdev, "prio": prio, "wd_action": action, "wd_storm": True}


class Monitor(unittest.TestCase):
    OTHERS = [{"event": "subscribed", "time": 0.0}, {"event": "qp", "time": 0.5, "qpn": 17}]

    def test_one_storm_then_its_end(self):
        ev = self.OTHERS + [event("wd_storm"), {"event": "config", "time": 2.0}, event("wd_restored")]
        self.assertTrue(wc.storm_and_restored(ev, "sw0", 3, "drop"))

    def test_each_difference_fails(self):
        for ev in ([event("wd_storm")],                                             # no end
                   [event("wd_restored"), event("wd_storm")],                       # out of order
                   [event("wd_storm"), event("wd_restored"), event("wd_storm")],    # a second storm
                   [event("wd_storm"), event("wd_storm"), event("wd_restored")],
                   [event("wd_storm", netdev="sw1"), event("wd_restored", netdev="sw1")],
                   [event("wd_storm", prio=2), event("wd_restored", prio=2)],
                   [event("wd_storm", action="alert"), event("wd_restored", action="alert")],
                   self.OTHERS):
            with self.subTest(ev=ev):
                self.assertFalse(wc.storm_and_restored(ev, "sw0", 3, "drop"))

    def test_the_command_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "wd-monitor.json")
            for evs, rc in (([event("wd_storm"), event("wd_restored")], 0), ([event("wd_storm")], 1)):
                with open(path, "w", encoding="utf-8") as f:
                    f.writelines(json.dumps(e) + "\n" for e in self.OTHERS + evs)
                self.assertEqual(run("monitor", path, "sw0", "3", "drop"), (rc, ""))


class Share(unittest.TestCase):
    def test_hundredths_of_a_percent(self):
        # 1.98 s paused of 2 s: 99.00 %
        self.assertEqual(wc.paused_share(qdisc(pause_rx_duration_us=500000), qdisc(pause_rx_duration_us=2480000),
                                         10**9, 3 * 10**9), 9900)
        # rounded down: 1.979999 s of 2 s is 98.99 %
        self.assertEqual(wc.paused_share(qdisc(), qdisc(pause_rx_duration_us=1979999), 0, 2 * 10**9), 9899)
        self.assertEqual(wc.paused_share(qdisc(), qdisc(), 0, 2 * 10**9), 0)

    def test_the_command_line(self):
        j0, j1 = json.dumps([qdisc(pause_rx_duration_us=100)]), json.dumps([qdisc(pause_rx_duration_us=1333433)])
        self.assertEqual(run("share", j0, j1, "1000000000", "3000000000"), (0, "6666\n"))
        self.assertNotEqual(run("share", j0, j1, "5", "5")[0], 0)


if __name__ == "__main__":
    unittest.main()
