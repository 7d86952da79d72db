#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ecmp_arrange.py ROUTES: the ECMP scenario's flows arranged over the
spines (ci/guest/lab_fabric.sh, in the guest): ROUTES has a line
"SRC DST SPINE" per host pair; prints "SRC:DST SPINE" per flow, exit 1 when
there is no arrangement (rxecc_lab.scenarios.ecmp.arrange)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rxecc_lab.scenarios import ecmp  # noqa: E402  pylint: disable=wrong-import-position

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: ecmp_arrange.py ROUTES")
    sys.exit(ecmp.arrange_main(sys.argv[1]))
