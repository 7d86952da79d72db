#!/usr/bin/env python3
"""Host tests of perf_summary.py (make check-host)."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perf_summary  # noqa: E402

REPORT = """\
# Samples: 2K of event 'cpu-clock'
#
    50.00%  [kernel.kallsyms]  [k] native_safe_halt
    10.00%  [kernel.kallsyms]  [k] crc32_body
     5.00%  [rdma_rxe]         [k] rxe_crc32.isra.0
     8.00%  [kernel.kallsyms]  [k] memcpy
     4.00%  [rdma_rxecc]       [k] rxe_mr_copy
     3.00%  [kernel.kallsyms]  [k] __alloc_skb
     2.00%  [kernel.kallsyms]  [k] _raw_spin_unlock_irqrestore
     3.00%  [rdma_rxecc]       [k] rxecc_tx_wait
     4.00%  [rdma_rxecc]       [k] execute
     2.00%  [rdma_rxe]         [k] rxe_responder
     1.00%  [kernel.kallsyms]  [k] rxe_do_task
     3.00%  [kernel.kallsyms]  [k] ip_finish_output2
     4.00%  libc.so.6          [.] __memcpy_avx_unaligned
     1.00%  [kernel.kallsyms]  [k] some_other_function
"""


class Categories(unittest.TestCase):
    def test_rules(self):
        c = perf_summary.category
        self.assertEqual(c("native_safe_halt"), "idle")
        for idle in ("pv_native_safe_halt", "acpi_safe_halt", "poll_idle", "intel_idle",
                     "mwait_idle_with_hints"):
            self.assertEqual(c(idle), "idle", idle)
        self.assertEqual(c("crc32_body"), "icrc")
        self.assertEqual(c("rxe_crc32.isra.0", dso="[rdma_rxe]"), "icrc")
        self.assertEqual(c("rxe_icrc_check"), "icrc")
        self.assertEqual(c("memcpy"), "copy")
        self.assertEqual(c("rxe_mr_copy"), "copy")
        self.assertEqual(c("rxe_mr_copy_xarray", dso="[rdma_rxecc]"), "copy")  # 6.12
        self.assertEqual(c("do_work", dso="[rdma_rxecc]"), "tasks")  # 6.12's rxe_task
        self.assertEqual(c("kmem_cache_alloc_node"), "alloc")
        self.assertEqual(c("finish_task_switch.isra.0"), "tasks")
        self.assertEqual(c("_raw_spin_lock_irqsave"), "locks")
        self.assertEqual(c("rxecc_np_rcv"), "rxecc")
        self.assertEqual(c("rxe_requester"), "rxe")
        self.assertEqual(c("veth_xmit"), "net")
        self.assertEqual(c("__memcpy_avx_unaligned", kernel=False), "user")
        self.assertEqual(c("some_other_function"), "other")

    def test_module_symbols_without_prefix_are_rxe(self):
        self.assertEqual(perf_summary.category("execute", dso="[rdma_rxecc]"), "rxe")
        self.assertEqual(perf_summary.category("execute", dso="[kernel.kallsyms]"), "other")


class Summary(unittest.TestCase):
    def test_shares(self):
        rows = perf_summary.parse(REPORT)
        self.assertEqual(len(rows), 14)
        s = perf_summary.summarize(rows)
        self.assertAlmostEqual(s["idle"], 50.0)
        self.assertAlmostEqual(s["icrc"], 15.0)
        self.assertAlmostEqual(s["copy"], 12.0)
        self.assertAlmostEqual(s["rxe"], 6.0)  # execute and rxe_responder
        self.assertAlmostEqual(s["rxecc"], 3.0)
        self.assertAlmostEqual(s["user"], 4.0)
        self.assertAlmostEqual(sum(s.values()), 100.0)

    def test_markdown_of_busy(self):
        md = perf_summary.markdown(perf_summary.parse(REPORT), top=3)
        self.assertIn("| icrc | 15.0 % | 30.0 % |", md)  # 15 of 50 busy
        self.assertIn("| idle | 50.0 % | – |", md)
        self.assertIn("| `crc32_body` | icrc | 20.0 % |", md)
        self.assertNotIn("native_safe_halt", md)  # idle is no top symbol
        self.assertEqual(md.count("| `"), 3)

    def test_without_dso_column(self):
        rows = perf_summary.parse("    61.16%  [k] native_safe_halt\n     7.40%  [k] crc32_body\n")
        self.assertEqual(rows, [(61.16, True, "native_safe_halt", ""), (7.4, True, "crc32_body", "")])

    def test_cli_fails_on_no_samples(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "perf_summary.py")
        r = subprocess.run([sys.executable, script], input="# nothing\n", capture_output=True,
                           text=True, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no 'NN.NN%", r.stderr)
        r = subprocess.run([sys.executable, script, "--top", "2"], input=REPORT,
                           capture_output=True, text=True, check=False)
        self.assertEqual(r.returncode, 0)
        self.assertIn("| rxecc | 3.0 % | 6.0 % |", r.stdout)


if __name__ == "__main__":
    unittest.main()
