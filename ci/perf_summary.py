#!/usr/bin/env python3
"""Where the cycles go: a summary of `perf report --sort sym` output.

    perf report -i perf.data --no-children --sort dso,sym --stdio -g none | perf_summary.py [--top N]

Reads perf's lines ("  12.34%  [kernel.kallsyms]  [k] crc32_body"; the dso
column may be left out) and prints, as Markdown, the
share of the samples in each category (idle, the ICRC, payload copies,
allocation, task scheduling, locks, rxecc's hooks, the rest of rxe, the
network stack, userspace, other), of all samples and of the busy ones (all
but idle), then the top N symbols. A category is decided by the first rule
that matches the symbol, in the order of CATEGORIES; a symbol of the
rdma_rxe or rdma_rxecc module that none matches is "rxe" (rxe's protocol code:
its static functions have names such as execute or check_psn).
"""
import argparse
import re
import sys

# (category, regular expression on the symbol); kernel symbols only, in order.
CATEGORIES = [
    # (6.1 samples native_safe_halt; in 6.12 it is inlined into pv_native_safe_halt)
    ("idle", r"^(native_safe_halt|pv_native_safe_halt|acpi_safe_halt|default_idle|default_idle_call|"
             r"cpu_idle_poll|do_idle|poll_idle|intel_idle\w*|acpi_idle\w*|mwait_idle\w*|"
             r"arch_cpu_idle\w*)$"),
    ("icrc", r"crc32|rxe_icrc|^crypto_shash|^shash_|^chksum_"),
    ("copy", r"^(memcpy|memmove|__memcpy\w*|memcpy_\w+|rxe_mr_copy\w*|copy_data|rxe_copy\w*|"
             r"_copy_to_\w+|_copy_from_\w+|copy_user\w*|rep_movs\w*|skb_copy\w*|"
             r"__skb_datagram_iter|skb_put_data)$"),
    ("alloc", r"^(kmem_cache_\w+|__kmem_cache_\w+|__kmalloc\w*|kmalloc\w*|kfree\w*|"
              r"__alloc_skb|__build_skb\w*|skb_release_\w+|__slab_\w+|___slab_\w+|slab_\w+|"
              r"alloc_pages\w*|__alloc_pages\w*|free_unref_\w+|__free_pages\w*|kfree_skb\w*|"
              r"consume_skb|__kfree_skb|skb_free_head|page_frag_\w+|memset|__memset|"
              r"this_cpu_cmpxchg16b_emu|get_page_from_freelist|rmqueue\w*)$"),
    ("tasks", r"^(rxe_do_task|rxe_run_task|rxe_sched_task|do_task|do_work|__tasklet_\w+|tasklet_\w+|"
              r"handle_softirqs|__do_softirq|do_softirq\w*|run_ksoftirqd|__raise_softirq\w*|"
              r"raise_softirq\w*|queue_work\w*|__queue_work|process_one_work|worker_thread|"
              r"schedule\w*|__schedule|finish_task_switch\w*|try_to_wake_up|ttwu_\w+|"
              r"wake_up\w*|__wake_up\w*|irq_exit\w*|__irq_exit_rcu)(\.\w+)*$"),
    ("locks", r"^(_raw_spin_\w+|_raw_read_\w+|_raw_write_\w+|queued_spin_\w+|"
              r"native_queued_spin_\w+|__raw_spin_\w+|queued_read_\w+|queued_write_\w+)$"),
    ("rxecc", r"^(rxecc_\w+|dcqcn_\w+)"),
    ("rxe", r"^(rxe_\w+|__rxe_\w+)"),
    ("net", r"^(ip_\w+|ip6_\w+|__ip_\w+|__ip6_\w+|udp\w*|__udp\w*|__netif_\w+|netif_\w+|"
            r"__dev_\w+|dev_\w+|veth_\w+|skb_\w+|__skb_\w+|nf_\w+|fib\w*|neigh_\w+|dst_\w+|"
            r"sch_\w+|__qdisc_\w+|qdisc_\w+|pfifo_\w+|net_rx_action|__napi_\w+|napi_\w+|"
            r"process_backlog|inet\w*|eth_\w+|rt_\w+|__rt_\w+|ipv6_\w+|icmp\w*|__sock_\w+|"
            r"sock_\w+|validate_xmit_\w+)"),
]
_COMPILED = [(name, re.compile(rx)) for name, rx in CATEGORIES]
ORDER = [name for name, _ in CATEGORIES] + ["user", "other"]
_LINE = re.compile(r"^\s*([0-9.]+)%\s+(?:(\S+)\s+)?\[([k.])\]\s+(\S+)")
_RXE_MODULES = ("[rdma_rxe]", "[rdma_rxecc]")


def category(symbol, kernel=True, dso=""):
    """The category of a symbol (kernel or user; dso as perf names it)."""
    if not kernel:
        return "user"
    base = symbol.split(".")[0]
    for name, rx in _COMPILED:
        if rx.search(symbol) or rx.search(base):
            return name
    return "rxe" if dso in _RXE_MODULES else "other"


def parse(text):
    """[(percent, kernel, symbol, dso)] from perf report's stdio lines."""
    rows = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            rows.append((float(m.group(1)), m.group(3) == "k", m.group(4), m.group(2) or ""))
    return rows


def summarize(rows):
    """{category: percent of all samples}, with every category present."""
    out = {name: 0.0 for name in ORDER}
    for pct, kernel, sym, dso in rows:
        out[category(sym, kernel, dso)] += pct
    return out


def markdown(rows, top):
    shares = summarize(rows)
    total = sum(shares.values())
    if total <= 0:
        raise ValueError("no samples in the report")
    busy = total - shares["idle"]
    lines = ["| where | of all samples | of busy samples |", "|---|---:|---:|"]
    for name in ORDER:
        of_busy = "–" if name == "idle" or busy <= 0 else f"{100.0 * shares[name] / busy:.1f} %"
        lines.append(f"| {name} | {100.0 * shares[name] / total:.1f} % | {of_busy} |")
    lines += ["", "| symbol | where | of busy samples |", "|---|---|---:|"]
    busy_rows = [r for r in rows if category(r[2], r[1], r[3]) != "idle"]
    for pct, kernel, sym, dso in sorted(busy_rows, key=lambda r: -r[0])[:top]:
        share = f"{100.0 * pct / busy:.1f} %" if busy > 0 else "–"
        lines.append(f"| `{sym}` | {category(sym, kernel, dso)} | {share} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=15, help="symbols listed (default 15)")
    args = ap.parse_args(argv)
    rows = parse(sys.stdin.read())
    if not rows:
        print("perf_summary: no 'NN.NN%  [k] symbol' line in the input", file=sys.stderr)
        return 1
    try:
        sys.stdout.write(markdown(rows, args.top))
    except ValueError as e:
        print(f"perf_summary: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
