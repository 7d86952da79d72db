#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of fuzz_check.py (ctest FuzzCheck.Host): h1's counters and
the pfc qdisc's counts against roce_fuzz.py's expectation."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fuzz_check as fc  # noqa: E402  pylint: disable=wrong-import-position


def qdisc(malformed=0, ignored=0, rejected=0, pause3=0):
    return {"pfc_rx_malformed": malformed, "pfc_rx_ignored": ignored, "pfc_rx_rejected": rejected,
            "prio": [{"pause_rx": 0}] * 3 + [{"pause_rx": pause3}] + [{"pause_rx": 0}] * 4}


class Expect(unittest.TestCase):
    WANT = {"rx_drop_malformed": 612, "rp_cnp_ignored": 700, "rp_cnp_drop_pkey_mismatch": 150}
    DELTAS = [("rx_drop_malformed", "612"), ("rx_drop_dgid", "0"), ("rp_cnp_ignored", "700"),
              ("rp_cnp_drop_pkey_mismatch", "150"), ("np_cnp_sent", "0")]

    def test_met(self):
        ok, lines = fc.counter_deltas(self.WANT, self.DELTAS)
        self.assertTrue(ok)
        self.assertEqual(lines, ["h1 rx_drop_malformed: +612 (expected +612)", "h1 rx_drop_dgid: +0 (expected +0)",
                                 "h1 rp_cnp_ignored: +700 (expected +700)",
                                 "h1 rp_cnp_drop_pkey_mismatch: +150 (expected +150)",
                                 "h1 np_cnp_sent: +0 (expected +0)"])

    def test_each_off_by_one(self):
        for i, (c, d) in enumerate(self.DELTAS):
            with self.subTest(counter=c):
                deltas = list(self.DELTAS)
                deltas[i] = (c, str(int(d) + 1))
                ok, lines = fc.counter_deltas(self.WANT, deltas)
                self.assertFalse(ok)
                self.assertEqual(lines[i], f"h1 {c}: +{int(d) + 1} (expected +{self.WANT.get(c, 0)})")

    def test_a_counter_not_read(self):
        # delta prints nothing when the counter cannot be read
        ok, lines = fc.counter_deltas(self.WANT, self.DELTAS[:1] + [("rx_drop_dgid", "")])
        self.assertFalse(ok)
        self.assertEqual(lines[1], "h1 rx_drop_dgid: + (expected +0)")

    def test_the_command_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"sent": 2500, "kinds": {"short": 150}, "expect": self.WANT}, f)
        try:
            cmd = [sys.executable, os.path.join(HERE, "fuzz_check.py"), "expect", f.name]
            r = subprocess.run(cmd + [f"{c}={d}" for c, d in self.DELTAS], capture_output=True, text=True, check=False)
            self.assertEqual((r.returncode, r.stdout), (0, "\n".join(fc.counter_deltas(self.WANT, self.DELTAS)[1]) + "\n"),
                             r.stderr)
            r = subprocess.run(cmd + ["rx_drop_malformed=612", "np_cnp_sent=1"], capture_output=True, text=True,
                               check=False)
            self.assertEqual((r.returncode, r.stdout), (1, "h1 rx_drop_malformed: +612 (expected +612)\n"
                                                           "h1 np_cnp_sent: +1 (expected +0)\n"))
        finally:
            os.unlink(f.name)


class Qdisc(unittest.TestCase):
    WANT = {"rx_pfc_malformed": 3, "rx_pfc_ignored": 5, "rx_pfc_rejected": 2}

    def test_met(self):
        ok, got, want = fc.qdisc_delta(self.WANT, qdisc(1, 1, 1, 7), qdisc(4, 6, 3, 7))
        self.assertTrue(ok, (got, want))
        self.assertEqual(want, {"rx_pfc_malformed": 3, "rx_pfc_ignored": 5, "rx_prio3_pause": 0, "rejected": 2})
        self.assertEqual(self.WANT["rx_pfc_rejected"], 2)      # the caller's dict left alone

    def test_each_count_off_by_one(self):
        for after in (qdisc(5, 6, 3, 7), qdisc(4, 5, 3, 7), qdisc(4, 6, 4, 7), qdisc(4, 6, 3, 8)):
            with self.subTest(after=after):
                self.assertFalse(fc.qdisc_delta(self.WANT, qdisc(1, 1, 1, 7), after)[0])

    def test_pauses_expected(self):
        want = dict(self.WANT, rx_prio3_pause=2)
        self.assertTrue(fc.qdisc_delta(want, qdisc(), qdisc(3, 5, 2, 2))[0])
        self.assertFalse(fc.qdisc_delta(want, qdisc(), qdisc(3, 5, 2, 0))[0])

    def test_the_command_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"expect": self.WANT, "sent": 10}, f)
        try:
            cmd = [sys.executable, os.path.join(HERE, "fuzz_check.py"), "qdisc", f.name,
                   json.dumps([qdisc()]), json.dumps([qdisc(3, 5, 2)])]
            r = subprocess.run(cmd, capture_output=True, text=True, check=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "swp1's qdisc: {'rx_pfc_malformed': 3, 'rx_pfc_ignored': 5, "
                             "'rx_prio3_pause': 0, 'rejected': 2}, expected {'rx_pfc_malformed': 3, "
                             "'rx_pfc_ignored': 5, 'rx_prio3_pause': 0, 'rejected': 2}\n")
            cmd[-1] = json.dumps([qdisc(3, 5, 1)])
            self.assertEqual(subprocess.run(cmd, capture_output=True, check=False).returncode, 1)
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
