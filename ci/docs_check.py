#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check what README.md, docs/*.md and the lab's scenario files name.

  docs_check.py [--root DIR]

Every name is checked against the repository itself, never against a list
kept here:

  paths      a repository path in backticks, a code block, a link or the
             text (one that starts with a top-level folder of the repository
             in git, or a link relative to the document) exists; a glob
             (`*.c`, `rxecc_dcqcn.[ch]`) matches something; an all-caps word
             or <...> in a path is a placeholder (`patches/X.Y/`,
             `build/vm/runs/NAME/`) and stands for any name; a path that
             .gitignore ignores (a build product: `net/sched/sch_pfc.ko`) is
             not looked for. A link's #anchor is a heading of the document it
             points to (GitHub's slug), and so is a quoted section after a
             document's name (`docs/results.md, "Make check's time"`) or a
             quoted section "above"/"below" in the same document.
  make       `make TARGET ...` in backticks or code blocks: TARGET is a rule
             of the top-level Makefile; VAR=VALUE given to make (or before
             it) is a variable the Makefile names or a ci/ script reads;
             LAB_<KEY> is a scenario key; SCENARIO=NAME a file of ci/lab/.
  scenario   the keys of the lab's scenario files (ci/lab/*.conf, commented
             examples included), of docs/lab.md's key table and examples,
             and LAB_<KEY> anywhere: keys the lab accepts (KEYS and
             MODE_KEYS of ci/lab/rxecc_lab/scenario.py), dcqcn.NAME a parameter of the tool (rxecc(8));
             docs/lab.md's key table lists every key with lab.py's default,
             and ci/lab/incast.conf lists every key, with its default.
  tool       `rxecc OBJECT VERB ...` in backticks or code blocks: OBJECT and
             VERB are in rxecc(8) (userspace/tool/rxecc.8: its COMMANDS and
             SYNOPSIS); the NAMEs of `dcqcn set` are in its PARAMETERS table,
             the options of `qdisc add|change|replace` in its qdisc section.
  counts     no hand-written count of tests or KTAP results ("13 KTAP
             results"): say what is tested, not how many. docs/results.md,
             the record of past runs, is exempt.

A name that is not one of these on purpose (a path in the kernel's source
tree, not this repository's) is named in a comment of the document,
<!-- docs-check: ignore drivers/infiniband/sw/rxe -->, which covers that
document only.

Exit status 0 when nothing is wrong, 1 with one line per problem:
FILE:LINE: what is wrong.
"""
import argparse
import fnmatch
import glob
import importlib.util
import os
import re
import subprocess
import sys
import unicodedata

SEPARATORS = re.compile(r"\s+(?:\|\||&&|\||;)\s+|;\s+|\$\(|`|&&")
ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
PLACEHOLDER = re.compile(r"(?<![A-Za-z])[A-Z][A-Z0-9_]*(?![a-z])|<[^>/]*>|\.\.\.")
ROOT_VARS = re.compile(r"^(?:\$\(TOP\)|\$\{?(?:TOP|top|PWD|RXECC_TOP|HERE)\}?)/")


class Problems:
    def __init__(self):
        self.items = []
        self.checked = {}

    def count(self, kind):
        self.checked[kind] = self.checked.get(kind, 0) + 1

    def add(self, where, line, text):
        self.items.append((where, line, text))


# ---------------------------------------------------------------- markdown


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "").replace("*", "").strip().lower()
    keep = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in " -" or cat[0] in "LMN" or cat == "Pc":
            keep.append(ch)
    return "".join(keep).replace(" ", "-")


class Markdown:
    """A document split into its fenced code blocks and its text; the text's
    inline code spans and links, each with its line."""

    def __init__(self, path, rel):
        self.path = path
        self.rel = rel
        with open(path, encoding="utf-8") as f:
            self.lines = f.read().split("\n")
        self.blocks = []        # (first line number, info string, [lines])
        self.text = []          # (line number, line) outside fences
        fence = None
        for n, line in enumerate(self.lines, 1):
            m = re.match(r"^\s*(```+|~~~+)\s*(\S*)", line)
            if fence is None and m:
                fence = (m.group(1), n + 1, m.group(2), [])
            elif fence is not None and line.strip().startswith(fence[0]):
                self.blocks.append((fence[1], fence[2], fence[3]))
                fence = None
            elif fence is not None:
                fence[3].append(line)
            else:
                self.text.append((n, line))
        self._headings = None
        self._spans()
        self.ignored = set()
        for _, line in self.plain:
            for m in re.finditer(r"<!--\s*docs-check:\s*ignore\s+(.*?)\s*-->", line):
                self.ignored.update(m.group(1).split())

    def _spans(self):
        """Code spans (may run over a line end, not over a blank line), links,
        and the text with both taken out."""
        self.spans = []     # (line, content)
        self.links = []     # (line, target)
        self.plain = []     # (line, text without code spans)
        paragraphs = []
        cur = []
        for n, line in self.text:
            if line.strip():
                cur.append((n, line))
            elif cur:
                paragraphs.append(cur)
                cur = []
        if cur:
            paragraphs.append(cur)
        for para in paragraphs:
            joined = "\n".join(line for _, line in para)
            starts = []
            off = 0
            for n, line in para:
                starts.append((off, n))
                off += len(line) + 1

            def line_of(pos):
                found = para[0][0]
                for o, n in starts:
                    if o <= pos:
                        found = n
                return found
            table = joined.lstrip().startswith("|")
            out = []
            last = 0
            for m in re.finditer(r"(`+)(.+?)(?<!`)\1(?!`)", joined, re.S):
                content = m.group(2).replace("\n", " ").strip()
                if table:
                    content = content.replace("\\|", "|")
                self.spans.append((line_of(m.start()), content))
                out.append(joined[last:m.start()])
                out.append(re.sub(r"[^\n]", " ", m.group(0)))
                last = m.end()
            out.append(joined[last:])
            rest = "".join(out)
            for m in re.finditer(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", rest):
                self.links.append((line_of(m.start()), m.group(1)))
            for k, text in enumerate(rest.split("\n")):
                self.plain.append((para[k][0], text))

    def headings(self):
        if self._headings is None:
            self._headings = self._slugs()
        return self._headings

    def _slugs(self):
        slugs = set()
        seen = {}
        for _, line in self.text:
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = slug(m.group(2))
            if s in seen:
                seen[s] += 1
                s = f"{s}-{seen[s]}"
            else:
                seen[s] = 0
            slugs.add(s)
        return slugs

    def tables(self):
        """Each table as (line of its header, header cells, [(line, cells)])."""
        out = []
        rows = []
        for n, line in self.text + [(0, "")]:
            if line.lstrip().startswith("|"):
                cells = [c.strip().replace("\\|", "|")
                         for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
                rows.append((n, cells))
                continue
            if len(rows) >= 2 and set("".join(rows[1][1])) <= set("-: "):
                out.append((rows[0][0], rows[0][1], rows[2:]))
            rows = []
        return out


# ---------------------------------------------------------------- the repo


class Repo:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.ignore_patterns = self._gitignore()
        self.top = self._top_level()
        self.targets = self._make_targets()
        self.make_words, self.script_vars = self._variables()
        self.lab = self._lab()
        self.tool = self._tool()
        self._docs = {}

    def p(self, *parts):
        return os.path.join(self.root, *parts)

    def _gitignore(self):
        try:
            with open(self.p(".gitignore"), encoding="utf-8") as f:
                return [line.strip() for line in f if line.strip() and not line.startswith("#")]
        except OSError:
            return []

    def ignored(self, rel):
        """Whether .gitignore ignores rel (a build product, not in git)."""
        parts = rel.strip("/").split("/")
        for pat in self.ignore_patterns:
            anchored = pat.startswith("/")
            pat = pat.strip("/")
            if anchored or "/" in pat:
                if fnmatch.fnmatch("/".join(parts[:pat.count("/") + 1]), pat):
                    return True
            elif any(fnmatch.fnmatch(part, pat) for part in parts):
                return True
        return False

    def _top_level(self):
        """The repository's top-level names (files and folders), as git has
        them; without git, what is there less what .gitignore ignores."""
        try:
            out = subprocess.run(["git", "-C", self.root, "ls-files"], capture_output=True, text=True,
                                 check=True).stdout.split()
        except (OSError, subprocess.CalledProcessError):
            out = []
        if not out:
            for d, subdirs, files in os.walk(self.root):
                rel = os.path.relpath(d, self.root)
                subdirs[:] = [x for x in subdirs if x != ".git" and not self.ignored(os.path.join(rel, x))]
                out += [os.path.normpath(os.path.join(rel, f)) for f in files
                        if not self.ignored(os.path.join(rel, f))]
        self.files = out
        self.paths = set(out)
        for f in out:
            while "/" in f:
                f = f.rsplit("/", 1)[0]
                self.paths.add(f)
        # the upstream files the quilt series patch (rxe_req.c, ...): named
        # in the docs, not in this repository
        self.upstream = set()
        for f in out:
            if f.endswith(".patch"):
                with open(self.p(f), encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        m = re.match(r"^(?:\+\+\+|---) [ab]/(\S+)", line)
                        if m:
                            self.upstream.add(m.group(1))
        return {f.split("/", 1)[0] for f in out}

    def _make_targets(self):
        targets = set()
        try:
            with open(self.p("Makefile"), encoding="utf-8") as f:
                text = f.read().replace("\\\n", " ")
        except OSError:
            return targets
        for line in text.split("\n"):
            if line.startswith(("\t", "#", " ")):
                continue
            m = re.match(r"^([^:=#]+?)\s*::?(?![=])(.*)$", line)
            if not m or "$" in m.group(1):
                continue
            names = m.group(1).split()
            if names == [".PHONY"]:
                targets.update(m.group(2).split())
            elif not any(n.startswith(".") for n in names):
                targets.update(names)
        return targets

    def _variables(self):
        """Words the Makefile says (comments too: it documents what kbuild
        takes) and the variables the ci/ scripts read."""
        words = set()
        try:
            with open(self.p("Makefile"), encoding="utf-8") as f:
                words = set(re.findall(r"\b[A-Z][A-Z0-9_]*\b", f.read()))
        except OSError:
            pass
        read = set()
        for path in glob.glob(self.p("ci", "**", "*"), recursive=True):
            if not os.path.isfile(path) or not path.endswith((".sh", ".py", ".mk")) and \
                    not self._is_shell(path):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                src = f.read()
            read.update(re.findall(r"\$\{?!?([A-Z_][A-Z0-9_]*)", src))
            read.update(re.findall(r"environ(?:\.get\(|\[)\s*[\"']([A-Z_][A-Z0-9_]*)", src))
            read.update(re.findall(r"getenv\(\s*[\"']([A-Z_][A-Z0-9_]*)", src))
            for m in re.finditer(r"\bfor\s+\w+\s+in\s+([A-Z_][A-Z0-9_ ]*);", src):
                read.update(m.group(1).split())
        return words, read

    @staticmethod
    def _is_shell(path):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                first = f.readline()
        except OSError:
            return False
        return first.startswith("#!") and "sh" in first

    def _lab(self):
        """The lab's scenario parser (ci/lab/rxecc_lab/scenario.py), imported
        from this tree under a name of its own (its package's relative
        imports resolved in the same tree)."""
        pkg = self.p("ci", "lab", "rxecc_lab")
        if not os.path.exists(os.path.join(pkg, "scenario.py")):
            return None
        name = f"docs_check_lab_{len(sys.modules)}"
        spec = importlib.util.spec_from_file_location(name, os.path.join(pkg, "__init__.py"),
                                                      submodule_search_locations=[pkg])
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return importlib.import_module(f"{name}.scenario")

    def _tool(self):
        """rxecc(8): its objects, each one's verbs (required or not) and
        keywords, the dcqcn parameters and the qdisc options."""
        path = self.p("userspace", "tool", "rxecc.8")
        try:
            with open(path, encoding="utf-8") as f:
                man = f.read()
        except OSError:
            return None

        def section(name):
            m = re.search(r"^\.SH " + name + r"\n(.*?)(?=^\.SH |\Z)", man, re.S | re.M)
            return m.group(1) if m else ""

        def plain(troff):
            # the words of a troff line, its font macros and escapes dropped
            t = re.sub(r"^\.[A-Z]+\s*", "", troff)
            t = re.sub(r"\\f[A-Z]|\\", "", t)
            return t.replace('"', " ")

        def bold_words(troff_lines):
            words = []
            for line in troff_lines:
                if line.startswith(".B "):
                    words += plain(line).split()
                elif line.startswith((".BR ", ".RB ")):
                    parts = re.findall(r'"[^"]*"|\S+', line[4:])
                    first_bold = line.startswith(".BR ")
                    for k, part in enumerate(parts):
                        if (k % 2 == 0) == first_bold:
                            words += part.strip('"').replace("\\", "").split()
            return [w for w in (w.strip("[]{}|,") for w in words) if re.fullmatch(r"[a-z][a-z0-9_-]*", w)]

        objects = {}
        for line_group in re.split(r"^\.TP\n", section("COMMANDS"), flags=re.M)[1:]:
            head = plain(line_group.split("\n", 1)[0]).replace(",", " ").split()
            if not head:
                continue
            obj = objects.setdefault(head[0], {"verbs": set(), "optional": False, "words": set()})
            obj["verbs"].update(head[1:])
        synopsis = section("SYNOPSIS")
        for entry in re.split(r"^\.br\n", synopsis, flags=re.M):
            words = bold_words(entry.split("\n"))
            words = [w for w in words if w != "rxecc"]
            if words and words[0] in objects:
                objects[words[0]]["words"].update(words[1:])
                if re.search(r"^\.B " + re.escape(words[0]) + r"\n\.RB \[ (\w+) \]", entry, re.M):
                    objects[words[0]]["optional"] = True
        params = set()
        table = re.search(r"^\.TS\n(.*?)^\.TE", section("PARAMETERS"), re.S | re.M)
        if table:
            for line in table.group(1).split("\n"):
                if "\t" in line:
                    params.add(line.split("\t", 1)[0])
        params = {p for p in params if re.fullmatch(r"[a-z][a-z0-9_]*", p)}
        params.update(re.findall(r"^\.B ([a-z][a-z0-9_]*)$", section("PARAMETERS"), re.M))
        qdisc_opts = set()
        for group in re.split(r"^\.TP\n", section("COMMANDS"), flags=re.M):
            if re.match(r'\.BR? "?qdisc add', group):
                qdisc_opts.update(bold_words(group.split("\n")[1:]))
        return {"objects": objects, "params": params, "qdisc_options": qdisc_opts}

    def doc(self, rel):
        rel = os.path.normpath(rel)
        if rel not in self._docs:
            path = self.p(rel)
            self._docs[rel] = Markdown(path, rel) if os.path.isfile(path) else None
        return self._docs[rel]

    def exists(self, rel):
        """rel (repository-relative) is in the repository (in git, where
        there is one), as a glob or with its placeholders standing for any
        name."""
        rel = os.path.normpath(rel.rstrip(".,:;")).rstrip("/")
        if rel in (".", "") or rel in self.paths or self.ignored(rel):
            return True
        pattern = PLACEHOLDER.sub("*", rel)
        if pattern.strip("*/") == "":
            return True
        return any(fnmatch.fnmatchcase(p, pattern) for p in self.paths)


# ---------------------------------------------------------------- checks


def path_candidates(repo, token):
    """The repository path a token of code names, or None."""
    token = token.strip("\"'(){}<>,;")
    if token.count("[") != token.count("]"):
        token = token.strip("[]")
    if "=" in token:
        token = token.rsplit("=", 1)[1].strip("\"'")
    token = ROOT_VARS.sub("", token)
    if token.startswith("./"):
        token = token[2:]
    token = re.sub(r":[0-9]+$", "", token)
    first = token.split("/", 1)[0]
    if "/" not in token or first not in repo.top or "://" in token:
        return None
    return token.rstrip(".,:;)")


SOURCE = re.compile(r"^[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_.+-]+)*\.(?:sh|py|c|h|cpp|hpp|patch)$")


def check_file_name(repo, problems, doc_rel, n, token, ignored):
    """A source file named without its folder (`lab.sh`, `tests/dcqcn_test.cpp`,
    `patches/6.1/0004-....patch`) is the end of a path in the repository, or
    an upstream file the quilt series patch."""
    token = token.strip("\"'(){}<>,;:")
    if not SOURCE.match(token) or token in ignored or token.split("/", 1)[0] in repo.top:
        return
    problems.count("file names")
    if token in repo.upstream or any(f == token or f.endswith("/" + token) for f in repo.files):
        return
    pattern = PLACEHOLDER.sub("*", token)
    if pattern != token and any(fnmatch.fnmatch(f, pattern) or fnmatch.fnmatch(f, "*/" + pattern)
                                for f in repo.files):
        return
    problems.add(doc_rel, n, f"no file of the repository is {token}")


def check_path(repo, problems, doc_rel, n, path, ignored):
    if path in ignored or path.rstrip("/") in ignored:
        return
    problems.count("paths")
    if not repo.exists(path):
        untracked = " (there is one, but not in git)" if os.path.exists(repo.p(path)) else ""
        problems.add(doc_rel, n, f"no such path in the repository: {path}{untracked}")


def check_link(repo, problems, doc, n, target):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):       # http:, mailto:, ...
        return
    target, _, anchor = target.partition("#")
    base = os.path.dirname(doc.rel)
    rel = os.path.normpath(os.path.join(base, target)) if target else doc.rel
    if target and target in doc.ignored:
        return
    if rel.startswith(".."):
        problems.add(doc.rel, n, f"link outside the repository: {target}")
        return
    problems.count("links")
    if target and not repo.exists(rel):
        problems.add(doc.rel, n, f"link to a missing file: {target}")
        return
    if anchor and rel.endswith(".md"):
        other = repo.doc(rel)
        problems.count("anchors")
        if other is not None and anchor not in other.headings():
            problems.add(doc.rel, n, f"link to a missing heading: {target}#{anchor} (no heading of {rel} "
                         "has that anchor)")


def has_section(doc, title):
    """A heading of doc is title, or begins with it (a section named by the
    first words of its heading)."""
    want = slug(title)
    return any(h == want or h.startswith(want + "-") for h in doc.headings())


def check_quoted_sections(repo, problems, doc):
    for n, text in doc.plain:
        for m in re.finditer(r"((?:docs/)?[\w.-]+\.md),?\s+\"([^\"]+)\"", text):
            name = m.group(1)
            rel = name if name.startswith("docs/") else os.path.join(os.path.dirname(doc.rel), name)
            other = repo.doc(rel)
            if other is None:
                continue        # the path check reports it
            problems.count("sections")
            if not has_section(other, m.group(2)):
                problems.add(doc.rel, n, f"{name} has no section \"{m.group(2)}\"")
        for m in re.finditer(r"\"([^\"]+)\"\)?\s+(above|below)\b", text):
            problems.count("sections")
            if not has_section(doc, m.group(1)):
                problems.add(doc.rel, n, f"no section \"{m.group(1)}\" {m.group(2)} in this document")


def commands(text):
    """The simple commands of a line of shell: lists of words."""
    text = re.sub(r"(^|\s)#.*$", "", text)
    text = re.sub(r"<([^<>\s/][^<>/]*)>", lambda m: "<" + m.group(1).replace(" ", "_") + ">", text)
    for part in SEPARATORS.split(text):
        words = part.split()
        if words:
            yield words


def command_word(words):
    """Index of the command's own word: past VAR=value, sudo, env, nice,
    timeout, ip netns exec NS."""
    k = 0
    while k < len(words):
        w = words[k]
        if ASSIGN.match(w) or w in ("sudo", "exec", "env", "command"):
            k += 1
        elif w == "nice" or w == "timeout":
            k += 1
            while k < len(words) and (words[k].startswith("-") or re.fullmatch(r"[0-9.]+[smh]?", words[k])):
                k += 1
        elif words[k:k + 3] == ["ip", "netns", "exec"]:
            k += 4
        else:
            return k
    return k


def is_placeholder(word):
    return bool(re.search(r"[A-Z]{2,}|\.\.\.|^[A-Z]$|[<>]", word))


def check_make(repo, problems, doc_rel, n, words, k):
    envs = [w for w in words[:k] if ASSIGN.match(w)]
    args = words[k + 1:]
    if any(a in ("-f", "-C") or a.startswith(("-f", "-C", "--file", "--directory")) for a in args):
        return      # another makefile: not the top-level one
    problems.count("make commands")
    for a in envs + args:
        if a.startswith((">", "<", "2>", "&", "#")):
            break
        if a.startswith("-"):
            continue
        m = ASSIGN.match(a)
        if m:
            check_make_var(repo, problems, doc_rel, n, m.group(1), m.group(2))
        elif not is_placeholder(a) and re.fullmatch(r"[a-z][a-z0-9_.-]*", a):
            if a not in repo.targets:
                problems.add(doc_rel, n, f"make has no target '{a}' (the top-level Makefile's: "
                             f"{', '.join(sorted(repo.targets))})")


def check_make_var(repo, problems, doc_rel, n, name, value):
    if name.startswith("LAB_"):
        check_lab_override(repo, problems, doc_rel, n, name)
        return
    problems.count("make variables")
    if name not in repo.make_words and name not in repo.script_vars:
        problems.add(doc_rel, n, f"make variable {name}= is read by neither the Makefile nor a ci/ script")
        return
    if name == "SCENARIO" and value and not is_placeholder(value) and "/" not in value \
            and not value.endswith(".conf") and not re.search(r"[$*]", value):
        if not os.path.exists(repo.p("ci", "lab", value + ".conf")):
            problems.add(doc_rel, n, f"SCENARIO={value}: no ci/lab/{value}.conf")


def check_lab_override(repo, problems, doc_rel, n, name):
    key = name[len("LAB_"):].lower()
    if not key or repo.lab is None or key == "key":
        return
    problems.count("scenario keys")
    if key not in repo.lab.KEYS:
        problems.add(doc_rel, n, f"{name}: '{key}' is not a scenario key of ci/lab/rxecc_lab/scenario.py")


def check_rxecc(repo, problems, doc_rel, n, words, k):
    tool = repo.tool
    if tool is None:
        return
    args = words[k + 1:]
    i = 0
    while i < len(args) and (args[i].startswith("-") or args[i].startswith("[-")):
        if args[i] in ("-n", "--netns"):
            i += 1
        i += 1
    if i >= len(args):
        return
    obj = args[i]
    if obj in ("help", "|") or is_placeholder(obj) or not re.fullmatch(r"[a-z][a-z0-9_]*", obj):
        return
    objects = tool["objects"]
    problems.count("rxecc commands")
    if obj not in objects:
        problems.add(doc_rel, n, f"rxecc has no object '{obj}' (rxecc(8): {', '.join(sorted(objects))})")
        return
    spec = objects[obj]
    rest = args[i + 1:]
    if not rest:
        return
    verb = rest[0]
    if verb.startswith("{"):
        alts = []
        for w in rest:
            alts += [x for x in w.strip("{}").split("|") if x]
            if w.endswith("}"):
                break
        verbs = alts
    else:
        verbs = verb.split("|")
    for v in verbs:
        if v.startswith("-") or v in ("help", "[show]") or is_placeholder(v) or v.startswith("["):
            continue
        allowed = set(spec["verbs"])
        if not spec["verbs"] or spec["optional"]:
            allowed |= spec["words"]
        if v not in allowed:
            problems.add(doc_rel, n, f"rxecc {obj} has no command '{v}' (rxecc(8))")
            return
    if len(verbs) != 1:
        return
    verb = verbs[0]
    tail = rest[1:]
    if tail[:1] == ["dev"]:
        tail = tail[2:]
    elif tail[:1] == ["defaults"]:
        tail = tail[1:]
    else:
        return
    if obj == "dcqcn" and verb == "set":
        names, known = tail[0::2], tool["params"]
        what = "parameter"
    elif obj == "qdisc" and verb in ("add", "change", "replace"):
        names, known, what = tail[0::2], tool["qdisc_options"], "option"
    else:
        return
    for name in names:
        if is_placeholder(name) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            return          # a synopsis or an ellipsis: nothing more to check
        if known and name not in known:
            problems.add(doc_rel, n, f"rxecc {obj} {verb}: no {what} '{name}' in rxecc(8)")


def check_code(repo, problems, doc_rel, n, text, ignored):
    """A code span or a line of a code block: its paths, make and rxecc
    commands."""
    for words in commands(text):
        for w in words:
            path = path_candidates(repo, w)
            if path:
                check_path(repo, problems, doc_rel, n, path, ignored)
            else:
                check_file_name(repo, problems, doc_rel, n, w, ignored)
            for m in re.finditer(r"\bLAB_([A-Z][A-Z0-9_]*)", w):
                check_lab_override(repo, problems, doc_rel, n, "LAB_" + m.group(1))
        k = command_word(words)
        if k >= len(words):
            continue
        cmd = words[k].rsplit("/", 1)[-1]
        if cmd == "make":
            check_make(repo, problems, doc_rel, n, words, k)
        elif cmd == "rxecc":
            check_rxecc(repo, problems, doc_rel, n, words, k)


def check_scenario_lines(repo, problems, where, numbered):
    """key = value lines of a scenario (numbered: (line, text)), with their
    [mode NAME] sections; commented ones are examples and count too. Returns
    the first line and value of each key: {(key, in a section): (line, value)}."""
    lab = repo.lab
    section = None
    seen = {}
    for n, line in numbered:
        text = line.strip().lstrip("#").strip()
        text = re.sub(r"\s+#.*$", "", text)
        if re.fullmatch(r"\[mode\s+\S+\]", text):
            section = text
            continue
        m = re.fullmatch(r"([a-z][a-z0-9_.]*)\s*=\s*(\S.*)", text)
        if not m:
            continue
        key, value = m.group(1), m.group(2).strip()
        seen.setdefault((key, section is not None), (n, value))
        problems.count("scenario keys")
        if key.startswith("dcqcn."):
            name = key[len("dcqcn."):]
            if repo.tool and repo.tool["params"] and not is_placeholder(name) and name not in repo.tool["params"]:
                problems.add(where, n, f"{key}: '{name}' is not a parameter of rxecc dcqcn set (rxecc(8))")
        elif section is None and key not in lab.KEYS:
            problems.add(where, n, f"'{key}' is not a scenario key of ci/lab/rxecc_lab/scenario.py")
        elif section is not None and key not in lab.MODE_KEYS:
            problems.add(where, n, f"'{key}' is not a mode key of ci/lab/rxecc_lab/scenario.py ({', '.join(lab.MODE_KEYS)})")
    return seen


def check_lab(repo, problems):
    lab = repo.lab
    if lab is None:
        return
    for path in sorted(glob.glob(repo.p("ci", "lab", "*.conf"))):
        rel = os.path.relpath(path, repo.root)
        with open(path, encoding="utf-8") as f:
            lines = list(enumerate(f.read().split("\n"), 1))
        seen = check_scenario_lines(repo, problems, rel, lines)
        for n, line in lines:
            if "#" in line:
                check_comment(repo, problems, rel, n, line.split("#", 1)[1])
        if os.path.basename(path) == "incast.conf":
            for key, (_, default, _) in lab.KEYS.items():
                got = seen.get((key, False))
                if got is None:
                    problems.add(rel, len(lines), f"the default scenario does not list the key '{key}' "
                                 f"(default {default})")
                elif got[1] != default:
                    problems.add(rel, got[0], f"'{key} = {got[1]}': lab.py's default is {default}")
            defaults = getattr(lab, "MODE_DEFAULTS", {})
            for key in lab.MODE_KEYS:
                got = seen.get((key, True))
                if got is None:
                    problems.add(rel, len(lines), f"the default scenario's example mode does not list the "
                                 f"mode key '{key}'")
                elif key in defaults and got[1] != str(defaults[key]):
                    problems.add(rel, got[0], f"'{key} = {got[1]}': lab.py's default is {defaults[key]}")
    doc = repo.doc(os.path.join("docs", "lab.md"))
    if doc is None:
        return
    listed = {}
    for n, header, rows in doc.tables():
        if not header or header[0].lower() != "key":
            continue
        col = header.index("default") if "default" in header else None
        for rn, cells in rows:
            keys = re.findall(r"`([^`]+)`", cells[0])
            for key in keys:
                if key.startswith("dcqcn."):
                    continue
                problems.count("scenario keys")
                listed[key] = rn
                if key not in lab.KEYS:
                    problems.add(doc.rel, rn, f"'{key}' is not a scenario key of ci/lab/rxecc_lab/scenario.py")
            if col is not None and col < len(cells):
                given = [v.strip() for v in cells[col].split(",")]
                if len(given) == len(keys) and not any(k.startswith("dcqcn.") for k in keys):
                    for key, value in zip(keys, given):
                        if key in lab.KEYS and value != lab.KEYS[key][1]:
                            problems.add(doc.rel, rn, f"'{key}': default {value} in the table, "
                                         f"{lab.KEYS[key][1]} in ci/lab/rxecc_lab/scenario.py")
    if listed:
        for key in lab.KEYS:
            if key not in listed:
                problems.add(doc.rel, min(listed.values()), f"the key table does not list the scenario key "
                             f"'{key}' (ci/lab/rxecc_lab/scenario.py)")
    for n, content in doc.spans:
        if re.fullmatch(r"[a-z][a-z0-9_.]* = \S.*", content) and content != "key = value":
            check_scenario_any(repo, problems, doc.rel, n, content)
    for first, info, lines in doc.blocks:
        body = [line for line in lines if line.strip()]
        if body and not info and all(re.fullmatch(r"\s*(#.*|\[mode \S+\]|[a-z][a-z0-9_.]*\s*=\s*\S.*)", line)
                                     for line in body):
            check_scenario_lines(repo, problems, doc.rel, list(enumerate(lines, first)))


def check_scenario_any(repo, problems, where, n, content):
    """`key = value` in the text: a key of the file or of a mode section."""
    key = content.split("=", 1)[0].strip()
    lab = repo.lab
    problems.count("scenario keys")
    if key.startswith("dcqcn."):
        check_scenario_lines(repo, problems, where, [(n, content)])
    elif key not in lab.KEYS and key not in lab.MODE_KEYS:
        problems.add(where, n, f"'{key}' is neither a scenario key nor a mode key of ci/lab/rxecc_lab/scenario.py")


def check_comment(repo, problems, rel, n, text):
    """A comment of a scenario file: its paths, make commands, sections."""
    for w in text.split():
        path = path_candidates(repo, w)
        if path:
            check_path(repo, problems, rel, n, path, set())
        else:
            check_file_name(repo, problems, rel, n, w, set())
    for m in re.finditer(r"\bmake\s+[a-z].*", text):
        check_code(repo, problems, rel, n, m.group(0), set())
    for m in re.finditer(r"((?:docs/)?[\w.-]+\.md),?\s+\"([^\"]+)\"", text):
        name = m.group(1)
        other = repo.doc(name if name.startswith("docs/") else os.path.join("docs", name))
        if other is None:
            continue
        problems.count("sections")
        if not has_section(other, m.group(2)):
            problems.add(rel, n, f"{name} has no section \"{m.group(2)}\"")


COUNT = re.compile(r"\b[0-9][0-9,]*\s+(?:KTAP\s+(?:results?|tests?)|subtests?|test\s+cases?)\b"
                   r"|\(\s*[0-9]+\s+(?:tests?|results?)\s*\)")


def check_doc(repo, problems, doc):
    for n, content in doc.spans:
        check_code(repo, problems, doc.rel, n, content, doc.ignored)
    for first, _, lines in doc.blocks:
        cont, start = "", None          # a command continued over lines (\)
        for n, line in enumerate(lines, first):
            start = n if start is None else start
            if line.rstrip().endswith("\\"):
                cont += line.rstrip()[:-1] + " "
                continue
            check_code(repo, problems, doc.rel, start, cont + line, doc.ignored)
            cont, start = "", None
    for n, target in doc.links:
        check_link(repo, problems, doc, n, target)
    for n, text in doc.plain:
        text = re.sub(r"\]\([^)]*\)", "]", text)
        text = re.sub(r"<!--.*?-->", "", text)
        for m in re.finditer(r"(?<![\w./$-])([A-Za-z0-9_.-]+/[^\s\"'`,;()\[\]]*)", text):
            path = path_candidates(repo, m.group(1))
            if path:
                check_path(repo, problems, doc.rel, n, path, doc.ignored)
        for m in re.finditer(r"\bLAB_([A-Z][A-Z0-9_]*)", text):
            check_lab_override(repo, problems, doc.rel, n, "LAB_" + m.group(1))
    check_quoted_sections(repo, problems, doc)
    if os.path.basename(doc.rel) != "results.md":
        for n, line in doc.text:
            for m in COUNT.finditer(line):
                problems.add(doc.rel, n, f"a hand-written count of tests: '{m.group(0)}' (say what is "
                             "tested, not how many)")


def check(root):
    repo = Repo(root)
    problems = Problems()
    docs = ["README.md"]
    if os.path.isdir(repo.p("docs")):
        docs += sorted(os.path.join("docs", f) for f in os.listdir(repo.p("docs")) if f.endswith(".md"))
    for rel in docs:
        doc = repo.doc(rel)
        if doc is not None:
            check_doc(repo, problems, doc)
    check_lab(repo, problems)
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="the repository (default: this script's)")
    args = ap.parse_args(argv)
    problems = check(args.root)
    seen = set()
    for where, n, text in sorted(problems.items, key=lambda p: (p[0] != "README.md", p[0], p[1])):
        line = f"{where}:{n}: {text}"
        if line not in seen:
            seen.add(line)
            print(line)
    checked = ", ".join(f"{v} {k}" for k, v in sorted(problems.checked.items()))
    print(f"docs_check: checked {checked}: {len(seen)} problems", file=sys.stderr)
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main())
