#!/usr/bin/env python3
"""coverage.py — every route of docs/openapi.yaml has a method in at least
one of the client libraries (clients/python, clients/node, clients/go), and
no client calls a route the spec does not have.

Each client sends every request through one route table written as literal
pairs — Python ("POST", "/v1/jobs/{id}/cancel"), Go {"POST", "/v1/..."},
JavaScript/TypeScript ["POST", "/v1/..."] — so the wrapped routes are found
by one regex over each client's library sources (tests, benchmarks, build
output and node_modules are not library sources: a stub server's literal is
not a wrapped route). The spec is read with a small line parser, no YAML
library: its `paths:` block keeps one layout (a path at two spaces of
indent, `/...:`, its methods at four), which the self-test pins.

Usage: coverage.py [--existing] [--root DIR]
         checks the three clients under DIR/clients (default: this tree)
         against DIR/docs/openapi.yaml; a client directory that does not
         exist fails, unless --existing (then it is reported and skipped,
         while not every client has landed yet)
       coverage.py --self-test
         the checks against the fixture in clients/fixtures/coverage/
Exit status: 0 when every route is covered and every call is in the spec,
1 otherwise (one line per finding), 2 for a usage error.
"""
import os
import re
import sys
from typing import Dict, List, Set, Tuple

Route = Tuple[str, str]

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CLIENTS = ("python", "node", "go")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")

# Routes no client need wrap, each with why. Kept short on purpose.
# (The dashboard, GET /ui/, is not in docs/openapi.yaml at all: it is a web
# page for browsers, docs/DASHBOARD.md.)
EXEMPT: Dict[Route, str] = {
    # Prometheus text for a scraper (docs/API.md, GET /metrics): monitoring
    # reads it, an application has no use for it. /healthz, by contrast, is
    # wrapped (Python's Client.healthy()): a program may check its server.
    ("GET", "/metrics"): "Prometheus exposition for scrapers, not for applications",
}

SOURCE_EXT = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".go")
SKIP_DIRS = {"tests", "test", "__tests__", "bench", "node_modules", "dist", "build",
             "fixtures", "testdata", "__pycache__", ".mypy_cache"}
# A literal pair in any of the three languages' brackets, maybe followed by
# more fields of the same entry (Go's route{"POST", "/v1/...", retryNever}).
PAIR_RE = re.compile(r"""[(\[{]\s*(["'`])(GET|PUT|POST|DELETE|PATCH|HEAD|OPTIONS)\1\s*,"""
                     r"""\s*(["'`])(/[^"'`\s]*)\3\s*(?:,[^)\]}\n]*)?[)\]}]""")


def spec_routes(text: str) -> Set[Route]:
    """The (METHOD, path) pairs of an OpenAPI file's `paths:` block."""
    out: Set[Route] = set()
    in_paths, path = False, None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            in_paths, path = line.rstrip() == "paths:", None
            continue
        if not in_paths:
            continue
        m = re.match(r"^  (/\S*):\s*$", line)
        if m:
            path = m.group(1)
            continue
        if re.match(r"^  \S", line):
            path = None  # another key at path level: not a path
            continue
        m = re.match(r"^    ([a-z]+):", line)
        if m and path is not None and m.group(1) in METHODS:
            out.add((m.group(1).upper(), path))
    return out


def library_files(client_dir: str) -> List[str]:
    out = []
    for d, dirs, files in os.walk(client_dir):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
        for f in sorted(files):
            if f.endswith(SOURCE_EXT) and not re.search(r"(_test\.go|\.test\.\w+|\.d\.ts)$", f):
                out.append(os.path.join(d, f))
    return out


def client_routes(client_dir: str) -> Dict[Route, str]:
    """Each literal (METHOD, path) pair of a client's library sources, with
    the first FILE:LINE it is at."""
    out: Dict[Route, str] = {}
    for f in library_files(client_dir):
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in PAIR_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            out.setdefault((m.group(2), m.group(4)), f"{f}:{line}")
    return out


def check(root: str, existing_only: bool) -> Tuple[List[str], List[str]]:
    """(failures, notes) for the tree at root."""
    spec_path = os.path.join(root, "docs", "openapi.yaml")
    with open(spec_path, encoding="utf-8") as fh:
        spec = spec_routes(fh.read())
    fails: List[str] = []
    notes: List[str] = []
    if not spec:
        fails.append(f"{spec_path}: no routes found under paths:")
    for r in sorted(EXEMPT):
        if r not in spec:
            fails.append(f"coverage.py: exempt route {r[0]} {r[1]} is not in {spec_path}")
    wrapped: Dict[Route, List[str]] = {}
    for name in CLIENTS:
        d = os.path.join(root, "clients", name)
        if not os.path.isdir(d):
            msg = f"clients/{name}: does not exist"
            (notes if existing_only else fails).append(msg + (": skipped" if existing_only
                                                              else ""))
            continue
        routes = client_routes(d)
        if not routes:
            fails.append(f"clients/{name}: no route table found (literal (\"METHOD\", \"/path\") "
                         "pairs in its library sources)")
        for r, where in sorted(routes.items()):
            if r not in spec:
                fails.append(f"{os.path.relpath(where, root)}: {r[0]} {r[1]} is not a route "
                             "of docs/openapi.yaml")
            wrapped.setdefault(r, []).append(name)
        notes.append(f"clients/{name}: {len(routes)} routes")
    for r in sorted(spec - set(EXEMPT)):
        if r not in wrapped:
            fails.append(f"{r[0]} {r[1]}: no client wraps it (docs/openapi.yaml)")
    return fails, notes


def self_test() -> int:
    """The checks against clients/fixtures/coverage/ laid out as a tree
    (its openapi.yaml read as docs/openapi.yaml), and the parser against the
    real docs/openapi.yaml."""
    import shutil
    import tempfile
    fx = os.path.join(ROOT, "clients", "fixtures", "coverage")
    problems: List[str] = []

    def expect(what: str, got: object, want: object) -> None:
        if got != want:
            problems.append(f"{what}: got {got!r}, want {want!r}")

    with open(os.path.join(fx, "openapi.yaml")) as fh:
        expect("fixture routes", sorted(spec_routes(fh.read())),
               [("DELETE", "/v1/unwrapped"), ("GET", "/metrics"), ("GET", "/v1/jobs"),
                ("POST", "/v1/jobs"), ("POST", "/v1/jobs/{id}/cancel"),
                ("PUT", "/v1/queues/{name}")])
    tmp = tempfile.mkdtemp(prefix="jobd-coverage.")
    try:
        os.makedirs(os.path.join(tmp, "docs"))
        shutil.copy(os.path.join(fx, "openapi.yaml"), os.path.join(tmp, "docs", "openapi.yaml"))
        shutil.copytree(fx, os.path.join(tmp, "clients"),
                        ignore=shutil.ignore_patterns("openapi.yaml"))
        fails, _ = check(tmp, existing_only=False)
        expect("all three", sorted(re.sub(r"^\S+:\d+: ", "", f) for f in fails),
               ["DELETE /v1/unwrapped: no client wraps it (docs/openapi.yaml)",
                "POST /v1/jobs/{id}/cancle is not a route of docs/openapi.yaml"])
        shutil.rmtree(os.path.join(tmp, "clients", "node"))
        fails, notes = check(tmp, existing_only=True)
        expect("node absent, --existing", sorted(fails),
               ["DELETE /v1/unwrapped: no client wraps it (docs/openapi.yaml)",
                "POST /v1/jobs/{id}/cancel: no client wraps it (docs/openapi.yaml)"])
        expect("node absent, noted", "clients/node: does not exist: skipped" in notes, True)
        fails, _ = check(tmp, existing_only=False)
        expect("node absent, without --existing", "clients/node: does not exist" in fails, True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(ROOT, "docs", "openapi.yaml")) as fh:
        real = spec_routes(fh.read())
    for r in (("POST", "/v1/jobs/{id}/cancel"), ("GET", "/healthz"), ("PUT", "/v1/queues/{name}"),
              ("POST", "/v1/workers/{name}/withdraw")):
        expect(f"docs/openapi.yaml has {r}", r in real, True)
    for p in problems:
        print(f"FAIL: {p}")
    if not problems:
        print(f"ok: the fixture's findings as expected; docs/openapi.yaml: {len(real)} routes")
    return 1 if problems else 0


def main(argv: List[str]) -> int:
    if argv == ["--self-test"]:
        return self_test()
    root, existing = ROOT, False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--existing":
            existing = True
        elif a == "--root" and args:
            root = args.pop(0)
        else:
            print(__doc__, file=sys.stderr)
            return 2
    fails, notes = check(root, existing)
    for n in notes:
        print(n)
    for f in fails:
        print(f"FAIL: {f}")
    if not fails:
        print("ok: every route of docs/openapi.yaml is wrapped by a client"
              f" (exempt: {', '.join(m + ' ' + p for m, p in sorted(EXEMPT))})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
