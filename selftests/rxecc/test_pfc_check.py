#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of pfc_check.py's `values`, `config` and `qdisc-counters`
(ctest PfcCheck.Host): a qdisc's values against what pfc.sh configured, its
configuration apart from its counters, and the counters pfc.sh and
integrity.sh read."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pfc_check  # noqa: E402  pylint: disable=wrong-import-position

Q = {"rate_bps": 75000000, "pfc_enable": 24, "quanta": 1000,
     "prio": [{"limit": 524288, "xoff": 65536}] + [{}] * 2 + [{"limit": 524288, "xoff": 30000, "pmax": 50}]}


class Values(unittest.TestCase):
    def test_all_as_wanted(self):
        self.assertEqual(pfc_check.wrong_values(Q, ["rate_bps 75000000", "pfc_enable 24", "xoff 30000 3",
                                                    "xoff 65536 0", "pmax 50 3"]), [])

    def test_each_wrong_one_named(self):
        self.assertEqual(pfc_check.wrong_values(Q, ["quanta 2000", "xoff 30000 0", "pmax 50 3"]),
                         ["quanta: 1000, want 2000", "xoff of prio 0: 65536, want 30000"])

    def test_a_missing_key_is_an_error(self):
        with self.assertRaises(KeyError):
            pfc_check.wrong_values(Q, ["link_nope 1000"])

    def test_the_command_line(self):
        cmd = [sys.executable, os.path.join(HERE, "pfc_check.py"), "values"]
        r = subprocess.run(cmd + ["quanta 1000", "limit 524288 3"], input=json.dumps([Q]), capture_output=True,
                           text=True, check=False)
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)
        r = subprocess.run(cmd + ["quanta 999"], input=json.dumps([Q]), capture_output=True, text=True, check=False)
        self.assertEqual((r.returncode, r.stdout), (1, "quanta: 1000, want 999\n"))



def prio(p, **kw):
    """Priority p of `rxecc -j qdisc show` (every key docs/tool.md lists),
    with kw's values."""
    d = {"prio": p, "pfc": p == 3, "limit": 524288, "xoff": 65536, "xon": 32768, "headroom": 163840,
         "kmin": 0, "kmax": 0, "pmax": 0, "tx_bytes": 0, "tx_packets": 0, "backlog": 0, "qlen": 0, "drops": 0,
         "ecn_marked": 0, "pause_tx": 0, "xon_tx": 0, "pause_tx_duration_us": 0, "pause_rx": 0,
         "pause_rx_duration_us": 0, "pause_rx_transition": 0, "xoff_ports": 0, "wd_storm": False, "wd_storms": 0,
         "wd_restorations": 0, "wd_drops": 0, "wd_pause_ignored": 0, "wd_storm_duration_us": 0}
    d.update(kw)
    return d


def qdisc(prios=None, **kw):
    d = {"netdev": "swp1", "handle": "8001:", "rate_bps": 100000000, "pfc_enable": 8, "trust": "dscp",
         "link_speed": 0, "delay_ns": 0, "quanta": 65535, "wd_detection_ms": 0, "wd_restoration_ms": 0,
         "wd_action": "drop", "wd_poll_ms": 100, "drops": 0, "pfc_tx_errors": 0, "pfc_rx_ignored": 0,
         "pfc_rx_malformed": 0, "pfc_rx_rejected": 0, "pfc_untracked": 0,
         "prio": prios or [prio(p) for p in range(8)]}
    d.update(kw)
    return d


class Config(unittest.TestCase):
    def test_counters_left_out(self):
        busy = qdisc([prio(p, tx_packets=100 * p, drops=p, backlog=3000, pause_tx=2, wd_storm=True)
                      for p in range(8)])
        self.assertEqual(pfc_check.configuration(busy), pfc_check.configuration(qdisc()))
        self.assertEqual(set(pfc_check.configuration(busy)["prio"][3]),
                         {"limit", "xoff", "xon", "headroom", "kmin", "kmax", "pmax"})

    def test_each_setting_seen(self):
        base = pfc_check.configuration(qdisc())
        for k in pfc_check.PRIO_CONFIG:
            with self.subTest(k=k):
                prios = [prio(p, **({k: 1} if p == 3 else {})) for p in range(8)]
                self.assertNotEqual(pfc_check.configuration(qdisc(prios)), base)
        # the qdisc's own keys all kept, counters too
        for k, v in (("quanta", 1000), ("rate_bps", 0), ("pfc_enable", 24), ("pfc_rx_ignored", 1)):
            with self.subTest(k=k):
                self.assertNotEqual(pfc_check.configuration(qdisc(**{k: v})), base)

    def test_the_command_line(self):
        cmd = [sys.executable, os.path.join(HERE, "pfc_check.py"), "config"]
        backwards = dict(reversed(qdisc().items()))
        backwards["prio"] = [dict(reversed(p.items())) for p in backwards["prio"]]
        outs = [subprocess.run(cmd, input=json.dumps([q]), capture_output=True, text=True, check=True).stdout
                for q in (qdisc(), qdisc([prio(p, drops=5) for p in range(8)]), qdisc(quanta=1), backwards)]
        self.assertEqual(outs[0], outs[1])
        self.assertNotEqual(outs[0], outs[2])
        self.assertEqual(outs[0], outs[3])     # keys sorted: the same line in any order
        self.assertEqual(outs[0].count("\n"), 1)
        self.assertEqual(json.loads(outs[0])["prio"][0], {"headroom": 163840, "kmax": 0, "kmin": 0, "limit": 524288,
                                                          "pmax": 0, "xoff": 65536, "xon": 32768})


class QdiscCounters(unittest.TestCase):
    Q = qdisc([prio(p, drops=p, pause_tx=7 if p == 3 else 1, xon_tx=5 if p == 3 else 1, pause_rx=9)
               for p in range(8)], drops=1000)

    def test_sums(self):
        c = dict(pfc_check.qdisc_counters(self.Q))
        # drops: of all priorities (0 + 1 + ... + 7), not the qdisc's own
        self.assertEqual((c["drops"], c["frames"], c["pause_tx"], c["xon_tx"], c["pause_rx"]), (28, 12, 7, 5, 9))

    def test_priority_3s_integers_only(self):
        pairs = pfc_check.qdisc_counters(self.Q)
        keys = [k for k, _ in pairs]
        self.assertEqual(keys.count("drops"), 1)
        self.assertEqual(keys[-2:], ["drops", "frames"])
        # a JSON boolean is an int to Python: wd_storm and pfc are read as such
        self.assertIn(("wd_storm", False), pairs)
        self.assertIn(("pfc", True), pairs)
        self.assertNotIn("trust", keys)

    def test_the_command_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "q.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump([self.Q], f)
            r = subprocess.run([sys.executable, os.path.join(HERE, "pfc_check.py"), "qdisc-counters", path],
                               capture_output=True, text=True, check=True)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[-2:], ["drops 28", "frames 12"])
        self.assertIn("pause_tx_duration_us 0", lines)
        self.assertIn("wd_storm False", lines)


if __name__ == "__main__":
    unittest.main()
