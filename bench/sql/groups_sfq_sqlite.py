#!/usr/bin/env python3
"""The SFQ-tag claim on SQLite beside today's grouped pick and a plain walk
(docs/DESIGN.md, Groups, "Alternative measured: start-time fair queueing
tags"); the PostgreSQL side is bench/sql/groups_sfq.py.

One process, Python's sqlite3 (the library's version is printed), a copy of
jobd's SQLite schema (`jobd migrate --db FILE`, WAL, synchronous=NORMAL)
plus the prototype's `tag` column and indexes (those of
bench/sql/groups_sfq/schema_sfq.sql). A worker cycle: the pick (one
transaction, BEGIN IMMEDIATE, with the UPDATE of the picked rows to running
through json_each as sqlite/groups.c does), then the completion (DELETE of
the rows: the same for every variant, standing in for the move to
jobs_done). Variants:

  plain     one ordered walk of jobs_claim_queue (a queue of one group is
            claimed so today, sqlite/groups.c)
  gr1000    today's pick_sql from src/store/sqlite/groups.c (C preprocessor),
            1,000 groups, the cursor carried from claim to claim
  sfq1      the SFQ walk of jobs_sfq_claim (priority DESC, tag, id) beside the
            untagged walk, one group
  sfq1000   the same, 1,000 groups

CPU seconds of this process (time.process_time) per job; rounds interleaved.
Env: SFQ_N (60000), SFQ_ROUNDS (3), JOBD_BIN (build-asan/jobd). Stdlib only.
"""

import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
N = int(os.environ.get("SFQ_N", "60000"))
ROUNDS = int(os.environ.get("SFQ_ROUNDS", "3"))
BATCH = 10
TMP = os.environ.get("JOBD_BENCH_TMP", "/tmp/groupsfq-bench")
TYPES = '["noop"]'


def pick_sql_today():
    with open(os.path.join(ROOT, "src/store/sqlite/groups.c")) as f:
        text = f.read()
    d = re.search(r"^#define SQ_GR_TYPES .*$", text, re.M).group(0)
    m = re.search(r"static const char pick_sql\[\] =(.*?\");", text, re.S)
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as t:
        t.write(d + "\nconst char *pick = " + m.group(1) + ";\n")
    out = subprocess.run(["cc", "-E", "-P", t.name], check=True, text=True, capture_output=True).stdout
    os.unlink(t.name)
    parts = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", out)
    return "".join(bytes(p, "utf-8").decode("unicode_escape") for p in parts)


TYPES_F = "(?5 IS NULL OR type IN (SELECT value FROM json_each(?5)))"
PLAIN = ("SELECT id FROM jobs INDEXED BY jobs_claim_queue WHERE queue = ?1 AND status = 'pending'"
         " AND +run_at <= ?3 AND " + TYPES_F + " ORDER BY priority DESC, run_at, id LIMIT ?2")
SFQ = ("SELECT id FROM (SELECT * FROM (SELECT id, priority, 0 AS src, tag AS k FROM jobs INDEXED BY jobs_sfq_claim"
       "   WHERE queue = ?1 AND status = 'pending' AND tag IS NOT NULL AND +run_at <= ?3 AND " + TYPES_F +
       "   ORDER BY priority DESC, tag, id LIMIT ?2)"
       " UNION ALL SELECT * FROM (SELECT id, priority, -1, 0 FROM jobs INDEXED BY jobs_claim_queue"
       "   WHERE queue = ?1 AND status = 'pending' AND tag IS NULL AND +run_at <= ?3 AND " + TYPES_F +
       "   ORDER BY priority DESC, run_at, id LIMIT ?2)) ORDER BY priority DESC, src, k, id LIMIT ?2")
SCHEMA = [
    "ALTER TABLE jobs ADD COLUMN tag INTEGER",
    "DROP INDEX jobs_claim_queue",
    "CREATE INDEX jobs_claim_queue ON jobs (queue, priority DESC, run_at, id)"
    " WHERE status = 'pending' AND tag IS NULL",
    "CREATE INDEX jobs_sfq_claim ON jobs (queue, priority DESC, tag, id)"
    " WHERE status = 'pending' AND tag IS NOT NULL",
    # as on PostgreSQL (groups_sfq/schema_sfq.sql): a group's last tag in place of its claim index
    "DROP INDEX jobs_group_claim",
    "CREATE INDEX jobs_sfq_tag ON jobs (queue, grp, tag) WHERE status = 'pending' AND tag IS NOT NULL",
]


def base_db(tags):
    """jobd's schema; with tags, the prototype's column and indexes (today's pick names
    jobs_claim_queue, whose predicate the prototype changes: its own copy without them)."""
    path = os.path.join(TMP, f"sq-base-{'tags' if tags else 'today'}.db")
    if not os.path.exists(path):
        os.makedirs(TMP, exist_ok=True)
        subprocess.run([os.environ.get("JOBD_BIN", os.path.join(ROOT, "build-asan/jobd")), "migrate",
                        "--db", path], check=True, capture_output=True)
        c = sqlite3.connect(path)
        for s in (SCHEMA if tags else SCHEMA[:1]):
            c.execute(s)
        c.commit()
        c.close()
    return path


def run(v, rnd, today_sql):
    path = os.path.join(TMP, f"sq-{v}.db")
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(path + ext):
            os.unlink(path + ext)
    shutil.copy(base_db(v.startswith("sfq")), path)
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=NORMAL")
    groups = 0 if v == "plain" else (1 if v.endswith("1") else 1000)
    now = int(time.time() * 1e6)
    grp = "NULL" if groups == 0 else f"'g' || substr('000' || (value % {groups}), -4)"
    tag = f"value / {groups}" if v.startswith("sfq") else "NULL"
    c.execute("BEGIN")
    c.execute(f"INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts, created_at,"
              f" grp, tag) SELECT 'q', 'noop', '{{}}', 'pending', 0, {now - 3600_000_000}, 25, {now}, {grp},"
              f" {tag} FROM (WITH RECURSIVE s(value) AS (SELECT 0 UNION ALL SELECT value + 1 FROM s"
              f" WHERE value < {N - 1}) SELECT value FROM s)")
    if groups:
        c.execute("INSERT INTO job_groups (queue, grp) SELECT DISTINCT queue, grp FROM jobs")
        c.execute("INSERT INTO job_groups (queue, grp) VALUES ('q', '')")
    c.execute("COMMIT")
    c.execute("ANALYZE")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cursor = ""
    done = 0
    t0, w0 = time.process_time(), time.monotonic()
    while True:
        c.execute("BEGIN IMMEDIATE")
        now = int(time.time() * 1e6)
        if v == "gr1000":
            ids = []
            for row in c.execute(today_sql, ("q", BATCH, now, None, TYPES, None, 0, cursor)):
                if row[0] is None:
                    cursor = row[1]
                else:
                    ids.append(row[0])
        else:
            ids = [r[0] for r in c.execute(PLAIN if v == "plain" else SFQ,
                                                ("q", BATCH, now, None, TYPES))]
        js = json.dumps(ids)
        c.execute("UPDATE jobs SET status = 'running', attempt = attempt + 1, worker_id = 'w',"
                  " lease_expires_at = ?2, started_at = ?3 WHERE id IN (SELECT value FROM json_each(?1))",
                  (js, now + 60_000_000, now))
        c.execute("COMMIT")
        if not ids:
            break
        c.execute("BEGIN IMMEDIATE")
        c.execute("DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?1)) AND status = 'running'", (js,))
        c.execute("COMMIT")
        done += len(ids)
    cpu, wall = time.process_time() - t0, time.monotonic() - w0
    c.close()
    if done != N:
        raise RuntimeError(f"{v}: {done} of {N} jobs claimed")
    with open("/proc/loadavg") as f:
        load = float(f.read().split()[0])
    row = dict(store="sqlite", variant=v, round=rnd, jobs=done, cpu_us_per_job=round(1e6 * cpu / done, 1),
               jobs_per_s=round(done / wall, 1), load=load)
    print(json.dumps(row), flush=True)
    return row


if __name__ == "__main__":
    print(f"# sqlite {sqlite3.sqlite_version}", file=sys.stderr)
    today = pick_sql_today()
    vs = os.environ.get("SFQ_VARIANTS", "plain gr1000 sfq1 sfq1000").split()
    rows = []
    for rnd in range(ROUNDS):
        for v in vs[rnd % len(vs):] + vs[:rnd % len(vs)]:
            rows.append(run(v, rnd, today))
    ref = statistics.median(r["cpu_us_per_job"] for r in rows if r["variant"] == "plain")
    for v in vs:
        m = statistics.median(r["cpu_us_per_job"] for r in rows if r["variant"] == v)
        w = statistics.median(r["jobs_per_s"] for r in rows if r["variant"] == v)
        print(f"| {v} | {m:.1f} µs/job | {100 * ref / m:.0f} % of plain's rate by CPU | {w:.0f} jobs/s |",
              file=sys.stderr)
