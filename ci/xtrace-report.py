#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a guest test script's time went, from its RXECC_XTRACE=1 log.

  ci/xtrace-report.py LOG [N]

LOG is $LOGDIR/xtrace-SCRIPT.log of a run with RXECC_XTRACE=1 (lib.sh writes one
line per command: "+ EPOCHREALTIME PID FILE:LINE COMMAND"). Each command of
the script's main shell (the log's first process) is charged the time until
that shell's next command: what it ran, waited for or slept, subshells and
command substitutions included. Prints the N (default 30) source lines that
took longest, with their count and total seconds.
"""
import collections
import re
import sys

LINE = re.compile(r"^\++ ([0-9]+\.[0-9]+) ([0-9]+) (\S+) (.*)$")


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    top = int(argv[2]) if len(argv) == 3 else 30
    main_pid, rows = None, []
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            if main_pid is None:
                main_pid = m.group(2)
            if m.group(2) == main_pid:
                rows.append((float(m.group(1)), m.group(3), m.group(4)[:70]))
    total = collections.defaultdict(float)
    count = collections.Counter()
    text = {}
    for (t, where, cmd), (t_next, _, _) in zip(rows, rows[1:]):
        total[where] += t_next - t
        count[where] += 1
        text.setdefault(where, cmd)
    span = rows[-1][0] - rows[0][0] if rows else 0.0
    print(f"{len(rows)} commands of the main shell over {span:.1f} s")
    for where, secs in sorted(total.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{secs:8.1f} s {count[where]:6d}x  {where:24s} {text[where]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
