#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of tool_check.py (ctest ToolCheck.Host): tool.sh's checks of
what `rxecc` shows against made-up module parameters, counters and
privileges, each passing and then failing for one reason at a time."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tool_check as tc  # noqa: E402  pylint: disable=wrong-import-position

# The module parameters as sysfs shows them (profile left out) ...
PARAMS = {"ecn": "2", "np_enable": "0xff", "pfc_enable": "0x0", "roce_prio": "8", "rp_enable": "255",
          "rp_gd": "11", "rp_threshold": "1", "udp_sport": "0"}
# ... and a device of `rxecc -j dcqcn show` with those values.
DEV = {"dev": "h1", "profile": "mlx5", "ecn": "ect0", "np_enable": 255, "pfc_enable": 0, "roce_prio": "dscp",
       "rp_enable": 255, "udp_sport": "flow_label", "dcqcn": {"rp_gd": 11, "rp_threshold": 1}}
TEXT = ("dev h1 index 5 netdev eth0 line 10 Gbit/s profile mlx5\n"
        + "".join(f"  {k} {v}\n" for k, v in (("rp_enable", "all"), ("np_enable", "all"), ("ecn", "ect0"),
                                              ("pfc_enable", "none"), ("roce_prio", "dscp"),
                                              ("udp_sport", "flow_label"), ("rp_gd", "11"),
                                              ("rp_threshold", "1"))))


def changed(d, **kw):
    """A copy of the device d with kw's values (dcqcn's if the key is one)."""
    out = json.loads(json.dumps(d))
    for k, v in kw.items():
        (out["dcqcn"] if k in out["dcqcn"] else out)[k] = v
    return out


def run(*args, stdin=""):
    r = subprocess.run([sys.executable, os.path.join(HERE, "tool_check.py")] + list(args), input=stdin,
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout


class Knobs(unittest.TestCase):
    def test_all_as_the_module_parameters(self):
        self.assertEqual(tc.knob_problems(TEXT, DEV, PARAMS), [])

    def test_the_tools_names(self):
        # a priority is its number, udp_sport 1 is qpn, a mask any number's spelling
        p = dict(PARAMS, roce_prio="3", udp_sport="1", pfc_enable="0x08")
        d = changed(DEV, roce_prio=3, udp_sport="qpn", pfc_enable=8)
        self.assertEqual(tc.knob_problems(TEXT, d, p), [])
        self.assertEqual(tc.knob_problems(TEXT, changed(d, udp_sport="flow_label"), p),
                         ["udp_sport: tool flow_label, module parameter qpn"])

    def test_each_value_wrong(self):
        for k, v, line in (("rp_gd", 10, "rp_gd: tool 10, module parameter 11"),
                           ("np_enable", 15, "np_enable: tool 15, module parameter 255"),
                           ("ecn", "av", "ecn: tool av, module parameter ect0"),
                           ("roce_prio", 3, "roce_prio: tool 3, module parameter dscp"),
                           ("udp_sport", "qpn", "udp_sport: tool qpn, module parameter flow_label")):
            with self.subTest(k=k):
                self.assertEqual(tc.knob_problems(TEXT, changed(DEV, **{k: v}), PARAMS), [line])

    def test_a_parameter_the_tool_lacks(self):
        self.assertEqual(tc.knob_problems(TEXT, DEV, dict(PARAMS, rp_new="4")),
                         ["rp_new: tool None, module parameter 4", "rp_new missing in text"])

    def test_missing_in_text(self):
        for text in (TEXT.replace("  rp_gd 11\n", ""), TEXT.replace("  rp_gd 11", "  rp_gd"),
                     TEXT.replace("  rp_gd 11", "   rp_gd 11")):
            with self.subTest(text=text):
                self.assertEqual(tc.knob_problems(text, DEV, PARAMS), ["rp_gd missing in text"])

    def test_the_command_line(self):
        with tempfile.TemporaryDirectory() as pdir:
            for k, v in dict(PARAMS, profile="paper").items():
                with open(os.path.join(pdir, k), "w", encoding="utf-8") as f:
                    f.write(v + "\n")
            # the profile is not compared (the JSON names it, sysfs too)
            self.assertEqual(run("knobs", TEXT, json.dumps([DEV]), "--params", pdir), (0, ""))
            self.assertEqual(run("knobs", TEXT, json.dumps([changed(DEV, rp_threshold=2)]), "--params", pdir),
                             (1, "rp_threshold: tool 2, module parameter 1\n"))


class Stats(unittest.TestCase):
    HW = {"np_cnp_sent": "0", "rcvd_pkts": "12", "sent_pkts": "300"}
    COUNTERS = {"np_cnp_sent": 0, "rcvd_pkts": 12, "sent_pkts": 300}

    def test_as_sysfs(self):
        self.assertEqual(tc.stats_compare(self.COUNTERS, self.HW),
                         (True, ["3 counters compared, 0 differ; in JSON but not sysfs: None"]))

    def test_one_differs(self):
        self.assertEqual(tc.stats_compare(dict(self.COUNTERS, rcvd_pkts=13), self.HW),
                         (False, ["rcvd_pkts: tool 13 sysfs 12",
                                  "3 counters compared, 1 differ; in JSON but not sysfs: None"]))

    def test_one_missing_or_extra(self):
        c = dict(self.COUNTERS)
        del c["np_cnp_sent"]
        self.assertEqual(tc.stats_compare(c, self.HW)[1][0], "np_cnp_sent: tool None sysfs 0")
        self.assertEqual(tc.stats_compare(dict(self.COUNTERS, lifespan=10), self.HW),
                         (False, ["3 counters compared, 0 differ; in JSON but not sysfs: ['lifespan']"]))

    def test_nothing_sent(self):
        self.assertFalse(tc.stats_compare(dict(self.COUNTERS, sent_pkts=0), dict(self.HW, sent_pkts="0"))[0])

    def test_the_command_line(self):
        with tempfile.TemporaryDirectory() as hw:
            for k, v in dict(self.HW, lifespan="10").items():
                with open(os.path.join(hw, k), "w", encoding="utf-8") as f:
                    f.write(v + "\n")
            self.assertEqual(run("stats", hw, stdin=json.dumps([{"counters": self.COUNTERS}])),
                             (0, "3 counters compared, 0 differ; in JSON but not sysfs: None\n"))
            self.assertEqual(run("stats", hw, stdin=json.dumps([{"counters": dict(self.COUNTERS, sent_pkts=1)}]))[0],
                             1)


class Privs(unittest.TestCase):
    WANT = "dev_get=0 dev_set=1 stats_get=19"

    def test_as_wanted(self):
        self.assertEqual(tc.privs_problems({"dev_get": 0, "dev_set": 1, "stats_get": 19, "qp_dump": 0}, self.WANT),
                         [])

    def test_each_wrong_or_missing(self):
        self.assertEqual(tc.privs_problems({"dev_get": 0, "dev_set": 0}, self.WANT),
                         ["dev_set: 0, want 1", "stats_get: None, want 19"])

    def test_the_command_line(self):
        # (a blank line when all is as wanted, as tool.sh has always printed)
        self.assertEqual(run("privs", json.dumps({"dev_get": 0, "dev_set": 1, "stats_get": 19}), self.WANT),
                         (0, "\n"))
        self.assertEqual(run("privs", json.dumps({"dev_get": 1, "dev_set": 1, "stats_get": 19}), self.WANT),
                         (1, "dev_get: 1, want 0\n"))


class RtsQp(unittest.TestCase):
    QP = {"dev": "h2", "qpn": 17, "type": "RC", "state": "RTS", "dest_qpn": 18, "prio": 0, "limited": False,
          "rate_kbps": 10000000, "target_kbps": 10000000, "alpha_ppm": 1000000}

    def test_found(self):
        gsi = dict(self.QP, qpn=1, type="GSI", dest_qpn=0)
        self.assertEqual(tc.rts_qp([gsi, self.QP]), 17)
        self.assertEqual(run("rts-qp", stdin=json.dumps([gsi, self.QP])), (0, "17\n"))
        # two that qualify: the first
        self.assertEqual(tc.rts_qp([self.QP, dict(self.QP, qpn=19)]), 17)

    def test_each_condition_unmet(self):
        for k, v in (("type", "UD"), ("state", "RTR"), ("dest_qpn", 0), ("rate_kbps", 5000000),
                     ("limited", True)):
            with self.subTest(k=k):
                self.assertIsNone(tc.rts_qp([dict(self.QP, **{k: v})]))
        self.assertEqual(run("rts-qp", stdin="[]"), (1, "no RC QP in RTS with a peer at line rate, not limited\n"))


if __name__ == "__main__":
    unittest.main()
