#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of pfc_timeline.py (ctest PfcTimeline.FreezeAndTable) and of
pfc_sampler.py's decoding of struct tc_pfc_xstats: samples written here,
frozen spans (every port at once, a port that sends or holds nothing breaks
them), the per-bin table, the summary's counters."""
import io
import json
import os
import re
import struct
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pfc_sampler as ps  # noqa: E402  pylint: disable=wrong-import-position
import pfc_timeline as tl  # noqa: E402  pylint: disable=wrong-import-position


def prio(tx=0, qlen=0, backlog=0, pause_rx=0, drops=0, wd_storms=0, wd_drops=0):
    p = {k: 0 for k in tl.COUNTERS}
    p.update(tx_packets=tx, tx_bytes=tx * 1000, qlen=qlen, backlog=backlog, pause_rx=pause_rx,
             drops=drops, wd_storms=wd_storms, wd_drops=wd_drops)
    return p


def line(t, sw, ports):
    """A sampler line: ports is {netdev: priority 3's values}."""
    qd = [{"netdev": dev, "handle": 1, "prio": [prio() if i != 3 else p for i in range(8)]}
          for dev, p in ports.items()]
    return f"{t:.6f} {sw} {json.dumps(qd)}\n"


class Timeline(unittest.TestCase):
    def write(self, lines):
        f = tempfile.NamedTemporaryFile("w", suffix=".samples", delete=False)
        self.addCleanup(os.unlink, f.name)
        f.writelines(lines)
        f.close()
        return f.name

    def run_tool(self, *args):
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(tl.main(list(args)), 0)
        return out.getvalue()

    def ring(self):
        """Two switches, one port each, sampled 0.1 s apart for 4 s: port a
        holds packets and sends none from 1.0 to 3.0, port b from 0.9 to
        3.2; both send before and after; b drops at the end; the last line
        is cut short."""
        lines = []
        for k in range(41):
            t = 100 + k * 0.1
            a_frozen = 10 <= k <= 30
            b_frozen = 9 <= k <= 32
            a = prio(tx=min(k, 10) if k <= 10 else (10 if a_frozen else k - 20),
                     qlen=5 if a_frozen else (1 if k < 10 else 0), pause_rx=k)
            b = prio(tx=min(k, 9) if k <= 9 else (9 if b_frozen else k - 23),
                     qlen=7 if b_frozen else 0, drops=1 if k > 35 else 0)
            lines.append(line(t, "sw", {"to-sw2": a}))
            lines.append(line(t + 0.01, "sw2", {"to-sw": b}))
        lines.append("104.2 sw [{\"netdev\"")
        return lines

    def test_frozen_span_is_the_intersection(self):
        path = self.write(self.ring())
        s = json.loads(self.run_tool("summary", "3", path))
        self.assertEqual(len(s["frozen"]), 1)
        start, end = s["frozen"][0]
        self.assertAlmostEqual(start, 1.0, places=2)
        self.assertAlmostEqual(end, 3.0, places=2)
        self.assertAlmostEqual(s["longest_frozen"], 2.0, places=2)
        self.assertEqual(s["ports"]["sw2:to-sw"]["drops"], 1)
        self.assertEqual(s["ports"]["sw:to-sw2"]["pause_rx"], 40)
        self.assertEqual(s["ports"]["sw:to-sw2"]["samples"], 41)

    def test_a_port_that_sends_breaks_the_freeze(self):
        lines = self.ring()
        # b sends one packet between 2.0 and 2.1: the span splits in two
        out = []
        for ln in lines:
            t, sw, js = ln.split(" ", 2)
            if sw == "sw2" and 2.05 < float(t) - 100 < 3.25:
                q = json.loads(js)
                q[0]["prio"][3]["tx_packets"] += 1
                js = json.dumps(q) + "\n"
            out.append(f"{t} {sw} {js}")
        s = json.loads(self.run_tool("summary", "3", self.write(out)))
        self.assertEqual(len(s["frozen"]), 2)
        self.assertLess(s["longest_frozen"], 1.1)

    def test_chosen_ports_only(self):
        lines = self.ring()
        # a third port that always moves: with it, nothing is frozen
        lines += [line(100 + k * 0.1, "sw3", {"to-sw": prio(tx=k, qlen=3)}) for k in range(41)]
        path = self.write(lines)
        self.assertEqual(json.loads(self.run_tool("summary", "3", path))["frozen"], [])
        s = json.loads(self.run_tool("summary", "3", path, "--ports", "sw:to-sw2,sw2:to-sw"))
        self.assertEqual(len(s["frozen"]), 1)
        with self.assertRaises(SystemExit):
            self.run_tool("summary", "3", path, "--ports", "sw9:none")

    def test_table(self):
        out = self.run_tool("table", "3", self.write(self.ring()), "--bin", "0.5")
        rows = [r.split("\t") for r in out.splitlines()]
        self.assertEqual(rows[0][:7], ["t", "sw2:to-sw.tx", "sw2:to-sw.pause_rx",
                                       "sw2:to-sw.pause_tx", "sw2:to-sw.drops", "sw2:to-sw.ecn",
                                       "sw2:to-sw.backlog"])
        col = rows[0].index("sw:to-sw2.tx")
        sent = [int(r[col]) for r in rows[1:]]
        self.assertEqual(sent[0], 5)	# 0.0-0.5
        self.assertEqual(sent[3], 0)	# 1.5-2.0: frozen
        self.assertEqual(sum(sent), 20)

    def test_line(self):
        s = json.loads(self.run_tool("summary", "3", self.write(self.ring())))
        path = self.write([json.dumps(s)])
        self.assertIn("longest freeze 2.0 s (1 spans", self.run_tool("line", path))

    def test_no_samples(self):
        with self.assertRaises(SystemExit):
            tl.load(self.write(["garbage\n"]), 3)


def header_fields(struct):
    """The fields of a struct in include/uapi/linux/sch_pfc.h, in order."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "uapi",
                        "linux", "sch_pfc.h")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    body = text[text.index(f"struct {struct} {{"):]
    body = body[:body.index("};")]
    return re.findall(r"^\s*(?:__[us]\d+|struct\s+\w+)\s+(\w+)(?:\[\w+\])?;", body, re.M)


class SamplerDecode(unittest.TestCase):
    def test_keys_follow_the_uapi_header(self):
        """The sampler's field lists are the header's structs, in order (a
        key may add the unit the sampler converts to, and the watchdog's
        carry rxecc's wd_ prefix)."""
        def same(keys, fields, prefix=""):
            self.assertEqual(len(keys), len(fields))
            for k, f in zip(keys, fields):
                self.assertIn(k, (prefix + f, prefix + f + "_us"))
        same(ps.PRIO_KEYS, header_fields("tc_pfc_prio_stats"))
        same(ps.WD_KEYS, header_fields("tc_pfc_wd_stats"), "wd_")
        xs = header_fields("tc_pfc_xstats")
        self.assertEqual(xs, ["prio"] + list(ps.PORT_KEYS) + ["wd"] + list(ps.TAIL_KEYS))
        for k in ps.NS_KEYS:
            self.assertTrue(k.endswith("_us"))

    def test_xstats_layout(self):
        """struct tc_pfc_xstats as the kernel fills it: priority p's field i
        is 1000 * p + i, the port counters 9000 + i, the watchdog's
        5000 + 100 * p + i; durations in ns come out in us."""
        n_prio, n_wd = len(ps.PRIO_KEYS), len(ps.WD_KEYS)
        vals = [1000 * p + i for p in range(8) for i in range(n_prio)]
        vals += [9000 + i for i in range(len(ps.PORT_KEYS))]
        vals += [5000 + 100 * p + i for p in range(8) for i in range(n_wd)]
        app = struct.pack(f"={len(vals)}Q", *vals)
        self.assertEqual(len(app), 8 * (13 * 8 + 4 + 6 * 8))
        stats2 = struct.pack("=HH", 4 + len(app), ps.TCA_STATS_APP) + app
        kind = b"pfc\0"
        attrs = (struct.pack("=HH", 8, ps.TCA_KIND) + kind
                 + struct.pack("=HH", 4 + len(stats2), ps.TCA_STATS2) + stats2)
        msg = struct.pack("=BxxxiIII", 0, 7, 0x10000, 0xFFFFFFFF, 1) + attrs

        class Fake(ps.Netns):
            def __init__(self):  # pylint: disable=super-init-not-called
                self.names = {7: "swp7"}

            def dump(self, typ, body):
                return [(ps.RTM_NEWQDISC, msg)]

        q = Fake().qdiscs()
        self.assertEqual(len(q), 1)
        self.assertEqual(q[0]["netdev"], "swp7")
        self.assertEqual(q[0]["handle"], 1)
        p3 = q[0]["prio"][3]
        self.assertEqual(p3["tx_packets"], 3001)
        self.assertEqual(p3["xoff_ports"], 3012)
        self.assertEqual(p3["pause_rx_duration_us"], 3010 // 1000)
        self.assertEqual(p3["wd_storms"], 5301)
        self.assertEqual(p3["wd_storm_duration_us"], 5305 // 1000)
        # an older, shorter struct (no watchdog): zeros
        short = app[:8 * (13 * 8 + 4)]
        stats2 = struct.pack("=HH", 4 + len(short), ps.TCA_STATS_APP) + short
        msg = struct.pack("=BxxxiIII", 0, 7, 0x10000, 0xFFFFFFFF, 1) + (
            struct.pack("=HH", 8, ps.TCA_KIND) + kind
            + struct.pack("=HH", 4 + len(stats2), ps.TCA_STATS2) + stats2)
        self.assertEqual(Fake().qdiscs()[0]["prio"][3]["wd_storms"], 0)


if __name__ == "__main__":
    unittest.main()
