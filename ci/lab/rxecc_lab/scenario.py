# SPDX-License-Identifier: GPL-2.0
"""The scenario: a scenario file (docs/lab.md) and KEY=VALUE overrides read,
every value checked, and the shell settings the guest script
(ci/guest/lab.sh) sources written."""

import functools
import os
import re
import shlex

from .analysis import SETTLE_S
from .common import TOP, read_text, to_bytes
from .sim import AGREE_BIN_S


BUILTIN_MODES = {
    "baseline": {"pfc": False, "dcqcn": False,
                 "label": "rdma_rxe-like: no PFC, no DCQCN"},
    "pfc": {"pfc": True, "dcqcn": False, "label": "PFC only"},
    "dcqcn": {"pfc": False, "dcqcn": True, "label": "DCQCN only"},
    "dcqcn+pfc": {"pfc": True, "dcqcn": True, "label": "DCQCN + PFC"},
}


SIZE = re.compile(r"^[0-9]+(b|kb|kib|mb|mib)?$", re.I)


NAME = re.compile(r"^[a-z0-9][a-z0-9+_.-]{0,31}$")


class ScenarioError(Exception):
    pass


def parse_int(lo, hi):
    def check(v):
        if not re.fullmatch(r"[0-9]+", v) or not lo <= int(v) <= hi:
            raise ScenarioError(f"'{v}' is not an integer in {lo}..{hi}")
        return int(v)
    return check


def parse_size(v):
    if not SIZE.match(v):
        raise ScenarioError(f"'{v}' is not a byte count (B, KB, KiB, MB, MiB)")
    return v


def parse_mbit(v):
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(kbit|mbit|gbit)?", v.lower())
    if not m:
        raise ScenarioError(f"'{v}' is not a rate (50, 50mbit, 1gbit)")
    mbit = float(m.group(1)) * {"kbit": 1e-3, "mbit": 1, "gbit": 1e3, None: 1}[m.group(2)]
    if not 1 <= mbit <= 100000 or mbit != int(mbit):
        raise ScenarioError(f"'{v}' is not a whole number of Mbit/s in 1..100000")
    return int(mbit)


def parse_link(v):
    """A host link's rate, or "rate": the bottleneck's."""
    return v if v == "rate" else parse_mbit(v)


def parse_bool(v):
    if v.lower() in ("on", "yes", "true", "1"):
        return True
    if v.lower() in ("off", "no", "false", "0"):
        return False
    raise ScenarioError(f"'{v}' is not on or off")


DCQCN_CORE = os.path.join(TOP, "drivers", "infiniband", "sw", "rxecc", "rxecc_dcqcn.c")


@functools.lru_cache(maxsize=None)
def dcqcn_profiles():
    """The profile names of the module's own table (rxecc_dcqcn_profile_names
    in the DCQCN core), in its order."""
    with open(DCQCN_CORE, encoding="utf-8") as f:
        src = f.read()
    table = re.search(r"rxecc_dcqcn_profile_names\[[A-Z_]+\] = \{(.*?)\};", src, re.S)
    names = re.findall(r'\[RXECC_PROFILE_[A-Z0-9_]+\] = "([a-z0-9_]+)"', table.group(1)) if table else []
    if not names:
        raise RuntimeError(f"no profile table in {DCQCN_CORE}")
    return tuple(names)


def parse_profile(v):
    if v not in dcqcn_profiles():
        raise ScenarioError(f"'{v}' is not a DCQCN profile ({', '.join(dcqcn_profiles())})")
    return v


TOPOLOGIES = ("incast", "ring", "victim", "storm", "ecmp", "collective")


def parse_topology(v):
    if v not in TOPOLOGIES:
        raise ScenarioError(f"'{v}' is not a topology ({', '.join(TOPOLOGIES)})")
    return v


def parse_ms(lo, hi):
    """Milliseconds: 0 (off) or lo..hi."""
    def check(v):
        if not re.fullmatch(r"[0-9]+", v) or not (int(v) == 0 or lo <= int(v) <= hi):
            raise ScenarioError(f"'{v}' is not 0 or a number of ms in {lo}..{hi}")
        return int(v)
    return check


def parse_choice(*values, what=None):
    """A parser of one of values: "'x' is not a or b" (two), "... one of a,
    b, c" (more), "... WHAT (a, b, c)" (what given)."""
    told = (f"{what} ({', '.join(values)})" if what else " or ".join(values) if len(values) == 2
            else "one of " + ", ".join(values))

    def check(v):
        if v not in values:
            raise ScenarioError(f"'{v}' is not {told}")
        return v
    return check


parse_wd_action = parse_choice("drop", "forward", "alert", what="a watchdog action")


parse_wd_ports = parse_choice("bottleneck", "all")


parse_hash = parse_choice("l3", "l4")


parse_sport = parse_choice("qpn", "flow_label")


parse_placement = parse_choice("hash", "arranged")


def parse_coll_bytes(v):
    parse_size(v)
    if not 4096 <= to_bytes(v) <= 16 << 20:
        raise ScenarioError(f"'{v}' is not a size from 4KiB to 16MiB")
    return v


parse_collective = parse_choice("allreduce", "alltoall")


MUTANTS = ("none", "no_cut", "no_pfc", "no_watchdog", "one_uplink")


parse_mutant = parse_choice(*MUTANTS)


def parse_modes(v):
    names = v.split()
    if not names:
        raise ScenarioError("no mode given")
    for n in names:
        if not NAME.match(n):
            raise ScenarioError(f"'{n}' is not a mode name")
    return names


# key: (parser, default, meaning)
KEYS = {
    "senders": (parse_int(1, 8), "3", "hosts writing to h1"),
    "rate": (parse_mbit, "25mbit", "bottleneck rate, Mbit/s"),
    "duration": (parse_int(2, 120), "20", "seconds of load per mode"),
    "message": (parse_int(1, 1 << 24), "65536", "bytes per RDMA WRITE"),
    "dscp": (parse_int(0, 63), "26", "DSCP of every RoCE packet"),
    "probe": (parse_bool, "on", "latency probe from one more host"),
    "probe_size": (parse_int(1, 65536), "64", "bytes per probe write"),
    "buffer": (parse_size, "256KiB", "switch buffer per priority"),
    "xoff": (parse_size, "24KiB", "PFC XOFF per ingress port"),
    "xon": (parse_size, "12KiB", "PFC XON per ingress port"),
    "headroom": (parse_size, "160KiB", "PFC headroom per ingress port"),
    "kmin": (parse_size, "5KB", "ECN marking starts"),
    "kmax": (parse_size, "20KB", "ECN marking at pmax, above: every packet"),
    "pmax": (parse_int(0, 100), "20", "marking probability at kmax, %"),
    "link": (parse_link, "rate", "every host link's rate (rate: the bottleneck's); DCQCN's line rate, "
             "pauses timed at it"),
    "shape_hosts": (parse_bool, "on", "hosts send at most `link` (tbf on their egress)"),
    "profile": (parse_profile, "paper", "DCQCN profile"),
    "scale": (parse_bool, "on", "the profile (mlx5, paper) scaled to `link`"),
    "speedup": (parse_int(1, 1024), "16", "the scaled profile's clocks run this many times faster "
                "(its times and byte counter divided by it)"),
    "stagger": (parse_int(0, 60), "0", "seconds between senders joining (h2 first) and again between "
                "them leaving, in reverse order; 0: all together"),
    "qp_timeout": (parse_int(1, 31), "18", "QP ACK timeout exponent (perftest -u, rxecc-verbs --ack-timeout)"),
    "modes": (parse_modes, "baseline pfc dcqcn dcqcn+pfc", "modes, in order"),
    "topology": (parse_topology, "incast", "incast (the default), ring (PFC deadlock), victim (two "
                 "switches, head-of-line blocking), storm (a host's receive path stalls), ecmp "
                 "(a leaf-spine, flows across two spines), collective (rxecc-coll on the leaf-spine)"),
    "transfer": (parse_size, "2MiB", "ecmp: bytes each flow sends (a fixed transfer: its completion "
                 "time is measured)"),
    "flows_per_pair": (parse_int(1, 4), "2", "ecmp: QPs (perftest processes) per host pair"),
    "collective": (parse_collective, "alltoall", "collective: rxecc-coll's operation, allreduce or alltoall"),
    "coll_bytes": (parse_coll_bytes, "1MiB", "collective: the message size (nccl-tests' size: each rank's "
                   "buffer), 4KiB to 16MiB"),
    "coll_iters": (parse_int(1, 1000), "8", "collective: timed iterations (after one warm-up)"),
    "stall_at": (parse_int(0, 60), "4", "storm: seconds into the load when h1's receive path stalls"),
    "stall_release": (parse_int(1, 1000), "10", "storm: ms between the packets the stalled receive "
                      "path lets through"),
    "pfc_rx_xoff": (parse_ms(1, 10000), "20", "storm: h1 pauses its switch port when a packet waited "
                    "this long (ms)"),
    "mutant": (parse_mutant, "none", "make lab-mutants: a mechanism broken on purpose while every mode "
               "still claims it (no_cut: DCQCN's rp_min_rate at the line rate; no_pfc: the switch ports "
               "send no PFC; no_watchdog: no switch watchdog; one_uplink: lf1 routes every flow over sp1)"),
}


MODE_KEYS = {"pfc": parse_bool, "dcqcn": parse_bool, "profile": parse_profile,
             "label": str, "watchdog": parse_ms(10, 5000), "watchdog_action": parse_wd_action,
             "watchdog_ports": parse_wd_ports, "stall_watermark": parse_ms(80, 8000),
             "ecmp_hash": parse_hash, "udp_sport": parse_sport, "placement": parse_placement}


# what a mode has when its section does not say
# (stall_watermark: every mode sets it, since the modes share the devices;
# 8000 ms is the driver's default, mlx5's)
MODE_DEFAULTS = {"watchdog": 0, "watchdog_action": "drop", "watchdog_ports": "bottleneck",
                 "stall_watermark": 8000, "ecmp_hash": "l4", "udp_sport": "flow_label", "placement": "hash"}


def parse_dcqcn_key(key, value):
    name = key[len("dcqcn."):]
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,47}", name):
        raise ScenarioError(f"'{name}' is not a DCQCN parameter name")
    if not re.fullmatch(r"[0-9A-Za-z.%]+", value):
        raise ScenarioError(f"'{value}' is not a value for {name}")
    return name, value


def read_scenario(path, overrides):
    raw = {k: v[1] for k, v in KEYS.items()}
    given = set()
    dcqcn = []
    modes = {}
    section = None
    lines = read_text(path).splitlines() if path else []
    items = [(f"{path}:{n}", line) for n, line in enumerate(lines, 1)]
    items += [("override", o) for o in overrides]
    for where, line in items:
        if where == "override":
            section = None      # overrides are top-level keys
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            m = re.fullmatch(r"\[mode\s+(\S+)\]", text)
            if m:
                if not NAME.match(m.group(1)):
                    raise ScenarioError(f"'{m.group(1)}' is not a mode name")
                section = modes.setdefault(m.group(1), {"dcqcn_set": []})
                continue
            if text.startswith("["):
                raise ScenarioError(f"'{text}': sections are [mode NAME]")
            key, sep, value = (x.strip() for x in text.partition("="))
            if not sep or not value:
                raise ScenarioError(f"'{text}': want KEY = VALUE")
            if key.startswith("dcqcn."):
                (section["dcqcn_set"] if section is not None else dcqcn).append(
                    parse_dcqcn_key(key, value))
            elif section is not None:
                if key not in MODE_KEYS:
                    raise ScenarioError(f"unknown mode key '{key}' ({', '.join(MODE_KEYS)}, "
                                        "dcqcn.NAME)")
                section[key] = MODE_KEYS[key](value)
            elif key in KEYS:
                KEYS[key][0](value)
                raw[key] = value
                given.add(key)
            else:
                raise ScenarioError(f"unknown key '{key}'")
        except ScenarioError as e:
            raise ScenarioError(f"{where}: {e}") from None
    sc = {k: KEYS[k][0](v) for k, v in raw.items()}
    if sc["link"] == "rate":
        sc["link"] = sc["rate"]
    sc["dcqcn_set"] = dcqcn
    resolved = []
    for name in sc["modes"]:
        mode = dict(BUILTIN_MODES.get(name, {"pfc": False, "dcqcn": False, "label": name}))
        if name not in BUILTIN_MODES and name not in modes:
            raise ScenarioError(f"{path or 'scenario'}: mode '{name}' is neither built in "
                                f"({', '.join(BUILTIN_MODES)}) nor a [mode {name}] section")
        mode.update({k: v for k, v in modes.get(name, {}).items() if k != "dcqcn_set"})
        mode.setdefault("profile", sc["profile"])
        for k, v in MODE_DEFAULTS.items():
            mode.setdefault(k, v)
        mode["dcqcn_set"] = dcqcn + modes.get(name, {}).get("dcqcn_set", [])
        mode["name"] = name
        resolved.append(mode)
    sc["modes"] = resolved
    labels = [m["label"] for m in resolved]
    if len(set(labels)) != len(labels):
        # the report and the spread tell the checks apart by their text
        raise ScenarioError(f"{path or 'scenario'}: two modes have the label "
                            f"'{next(x for x in labels if labels.count(x) > 1)}'")
    if sc["topology"] != "incast" and (sc["stagger"] or "senders" in given):
        raise ScenarioError(f"{path or 'scenario'}: senders and stagger are the incast's; the "
                            f"{sc['topology']} topology has its own flows (docs/lab.md)")
    if sc["topology"] != "collective" and {"collective", "coll_bytes", "coll_iters"} & given:
        raise ScenarioError(f"{path or 'scenario'}: collective, coll_bytes and coll_iters are the "
                            "collective topology's")
    if sc["topology"] != "ecmp" and {"transfer", "flows_per_pair"} & given:
        raise ScenarioError(f"{path or 'scenario'}: transfer and flows_per_pair are the ecmp "
                            "topology's")
    if sc["topology"] != "ecmp" and any({"ecmp_hash", "udp_sport", "placement"} & set(m) for m in modes.values()):
        raise ScenarioError(f"{path or 'scenario'}: the mode keys ecmp_hash, udp_sport and placement are the "
                            "ecmp topology's")
    for m in resolved:
        if m["placement"] == "arranged" and (m["ecmp_hash"] != "l3" or sc["flows_per_pair"] != 2):
            # the guest asks lf1's FIB where each flow goes before it starts:
            # known for an address hash, not for a source port that the QP
            # numbers give
            raise ScenarioError(f"{path or 'scenario'}: mode {m['name']}: placement = arranged needs "
                                "ecmp_hash = l3 and flows_per_pair = 2")
    if sc["mutant"] == "one_uplink" and sc["topology"] != "ecmp":
        raise ScenarioError(f"{path or 'scenario'}: mutant one_uplink is the ecmp topology's")
    if sc["topology"] == "ecmp":
        n = to_bytes(sc["transfer"]) // sc["message"]
        # (perftest's -n: at least 5 iterations)
        if to_bytes(sc["transfer"]) % sc["message"] or not 5 <= n <= 100000000:
            raise ScenarioError(f"{path or 'scenario'}: transfer {sc['transfer']} is not 5 or more whole "
                                f"messages of {sc['message']} B")
    if sc["topology"] == "storm" and sc["stall_release"] >= sc["pfc_rx_xoff"]:
        # rxecc resumes the port once no packet has come for pfc_rx_xoff
        raise ScenarioError(f"{path or 'scenario'}: stall_release {sc['stall_release']} ms is not under "
                            f"pfc_rx_xoff {sc['pfc_rx_xoff']} ms: h1 would send XON between two "
                            "released packets, and its pauses would not hold")
    if sc["topology"] == "storm" and sc["stall_at"] >= sc["duration"]:
        raise ScenarioError(f"{path or 'scenario'}: stall_at {sc['stall_at']} is not within the "
                            f"duration of {sc['duration']} s")
    if 0 < sc["stagger"] < SETTLE_S + 2 * AGREE_BIN_S:
        raise ScenarioError(f"{path or 'scenario'}: stagger {sc['stagger']} leaves no step to measure: "
                            f"0 or at least {SETTLE_S + 2 * AGREE_BIN_S:g} s")
    alone = sc["duration"] - 2 * (sc["senders"] - 1) * sc["stagger"]
    if sc["stagger"] and alone < 4:
        raise ScenarioError(f"{path or 'scenario'}: duration {sc['duration']} is too short for "
                            f"{sc['senders']} senders joining and leaving every {sc['stagger']} s: "
                            f"the last would send {alone} s (at least 4)")
    for a, b in (("xon", "xoff"), ("kmin", "kmax")):
        if to_bytes(sc[a]) > to_bytes(sc[b]):
            raise ScenarioError(f"{path or 'scenario'}: {a} {sc[a]} is above {b} {sc[b]}")
    return sc


def write_shell(sc, path):
    q = shlex.quote
    out = [f"SENDERS={sc['senders']}", f"RATE={sc['rate']}", f"DURATION={sc['duration']}",
           f"MESSAGE={sc['message']}", f"DSCP={sc['dscp']}", f"PROBE={int(sc['probe'])}",
           f"PROBE_SIZE={sc['probe_size']}",
           f"BUFFER={q(sc['buffer'])}", f"XOFF={q(sc['xoff'])}", f"XON={q(sc['xon'])}",
           f"HEADROOM={q(sc['headroom'])}", f"KMIN={q(sc['kmin'])}", f"KMAX={q(sc['kmax'])}",
           f"PMAX={sc['pmax']}", f"LINK={sc['link']}mbit", f"QP_TIMEOUT={sc['qp_timeout']}",
           f"SHAPE_HOSTS={int(sc['shape_hosts'])}", f"SCALE={int(sc['scale'])}",
           f"SPEEDUP={sc['speedup']}", f"STAGGER={sc['stagger']}",
           f"TOPOLOGY={sc['topology']}", f"STALL_AT={sc['stall_at']}",
           f"STALL_RELEASE={sc['stall_release']}", f"PFC_RX_XOFF={sc['pfc_rx_xoff']}",
           f"TRANSFER={to_bytes(sc['transfer'])}", f"FLOWS_PER_PAIR={sc['flows_per_pair']}",
           f"COLL_OP={sc['collective']}", f"COLL_BYTES={to_bytes(sc['coll_bytes'])}",
           f"COLL_ITERS={sc['coll_iters']}", f"MUTANT={sc['mutant']}",
           f"LINK_KBPS={round(sc['link'] * 1000)}",
           "MODES=(" + " ".join(q(m["name"]) for m in sc["modes"]) + ")",
           "declare -A M_PFC M_DCQCN M_PROFILE M_SET M_WD M_WD_ACTION M_WD_PORTS M_STALL M_HASH M_SPORT "
           "M_PLACE"]
    for m in sc["modes"]:
        n = q(m["name"])
        sets = " ".join(f"{k} {v}" for k, v in m["dcqcn_set"])
        out += [f"M_PFC[{n}]={int(m['pfc'])}", f"M_DCQCN[{n}]={int(m['dcqcn'])}",
                f"M_PROFILE[{n}]={q(m['profile'])}", f"M_SET[{n}]={q(sets)}",
                f"M_WD[{n}]={m['watchdog']}", f"M_WD_ACTION[{n}]={q(m['watchdog_action'])}",
                f"M_WD_PORTS[{n}]={q(m['watchdog_ports'])}",
                f"M_STALL[{n}]={m['stall_watermark']}", f"M_HASH[{n}]={m['ecmp_hash']}",
                f"M_SPORT[{n}]={m['udp_sport']}", f"M_PLACE[{n}]={m['placement']}"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("# written by ci/lab/lab.py from the scenario\n" + "\n".join(out) + "\n")

