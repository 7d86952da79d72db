# SPDX-License-Identifier: GPL-2.0
"""The congestion lab of `make demo`, host side (ci/lab/lab.py is its
command line; docs/lab.md).

  common     a file's text, sizes, a figure as printed
  scenario   the scenario file and overrides, checked; the guest's settings
  capture    reading the guest's recordings: captures, counters, traces
  analysis   rates against fair shares, queue spans, binning
  sim        the host simulation (rxecc-sim) beside the kernel
  checks     expectations worded alike by every scenario
  plots      gnuplot
  report     one run's report, through the scenario of its topology
  spread     several runs' reports
  registry   the scenarios' registry (the hooks a scenario provides)
  scenarios  incast, pathology (ring, victim, storm), ecmp, collective
  shared     where the measurement code shared with the selftests lives
  cli        lab.py's subcommands
"""
