#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of tool.sh (what `rxecc` shows against the module and sysfs, the
netlink privileges); the host tests are test_tool_check.py.

  knobs TEXT JSON [--params DIR]
      `rxecc dcqcn show` of one device as TEXT and as JSON (`-j`): every
      module parameter of DIR (/sys/module/rdma_rxecc/parameters) but the
      profile has the value the JSON shows (in the tool's names: ecn 2 is
      ect0, roce_prio 8 is dscp, udp_sport 0/1 flow_label/qpn, the enable
      masks as numbers) and a line "  NAME VALUE" in TEXT; a line for each
      that has not
  stats HW_COUNTERS
      `rxecc -j stats` of one device on stdin: every counter of the
      device's HW_COUNTERS directory (sysfs) but lifespan has the value the
      JSON shows, the JSON none that sysfs has not, and sent_pkts is above
      0; a line for each that differs and one with the counts
  privs GOT WANT
      genl_privs.py's JSON (GOT) has the errno that WANT ("CMD=ERRNO ...")
      gives each command; a line for each that has not
  rts-qp
      `rxecc -j qp show` on stdin holds an RC QP in RTS with a peer at line
      rate (10 Gbit/s), not limited: prints its number
"""
import argparse
import json
import os
import re
import sys

PARAMS = "/sys/module/rdma_rxecc/parameters"


def read_dir(path, leave_out=()):
    """{name: stripped content} of every file of the directory path, but
    those named in leave_out, in name order."""
    out = {}
    for name in sorted(os.listdir(path)):
        if name in leave_out:
            continue
        with open(os.path.join(path, name), encoding="utf-8") as f:
            out[name] = f.read().strip()
    return out


def knob_problems(text, dev, params):
    """The lines naming each module parameter (params: {name: sysfs value},
    the profile left out) whose value dev (one device of `rxecc -j dcqcn
    show`) does not show, or that the text of `rxecc dcqcn show` lacks."""
    out = []
    for k in sorted(params):
        want = params[k]
        v = dev["dcqcn"].get(k, dev.get(k))
        # a module parameter is the number netlink carries; the tool names some
        if k == "ecn" and want == "2":
            want = "ect0"
        elif k in ("rp_enable", "np_enable", "pfc_enable"):
            want = int(want, 0)
        elif k == "roce_prio" and want == "8":
            want = "dscp"
        elif k == "udp_sport":
            want = ("flow_label", "qpn")[int(want)]
        if str(v) != str(want):
            out.append(f"{k}: tool {v}, module parameter {want}")
        if not re.search(rf"^  {k} +[^ ]+", text, re.M):
            out.append(f"{k} missing in text")
    return out


def stats_compare(counters, hw):
    """(ok, lines): the tool's counters (the "counters" of one device of
    `rxecc -j stats`) against hw ({name: sysfs value}, lifespan left out)."""
    bad = [n for n in hw if str(counters.get(n)) != hw[n]]
    extra = sorted(set(counters) - set(hw))
    out = [f"{n}: tool {counters.get(n)} sysfs {hw[n]}" for n in bad]
    out.append(f"{len(hw)} counters compared, {len(bad)} differ; in JSON but not sysfs: {extra or None}")
    return not (bad or extra or counters.get("sent_pkts", 0) <= 0), out


def privs_problems(got, want):
    """The lines naming each command of want ("CMD=ERRNO ...") whose errno
    in got (genl_privs.py's {command: errno}) is not the one wanted."""
    return [f"{k}: {got.get(k)}, want {v}" for k, v in (w.split("=") for w in want.split())
            if str(got.get(k)) != v]


def rts_qp(qps):
    """The number of the first RC QP of qps (`rxecc -j qp show`) in RTS with
    a peer, at line rate (10 Gbit/s) and not limited; None if there is none."""
    ok = [q for q in qps if q["type"] == "RC" and q["state"] == "RTS" and q["dest_qpn"] > 0
          and q["rate_kbps"] == 10000000 and not q["limited"]]
    return ok[0]["qpn"] if ok else None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("knobs")
    p.add_argument("text")
    p.add_argument("json")
    p.add_argument("--params", default=PARAMS)
    sub.add_parser("stats").add_argument("hw_counters")
    p = sub.add_parser("privs")
    p.add_argument("got")
    p.add_argument("want")
    sub.add_parser("rts-qp")
    a = ap.parse_args(argv[1:])
    if a.cmd == "knobs":
        bad = knob_problems(a.text, json.loads(a.json)[0], read_dir(a.params, ("profile",)))
        for line in bad:
            print(line)
        return 1 if bad else 0
    if a.cmd == "stats":
        ok, out = stats_compare(json.load(sys.stdin)[0]["counters"], read_dir(a.hw_counters, ("lifespan",)))
        print("\n".join(out))
        return 0 if ok else 1
    if a.cmd == "privs":
        bad = privs_problems(json.loads(a.got), a.want)
        print("\n".join(bad))
        return 1 if bad else 0
    qpn = rts_qp(json.load(sys.stdin))
    if qpn is None:
        print("no RC QP in RTS with a peer at line rate, not limited")
        return 1
    print(qpn)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
