#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of pfc_deadlock_check.py (ctest PfcDeadlockCheck.Host):
pfc_deadlock.sh's checks on made-up run summaries (and one that
lib/python/pfc_timeline.py makes of samples), each passing and then failing
for one reason at a time."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "lib", "python"))
import pfc_deadlock_check as dc  # noqa: E402  pylint: disable=wrong-import-position
import pfc_timeline as tl  # noqa: E402  pylint: disable=wrong-import-position

RING = ("sw:to-sw2", "sw2:to-sw3", "sw3:to-sw4", "sw4:to-sw")


def port(**kw):
    p = {k: 0 for k in tl.COUNTERS}
    p.update(samples=60, backlog_end=0, first_storm=None)
    p.update(kw)
    return p


def summary(frozen, **ports):
    """A run's summary: frozen spans, and each ring port's counters (kw:
    the port's index in RING, p0..p3, to its values)."""
    return {"start": 100.0, "end": 6.0, "frozen": frozen,
            "longest_frozen": max((b - a for a, b in frozen), default=0.0),
            "frozen_total": round(sum(b - a for a, b in frozen), 3),
            "ports": {n: port(**ports.get(f"p{i}", {})) for i, n in enumerate(RING)}}


# PFC alone: frozen from 1.2 s to 5.0 s, 1000 packets sent in all
ALONE = summary([[1.2, 5.0]], **{f"p{i}": {"tx_packets": 250} for i in range(4)})
# the watchdog: short freezes, storms on two ports, drops
WD = summary([[1.0, 1.3], [2.0, 2.5]], p0={"tx_packets": 800, "wd_storms": 1, "wd_drops": 40},
             p1={"tx_packets": 700, "wd_storms": 2, "wd_drops": 10}, p2={"tx_packets": 600},
             p3={"tx_packets": 500})


def run(*args):
    r = subprocess.run([sys.executable, os.path.join(HERE, "pfc_deadlock_check.py")] + list(args),
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout


class Deadlocked(unittest.TestCase):
    def test_frozen_long_enough_nothing_dropped(self):
        self.assertTrue(dc.deadlocked(ALONE))
        self.assertTrue(dc.deadlocked(summary([[0.5, 2.5]])))

    def test_each_reason_to_fail(self):
        for s in (summary([[0.5, 2.4]]), summary([]), summary([[1.2, 5.0]], p2={"drops": 1}),
                  summary([[1.2, 5.0]], p3={"wd_drops": 1})):
            with self.subTest(s=s):
                self.assertFalse(dc.deadlocked(s))


class Broken(unittest.TestCase):
    def test_broken(self):
        self.assertTrue(dc.broken(WD, ALONE))

    def test_each_reason_to_fail(self):
        for name, s in (("no storm", summary(WD["frozen"], p0={"tx_packets": 2600, "wd_drops": 1})),
                        ("no watchdog drop", summary(WD["frozen"], p0={"tx_packets": 2600, "wd_storms": 1})),
                        ("a freeze of 1 s", dict(WD, longest_frozen=1.0)),
                        ("twice the packets, not more", summary(WD["frozen"], p0={"tx_packets": 2000, "wd_storms": 1,
                                                                                   "wd_drops": 1}))):
            with self.subTest(name=name):
                self.assertFalse(dc.broken(s, ALONE))
        self.assertTrue(dc.broken(summary(WD["frozen"], p0={"tx_packets": 2001, "wd_storms": 1, "wd_drops": 1}),
                                  ALONE))


class FromSamples(unittest.TestCase):
    def test_pfc_timelines_summary(self):
        """The checks read what pfc_timeline.py's summary holds: a ring
        that sends, then holds packets and sends none from 1.0 s to 3.0 s."""
        ports = {}
        for n in RING:
            ports[n] = p = tl.Port(n)
            for k in range(41):
                tx = k if k <= 10 else 10 if k <= 30 else k - 20
                p.samples.append((100 + k * 0.1, dict({c: 0 for c in tl.COUNTERS}, tx_packets=tx, qlen=5, backlog=5000)))
        s = json.loads(json.dumps(tl.summary(ports, list(RING), 100.0)))
        self.assertEqual(dc.frozen_line(s), "frozen spans: [[1.0, 3.0]]")
        self.assertTrue(dc.deadlocked(s))
        self.assertFalse(dc.broken(s, s))


class CommandLine(unittest.TestCase):
    def test_each_command(self):
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for name, s in (("pfc", ALONE), ("pfc-wd", WD)):
                paths[name] = os.path.join(d, f"deadlock-{name}.json")
                with open(paths[name], "w", encoding="utf-8") as f:
                    json.dump(s, f)
            self.assertEqual(run("deadlocked", paths["pfc"]), (0, "frozen spans: [[1.2, 5.0]]\n"))
            self.assertEqual(run("deadlocked", paths["pfc-wd"])[0], 1)
            self.assertEqual(run("broken", paths["pfc-wd"], paths["pfc"]),
                             (0, "frozen spans: [[1.0, 1.3], [2.0, 2.5]]\n"))
            self.assertEqual(run("broken", paths["pfc"], paths["pfc-wd"]), (1, "frozen spans: [[1.2, 5.0]]\n"))


if __name__ == "__main__":
    unittest.main()
