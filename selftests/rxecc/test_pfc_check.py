#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of pfc_check.py's `values` (ctest PfcCheck.Values): a qdisc's
values against what pfc.sh configured."""
import json
import os
import subprocess
import sys
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


if __name__ == "__main__":
    unittest.main()
