#!/usr/bin/env python3
"""The kernel's tables against the docs' tables.

rxecc declares its port counters (rxecc_counters.h), DCQCN parameters
(RXECC_DCQCN_PARAMS, rxecc_dcqcn.h; values of the mlx5 profile in
rxecc_dcqcn.c) and device switches (RXECC_SWITCHES, rxecc.h) once each. The
docs list them in Markdown tables, a row per name (first cell: the name in
backticks; a per-priority counter as `rx_prio<p>_pause`):
  - counters: a row in docs/counters.md, docs/dcqcn.md or docs/pfc.md;
  - DCQCN parameters: a row of docs/dcqcn.md's parameter table (header
    `| name | unit | range | mlx5 |`) with the kernel's range and the mlx5
    profile's value;
  - switches: a row of that table or of docs/pfc.md's knob table (header
    `| knob | unit | range | default |`) with the boot default.
A name missing from the docs, a row of those two tables that names nothing
the kernel has, or a different range or default fails.

  ci/tables_check.py [--root DIR]   exit 0 when they agree, 1 with one line per
                                    disagreement
"""
import argparse
import os
import re
import sys

KDIR = "drivers/infiniband/sw/rxecc"


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def macro_body(text, name):
    """The body of `#define NAME(...)`, continuation lines joined."""
    m = re.search(r"^#define " + re.escape(name) + r"\([^)]*\)[ \t]*\\\n((?:.*\\\n)*.*)$", text, re.M)
    if not m:
        raise SystemExit(f"tables_check: no #define {name} found")
    body = re.sub(r"/\*.*?\*/", " ", m.group(1).replace("\\\n", " "), flags=re.S)
    return body


def calls(body, fn):
    """The argument lists of FN(...) calls in BODY (strings kept whole)."""
    out = []
    for m in re.finditer(r"\b" + fn + r"\(", body):
        depth, i, args, cur = 1, m.end(), [], ""
        while depth:
            c = body[i]
            if c == '"':
                j = body.index('"', i + 1)
                cur += body[i:j + 1]
                i = j + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if not depth:
                    break
            if c == "," and depth == 1:
                args.append(cur.strip())
                cur = ""
            else:
                cur += c
            i += 1
        args.append(cur.strip())
        out.append(args)
    return out


def cstring(s):
    return "".join(re.findall(r'"([^"]*)"', s))


def constants(root):
    """#define NAME number and enum members of the headers the tables use."""
    vals = {}
    for rel in (f"{KDIR}/rxecc.h", f"{KDIR}/rxecc_dcqcn.h", "include/uapi/rdma/rxecc_netlink.h"):
        text = read(root, rel)
        for m in re.finditer(r"^#define\s+(\w+)\s+([0-9]+|0x[0-9a-fA-F]+)U?\b", text, re.M):
            vals[m.group(1)] = int(m.group(2), 0)
        for m in re.finditer(r"\benum\s+\w+\s*\{(.*?)\}", text, re.S):
            n = 0
            for item in re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S).split(","):
                item = item.strip()
                if not item:
                    continue
                name, _, val = item.partition("=")
                if val.strip():
                    try:
                        n = int(val.strip(), 0)
                    except ValueError:
                        continue
                vals[name.strip()] = n
                n += 1
    return vals


def value(expr, consts):
    expr = expr.strip()
    m = re.fullmatch(r"(\w+)U?\s*<<\s*(\w+)", expr)
    if m:
        return value(m.group(1), consts) << value(m.group(2), consts)
    m = re.fullmatch(r"(0x[0-9a-fA-F]+|[0-9]+)U?", expr)
    if m:
        return int(m.group(1), 0)
    if expr in consts:
        return consts[expr]
    raise SystemExit(f"tables_check: cannot evaluate '{expr}'")


def kernel_counters(root):
    text = read(root, f"{KDIR}/rxecc_counters.h")
    names = [cstring(a[1]) for a in calls(macro_body(text, "RXECC_COUNTERS"), "C")]
    for macro in re.findall(r"RXECC_CNT_PER_PRIO\((\w+), C\)", macro_body(text, "RXECC_COUNTERS")):
        for a in calls(macro_body(text, macro), "C"):
            names.append(cstring(re.sub(r'"\s*#p\s*"', "<p>", a[1])))
    return names


def kernel_params(root, consts):
    text = read(root, f"{KDIR}/rxecc_dcqcn.h")
    body = macro_body(text, "RXECC_DCQCN_PARAMS")
    src = read(root, f"{KDIR}/rxecc_dcqcn.c")
    prof = re.search(r"rxecc_profile_mlx5 = \{(.*?)\};", src, re.S).group(1)
    fields = {m.group(1): int(m.group(2)) for m in re.finditer(r"\.(\w+) = (\d+),", prof)}
    out = {}
    for kind in ("P", "R"):
        for a in calls(body, kind):
            name = a[0]
            field = name if kind == "P" else name + "_kbps"
            default = fields.get(field, 0) // (1 if kind == "P" else 1000)
            out[name] = {"min": value(a[2], consts), "max": value(a[3], consts), "default": default}
    return out


def kernel_switches(root, consts):
    body = macro_body(read(root, f"{KDIR}/rxecc.h"), "RXECC_SWITCHES")
    return {a[0]: {"min": value(a[4], consts), "max": value(a[5], consts), "default": value(a[6], consts)}
            for a in calls(body, "S")}


def doc_tables(root, rel):
    """Per table: its header cells and {name: cells} of its rows."""
    tables, header, rows = [], None, None
    for line in read(root, rel).splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header, rows = cells, {}
            elif not set(line) <= set("|-: "):
                for name in re.findall(r"`([a-z0-9_<>]+)`", cells[0]):
                    rows[name] = cells
        elif header is not None:
            tables.append((header, rows))
            header = None
    return tables


# A doc's word for a switch value (the tool's words).
WORDS = {"dscp": 8, "auto": 0, "flow_label": 0, "qpn": 1, "av": 0, "ect1": 1, "ect0": 2}


def doc_number(cell):
    cell = cell.replace("`", "").strip()
    m = re.match(r"(0x[0-9a-fA-F]+|[0-9]+)", cell)
    if m:
        return int(m.group(1), 0)
    word = cell.split()[0] if cell else ""
    return WORDS.get(word)


def doc_range(cell):
    cell = cell.replace("`", "")
    m = re.search(r"(0x[0-9a-fA-F]+|[0-9]+)\s*[–-]\s*(0x[0-9a-fA-F]+|[0-9]+)", cell)
    return (int(m.group(1), 0), int(m.group(2), 0)) if m else None


def check(root):
    consts = constants(root)
    errors = []
    counters = kernel_counters(root)
    params = kernel_params(root, consts)
    switches = kernel_switches(root, consts)

    documented = set()
    for rel in ("docs/counters.md", "docs/dcqcn.md", "docs/pfc.md"):
        for _, rows in doc_tables(root, rel):
            documented |= set(rows)
    for name in counters:
        if name not in documented:
            errors.append(f"counter {name}: no row in docs/counters.md, docs/dcqcn.md or docs/pfc.md")

    param_rows, knob_rows = {}, {}
    for header, rows in doc_tables(root, "docs/dcqcn.md"):
        if header[:4] == ["name", "unit", "range", "mlx5"]:
            param_rows.update(rows)
    for header, rows in doc_tables(root, "docs/pfc.md"):
        if header[:4] == ["knob", "unit", "range", "default"]:
            knob_rows.update(rows)
    if not param_rows:
        errors.append("docs/dcqcn.md: no parameter table (| name | unit | range | mlx5 |)")
    if not knob_rows:
        errors.append("docs/pfc.md: no knob table (| knob | unit | range | default |)")

    known = set(params) | set(switches) | {"profile", "dscp2prio"}
    for rel, rows in (("docs/dcqcn.md", param_rows), ("docs/pfc.md", knob_rows)):
        for name in rows:
            if name not in known:
                errors.append(f"{rel}: a row for {name}, which the kernel's tables do not have")

    for name, k in params.items():
        row = param_rows.get(name)
        if row is None:
            errors.append(f"DCQCN parameter {name}: no row in docs/dcqcn.md's parameter table")
            continue
        rng = doc_range(row[2])
        if rng != (k["min"], k["max"]):
            errors.append(f"DCQCN parameter {name}: docs range {row[2]}, kernel {k['min']}..{k['max']}")
        if row[3].startswith("×"):
            continue    # a _kbps twin: its Mbit/s name's value × 1000
        if doc_number(row[3]) != k["default"]:
            errors.append(f"DCQCN parameter {name}: docs mlx5 value {row[3]}, kernel {k['default']}")

    for name, k in switches.items():
        row, col = (param_rows.get(name), 3) if name in param_rows else (knob_rows.get(name), 3)
        if row is None:
            errors.append(f"switch {name}: no row in docs/dcqcn.md's or docs/pfc.md's table")
            continue
        if doc_number(row[col]) != k["default"]:
            errors.append(f"switch {name}: docs default {row[col]}, kernel {k['default']}")
    return errors, len(counters), len(params), len(switches)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    a = ap.parse_args()
    errors, nc, np_, ns = check(a.root)
    for e in errors:
        print(e)
    print(f"{nc} counters, {np_} DCQCN parameters, {ns} switches: "
          f"{len(errors)} disagreement(s) with the docs")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
