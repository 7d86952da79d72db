#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of dcqcn_check.py (ctest DcqcnCheck.Host): dcqcn.sh's checks
on made-up packets, tshark fields and a lab report, each passing and then
failing for one reason at a time."""
import collections
import io
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dcqcn_check as dc  # noqa: E402  pylint: disable=wrong-import-position

H2, H1 = "10.0.2.1", "10.0.1.1"


def cnp_line(ln="74", port="4791", op="0x81", pkey="0xffff", psn="0", dscp="48", ecn="0", dqp="0x000011",
             payload=None):
    """tshark's fields of one CNP, by default a well-formed one to QP 17."""
    if payload is None:
        b = bytearray(32)
        b[0], b[4] = 0x81, 0x40
        payload = ":".join(f"{x:02x}" for x in b)
    return "\t".join([ln, port, payload, op, pkey, psn, dscp, ecn, dqp]) + "\n"


class QueueDelay(unittest.TestCase):
    def test_percentiles_of_the_packets_seen_once(self):
        sent = [(i * 0.001, H2, H1, (17, i)) for i in range(200)]
        got = [(i * 0.001 + (0.002 if i < 100 else 0.004), H2, H1, (17, i)) for i in range(200)]
        p50, p90 = dc.queue_delay(sent, got)
        self.assertAlmostEqual(p50, 2.0)
        self.assertAlmostEqual(p90, 4.0)

    def test_duplicates_and_other_flows_do_not_count(self):
        sent = [(i * 0.001, H2, H1, (17, i)) for i in range(150)]
        # PSNs 0..59 seen twice at h1 (retransmitted): left out; h3's ignored
        got = ([(i * 0.001 + 0.002, H2, H1, (17, i)) for i in range(150)]
               + [(1 + i * 0.001, H2, H1, (17, i)) for i in range(60)]
               + [(i * 0.001, "10.0.3.1", H1, (18, i)) for i in range(500)])
        with self.assertRaisesRegex(ValueError, "too few packets matched: 90"):
            dc.queue_delay(sent, got)
        self.assertEqual(len(dc.once(got)), 90)


class CnpFormat(unittest.TestCase):
    def test_well_formed(self):
        ok, out = dc.cnp_format([cnp_line(), cnp_line(dqp="0x000012")], {17, 18}, 2)
        self.assertTrue(ok, out)
        self.assertEqual(out, ["2 CNPs captured at h1 (np_cnp_sent +2), 0 malformed"])

    def test_each_field_wrong(self):
        bad_payload = bytearray(32)
        bad_payload[0], bad_payload[4], bad_payload[20] = 0x81, 0x40, 1     # reserved bytes not zero
        for name, line in (("length", cnp_line(ln="78")), ("port", cnp_line(port="4792")),
                           ("opcode", cnp_line(op="0x0a")), ("P_Key", cnp_line(pkey="0x7fff")),
                           ("PSN", cnp_line(psn="5")), ("DSCP", cnp_line(dscp="26")),
                           ("ECN", cnp_line(ecn="2")), ("QP", cnp_line(dqp="0x000013")),
                           ("payload", cnp_line(payload=":".join(f"{x:02x}" for x in bad_payload)))):
            with self.subTest(field=name):
                ok, out = dc.cnp_format([cnp_line(), line], {17}, 2)
                self.assertFalse(ok)
                self.assertEqual(out[0], "bad CNP: " + line.strip())
                self.assertEqual(out[-1], "2 CNPs captured at h1 (np_cnp_sent +2), 1 malformed")

    def test_none_captured_fails_and_only_three_are_shown(self):
        self.assertEqual(dc.cnp_format([], {17}, 0), (False, ["0 CNPs captured at h1 (np_cnp_sent +0), 0 malformed"]))
        ok, out = dc.cnp_format([cnp_line(ln="1")] * 5, {17}, 5)
        self.assertFalse(ok)
        self.assertEqual(len(out), 4)


class EcnCount(unittest.TestCase):
    def test_counts_sorted(self):
        R = collections.namedtuple("R", "src dst opcode ecn")
        recs = [R(H2, H1, 10, 2)] * 3 + [None, R(H1, H2, 129, 0), R(H2, H1, 10, 3)]
        self.assertEqual(dc.ecn_count(recs), [f"{H1} {H2} 129 0 1", f"{H2} {H1} 10 2 3", f"{H2} {H1} 10 3 1"])


class CnpSpacing(unittest.TestCase):
    @staticmethod
    def lines(times, dst=H2, qp="0x000011"):
        return [f"{t:.6f}\t{dst}\t{qp}\n" for t in times]

    def test_spaced_cnps_pass(self):
        ok, out = dc.cnp_spacing(self.lines([i * 0.0101 for i in range(50)]), "10000")
        self.assertTrue(ok, out)
        self.assertEqual(out[-1], "50 CNPs")
        self.assertRegex(out[0], rf"^{H2}/0x000011: 50 CNPs, smallest gap 10(099|100) us, mean 10100 us, "
                                 "0 under half the gap$")

    def test_one_stall_is_forgiven_two_are_not(self):
        t = [i * 0.01 for i in range(50)]
        t[10] += 0.008          # late: its gap long, the next short
        ok, out = dc.cnp_spacing(self.lines(t), "10000")
        self.assertTrue(ok, out)
        t[30] += 0.008
        ok, out = dc.cnp_spacing(self.lines(t), "10000")
        self.assertFalse(ok, out)

    def test_unspaced_cnps_and_too_few_fail(self):
        self.assertFalse(dc.cnp_spacing(self.lines([i * 0.0001 for i in range(50)]), "10000")[0])
        self.assertFalse(dc.cnp_spacing(self.lines([1.0]), "10000")[0])
        # one CNP per QP: nothing to judge
        self.assertFalse(dc.cnp_spacing(self.lines([1.0]) + self.lines([1.5], qp="0x000012"), "10000")[0])

    def test_qps_told_apart_by_address(self):
        lines = self.lines([i * 0.01 for i in range(20)]) + self.lines([i * 0.01 + 0.001 for i in range(20)],
                                                                        dst="10.0.3.1")
        ok, out = dc.cnp_spacing(sorted(lines), "10000")
        self.assertTrue(ok, out)
        self.assertEqual(len(out), 3)

    def test_the_command_line(self):
        r = subprocess.run([sys.executable, os.path.join(HERE, "dcqcn_check.py"), "cnp-spacing", "10000"],
                           input="".join(self.lines([i * 0.01 for i in range(5)])), capture_output=True,
                           text=True, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.endswith("5 CNPs\n"))
        r = subprocess.run([sys.executable, os.path.join(HERE, "dcqcn_check.py"), "nope"],
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 2)


class LabReport(unittest.TestCase):
    @staticmethod
    def report(**mode):
        m = {"segments": [[0, 1, ["h2"]], [1, 2, ["h2", "h3"]], [2, 3, ["h2"]]],
             "rc": {"senders": {"h2": {}, "h3": {}}}, "cnp_handled": 5, "sim": {"rc_diff_pct": 10.0},
             "goodput_settled_pct": 90.0, "goodput_pct": 85.0, "pace_late_pct": 10.0, "pace_idle_pct": 5.0}
        m.update(mode)
        return {"modes": [m], "plots": ["dcqcn-rates.png", "dcqcn-sim.png", "dcqcn-jain.png", "queue.png"]}

    def test_a_good_run(self):
        said = []
        dc.lab_report(self.report(), said.append)
        self.assertEqual(said[0], "settled parts: [[0, 1, ['h2']], [1, 2, ['h2', 'h3']], [2, 3, ['h2']]]")
        self.assertEqual(said[-1], "pacers lost: 10.0 % late, 5.0 % idle")

    def test_each_fault(self):
        for fault in ({"segments": [[0, 1, ["h2", "h3"]]]}, {"rc": None}, {"rc": {"senders": {"h2": {}}}},
                      {"cnp_handled": 0}, {"sim": {"error": "not built"}}, {"goodput_settled_pct": None},
                      {"goodput_pct": 0}, {"pace_late_pct": -1.0}, {"pace_late_pct": 60.0, "pace_idle_pct": 40.0}):
            with self.subTest(fault=fault):
                with self.assertRaises(AssertionError):
                    dc.lab_report(self.report(**fault), io.StringIO().write)
        r = self.report()
        r["plots"].remove("dcqcn-sim.png")
        with self.assertRaises(AssertionError):
            dc.lab_report(r, io.StringIO().write)


if __name__ == "__main__":
    unittest.main()
