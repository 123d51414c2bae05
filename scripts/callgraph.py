#!/usr/bin/env python3
"""File-level call graph of a source folder, from its object files.

Reads the symbols each object file defines and uses (nm), draws an edge
A -> B when A uses a symbol B defines, and prints every cycle between files
(strongly connected components of more than one file). Exit 1 if any.
A cycle between files is a module split that left both halves needing each
other: docs/DESIGN.md, "Source layout", says src/store/ has none.

    scripts/callgraph.py OBJDIR SRCDIR [--edges]
    e.g. scripts/callgraph.py build-asan/CMakeFiles/jobd_internal.dir/src/store src/store
    scripts/callgraph.py --self-test   (compiles three small files: a cycle
                                        must be found, a chain must not)

Objects whose source is no longer in SRCDIR (a file moved or removed since
the build folder was made) are left out.
"""
import os
import subprocess
import sys


def objects(root):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".o"):
                yield os.path.join(d, f)


def symbols(objs):
    """{object: (defined, used)} from one nm run over all of them (a run
    per object cost a minute of wall time on a loaded 2-core machine)."""
    out = {o: (set(), set()) for o in objs}
    if not objs:
        return out
    text = subprocess.run(["nm", "-A", *objs], check=True, capture_output=True, text=True).stdout
    for line in text.splitlines():
        path, sep, rest = line.partition(": ")  # nm -A: "FILE: VALUE TYPE NAME"
        if not sep:
            path, sep, rest = line.partition(":")
        if path not in out:
            continue
        defined, used = out[path]
        parts = rest.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRGS":  # global definitions only
            defined.add(parts[2])
    return out


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def analyse(root, src, show_edges=False):
    """Prints the cycles of the objects under root whose source is in src; their count."""
    name = lambda p: os.path.relpath(p, root)[: -len(".o")]
    defs, uses = {}, {}
    objs = [o for o in objects(root) if os.path.isfile(os.path.join(src, name(o)))]
    for o, (d, u) in symbols(objs).items():
        defs[name(o)], uses[name(o)] = d, u
    owner = {s: f for f, ds in defs.items() for s in ds}
    edges = {f: {owner[s] for s in us if s in owner and owner[s] != f} for f, us in uses.items()}
    if show_edges:
        for f in sorted(edges):
            for t in sorted(edges[f]):
                print(f"{f} -> {t}")
    cycles = [c for c in sccs(defs.keys(), edges) if len(c) > 1]
    for c in cycles:
        why = []
        for a in c:
            for b in sorted(edges[a] & set(c)):
                syms = sorted(s for s in uses[a] if owner.get(s) == b)
                why.append(f"  {a} -> {b}: {', '.join(syms[:4])}")
        print("cycle: " + " <-> ".join(c) + "\n" + "\n".join(why))
    return (len(cycles), len(defs))


def self_test():
    """A two-file cycle is found; a chain of three is not."""
    import tempfile

    files = {
        "ping.c": "int pong(int); int ping(int n) { return n ? pong(n - 1) : 0; }",
        "pong.c": "int ping(int); int pong(int n) { return n ? ping(n - 1) : 1; }",
        "top.c": "int mid(void); int top(void) { return mid(); }",
        "mid.c": "int low(void); int mid(void) { return low(); }",
        "low.c": "int low(void) { return 1; }",
    }
    with tempfile.TemporaryDirectory() as d:
        for sub, names in (("cyc", ("ping.c", "pong.c")), ("dag", ("top.c", "mid.c", "low.c"))):
            os.mkdir(os.path.join(d, sub))
            for n in names:
                c = os.path.join(d, sub, n)
                with open(c, "w") as f:
                    f.write(files[n] + "\n")
                subprocess.run(["cc", "-c", c, "-o", c + ".o"], check=True)
        cyc = analyse(os.path.join(d, "cyc"), os.path.join(d, "cyc"))
        dag = analyse(os.path.join(d, "dag"), os.path.join(d, "dag"))
    if cyc != (1, 2) or dag != (0, 3):
        print(f"callgraph self-test: got {cyc} and {dag}, want (1, 2) and (0, 3)", file=sys.stderr)
        return 1
    print("callgraph self-test: a cycle found, a chain passed")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root, src = args
    sys.setrecursionlimit(10000)
    if not os.path.isdir(root):
        print(f"callgraph: no object files under {root}", file=sys.stderr)
        return 2
    cycles, files = analyse(root, src, "--edges" in sys.argv)
    if files == 0:
        print(f"callgraph: no object files under {root}", file=sys.stderr)
        return 2
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
