# SPDX-License-Identifier: GPL-2.0
"""Expectations every scenario words alike: one ruled out by the scenario,
and a word for every mode no expectation is about."""


def uncovered(results, out):
    """out, and a line for every mode none of out's checks is about (by its
    label): no mode goes without a word in the report."""
    for r in results:
        if not any(c.startswith((r["label"] + ":", r["label"] + " against ")) for c, _, _ in out):
            out.append(not_applicable(f"{r['label']}: an expectation of its own",
                                      "the lab expects nothing of this mode; it is there to compare with"))
    return out


def not_applicable(text, why):
    """An expectation the scenario itself rules out (its modes, its keys):
    neither met nor unmet, and said so. Never for what a run did or did not
    record: that is a check not met."""
    return (text, None, f"does not apply: {why}")

