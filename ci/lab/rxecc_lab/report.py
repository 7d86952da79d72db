# SPDX-License-Identifier: GPL-2.0
"""The report of one run (report.json, report.md, the terminal) through the
scenario registered for its topology, and the verdict of CHECK=1."""

import json
import os
import sys

from . import registry
from .common import fmt, read_text


def met_word(ok):
    """An expectation's outcome in the report: met, not met, or (None) ruled
    out by the scenario (not_applicable)."""
    return "does not apply" if ok is None else "yes" if ok else "no"


def analyse_modes(raw, sc, analyse):
    """Every mode of the scenario through analyse(raw, sc, mode) -> (figures,
    series): the figures in order, the series by mode name."""
    results, allseries = [], {}
    for mode in sc["modes"]:
        r, s = analyse(raw, sc, mode)
        results.append(r)
        allseries[mode["name"]] = s
    return results, allseries


def analyse_and_record(raw, sc, outdir, analyse, plots, checks):
    """A scenario module's report up to its markdown: every mode through
    analyse (analyse_modes), plots(sc, results, series, outdir) -> files made,
    checks(results, sc) -> expectations, and OUTDIR/report.json. Returns
    (results, series, made, ck)."""
    results, allseries = analyse_modes(raw, sc, analyse)
    made = plots(sc, results, allseries, outdir)
    ck = checks(results, sc)
    write_report_json(outdir, sc, results, ck, made)
    return results, allseries, made, ck


def write_report_md(outdir, head, ck, body, made):
    """OUTDIR/report.md: the head lines, the expectations, the body lines,
    the plots."""
    md = list(head)
    if ck:
        md += ["## Expectations", ""] + [f"- {c}: **{met_word(ok)}** ({m})" for c, ok, m in ck] + [""]
    md += list(body) + ["## Plots", ""] + [f"![{p}]({p})" for p in made] + [""]
    with open(os.path.join(outdir, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))


def print_summary(text, results, columns, ck, outdir, made):
    """The terminal's summary: the scenario, a line per mode (its error, or
    its figures by the columns (header, getter)), each expectation."""
    print(text)
    for r in results:
        if "error" in r:
            print(f"  {r['label']}: {r['error']}")
            continue
        print(f"  {r['label']}: " + ", ".join(f"{h} {fmt(g(r))}" for h, g in columns))
    for c, ok, m in ck:
        print(f"  {c}: {'NO' if ok is False else met_word(ok)} ({m})")
    print(f"report: {outdir}/report.md, report.json, {len(made)} plots")


def write_report_json(outdir, sc, results, ck, made, extra=None):
    """OUTDIR/report.json: the scenario, each mode's figures, the checks
    ((text, met, measured) each), the plots' file names and extra's keys
    (the incast's probe calibration)."""
    with open(os.path.join(outdir, "report.json"), "w", encoding="utf-8") as f:
        json.dump({"scenario": sc, "modes": results,
                   "checks": [{"check": c, "met": ok, "measured": m} for c, ok, m in ck],
                   "plots": made, **(extra or {})}, f, indent=2)
        f.write("\n")


def report(raw, scenario_json, outdir):
    """One run's report from RAW/<mode>/ by the scenario of its topology
    (registry); the exit status."""
    sc = json.loads(read_text(scenario_json))
    os.makedirs(outdir, exist_ok=True)
    return registry.lookup(sc.get("topology", "incast")).report(raw, sc, outdir)


def verdict(path):
    """CHECK=1 of one run: its report.json's expectations. 0 when every one
    that applies was met and at least one applies; 3 otherwise (one line
    naming the unmet ones, or saying that nothing was checked)."""
    ck = json.loads(read_text(path))["checks"]
    unmet = [c["check"] for c in ck if c["met"] is not True and c["met"] is not None]
    applied = [c for c in ck if c["met"] is not None]
    if unmet:
        print(f"demo: expectations not met: {'; '.join(unmet)}", file=sys.stderr)
        return 3
    if not applied:
        print("demo: no expectation applies to this scenario: nothing was checked", file=sys.stderr)
        return 3
    na = len(ck) - len(applied)
    print(f"demo: every expectation met ({len(applied)} checked" + (f", {na} ruled out by the scenario)"
                                                                   if na else ")"))
    return 0

