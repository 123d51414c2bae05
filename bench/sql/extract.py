#!/usr/bin/env python3
"""Writes the pgbench script of jobd's own worker cycle, taken from the source.

The SQL ceiling must run the very statements a jobd worker sends per batch
(the claim and the fenced batched completion), so they are not copied by
hand: this script pulls PG_STMT(st_claim_types_run, ...) and
PG_STMT(st_complete_batch, ...) out of src/store/pg/read.c and
src/store/pg/report.c, lets the C preprocessor expand their macros
(PG_NOW, PG_RUN_COLS, CLAIM_DUE_TYPES, ... from pg/internal.h and those
files), and turns the $n parameters into pgbench variables:

  claim      the worker loop's (claim_req.run_only, types named):
             $1 worker id -> :client_id, $2 limit -> :batch, $3 lease -> :lease_ms,
             $4 types -> :types (a worker claims only the types it has handlers for),
             $5 now -> NULL (the server's now(), as in production), $6 queues -> NULL (any)
  complete   $1 ids -> :ids, $2 attempts -> :atts, $3 results -> n NULLs (a no-op
             handler has no result), $4 now -> NULL

The claim is wrapped in a CTE that aggregates its RETURNING rows into arrays,
only because pgbench's \\gset takes one row (as bench/harness/sql does).

  bench/sql/extract.py [--src DIR] [--out FILE]     (default: stdout)
Stdlib only; needs `cc` (any C compiler with -E).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

WANT = ("st_claim_types_run", "st_complete_batch")
FILES = ("src/store/pg/read.c", "src/store/pg/report.c")


def c_blocks(text):
    """#define blocks (with continuation lines) and the PG_STMT(...) blocks we want."""
    defines, stmts = [], {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("#define "):
            block = [lines[i]]
            while block[-1].endswith("\\"):
                i += 1
                block.append(lines[i])
            defines.append("\n".join(block))
        i += 1
    for name in WANT:
        m = re.search(r"^PG_STMT\(" + name + r",", text, re.M)
        if not m:
            sys.exit(f"extract.py: PG_STMT({name}, ...) not found in {' or '.join(FILES)}")
        # scan to the closing parenthesis, skipping string literals
        j, depth, in_str = m.end(), 1, False
        while depth:
            ch = text[j]
            if in_str:
                if ch == "\\":
                    j += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            j += 1
        stmts[name] = text[m.end():j - 1]
    return defines, stmts


def expand(src):
    text = ""
    for path in FILES:
        with open(os.path.join(src, path)) as f:
            text += f.read() + "\n"
    defines, stmts = c_blocks(text)
    # the files' own project headers (pg/internal.h, stats_int.h, ...)
    includes = sorted(set(re.findall(r'^#include "[^"]+"$', text, re.M)))
    body = [*includes, *defines]
    for name, expr in stmts.items():
        body.append(f"const char *{name}_sql = {expr};")
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as t:
        t.write("\n".join(body) + "\n")
    try:
        cc = os.environ.get("CC", "cc")
        out = subprocess.run([cc, "-E", "-P", "-I", os.path.join(src, "src"), "-I",
                              os.path.join(src, "include"), "-I", "/usr/include/postgresql", t.name],
                             check=True, text=True, capture_output=True).stdout
    finally:
        os.unlink(t.name)
    sql = {}
    for name in WANT:
        m = re.search(r"\b" + name + r"_sql\s*=((?:\s*\"(?:[^\"\\]|\\.)*\")+)\s*;", out)
        if not m:
            sys.exit(f"extract.py: could not read the expansion of {name}")
        parts = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(1))
        s = "".join(bytes(p, "utf-8").decode("unicode_escape") for p in parts)
        sql[name] = " ".join(s.split())
    return sql


def params(sql, mapping):
    def rep(m):
        k = int(m.group(1))
        if k not in mapping:
            sys.exit(f"extract.py: parameter ${k} has no mapping")
        return mapping[k]
    return re.sub(r"\$(\d+)(?!\d)", rep, sql)


def claimed(claim):
    """The claim as a CTE named claimed that the cycle's SELECT reads. A claim whose own
    CTEs modify data (schema version 38: its events' INSERT) cannot be nested in a WITH,
    so its CTEs become the outer ones and claimed reads its UPDATE's rows (c)."""
    tail = " SELECT * FROM c"
    if claim.startswith("WITH ") and claim.endswith(tail):
        return claim[: -len(tail)] + ", claimed AS (SELECT * FROM c)"
    return f"WITH claimed AS ({claim})"


def script(sql):
    claim = params(sql["st_claim_types_run"], {1: ":client_id", 2: ":batch", 3: ":lease_ms",
                                                4: ":types", 5: "NULL", 6: "NULL"})
    done = params(sql["st_complete_batch"], {1: ":ids", 2: ":atts",
                                             3: "(array_fill(NULL::json, ARRAY[:n::int]))", 4: "NULL"})
    return (
        "-- GENERATED by bench/sql/extract.py from src/store/pg/*.c: do not edit.\n"
        "-- One jobd worker cycle: claim up to :batch due jobs (st_claim_types_run), then one\n"
        "-- fenced batched completion (st_complete_batch), each its own autocommit\n"
        "-- transaction as in the worker. Variables: batch, lease_ms, types (pgbench -D).\n"
        f"{claimed(claim)}\n"
        "SELECT coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(attempt), '{}') AS atts,"
        " count(*) AS n FROM claimed\n"
        "\\gset\n"
        "\\if :n > 0\n"
        f"{done};\n"
        "\\endif\n"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--src", default=os.path.normpath(os.path.join(here, "../..")))
    ap.add_argument("--out")
    a = ap.parse_args()
    text = script(expand(a.src))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
