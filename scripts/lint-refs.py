#!/usr/bin/env python3
"""lint-refs.py — every document a file cites is in the repository.

The repository must stand alone: a comment or a page that sends its reader
to a file they do not have (a spec kept elsewhere, a page renamed since, a
section that moved) is a broken promise. Checked, in src/, tests/,
include/, docs/, examples/, packaging/, scripts/, cmake/, README.md,
Makefile, CMakeLists.txt and .clang-format:

  - a Markdown document with an upper-case name (README.md,
    docs/API.md, ../README.md) is a file, found from the repository root or
    from the citing file's folder;
  - a path under docs/ (docs/ui/jobs.png) is a file or folder of the tree;
  - a citation of a section, `docs/FILE.md, "Section"` (the comma is
    optional; the quotes may wrap onto the next comment line), names a
    heading of that page or the bold lead-in of one of its paragraphs;
  - nothing points at a shared folder outside the tree (SHARED_RE).

Lower-case .md names (summary.md) are files a script writes, and names
holding $, %, {, < or * are patterns, so neither is checked.

Usage: lint-refs.py [FILE...]   (default: the files above, from git)
       lint-refs.py --self-test (the fixture in tests/fixtures/lint-refs/)
Prints one line per offence, FILE:LINE: what; exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FIXTURES = "tests/fixtures/lint-refs"
SELF = "scripts/lint-refs.py"  # names what it looks for, so it is not checked
SCOPE = ["src", "tests", "include", "docs", "examples", "packaging", "scripts", "cmake",
         "README.md", "Makefile", "CMakeLists.txt", ".clang-format"]
SKIP_EXT = (".png", ".svg", ".jpg", ".gz", ".ico", ".woff2", ".lock")

# Where a path starts: not in the middle of a word, a path, a URL or a variable.
START = r"(?<![\w.$%{}/:<*-])"
MD_RE = re.compile(START + r"((?:\.{1,2}/)*(?:[\w.-]+/)*[A-Z][A-Z0-9_-]*\.md)(?![\w/])")
DOCS_RE = re.compile(START + r"(docs/[\w./-]*)")
SHARED_RE = re.compile(r"\.\./shared\b|/work/shared\b")
CITE_RE = re.compile(START + r"((?:[\w.-]+/)*[A-Z][A-Z0-9_-]*\.md),?[ \t]+\"([^\"]{1,120})\"")
PATTERN_CHARS = set("$%{}<*")


def joined(text):
    """The text with comment leaders dropped and lines joined by spaces, so
    a citation wrapped over two comment lines reads as one; and the offset
    at which each line starts in it."""
    parts, starts, pos = [], [], 0
    for line in text.split("\n"):
        s = re.sub(r"^\s*(?:/\*+|\*+(?!/)|//+|#+|--|;+)?\s?", "", line)
        starts.append(pos)
        parts.append(s)
        pos += len(s) + 1
    return " ".join(parts), starts


def line_of(starts, off):
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= off:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def norm(s):
    s = s.replace("`", "").strip()
    s = re.sub(r"^\d+\.\s+", "", s)
    s = re.sub(r"\s+", " ", s)
    return s.rstrip(".:").strip().lower()


_sections = {}


def sections(path):
    """The headings and bold lead-ins of a Markdown page, normalized."""
    if path not in _sections:
        names, fence = set(), False
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("```"):
                    fence = not fence
                    continue
                if fence:
                    continue
                m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    names.add(norm(m.group(1)))
                for b in re.findall(r"\*\*([^*]+)\*\*", line):
                    names.add(norm(b))
        _sections[path] = names
    return _sections[path]


def resolve(rel_file, ref):
    for base in (ROOT, os.path.join(ROOT, os.path.dirname(rel_file))):
        p = os.path.normpath(os.path.join(base, ref))
        if os.path.exists(p):
            return p
    return None


def check_file(rel):
    out = []
    try:
        with open(os.path.join(ROOT, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        return [f"{rel}: cannot read: {e}"]
    flat, starts = joined(text)

    def say(off, msg):
        out.append(f"{rel}:{line_of(starts, off)}: {msg}")

    for m in SHARED_RE.finditer(flat):
        say(m.start(), f"points outside the repository: {m.group(0)}")
    seen = set()
    for rx in (MD_RE, DOCS_RE):
        for m in rx.finditer(flat):
            ref = m.group(1).rstrip(".")
            if not ref or PATTERN_CHARS & set(ref) or m.start(1) in seen:
                continue
            seen.add(m.start(1))
            if resolve(rel, ref) is None:
                say(m.start(1), f"cites {ref}, which is not a file of this repository")
    for m in CITE_RE.finditer(flat):
        ref, sec = m.group(1), m.group(2)
        path = resolve(rel, ref)
        if path is None or not os.path.isfile(path):
            continue  # reported above
        want = norm(sec)
        if not any(h == want or h.startswith(want + " ") for h in sections(path)):
            say(m.start(1), f'cites {ref}, "{sec}": {ref} has no such heading')
    return out


def default_files():
    r = subprocess.run(["git", "-C", ROOT, "ls-files", "--cached", "--others",
                        "--exclude-standard", "--"] + SCOPE,
                       capture_output=True, text=True, check=True)
    return [f for f in r.stdout.split("\n")
            if f and not f.startswith(FIXTURES + "/") and f != SELF and "node_modules/" not in f
            and "/vendor/" not in f and "/corpus/" not in f
            and not f.endswith(SKIP_EXT) and os.path.isfile(os.path.join(ROOT, f))]


def self_test():
    """Every fixture line that starts with [bad] (after its comment
    leader) is reported, no line that starts with [good] is: the checker
    catches what it exists for and nothing else."""
    fails = 0
    for name in sorted(os.listdir(os.path.join(ROOT, FIXTURES))):
        rel = f"{FIXTURES}/{name}"
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        mark = [re.match(r"^\W*\[(bad|good)\]", l) for l in lines]
        want = {i + 1 for i, m in enumerate(mark) if m and m.group(1) == "bad"}
        good = {i + 1 for i, m in enumerate(mark) if m and m.group(1) == "good"}
        got = {int(o.split(":")[1]) for o in check_file(rel)}
        for n in sorted(want - got):
            print(f"self-test: {rel}:{n}: not caught: {lines[n - 1].strip()}")
            fails += 1
        for n in sorted(got & good):
            print(f"self-test: {rel}:{n}: caught but fine: {lines[n - 1].strip()}")
            fails += 1
        if not want:
            print(f"self-test: {rel} marks no line bad")
            fails += 1
        print(f"self-test: {rel}: {len(want & got)} of {len(want)} bad citations caught")
    return 1 if fails else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    files = argv[1:] or default_files()
    offences = [o for f in files for o in check_file(f)]
    for o in offences:
        print(o)
    if offences:
        print(f"{len(offences)} citation(s) of files or sections that are not in the repository")
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
