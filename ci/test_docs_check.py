#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Unit tests of ci/docs_check.py: a small repository made in a temporary
folder, clean, then with one wrong name at a time, each of which must be
reported with its file and line; and the real tree, of which every kind of
name must have been checked at least once."""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import docs_check  # noqa: E402  pylint: disable=wrong-import-position

FILES = {
    ".gitignore": "/build/\n*.ko\n",
    "Makefile": """\
        # make demo    the lab (SCENARIO=NAME, RUNS=N)
        # Variables: KVER, W (kbuild's warning level)
        KVER ?= 6.1
        .PHONY: all check \\
        \tdemo
        all: module
        module:
        \t$(MAKE) -C /lib/modules/$(KVER)/build M=$(CURDIR) modules
        check: all
        \t@ci/check.sh
        demo: all
        \t@ci/demo.sh
        """,
    "ci/check.sh": "#!/bin/bash\necho \"$RESULTS\"\n",
    "ci/demo.sh": """\
        #!/bin/bash
        scenario=${SCENARIO:-ci/lab/incast.conf}
        for k in SENDERS RATE; do echo "${!k:-}"; done
        echo "${RUNS:-1}"
        """,
    "ci/lab/rxecc_lab/__init__.py": "",
    "ci/lab/rxecc_lab/scenario.py": """\
        KEYS = {"senders": (int, "3", "hosts"), "rate": (str, "25mbit", "Mbit/s"),
                "transfer": (str, "2MiB", "ecmp: bytes")}
        MODE_KEYS = {"pfc": bool, "watchdog": int}
        MODE_DEFAULTS = {"watchdog": 0}
        """,
    "ci/lab/incast.conf": """\
        # The default scenario (docs/lab.md, "Scenario files"): every key.
        #   make demo SCENARIO=incast
        senders = 3             # ci/demo.sh writes them
        rate = 25mbit
        # transfer = 2MiB       # ecmp only
        # [mode mine]
        # pfc = on
        # watchdog = 0
        # dcqcn.rp_ai_rate = 5
        """,
    "ci/lab/ecmp.conf": "senders = 2\n",
    "drivers/rxecc/rxecc_dcqcn.c": "",
    "drivers/rxecc/rxecc_dcqcn.h": "",
    "drivers/rxecc/patches/6.1/0004-hooks.patch": "--- a/rxe_req.c\n+++ b/rxe_req.c\n",
    "userspace/tool/rxecc.8": """\
        .TH RXECC 8
        .SH SYNOPSIS
        .B rxecc
        .RI [ OPTIONS ]
        .B dcqcn show
        .RB [ dev
        .IR DEV ]
        .br
        .B rxecc dcqcn set
        .RB { dev
        .IR DEV " | " \\fBdefaults\\fR }
        .I NAME VALUE
        .br
        .B rxecc
        .B stats
        .RB [ show ]
        .RB [ dev
        .IR DEV ]
        .br
        .B rxecc
        .B monitor
        .RB [ count
        .IR N ]
        .SH COMMANDS
        .TP
        .B dcqcn show
        The parameters.
        .TP
        .B dcqcn set
        Change them.
        .TP
        .B stats show
        The counters.
        .TP
        .B monitor
        Changes as they come.
        .SH PARAMETERS
        .TS
        l l l.
        Name\tUnit\tRange
        _
        rp_ai_rate\tMbit/s\t0..400000
        rp_gd\tlog2\t0..15
        .TE
        .SH EXIT STATUS
        """,
    "docs/lab.md": """\
        # The lab

        ## Scenario files

        | key | unit | default | meaning |
        |---|---|---|---|
        | `senders` | hosts | 3 | writers |
        | `rate` | Mbit/s | 25mbit | the port |
        | `transfer` | bytes | 2MiB | ecmp |
        | `dcqcn.NAME` | | | any parameter |

        A mode section takes `pfc = on|off` and `dcqcn.rp_gd = 5`.

        ```
        rate = 100mbit
        [mode mine]
        pfc = on
        ```
        """,
    "README.md": """\
        # rxecc

        `make demo SCENARIO=ecmp RUNS=2`, `make check KVER=6.12`, `make` and `make W=1 all`;
        `make demo SCENARIO=NAME`, `make demo SCENARIO=my.conf`.
        Scenario keys as `LAB_<KEY>` (`LAB_RATE=50mbit make demo`), files in ci/lab/ and
        [docs/lab.md](docs/lab.md#scenario-files); `ci/lab/*.conf`, `ci/lab/NAME.conf`,
        `drivers/rxecc/rxecc_dcqcn.[ch]`, `drivers/rxecc/patches/X.Y/`, `rxe_req.c`, `patches/6.1/0004-hooks.patch`,
        `net/sched/sch_pfc.ko` (built) and `$(TOP)/ci/demo.sh`. ECN marking (docs/lab.md, "Scenario files").

        ```sh
        rxecc dcqcn show dev x0; rxecc -j stats dev x0
        rxecc dcqcn set dev x0 rp_ai_rate 40mbit rp_gd 7   # a comment: make nothing
        build/userspace/rxecc monitor count 1 && rxecc --help
        rdma link add x0 type rxecc netdev eth0
        rxecc dcqcn show|set defaults
        ```

        The tests: `ci/check.sh` checks what matters, see [below](#rxecc).
        """,
}


def write(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))


class FakeRepo(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="docs_check_")
        write(self.root, FILES)

    def tearDown(self):
        shutil.rmtree(self.root)

    def problems(self):
        return [f"{where}:{n}: {text}" for where, n, text in docs_check.check(self.root).items]

    def append(self, rel, text):
        """Appends text to rel; the numbers of the lines written."""
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            before = f.read().count("\n")
        with open(os.path.join(self.root, rel), "a", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))
        return range(before + 1, before + 1 + text.count("\n"))

    def assertReported(self, rel, text, *fragments):
        lines = self.append(rel, text)
        got = self.problems()
        for fragment in fragments:
            self.assertTrue(any(p.startswith(tuple(f"{rel}:{n}: " for n in lines)) and fragment in p
                                for p in got),
                            f"'{fragment}' at {rel}:{lines} not reported; got {got}")

    def test_a_clean_repository_passes(self):
        self.assertEqual(self.problems(), [])
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(docs_check.main(["--root", self.root]), 0)
        self.assertEqual(out.getvalue(), "")

    def test_a_missing_path(self):
        self.assertReported("README.md", "See `ci/nope.sh` too.\n", "no such path in the repository: ci/nope.sh")

    def test_a_missing_path_in_plain_text_and_a_code_block(self):
        self.assertReported("README.md", "Then run ci/gone.sh by hand.\n", "ci/gone.sh")
        self.assertReported("README.md", "```\ndrivers/rxecc/nope.c\n```\n", "drivers/rxecc/nope.c")

    def test_a_glob_that_matches_nothing(self):
        self.assertReported("README.md", "`ci/lab/*.yaml`\n", "ci/lab/*.yaml")

    def test_a_file_named_without_its_folder(self):
        self.assertReported("README.md", "the hooks, `patches/0004-hooks.patch`\n",
                            "no file of the repository is patches/0004-hooks.patch")

    def test_a_broken_link_and_anchor(self):
        self.assertReported("README.md", "[gone](docs/gone.md)\n", "link to a missing file: docs/gone.md")
        self.assertReported("README.md", "[x](docs/lab.md#no-such-heading)\n", "link to a missing heading")
        self.assertReported("README.md", "[x](#the-lab)\n", "link to a missing heading")

    def test_a_missing_quoted_section(self):
        self.assertReported("README.md", "as said (docs/lab.md, \"Modes\")\n", "has no section \"Modes\"")

    def test_an_unknown_make_target(self):
        self.assertReported("README.md", "`make demoo`\n", "make has no target 'demoo'")
        self.assertReported("README.md", "```sh\ncd x && make chek KVER=6.1\n```\n", "make has no target 'chek'")

    def test_an_unknown_make_variable(self):
        self.assertReported("README.md", "`make demo SCENRAIO=ecmp`\n", "make variable SCENRAIO=")
        self.assertReported("README.md", "`BOGUS=1 make demo`\n", "make variable BOGUS=")

    def test_an_unknown_scenario(self):
        self.assertReported("README.md", "`make demo SCENARIO=nope`\n", "no ci/lab/nope.conf")

    def test_an_unknown_scenario_key(self):
        self.assertReported("README.md", "`make demo LAB_SENDRES=4`\n", "LAB_SENDRES")
        self.assertReported("ci/lab/ecmp.conf", "sendres = 4\n", "'sendres' is not a scenario key")
        self.assertReported("ci/lab/ecmp.conf", "# [mode x]\n# watchdgo = 200\n", "'watchdgo' is not a mode key")
        self.assertReported("ci/lab/ecmp.conf", "dcqcn.rp_nope = 1\n", "'rp_nope' is not a parameter")
        self.assertReported("docs/lab.md", "A mode takes `watchdgo = 200`.\n", "'watchdgo' is neither")

    def test_the_key_table(self):
        lab = os.path.join(self.root, "docs", "lab.md")
        with open(lab, encoding="utf-8") as f:
            text = f.read()
        with open(lab, "w", encoding="utf-8") as f:
            f.write(text.replace("| `rate` | Mbit/s | 25mbit |", "| `rate` | Mbit/s | 50mbit |")
                    .replace("| `transfer` | bytes | 2MiB | ecmp |\n", "| `trasnfer` | bytes | 2MiB | ecmp |\n"))
        got = self.problems()
        for fragment in ("'rate': default 50mbit in the table, 25mbit in ci/lab/rxecc_lab/scenario.py",
                         "'trasnfer' is not a scenario key", "does not list the scenario key 'transfer'"):
            self.assertTrue(any(p.startswith("docs/lab.md:") and fragment in p for p in got), (fragment, got))

    def test_the_default_scenario_lists_every_key_with_its_default(self):
        conf = os.path.join(self.root, "ci", "lab", "incast.conf")
        with open(conf, encoding="utf-8") as f:
            text = f.read()
        with open(conf, "w", encoding="utf-8") as f:
            f.write(text.replace("# transfer = 2MiB       # ecmp only\n", "")
                    .replace("rate = 25mbit", "rate = 50mbit").replace("# watchdog = 0\n", ""))
        got = self.problems()
        for fragment in ("does not list the key 'transfer'", "'rate = 50mbit': lab.py's default is 25mbit",
                         "does not list the mode key 'watchdog'"):
            self.assertTrue(any(p.startswith("ci/lab/incast.conf:") and fragment in p for p in got), (fragment, got))

    def test_an_unknown_tool_command(self):
        self.assertReported("README.md", "`rxecc dcqcn sett dev x0 rp_gd 3`\n", "rxecc dcqcn has no command 'sett'")
        self.assertReported("README.md", "```\nsudo rxecc frob dev x0\n```\n", "rxecc has no object 'frob'")
        self.assertReported("README.md", "`rxecc -j stats rest dev x0`\n", "rxecc stats has no command 'rest'")
        self.assertReported("README.md", "`rxecc dcqcn set defaults rp_gd 3 rp_nope 1`\n",
                            "no parameter 'rp_nope'")

    def test_a_hand_written_count(self):
        self.assertReported("README.md", "Guest (`ci/check.sh`, 13 KTAP results): all of it.\n",
                            "hand-written count")

    def test_scenario_file_comments(self):
        self.assertReported("ci/lab/ecmp.conf", "# as in docs/gone.md\n", "docs/gone.md")
        self.assertReported("ci/lab/ecmp.conf", "#   make demoo SCENARIO=ecmp\n", "make has no target 'demoo'")
        self.assertReported("ci/lab/ecmp.conf", "# (docs/lab.md, \"Modes\")\n", "has no section \"Modes\"")
        self.assertReported("ci/lab/ecmp.conf", "rate = 5mbit   # see docs/gone.md\n", "docs/gone.md")

    def test_ignored_names(self):
        self.append("README.md", "Extract `drivers/infiniband/sw/rxe` and `rxe_queue.h`.\n")
        self.assertEqual(len(self.problems()), 2)
        self.append("README.md", "\n<!-- docs-check: ignore drivers/infiniband/sw/rxe rxe_queue.h -->\n")
        self.assertEqual(self.problems(), [])

    def test_exit_status_and_output(self):
        self.append("README.md", "`make demoo`\n")
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(docs_check.main(["--root", self.root]), 1)
        self.assertRegex(out.getvalue(), r"^README\.md:[0-9]+: make has no target 'demoo'")


class RealTree(unittest.TestCase):
    def test_every_kind_of_name_is_checked(self):
        """The tree's docs name every kind: a checker that found none of one
        kind would be checking nothing."""
        checked = docs_check.check(os.path.join(HERE, "..")).checked
        for kind in ("paths", "file names", "links", "anchors", "sections", "make commands",
                     "make variables", "scenario keys", "rxecc commands"):
            self.assertGreater(checked.get(kind, 0), 0, kind)


if __name__ == "__main__":
    unittest.main()
