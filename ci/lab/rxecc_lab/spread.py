# SPDX-License-Identifier: GPL-2.0
"""Several runs' reports: each figure's median and range per mode, and how
many runs met each expectation."""

import json
import statistics

from . import registry
from .common import read_text


def spread_num(x):
    """A figure of the spread table: 4 significant digits, large ones whole."""
    return f"{x:.4g}" if abs(x) < 10000 else f"{x:.0f}"


def spread(reports):
    """Several runs' report.json, loaded: per mode and figure the median,
    minimum and maximum over the runs; per expectation how many runs met it.
    Returns (markdown text, every expectation met in every run)."""
    n = len(reports)
    topology = reports[0].get("scenario", {}).get("topology", "incast") if reports else "incast"
    figures = registry.lookup(topology).spread_figures(topology)
    # every mode and expectation of any run, in the order they first appear
    modes = list(dict.fromkeys(m["name"] for rep in reports for m in rep["modes"]))
    lines = [f"Spread over {n} runs: median (min-max) of each figure.", "",
             "| mode | " + " | ".join(f for f, _ in figures) + " |",
             "|---|" + "---|" * len(figures)]
    for name in modes:
        cells = []
        for _, get in figures:
            v = [get(m) for rep in reports for m in rep["modes"] if m["name"] == name]
            v = sorted(x for x in v if x is not None)
            if not v:
                cells.append("-")
                continue
            cells.append(f"{spread_num(statistics.median(v))} ({spread_num(v[0])}-{spread_num(v[-1])})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    floors = sorted(c["p99_us"] for rep in reports if (c := rep.get("probe_calibration"))
                    and c.get("p99_us") is not None)
    if floors:
        lines += ["", f"The probe's floor (its calibration's p99, {len(floors)} runs): "
                  f"{spread_num(statistics.median(floors))} ({spread_num(floors[0])}-{spread_num(floors[-1])}) us."]
    lines += ["", "| expectation | runs that met it |", "|---|---|"]
    names = list(dict.fromkeys(c["check"] for rep in reports for c in rep["checks"]))
    every = bool(names)
    for c in names:
        met = sum(1 for rep in reports for k in rep["checks"] if k["check"] == c and k["met"])
        # met None: the scenario rules the check out (not_applicable), in
        # every run alike; a run without the check did not meet it
        na = sum(1 for rep in reports for k in rep["checks"] if k["check"] == c and k["met"] is None)
        if na == n:
            lines.append(f"| {c} | does not apply |")
            continue
        every = every and met == n
        lines.append(f"| {c} | {met} of {n} |")
    if every and all(k["met"] is None for rep in reports for k in rep["checks"]):
        every = False
        lines += ["", "No expectation applies to this scenario: nothing was checked."]
    return "\n".join(lines) + "\n", every


def spread_main(out, paths):
    reports = [json.loads(read_text(p)) for p in paths]
    text, every = spread(reports)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(text, end="")
    return 0 if every else 3

