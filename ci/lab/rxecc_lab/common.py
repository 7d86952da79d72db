# SPDX-License-Identifier: GPL-2.0
"""Small helpers every part of the lab uses: a file's text, a size in bytes,
a figure as the report prints it."""

import os
import re

# The repository's top (ci/lab/rxecc_lab/ is three levels down).
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def to_bytes(v):
    m = re.fullmatch(r"([0-9]+)([a-z]*)", v.lower())
    return int(m.group(1)) * {"": 1, "b": 1, "kb": 1000, "kib": 1024, "mb": 10**6,
                              "mib": 1 << 20}[m.group(2)]


def fmt(v, spec=""):
    return "-" if v is None else format(v, spec)

