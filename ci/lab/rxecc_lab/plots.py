# SPDX-License-Identifier: GPL-2.0
"""gnuplot: its strings and files, running a script, writing a data file."""

import os
import subprocess


def gp_str(text):
    """A gnuplot string literal of text: single-quoted, a quote doubled (no
    escapes are read in single quotes). A line break, which would end the
    command, is refused."""
    if "\n" in text or "\r" in text:
        raise ValueError(f"gnuplot: a line break in {text!r}")
    return "'" + text.replace("'", "''") + "'"


def gp_file(path, outdir):
    """A file of the report for the gnuplot script: its path from outdir (the
    directory gnuplot runs in), quoted."""
    return gp_str(os.path.relpath(path, outdir))


def gnuplot(script, outdir):
    """Run a gnuplot script in outdir: its paths are relative to it, so the
    report's own path never enters the script."""
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True, cwd=outdir,
                       check=False)
    if r.returncode != 0:
        raise RuntimeError("gnuplot: " + r.stderr.strip().splitlines()[-1] if r.stderr else "failed")


def write_data(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write("\t".join(f"{x:.6f}" if isinstance(x, float) else str(x) for x in row) + "\n")


def host_colour(host):
    """gnuplot's colour index of host hI (h1 is the receiver)."""
    return max(int(host[1:]) - 1, 1)

