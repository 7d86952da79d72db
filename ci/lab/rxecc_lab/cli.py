# SPDX-License-Identifier: GPL-2.0
"""The congestion lab of `make demo` (ci/demo.sh), host side.

  lab.py scenario FILE OUT.sh OUT.json [KEY=VALUE ...]
      read a scenario file (docs/lab.md), apply KEY=VALUE overrides, check
      every value and write the shell settings the guest script
      (ci/guest/lab.sh) sources and the resolved scenario as JSON
  lab.py report RAW SCENARIO.json OUTDIR
      from the guest's recordings in RAW/<mode>/: the table (terminal,
      OUTDIR/report.json, OUTDIR/report.md) and the plots (OUTDIR/*.png,
      gnuplot)
  lab.py spread OUT.md REPORT.json...
      several runs' reports: each figure's median and range per mode, and
      how many runs met each expectation (to OUT.md and the terminal); exit
      status 3 unless every run met every expectation that applies (met
      null: the scenario rules it out, in every run; a run without it did
      not meet it) and at least one applies
  lab.py verdict REPORT.json
      make demo CHECK=1 of one run: exit status 3 unless every expectation
      that applies was met and at least one applies

A bad scenario gets one line naming the file, the line and what is wrong,
and exit status 2.
"""

import argparse
import json
import sys

from . import registry, scenarios
from .report import report, verdict
from .scenario import TOPOLOGIES, ScenarioError, read_scenario, write_shell
from .spread import spread_main


def arg_parser():
    p = argparse.ArgumentParser(prog="lab.py", description=__doc__.split("\n\n", 1)[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="{scenario,report,spread,verdict}")
    s = sub.add_parser("scenario", help="check a scenario, write the guest's shell settings and JSON")
    s.add_argument("file", metavar="FILE", help="the scenario file ('' for the defaults)")
    s.add_argument("out_sh", metavar="OUT.sh", help="shell settings for ci/guest/lab.sh")
    s.add_argument("out_json", metavar="OUT.json", help="the resolved scenario")
    s.add_argument("overrides", metavar="KEY=VALUE", nargs="*", help="a top-level key's value")
    r = sub.add_parser("report", help="the table, checks and plots of one run")
    r.add_argument("raw", metavar="RAW", help="the guest's recordings, RAW/<mode>/")
    r.add_argument("scenario_json", metavar="SCENARIO.json")
    r.add_argument("outdir", metavar="OUTDIR")
    d = sub.add_parser("spread", help="several runs' reports: medians, ranges, expectations met")
    d.add_argument("out_md", metavar="OUT.md")
    d.add_argument("reports", metavar="REPORT.json", nargs="+")
    v = sub.add_parser("verdict", help="CHECK=1: exit 3 unless every expectation that applies was met")
    v.add_argument("report", metavar="REPORT.json")
    return p


def main(argv):
    args = arg_parser().parse_args(argv[1:])     # a usage error: exit status 2
    registry.require(TOPOLOGIES, scenarios.MODULES)
    try:
        if args.command == "scenario":
            sc = read_scenario(args.file or None, args.overrides)
            write_shell(sc, args.out_sh)
            with open(args.out_json, "w", encoding="utf-8") as f:
                json.dump(sc, f, indent=2)
            return 0
        if args.command == "report":
            return report(args.raw, args.scenario_json, args.outdir)
        if args.command == "verdict":
            return verdict(args.report)
        return spread_main(args.out_md, args.reports)
    except ScenarioError as e:
        print(f"lab: {e}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        print(f"lab: {e}", file=sys.stderr)
        return 1

