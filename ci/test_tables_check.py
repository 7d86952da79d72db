#!/usr/bin/env python3
"""ci/tables_check.py on a copy of the files it reads, one disagreement at a
time: each mutation must fail with its own line, the unmutated copy pass."""
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
K = "drivers/infiniband/sw/rxecc"
FILES = [f"{K}/rxecc_counters.h", f"{K}/rxecc.h", f"{K}/rxecc_dcqcn.h", f"{K}/rxecc_dcqcn.c",
         "include/uapi/rdma/rxecc_netlink.h", "docs/counters.md", "docs/dcqcn.md", "docs/pfc.md"]

# (what, file, old text, new text, a word the failure names)
MUTATIONS = [
    ("a counter the docs lack", f"{K}/rxecc_counters.h", '\tC(RP_TX_DEFERRED, "rp_tx_deferred") \\\n',
     '\tC(RP_TX_DEFERRED, "rp_tx_deferred") \\\n\tC(RP_FAKE, "rp_fake_counter") \\\n', "rp_fake_counter"),
    ("a counter's row deleted", "docs/dcqcn.md", "| `rp_tx_deferred` |", "| rp_tx_deferred |",
     "rp_tx_deferred"),
    ("a parameter's range changed", f"{K}/rxecc_dcqcn.h", "P(rp_gd, RP_GD, 0, 15,",
     "P(rp_gd, RP_GD, 0, 14,", "rp_gd"),
    ("an mlx5 value changed", f"{K}/rxecc_dcqcn.c", "\t.rp_gd = 11,\n\t.np_min_time_between_cnps = 4,",
     "\t.rp_gd = 10,\n\t.np_min_time_between_cnps = 4,", "rp_gd"),
    ("a switch's default changed", f"{K}/rxecc.h", "S(pfc_enable, PFC_ENABLE, pfc_enable, u8, 0, 0xff, 0,",
     "S(pfc_enable, PFC_ENABLE, pfc_enable, u8, 0, 0xff, 8,", "pfc_enable"),
    ("a doc row for no parameter", "docs/pfc.md", "| `tx_qlimit` |", "| `tx_qlimit_old` |", "tx_qlimit"),
]


def run(root):
    p = subprocess.run([sys.executable, os.path.join(TOP, "ci/tables_check.py"), "--root", root],
                       capture_output=True, text=True, check=False)
    return p.returncode, p.stdout


def main():
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        def fresh():
            shutil.rmtree(tmp)
            for rel in FILES:
                os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
                shutil.copy(os.path.join(TOP, rel), os.path.join(tmp, rel))
        fresh()
        rc, out = run(tmp)
        print(f"unmutated: exit {rc}: {out.strip()}")
        fails += rc != 0
        for what, rel, old, new, word in MUTATIONS:
            fresh()
            path = os.path.join(tmp, rel)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if old not in text:
                print(f"not ok {what}: '{old.strip()}' is not in {rel}")
                fails += 1
                continue
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace(old, new, 1))
            rc, out = run(tmp)
            ok = rc == 1 and word in out
            print(f"{'ok' if ok else 'not ok'} {what}: exit {rc}: {out.strip()}")
            fails += not ok
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
