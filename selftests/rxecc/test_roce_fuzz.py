#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of roce_fuzz.py's pfc-enabled (ctest RoceFuzz.PfcEnabled):
its frames, read by vlan_xoff.py's PFC reader, against the expectation it
prints, and the expectation against roce_fuzz.py's own model of a
receiver's counts."""
import json
import os
import struct
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import roce_fuzz as rf  # noqa: E402  pylint: disable=wrong-import-position
import vlan_xoff as vx  # noqa: E402  pylint: disable=wrong-import-position

MAC = bytes.fromhex("020000000101")


def counts(frames, enabled):
    """What a receiver with ENABLED counts of FRAMES, by roce_fuzz.py's model."""
    out = {}
    for f in frames:
        cev = struct.unpack("!H", f[16:18])[0]
        for c, n in rf.pauses(cev, enabled).items():
            out[c] = out.get(c, 0) + n
    return out


class PfcEnabled(unittest.TestCase):
    def test_frames(self):
        frames = rf.enabled_only_frames(MAC)
        self.assertEqual(len(frames), 22)
        for f in frames:
            self.assertEqual(len(f), 60)
            self.assertEqual(f[:14], vx.PFC_DST + MAC + b"\x88\x08")
            self.assertEqual(f[14:16], b"\x01\x01")
            self.assertEqual(f[34:], bytes(26))
        self.assertEqual(frames[0][16:34], struct.pack("!H8H", 0xf7, *[0xffff] * 8))
        self.assertEqual(frames[20][16:34], struct.pack("!H8H", 0x08, *[0xffff] * 8))
        self.assertEqual(frames[21][16:34], struct.pack("!H8H", 0x08, *[0] * 8))

    def test_which_priorities_they_pause(self):
        frames = rf.enabled_only_frames(MAC)
        for prio in range(8):
            with self.subTest(prio=prio):
                self.assertEqual(all(vx.xoff_for(f, prio) for f in frames[:20]), prio != 3)
                self.assertEqual(vx.xoff_for(frames[20], prio), prio == 3)
                self.assertFalse(vx.xoff_for(frames[21], prio))     # the XON

    def test_the_expectation_holds_for_priority_3_alone(self):
        self.assertEqual(counts(rf.enabled_only_frames(MAC), rf.ENABLED_ONLY), rf.ENABLED_ONLY_EXPECT)
        self.assertEqual(rf.ENABLED_ONLY_EXPECT, {"rx_pfc_ignored": 140, "rx_prio3_pause": 2})

    def test_and_not_for_another_receiver(self):
        # PFC on priorities 3 and 4: the XOFFs pause 4 too, one ignored fewer per frame
        got = counts(rf.enabled_only_frames(MAC), 0x18)
        self.assertNotEqual(got, rf.ENABLED_ONLY_EXPECT)
        self.assertEqual(got, {"rx_pfc_ignored": 120, "rx_prio3_pause": 2, "rx_prio4_pause": 20})
        # PFC off: everything ignored
        self.assertNotEqual(counts(rf.enabled_only_frames(MAC), 0), rf.ENABLED_ONLY_EXPECT)

    def test_the_expectation_comes_first(self):
        # no such interface (or no CAP_NET_RAW): sending fails, the
        # expectation is written all the same
        r = subprocess.run([sys.executable, os.path.join(HERE, "roce_fuzz.py"), "pfc-enabled", "rxecc-none0"],
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(json.loads(r.stdout), {"expect": rf.ENABLED_ONLY_EXPECT})
        self.assertEqual(r.stdout, '{"expect": {"rx_pfc_ignored": 140, "rx_prio3_pause": 2}}\n')


if __name__ == "__main__":
    unittest.main()
