#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of verbs_check.py (ctest VerbsCheck.Host): an rxecc-verbs
client's report, clean or not, and a missing one."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import verbs_check as vc  # noqa: E402  pylint: disable=wrong-import-position


def counts(msgs, nbytes, **bad):
    c = {"messages": msgs, "bytes": nbytes, "corrupt": 0, "lost": 0, "duplicated": 0, "bad_completions": 0}
    c.update(bad)
    return c


# as userspace/verbs/client.cpp writes it
CLEAN = {"role": "client", "test": "verify", "seed": 19502, "seconds": 2.5, "messages_sent": 100,
         "bytes_sent": 409600, "completions": 100, "acknowledged": 100,
         "by_op": {"send": 40, "write": 20, "write_imm": 20, "read": 20},
         "qp": {"qpn": 17}, "client_checked": counts(20, 81920), "server_checked": counts(80, 327680),
         "all_checked": True, "ok": True}
LINE = ("100 messages (send 40 write 20 write_imm 20 read 20), 409600 bytes verified, 0 bad, "
        "all checked: True")


def report(**changes):
    j = copy.deepcopy(CLEAN)
    for k, v in changes.items():
        j[k] = v
    return j


class Summary(unittest.TestCase):
    def test_clean(self):
        self.assertEqual(vc.summary(CLEAN), (True, LINE))

    def test_each_fault_fails(self):
        for name, j in (("not ok", report(ok=False)),
                        ("not all checked", report(all_checked=False)),
                        ("a corrupt message at the server", report(server_checked=counts(80, 327680, corrupt=1))),
                        ("a lost one at the client", report(client_checked=counts(20, 81920, lost=1))),
                        ("a duplicate", report(server_checked=counts(80, 327680, duplicated=2))),
                        ("a completion in error", report(client_checked=counts(20, 81920, bad_completions=1)))):
            with self.subTest(name):
                self.assertFalse(vc.summary(j)[0])
        self.assertEqual(vc.summary(report(server_checked=counts(80, 327680, corrupt=1), ok=False))[1],
                         LINE.replace("0 bad", "1 bad"))

    def test_a_report_without_its_counts_is_an_error(self):
        j = report()
        del j["server_checked"]
        with self.assertRaises(KeyError):
            vc.summary(j)


class CommandLine(unittest.TestCase):
    def run_on(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(text)
        try:
            return subprocess.run([sys.executable, os.path.join(HERE, "verbs_check.py"), "summary", f.name],
                                  capture_output=True, text=True, check=False)
        finally:
            os.unlink(f.name)

    def test_the_last_line_counts(self):
        r = self.run_on('{"progress": 1}\n' + json.dumps(CLEAN) + "\n\n")
        self.assertEqual((r.returncode, r.stdout), (0, LINE + "\n"), r.stderr)
        r = self.run_on(json.dumps(CLEAN) + "\n" + json.dumps(report(all_checked=False)) + "\n")
        self.assertEqual((r.returncode, r.stdout), (1, LINE.replace("True", "False") + "\n"))

    def test_no_result(self):
        for text in ("", "\n", "rxecc-verbs: connection refused\n"):
            with self.subTest(text=text):
                r = self.run_on(text)
                self.assertEqual((r.returncode, r.stdout), (1, "no result\n"))
        r = subprocess.run([sys.executable, os.path.join(HERE, "verbs_check.py"), "summary", "/nonexistent/c.json"],
                           capture_output=True, text=True, check=False)
        self.assertEqual((r.returncode, r.stdout), (1, "no result\n"))


if __name__ == "__main__":
    unittest.main()
