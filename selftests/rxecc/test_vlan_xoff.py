#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of vlan_xoff.py (ctest VlanXoff.Host): which frames are an
XOFF of a priority, and when the kernel says a tag was stripped."""
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vlan_xoff as vx  # noqa: E402  pylint: disable=wrong-import-position


def pfc(enable, times, dst=vx.PFC_DST, head=vx.PFC_HEAD):
    return dst + b"\x02" * 6 + head + struct.pack("!H8H", enable, *times) + bytes(26)


class Frames(unittest.TestCase):
    def test_xoff_of_the_priority(self):
        self.assertTrue(vx.xoff_for(pfc(0x04, [0, 0, 0xffff, 0, 0, 0, 0, 0]), 2))
        self.assertTrue(vx.xoff_for(pfc(0x06, [0, 1, 1, 0, 0, 0, 0, 0]), 1))

    def test_not_an_xoff_of_it(self):
        for name, f in (("another priority", pfc(0x02, [0, 0xffff] + [0] * 6)),
                        ("enabled with time 0 (XON)", pfc(0x04, [0] * 8)),
                        ("a time without the enable bit", pfc(0x00, [0, 0, 0xffff] + [0] * 5)),
                        ("another destination", pfc(0x04, [0, 0, 1] + [0] * 5, dst=b"\x01" * 6)),
                        ("802.3x PAUSE, not PFC", pfc(0x04, [0, 0, 1] + [0] * 5, head=b"\x88\x08\x00\x01")),
                        ("cut short", pfc(0x04, [0, 0, 1] + [0] * 5)[:30])):
            with self.subTest(frame=name):
                self.assertFalse(vx.xoff_for(f, 2))

    def test_tagged(self):
        aux = struct.pack("=IIIHHHH", vx.TP_STATUS_VLAN_VALID | 1, 60, 60, 14, 5, 0x8100, 0)
        self.assertTrue(vx.tagged([(vx.SOL_PACKET, vx.PACKET_AUXDATA, aux)]))
        self.assertFalse(vx.tagged([(vx.SOL_PACKET, vx.PACKET_AUXDATA, struct.pack("=IIIHHHH", 1, 60, 60, 14, 0, 0, 0))]))
        self.assertFalse(vx.tagged([(0, vx.PACKET_AUXDATA, aux)]))
        self.assertFalse(vx.tagged([]))


if __name__ == "__main__":
    unittest.main()
