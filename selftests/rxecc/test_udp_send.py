#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of udp_send.py (ctest UdpSend.Host): the datagrams, socket
options and addresses each subcommand would send, from its command line
(nothing is sent)."""
import contextlib
import io
import os
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import udp_send as us  # noqa: E402  pylint: disable=wrong-import-position

BTH = 12        # bytes: the base transport header
ICRC = 4


def plan(*argv):
    return us.plan_of(us.parser().parse_args(list(argv)))


def ip_options_valid(opts):
    """IPv4 options: whole 32-bit words, each option's length inside them,
    a Record Route's pointer at its first slot and its length 3 + 4 n."""
    if len(opts) % 4 or len(opts) > 40:
        return False
    i = 0
    while i < len(opts) and opts[i] != 0:           # up to End of List
        if opts[i] == 1:                            # No Operation
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2 or i + opts[i + 1] > len(opts):
            return False
        if opts[i] == 7 and (opts[i + 1] < 7 or (opts[i + 1] - 3) % 4 or opts[i + 2] != 4):
            return False
        i += opts[i + 1]
    return True


class Dscp(unittest.TestCase):
    def test_through_the_vlan(self):
        # priority 2 (DSCP 16) from the VLAN device's address
        p = plan("dscp", "10.9.0.3", "--dscp", "16", "--bind", "10.41.0.2")
        self.assertEqual(len(p), 1)
        self.assertEqual(p[0].family, socket.AF_INET)
        self.assertEqual(p[0].options, [(socket.IPPROTO_IP, socket.IP_TOS, 64)])
        self.assertEqual(p[0].bind, ("10.41.0.2", 0))
        self.assertEqual(p[0].datagrams, [(bytes(1000), ("10.9.0.3", 9))] * 20)

    def test_through_the_bridge(self):
        # priority 1 (DSCP 8), from whatever address the route gives
        p = plan("dscp", "10.9.0.2", "--dscp", "8")
        self.assertEqual(p[0].options, [(socket.IPPROTO_IP, socket.IP_TOS, 32)])
        self.assertIsNone(p[0].bind)
        self.assertEqual(p[0].datagrams, [(bytes(1000), ("10.9.0.2", 9))] * 20)

    def test_dscp_required(self):
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            plan("dscp", "10.9.0.2")


class Short(unittest.TestCase):
    P = plan("short", "fd00:1::1", "fd00:99::1", "10.0.1.1")

    def test_ipv6(self):
        s6 = self.P[0]
        self.assertEqual((s6.family, s6.options, s6.bind), (socket.AF_INET6, [], None))
        self.assertEqual(s6.datagrams, [(b"abcd", ("fd00:1::1", 4791)), (bytes(40), ("fd00:99::1", 4791))])

    def test_ipv4_with_record_route(self):
        s4 = self.P[1]
        self.assertEqual((s4.family, s4.bind), (socket.AF_INET, None))
        self.assertEqual(s4.options, [(socket.IPPROTO_IP, socket.IP_OPTIONS, bytes([7, 7, 4, 0, 0, 0, 0, 0]))])
        self.assertEqual(s4.datagrams, [(b"abcd", ("10.0.1.1", 4791))])
        self.assertTrue(ip_options_valid(us.RECORD_ROUTE))

    def test_the_option_reader_catches_a_broken_option(self):
        for name, opts in (("not whole words", bytes([7, 7, 4, 0, 0, 0, 0])),
                           ("pointer past the slot", bytes([7, 7, 8, 0, 0, 0, 0, 0])),
                           ("a length no slot fits", bytes([7, 8, 4, 0, 0, 0, 0, 0])),
                           ("longer than the options", bytes([7, 11, 4, 0, 0, 0, 0, 0]))):
            with self.subTest(name):
                self.assertFalse(ip_options_valid(opts))

    def test_two_malformed_one_to_no_gid(self):
        # what security.sh counts: rx_drop_malformed +2 (too short for a
        # BTH and its ICRC, to a GID) and rx_drop_dgid +1 (long enough, to
        # an address that is no GID)
        sent = [(d, a) for s in self.P for d, a in s.datagrams]
        self.assertEqual(len(sent), 3)
        gids = {"fd00:1::1", "10.0.1.1"}
        self.assertEqual(sum(1 for d, a in sent if a[0] in gids and len(d) < BTH + ICRC), 2)
        self.assertEqual([len(d) >= BTH + ICRC for d, a in sent if a[0] not in gids], [True])
        self.assertTrue(all(a[1] == us.ROCE_PORT == 4791 for d, a in sent))


if __name__ == "__main__":
    unittest.main()
