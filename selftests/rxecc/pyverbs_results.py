#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the verbose log of rdma-core's pyverbs test runner (unittest -v)
into one line per test: '<test id> <pass|skip|fail|xfail> [reason]'.

unittest prints 'test_x (tests.mod.Class.test_x) ... ok', or, for a test with a
docstring, the id on one line and '<docstring> ... ok' on the next."""
import re
import sys

ID = re.compile(r"^(test\w*) \(([\w.]+)\)(?: \.\.\. (.*))?$")


def status(text):
    text = text.strip()
    if text == "ok":
        return "pass", ""
    if text.startswith("skipped"):
        return "skip", text[len("skipped"):].strip().strip("'\"")
    if text == "expected failure":
        return "xfail", ""
    return "fail", text


def parse(lines):
    results = {}
    pending = None
    for line in lines:
        line = line.rstrip("\n")
        m = ID.match(line)
        if m:
            pending = m.group(2)
            if m.group(3) is not None:
                results[pending] = status(m.group(3))
                pending = None
            continue
        if pending and " ... " in line:
            results[pending] = status(line.rsplit(" ... ", 1)[1])
            pending = None
    return results


def main():
    with open(sys.argv[1], errors="replace") as f:
        results = parse(f)
    for test_id in sorted(results):
        st, why = results[test_id]
        print(f"{test_id} {st} {why}".rstrip())
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
