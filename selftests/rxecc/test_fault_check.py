#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of fault_check.py (ctest FaultCheck.Host): fault_inject.py's
rows summed and judged."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fault_check as fc  # noqa: E402  pylint: disable=wrong-import-position


def row(op, points, tried, errors, absorbed):
    return {"op": op, "points": points, "tried": tried, "errors": errors, "absorbed": absorbed}


ROWS = [row("rdma link add", 31, 31, 29, 2), row("qdisc change", 12, 12, 0, 12)]


class Summary(unittest.TestCase):
    def test_lines(self):
        self.assertEqual([fc.row_line(r) for r in ROWS],
                         ["rdma link add: 31 injection points, 31 failed in turn: 29 errors returned, 2 absorbed",
                          "qdisc change: 12 injection points, 12 failed in turn: 0 errors returned, 12 absorbed"])
        self.assertEqual(fc.total_line(ROWS), "43 faults injected in all")
        self.assertEqual(fc.total_line([]), "0 faults injected in all")

    def test_passed(self):
        self.assertTrue(fc.passed(ROWS))

    def test_what_fails(self):
        for name, rows in (("no operation", []),
                           ("an operation that passed no injection point", ROWS + [row("open", 0, 0, 0, 0)]),
                           ("no injection point, yet a fault counted", ROWS + [row("open", 0, 1, 0, 1)]),
                           ("points, but no fault came of them", ROWS + [row("open", 5, 5, 0, 0)])):
            with self.subTest(name):
                self.assertFalse(fc.passed(rows))

    def test_only_json_lines(self):
        self.assertEqual(fc.rows_of(["Traceback ...\n", json.dumps(ROWS[0]) + "\n", "\n"]), ROWS[:1])


class CommandLine(unittest.TestCase):
    def run_on(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(text)
        try:
            return subprocess.run([sys.executable, os.path.join(HERE, "fault_check.py"), "summary", f.name],
                                  capture_output=True, text=True, check=False)
        finally:
            os.unlink(f.name)

    def test_passes(self):
        r = self.run_on("".join(json.dumps(x) + "\n" for x in ROWS))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [fc.row_line(x) for x in ROWS] + ["43 faults injected in all"])

    def test_fails(self):
        r = self.run_on("".join(json.dumps(x) + "\n" for x in ROWS + [row("open", 5, 5, 0, 0)]))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout.splitlines()[-1], "43 faults injected in all")
        r = self.run_on("")
        self.assertEqual((r.returncode, r.stdout), (1, "0 faults injected in all\n"))


if __name__ == "__main__":
    unittest.main()
