#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The congestion lab of `make demo` (ci/demo.sh), host side: the command
line of the rxecc_lab package beside it (`lab.py --help`; docs/lab.md)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rxecc_lab.cli import main  # noqa: E402  pylint: disable=wrong-import-position

if __name__ == "__main__":
    sys.exit(main(sys.argv))
