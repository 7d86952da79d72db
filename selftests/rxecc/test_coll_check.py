#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of coll_check.py (ctest CollCheck.Host): rxecc-coll's and
rxecc-mpi's reports (userspace/coll/report.cpp's rows) judged."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import coll_check as cc  # noqa: E402  pylint: disable=wrong-import-position


def row(op, nbytes, ranks=8, wrong=0, iters=5):
    return {"op": op, "ranks": ranks, "bytes": nbytes, "count": nbytes // 4, "time_us": 812.44,
            "algbw": 0.00504, "busbw": 0.00882, "slowest_us": 901.5, "worst_us": 1200.0, "slow_rank": 3,
            "wrong": wrong, "iters": iters}


COLL = [row("allreduce", 4096 << k) for k in range(5)]
MPI = [row(op, 4096 << k, ranks=4) for op in ("allreduce", "alltoall") for k in range(5)]


def run(*args, text):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(text)
    try:
        return subprocess.run([sys.executable, os.path.join(HERE, "coll_check.py"), args[0], f.name, *args[1:]],
                              capture_output=True, text=True, check=False)
    finally:
        os.unlink(f.name)


def lines(rows):
    return "".join(json.dumps(r) + "\n" for r in rows)


class Coll(unittest.TestCase):
    def test_line(self):
        self.assertEqual(cc.coll_line(COLL[0]), "allreduce 8 ranks   4096 B: time 812 us, algbw 0.0050 GB/s, "
                         "busbw 0.0088 GB/s, slowest 902 us (rank 3), wrong 0")

    def test_passed(self):
        self.assertTrue(cc.coll_passed(COLL, 8))

    def test_what_fails(self):
        wrong = copy.deepcopy(COLL)
        wrong[2]["wrong"] = 1
        for name, rows, ranks in (("a wrong element", wrong, 8),
                                  ("another rank count", COLL, 7),
                                  ("a size missing", COLL[:4], 8),
                                  ("a size twice", COLL + COLL[-1:], 8),
                                  ("out of order", COLL[1:2] + COLL[:1] + COLL[2:], 8),
                                  ("no row", [], 8)):
            with self.subTest(name):
                self.assertFalse(cc.coll_passed(rows, ranks))

    def test_the_command_line(self):
        r = run("coll", "8", text=lines(COLL))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [cc.coll_line(x) for x in COLL])
        self.assertEqual(run("coll", "8", text=lines(COLL[:4])).returncode, 1)
        self.assertEqual(run("coll", "4", text=lines(COLL)).returncode, 1)


class Mpi(unittest.TestCase):
    def test_passed(self):
        self.assertIsNone(cc.mpi_error(MPI, 4, 5))
        self.assertIsNone(cc.mpi_error(list(reversed(MPI)), 4, 5))      # in any order

    def test_what_fails(self):
        self.assertEqual(cc.mpi_error(MPI[1:], 4, 5), "9 rows; missing or extra: [('allreduce', 4096)]; wrong: []")
        self.assertEqual(cc.mpi_error(MPI + [row("bcast", 4096, ranks=4)], 4, 5),
                         "11 rows; missing or extra: [('bcast', 4096)]; wrong: []")
        self.assertEqual(cc.mpi_error(MPI + MPI[:1], 4, 5), "11 rows; missing or extra: []; wrong: []")
        for name, change in (("a wrong element", {"wrong": 2}), ("3 ranks", {"ranks": 3}), ("4 iterations", {"iters": 4})):
            with self.subTest(name):
                rows = copy.deepcopy(MPI)
                rows[7].update(change)
                self.assertEqual(cc.mpi_error(rows, 4, 5), f"10 rows; missing or extra: []; wrong: {[rows[7]]}")

    def test_the_command_line(self):
        # mpirun's own lines around the rows are left out
        r = run("mpi", "4", "5", text="Warning: something\n" + lines(MPI) + "done\n")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        r = run("mpi", "4", "5", text=lines(MPI[:-1]))
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertEqual(r.stderr, "9 rows; missing or extra: [('alltoall', 65536)]; wrong: []\n")


if __name__ == "__main__":
    unittest.main()
