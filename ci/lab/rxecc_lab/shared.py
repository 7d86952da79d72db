# SPDX-License-Identifier: GPL-2.0
"""The measurement code the lab shares with the selftests (lib/python/:
the capture reader and figures, the UDP source ports, the PFC timeline):
this is the one place that knows where it lives; the rest of the lab imports it from here."""
import os
import sys

from .common import TOP

DIR = os.path.join(TOP, "lib", "python")
if DIR not in sys.path:
    sys.path.insert(0, DIR)

# pylint: disable=wrong-import-position
import pfc_timeline  # noqa: E402
import rxecc_measure  # noqa: E402
import sport_check  # noqa: E402

PAYLOAD = rxecc_measure.PAYLOAD
jain = rxecc_measure.jain
percentile = rxecc_measure.percentile
Port = pfc_timeline.Port
intersect = pfc_timeline.intersect
get_udp_sport = sport_check.get_udp_sport
qpn_sport = sport_check.qpn_sport
