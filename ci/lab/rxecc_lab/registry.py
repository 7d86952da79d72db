# SPDX-License-Identifier: GPL-2.0
"""The scenarios' registry: each scenario module (rxecc_lab.scenarios.*)
adds itself for the topologies it reports on, with the hooks the report and
the spread call:

  TOPOLOGIES              the topology names (scenario.TOPOLOGIES) it serves
  report(raw, sc, outdir) one run's report; the exit status
  spread_figures(topology)
                          [(name, getter)]: the figures of a mode that the
                          spread over runs reports

Importing rxecc_lab.scenarios registers every scenario."""

SCENARIOS = {}

HOOKS = ("TOPOLOGIES", "report", "spread_figures")


def register(module):
    """Add a scenario module for each of its TOPOLOGIES; returns it."""
    missing = [h for h in HOOKS if not hasattr(module, h)]
    if missing:
        raise TypeError(f"{module.__name__}: no {', '.join(missing)}")
    for t in module.TOPOLOGIES:
        if t in SCENARIOS and SCENARIOS[t] is not module:
            raise ValueError(f"topology {t}: both {SCENARIOS[t].__name__} and {module.__name__}")
        SCENARIOS[t] = module
    return module


def require(topologies, modules):
    """Every topology the scenario parser accepts has its scenario among
    modules (which registered themselves on import); a RuntimeError names
    the first that has none."""
    for t in topologies:
        if SCENARIOS.get(t) not in modules:
            raise RuntimeError(f"no scenario module reports on topology '{t}'")


def lookup(topology):
    """The scenario module of a topology."""
    try:
        return SCENARIOS[topology]
    except KeyError:
        raise ValueError(f"no scenario reports on topology '{topology}'") from None
