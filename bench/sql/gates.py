#!/usr/bin/env python3
"""Gates for dependencies (issue 29), a measured prototype: a 10,000-job
fan-out with its fan-in beside 10,000 independent jobs, today's protocol
against the gate data model, on both stores (docs/DESIGN.md, Dependencies,
"Gates, measured"; docs/BENCHMARKS.md, "Fan-out at 10,000: a gate").

One worker, as `jobd_bench deps-fanout` runs one: a loop of claim (up to
BATCH jobs of type noop) and one batched completion of what it claimed,
each its own transaction, until every job succeeded. The statements are
jobd's own:

  PostgreSQL  st_claim_types_run and st_complete_batch, taken from the
              source by bench/sql/extract.py (its $n become parameters of a
              prepared statement, sent through libpq by ctypes); today's
              release is jobd's trigger and functions of schema 30/35. The
              gate variant is the same claim with a second walk, over the
              open gates (claim_gate below), on the schema of
              bench/sql/gates/schema_pg.sql.
  SQLite      complete_set's INSERT (sqlite/report.c) and the parents'
              read (sq_op_parents_attach, sqlite/deps.c) read from the C
              source (c_sql); sq_claim_due's statement, which filter_sql
              builds at run time, written here as it builds it for one type
              (sq_any_due's probe first); today's release, sq_deps_flush and
              parent_ended (sqlite/deps.c, statements built from macros),
              ported statement for statement and run before each COMMIT as
              sq_commit does. The gate variant: bench/sql/gates/schema_sqlite.sql.

Seeding as jobd does it (jobd.deps_attach_set on PostgreSQL; jobs_waiting
and job_deps rows on SQLite) is outside the clock, as enqueue is in
deps-fanout. Per run: wall s, CPU of this process and (PostgreSQL) of the
cluster's processes, WAL bytes and full-page images (pg_stat_wal) or WAL
frames (SQLite, auto-checkpoint off during the run), and where the time
went: claim statements, completion statements, the root's completion (the
release), the joiners' and last job's completions are inside "complete".

  bench/sql/gates.py fanout  [--store pg|sqlite|both] [--rounds R] [--n N]
  bench/sql/gates.py claims  (plain claims with 0, 10 x 1,000 and 1,000 x 10
                              closed gates' children in the queue; EXPLAIN)
  bench/sql/gates.py readers (get by id and list by status, gated children)

Env: BENCH_PG_URL (postgres://postgres@127.0.0.1:55464/postgres),
JOBD_BIN (build-bench/jobd), JOBD_BENCH_TMP (/tmp/gate29-bench),
GATES_OUT (a JSON-lines file; default bench/results/gates-<UTC>.jsonl).
DESTRUCTIVE for the databases it makes (GATES_DB_today and GATES_DB_gate,
GATES_DB defaulting to gates; files in JOBD_BENCH_TMP). Stdlib only, and libpq.so.5.
"""

import ctypes
import datetime
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from urllib.parse import urlsplit, urlunsplit

# glibc trims the top of this process's heap when a statement frees its
# temporary b-tree's page cache, and grows it again for the next statement:
# with the default thresholds that cost (page faults, in the kernel) came and
# went with the heap's layout, and made one variant of the same SQL twice as
# dear as the other. Pinned so that the runs measure SQL, not the allocator.
TUNE = "glibc.malloc.trim_threshold=67108864:glibc.malloc.top_pad=16777216"
if os.environ.get("GLIBC_TUNABLES") != TUNE:
    os.environ["GLIBC_TUNABLES"] = TUNE
    os.execv(sys.executable, [sys.executable] + sys.argv)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
sys.path.insert(0, HERE)
import extract  # noqa: E402  (jobd's own PostgreSQL statements)

BASE = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:55464/postgres")
JOBD = os.environ.get("JOBD_BIN", os.path.join(ROOT, "build-bench/jobd"))
TMP = os.environ.get("JOBD_BENCH_TMP", "/tmp/gate29-bench")
BATCH = int(os.environ.get("GATES_BATCH", "100"))
OUT = os.environ.get("GATES_OUT") or os.path.join(
    ROOT, "bench/results", "gates-" + datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%S") + ".jsonl")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def emit(rec):
    rec["load"] = loadavg()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


# ---- libpq through ctypes ----------------------------------------------------

pq = ctypes.CDLL("libpq.so.5")
pq.PQconnectdb.restype = ctypes.c_void_p
pq.PQconnectdb.argtypes = [ctypes.c_char_p]
for fn in ("PQexec", "PQprepare", "PQexecPrepared"):
    getattr(pq, fn).restype = ctypes.c_void_p
pq.PQexec.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
pq.PQprepare.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
pq.PQexecPrepared.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                              ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
for fn in ("PQresultStatus", "PQntuples", "PQnfields", "PQbackendPID", "PQstatus"):
    getattr(pq, fn).argtypes = [ctypes.c_void_p]
pq.PQgetvalue.restype = ctypes.c_char_p
pq.PQgetvalue.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
pq.PQgetisnull.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
pq.PQresultErrorMessage.restype = ctypes.c_char_p
pq.PQresultErrorMessage.argtypes = [ctypes.c_void_p]
pq.PQerrorMessage.restype = ctypes.c_char_p
pq.PQerrorMessage.argtypes = [ctypes.c_void_p]
pq.PQclear.argtypes = [ctypes.c_void_p]
pq.PQfinish.argtypes = [ctypes.c_void_p]


class PG:
    def __init__(self, url):
        self.c = pq.PQconnectdb(url.encode())
        if pq.PQstatus(self.c) != 0:
            sys.exit("gates.py: " + pq.PQerrorMessage(self.c).decode())
        self.pid = pq.PQbackendPID(self.c)
        self.prepared = set()

    def _rows(self, r):
        st = pq.PQresultStatus(r)
        if st not in (1, 2):  # COMMAND_OK, TUPLES_OK
            msg = pq.PQresultErrorMessage(r).decode()
            pq.PQclear(r)
            raise RuntimeError(msg)
        rows = [[None if pq.PQgetisnull(r, i, j) else pq.PQgetvalue(r, i, j).decode()
                 for j in range(pq.PQnfields(r))] for i in range(pq.PQntuples(r))]
        pq.PQclear(r)
        return rows

    def q(self, sql):
        return self._rows(pq.PQexec(self.c, sql.encode()))

    def x(self, name, sql, *params):
        if name not in self.prepared:
            self._rows(pq.PQprepare(self.c, name.encode(), sql.encode(), 0, None))
            self.prepared.add(name)
        arr = (ctypes.c_char_p * len(params))(*[None if p is None else str(p).encode() for p in params])
        return self._rows(pq.PQexecPrepared(self.c, name.encode(), len(params), arr, None, None, 0))

    def close(self):
        pq.PQfinish(self.c)


def dbname(gate):
    """The two databases: GATES_DB (gates) + _today (jobd's schema) or _gate (the prototype's)."""
    return os.environ.get("GATES_DB", "gates") + ("_gate" if gate else "_today")


def db_url(name):
    u = urlsplit(BASE)
    return urlunsplit((u.scheme, u.netloc, "/" + name, u.query, u.fragment))


# ---- CPU of this cluster only (as bench/sql/groups_sfq.py) -------------------

from groups_sfq import cluster_ticks, stat  # noqa: E402  (this cluster's CPU only)

TCK = os.sysconf("SC_CLK_TCK")


# ---- PostgreSQL statements ------------------------------------------------------

def pg_statements():
    extract.WANT = ("st_claim_types_run", "st_complete_batch", "st_parents_read")
    extract.FILES = ("src/store/pg/read.c", "src/store/pg/report.c", "src/store/pg/deps.c")
    sql = extract.expand(ROOT)
    PG_CLAIM[2] = sql["st_parents_read"]
    claim = sql["st_claim_types_run"]
    done = sql["st_complete_batch"]
    # the gate variant of the claim: ungated walk restricted to the ungated
    # index's predicate, then one walk per open gate, merged in claim order
    head = "SELECT id, priority, run_at FROM jobd.jobs WHERE type = tn.name AND "
    assert claim.count(head) == 1, "st_claim_types_run changed shape"
    i = claim.index(head)
    j = claim.index(" FOR UPDATE SKIP LOCKED) c ", i)
    inner = claim[i:j]  # the per-type walk up to its LIMIT
    ungated = inner.replace("WHERE type = tn.name AND ", "WHERE type = tn.name AND gate IS NULL AND ")
    gated = inner.replace("WHERE type = tn.name AND ",
                          "WHERE gate = g.id AND type = tn.name AND ")
    pre = claim[:claim.index("SELECT c.id FROM (SELECT DISTINCT unnest")]
    post = claim[claim.index(" ORDER BY c.priority DESC, c.run_at, c.id LIMIT"):]
    due = ("SELECT c.id FROM (SELECT u.id, u.priority, u.run_at FROM (SELECT DISTINCT unnest($4::text[]) AS name) tn "
           "CROSS JOIN LATERAL (" + ungated + " FOR UPDATE SKIP LOCKED) u "
           "UNION ALL SELECT v.id, v.priority, v.run_at FROM jobd.gates g "
           "CROSS JOIN (SELECT DISTINCT unnest($4::text[]) AS name) tn "
           "CROSS JOIN LATERAL (" + gated + " FOR UPDATE SKIP LOCKED) v WHERE g.waiting = 0) c")
    gate_claim = pre + due + post
    gate_claim = gate_claim.replace("SET status = 'running', ", "SET status = 'running', gate = NULL, ", 1)
    assert "gate = NULL" in gate_claim
    return claim, gate_claim, done


PROFILE = False  # --profile
PG_CLAIM = ["claim", None, None]  # [1] st_complete_batch, [2] st_parents_read: pg_statements()


def pg_cycle(c, claim_sql, tag, acc, root=None):
    """One worker cycle: claim, then complete. Returns (claimed, completed ids)."""
    t0, k0 = time.perf_counter(), stat(c.pid)[1]
    rows = c.x("claim_" + tag, claim_sql, "w1", BATCH, 300000, "{noop}", None, None)
    tp, kp = time.perf_counter(), stat(c.pid)[1]
    if rows:  # store_claim reads the claimed jobs' parents for their handlers (store.c)
        c.x("parents", PG_CLAIM[2], "{" + ",".join(r[0] for r in rows) + "}")
    t1, k1 = time.perf_counter(), stat(c.pid)[1]
    acc["parents_s"] = acc.get("parents_s", 0.0) + t1 - tp
    # the backend's CPU by statement (clock ticks, summed over the run)
    acc["claim_ticks"] = acc.get("claim_ticks", 0) + kp - k0
    acc["parents_ticks"] = acc.get("parents_ticks", 0) + k1 - kp
    acc["claim_s"] += t1 - t0
    if not rows:
        return 0, []
    ids = [r[0] for r in rows]
    atts = [r[6] for r in rows]
    done = c.x("complete", PG_CLAIM[1], "{" + ",".join(ids) + "}", "{" + ",".join(atts) + "}",
               "{" + ",".join(["NULL"] * len(ids)) + "}", None)
    t2 = time.perf_counter()
    acc["complete_s"] += t2 - t1
    k2 = stat(c.pid)[1]
    acc["complete_ticks"] = acc.get("complete_ticks", 0) + k2 - k1
    if root is not None and str(root) in ids:
        acc["root_ticks"] = acc.get("root_ticks", 0) + k2 - k1
        acc["root_complete_s"] += t2 - t1
    return len(rows), done


def pg_reset(c, gate):
    c.q("TRUNCATE jobd.jobs, jobd.jobs_done, jobd.jobs_waiting, jobd.job_deps, jobd.events,"
        " jobd.stats_buckets" + (", jobd.gates, jobd.gate_parents" if gate else ""))


def pg_seed_plain(c, n, gate):
    pg_reset(c, gate)
    c.q(f"INSERT INTO jobd.jobs (id, type, status) SELECT g, 'noop', 'pending'"
        f" FROM generate_series(1, {n}) g")


def pg_seed_fanout(c, n, gate):
    """Root 1, children 2..n+1, joiners of 1,000 children, a last job: returns (total, root)."""
    pg_reset(c, gate)
    nj = (n + 999) // 1000
    last = n + 2 + nj
    t0 = time.perf_counter()
    if not gate:
        c.q("INSERT INTO jobd.jobs (id, type, status) VALUES (1, 'noop', 'pending')")
        c.q(f"INSERT INTO jobd.jobs (id, type, status) SELECT g, 'noop', 'pending' FROM generate_series(2, {n + 1}) g")
        c.q(f"SELECT jobd.deps_attach_set(ARRAY(SELECT generate_series(2, {n + 1}))::bigint[],"
            f" ARRAY(SELECT generate_series(2, {n + 1}))::bigint[], array_fill(1::bigint, ARRAY[{n}]),"
            f" array_fill(false, ARRAY[{n}]), now())")
        t1 = time.perf_counter()
        for j in range(nj):
            jid, lo, hi = n + 2 + j, 2 + j * 1000, min(n + 1, 1 + (j + 1) * 1000)
            c.q(f"INSERT INTO jobd.jobs (id, type, status) VALUES ({jid}, 'noop', 'pending')")
            c.q(f"SELECT jobd.deps_attach_set(ARRAY[{jid}]::bigint[], array_fill({jid}::bigint, ARRAY[{hi - lo + 1}]),"
                f" ARRAY(SELECT generate_series({lo}, {hi}))::bigint[], array_fill(false, ARRAY[{hi - lo + 1}]), now())")
        c.q(f"INSERT INTO jobd.jobs (id, type, status) VALUES ({last}, 'noop', 'pending')")
        c.q(f"SELECT jobd.deps_attach_set(ARRAY[{last}]::bigint[], array_fill({last}::bigint, ARRAY[{nj}]),"
            f" ARRAY(SELECT generate_series({n + 2}, {n + 1 + nj}))::bigint[], array_fill(false, ARRAY[{nj}]), now())")
    else:
        # gate 1: the root's children; gates 2..nj+1: the joiners; gate nj+2: the last job
        c.q("INSERT INTO jobd.jobs (id, type, status, has_children) VALUES (1, 'noop', 'pending', true)")
        c.q(f"INSERT INTO jobd.gates (id, waiting, children) VALUES (1, 1, {n})")
        c.q("INSERT INTO jobd.gate_parents VALUES (1, 1)")
        c.q(f"INSERT INTO jobd.jobs (id, type, status, gate, has_children) SELECT g, 'noop', 'pending', 1, true"
            f" FROM generate_series(2, {n + 1}) g")
        c.q(f"INSERT INTO jobd.job_deps (parent, child) SELECT 1, g FROM generate_series(2, {n + 1}) g")
        t1 = time.perf_counter()
        for j in range(nj):
            jid, lo, hi, gid = n + 2 + j, 2 + j * 1000, min(n + 1, 1 + (j + 1) * 1000), 2 + j
            c.q(f"INSERT INTO jobd.gates (id, waiting, children) VALUES ({gid}, {hi - lo + 1}, 1)")
            c.q(f"INSERT INTO jobd.gate_parents SELECT g, {gid} FROM generate_series({lo}, {hi}) g")
            c.q(f"INSERT INTO jobd.job_deps (parent, child) SELECT g, {jid} FROM generate_series({lo}, {hi}) g")
            c.q(f"INSERT INTO jobd.jobs (id, type, status, gate, has_children) VALUES ({jid}, 'noop', 'pending', {gid}, true)")
        gl = nj + 2
        c.q(f"INSERT INTO jobd.gates (id, waiting, children) VALUES ({gl}, {nj}, 1)")
        c.q(f"INSERT INTO jobd.gate_parents SELECT g, {gl} FROM generate_series({n + 2}, {n + 1 + nj}) g")
        c.q(f"INSERT INTO jobd.job_deps (parent, child) SELECT g, {last} FROM generate_series({n + 2}, {n + 1 + nj}) g")
        c.q(f"INSERT INTO jobd.jobs (id, type, status, gate) VALUES ({last}, 'noop', 'pending', {gl})")
    log(f"  seeded fan-out ({'gate' if gate else 'today'}): children {t1 - t0:.3f} s")
    return n + 2 + nj, 1


def pg_settle(c):
    # as deps-fanout's db_settle: analysed before the run, vacuumed, checkpointed
    for t in ("jobs", "jobs_waiting", "job_deps", "jobs_done"):
        c.q(f"VACUUM ANALYZE jobd.{t}")
    for t in ("gates", "gate_parents"):
        if c.q(f"SELECT to_regclass('jobd.{t}')")[0][0]:
            c.q(f"VACUUM ANALYZE jobd.{t}")
    c.q("CHECKPOINT")


def pg_wal(c):
    """(WAL records, full-page images, bytes): the records and images from pg_stat_wal
    (this backend's counts flushed first), the bytes from the insert position."""
    c.q("SELECT pg_stat_force_next_flush()")
    c.q("SELECT pg_stat_clear_snapshot()")
    time.sleep(0)  # the flush happens when the backend next goes idle
    r = c.q("SELECT wal_records, wal_fpi, pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint"
            " FROM pg_stat_wal")[0]
    return r


def pg_run(c, pm, claim_sql, tag, total, root=None):
    acc = {"claim_s": 0.0, "complete_s": 0.0, "root_complete_s": 0.0}
    w0 = pg_wal(c)
    b0 = stat(c.pid)[1]
    k0, p0, t0 = cluster_ticks(pm), time.process_time(), time.perf_counter()
    done, cycles, empty = 0, 0, 0
    while done < total:
        n, d = pg_cycle(c, claim_sql, tag, acc, root)
        cycles += 1
        done += len(d)
        if n == 0:
            empty += 1
            if empty > 50:
                raise RuntimeError(f"{tag}: stuck at {done} of {total}")
    t1, p1, k1 = time.perf_counter(), time.process_time(), cluster_ticks(pm)
    b1 = stat(c.pid)[1]
    w1 = pg_wal(c)
    left = int(c.q("SELECT count(*) FROM jobd.jobs WHERE status <> 'succeeded'")[0][0]) + \
        int(c.q("SELECT count(*) FROM jobd.jobs_waiting")[0][0])
    if left:
        raise RuntimeError(f"{tag}: {left} jobs left")
    early = int(c.q("SELECT count(*) FROM jobd.job_deps d JOIN jobd.all_jobs p ON p.id = d.parent"
                    " JOIN jobd.all_jobs k ON k.id = d.child WHERE k.started_at < p.finished_at")[0][0])
    if early:
        raise RuntimeError(f"{tag}: {early} children started before a parent finished")
    # server_cpu_s: every process of the cluster (autovacuum, checkpointer, WAL writer
    # included); backend_cpu_s: the worker's own backend, the statements alone
    return dict(s=t1 - t0, server_cpu_s=(k1 - k0) / TCK, backend_cpu_s=(b1 - b0) / TCK,
                driver_cpu_s=p1 - p0, cycles=cycles,
                empty_claims=empty, wal_records=int(w1[0]) - int(w0[0]), wal_fpi=int(w1[1]) - int(w0[1]),
                wal_bytes=int(w1[2]) - int(w0[2]),
                jobs_pages=int(c.q("SELECT pg_relation_size('jobd.jobs') / 8192")[0][0]), **acc)


def pm_pid():
    c = PG(BASE)
    d = c.q("SHOW data_directory")[0][0]
    c.close()
    with open(os.path.join(d, "postmaster.pid")) as f:
        return int(f.readline())


def pg_setup():
    c = PG(BASE)
    for db in (dbname(False), dbname(True)):
        c.q(f"DROP DATABASE IF EXISTS {db}")
        c.q(f"CREATE DATABASE {db}")
    c.close()
    for db in (dbname(False), dbname(True)):
        subprocess.run([JOBD, "migrate", "--db", db_url(db)], check=True, capture_output=True)
    subprocess.run(["psql", "-X", "-q", db_url(dbname(True)), "-f", os.path.join(HERE, "gates/schema_pg.sql")],
                   check=True, capture_output=True)


# ---- SQLite ------------------------------------------------------------------------

def c_sql(path, anchor):
    """The SQL text of the run of adjacent C string literals (SQ_JOB_COLS expanded)
    in src/store/sqlite/PATH that contains anchor: the store's statement, not a copy."""
    with open(os.path.join(ROOT, "src/store/sqlite", path)) as f:
        text = f.read()
    # string literals and SQ_JOB_COLS, skipping comments and character literals
    toks, i = [], 0
    tok = re.compile(r'/\*.*?\*/|//[^\n]*|\'(?:[^\'\\]|\\.)*\'|"(?:[^"\\]|\\.)*"|SQ_JOB_COLS', re.S)
    for m in tok.finditer(text):
        t = m.group(0)
        if t[0] == '"':
            toks.append((m.start(), m.end(), bytes(t[1:-1], "utf-8").decode("unicode_escape")))
        elif t == "SQ_JOB_COLS":
            toks.append((m.start(), m.end(), SQ_JOB_COLS))
    runs, cur = [], []
    for t in toks:
        if cur and text[cur[-1][1]:t[0]].strip():
            runs.append(cur)
            cur = []
        cur.append(t)
    runs.append(cur)
    for r in runs:
        sql = "".join(t[2] for t in r)
        if anchor in sql:
            return sql
    sys.exit(f"gates.py: no statement with {anchor!r} in src/store/sqlite/{path}")


with open(os.path.join(ROOT, "src/store/sqlite/internal.h")) as _f:
    _m = re.search(r"#define SQ_JOB_COLS((?:.*\\\n)*.*)", _f.read())
SQ_JOB_COLS = "".join(re.findall(r'"([^"]*)"', _m.group(1)))  # sqlite/internal.h
HELD = ("paused = 1 OR max_running IS NOT NULL OR rate_limit IS NOT NULL OR grouped = 1"
        " OR group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL")  # QLIMITS_HELD_SQ
# sq_any_due's probe and sq_claim_due's statement, one type (filter_sql, sqlite/read.c)
SQ_ANY = ("SELECT * FROM (SELECT 1 FROM jobs WHERE status = 'pending' AND run_at <= ?1 "
          "AND queue NOT IN (SELECT name FROM queues WHERE " + HELD + ") AND type = ?2 LIMIT 1)")
SQ_PICK = ("SELECT * FROM (SELECT id, priority, run_at FROM jobs WHERE status = 'pending' AND +run_at <= ?1 "
           "AND queue NOT IN (SELECT name FROM queues WHERE " + HELD + ") AND type = ?5"
           " ORDER BY priority DESC, run_at, id LIMIT ?4)")
SQ_CLAIM_HEAD = ("UPDATE jobs SET status = 'running', attempt = attempt + 1, "
                 "  worker_id = ?2, lease_expires_at = ?3, started_at = ?1{gate} "
                 "WHERE id IN (SELECT id FROM (")
SQ_CLAIM_TAIL = ") ORDER BY priority DESC, run_at, id LIMIT ?4) RETURNING " + SQ_JOB_COLS
SQ_CLAIM = SQ_CLAIM_HEAD.format(gate="") + SQ_PICK + SQ_CLAIM_TAIL
# the gate variant: the ungated walk (its index's predicate says gate IS NULL), and
# one branch per open gate read first (SQLite has no LATERAL; the store holds the
# write lock, so the list cannot change before the statement runs)
SQ_ANY_GATE = SQ_ANY.replace("type = ?2", "type = ?2 AND gate IS NULL")
SQ_PICK_U = SQ_PICK.replace("type = ?5", "type = ?5 AND gate IS NULL")
SQ_PICK_G = ("SELECT * FROM (SELECT id, priority, run_at FROM jobs INDEXED BY jobs_gated_claim"
             " WHERE gate = {g} AND type = ?5 AND status = 'pending' AND +run_at <= ?1"
             " AND queue NOT IN (SELECT name FROM queues WHERE " + HELD + ")"
             " ORDER BY priority DESC, run_at, id LIMIT ?4)")
SQ_OPEN = "SELECT id FROM gates WHERE waiting = 0 ORDER BY id LIMIT 16"
SQ_RETIRE = ("DELETE FROM gates WHERE id IN ({ids}) AND NOT EXISTS (SELECT 1 FROM jobs INDEXED BY"
             " jobs_gated_claim WHERE gate = gates.id AND status = 'pending')")
# complete_set (sqlite/report.c)
SQ_DONE_INS = c_sql("report.c", "INSERT INTO jobs_done (")  # complete_set
SQ_DONE_DEL = "DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?1))"
# sq_deps_flush / parent_ended (sqlite/deps.c), the path of parents that all succeeded
READY = (" IN (SELECT d.child FROM job_deps d WHERE d.parent = ?1) AND NOT EXISTS (SELECT 1 FROM"
         " job_deps o WHERE o.child = w.id AND o.ended_status IS NULL)")
FAILED = " EXISTS (SELECT 1 FROM job_deps b WHERE b.child = w.id AND b.ended_status <> 'succeeded')"
SQ_TODO = "SELECT seq, parent, reopen, at FROM deps_todo ORDER BY seq LIMIT ?1"
SQ_TODO_DEL = "DELETE FROM deps_todo WHERE seq <= ?1"
SQ_READY = "SELECT w.id," + FAILED + " FROM jobs_waiting w WHERE w.id" + READY + " ORDER BY w.id"
SQ_MOVE = ("INSERT INTO jobs (" + SQ_JOB_COLS + ") SELECT id, queue, type, payload, 'pending', "
           "priority, max(run_at, ?2), attempt, max_attempts, idempotency_key, schedule, "
           "scheduled_for, NULL, NULL, timeout_ms, 0, last_error, result, created_at, "
           "started_at, NULL, attempt_floor, traceparent, grp FROM jobs_waiting w WHERE "
           "w.id" + READY + " AND NOT" + FAILED + " ORDER BY w.id")
# sq_op_parents_attach (sqlite/deps.c): one read per claimed job, after the claim
SQ_PARENTS = c_sql("deps.c", "SELECT json_group_array(json_object('id', d.parent")
SQ_MOVE_DEL = ("DELETE FROM jobs_waiting WHERE id IN (SELECT d.child FROM job_deps d"
               " WHERE d.parent = ?1) AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = jobs_waiting.id)")


# Page-cache counters of a connection (sqlite3_db_status), load-independent: the
# pages a run read from outside SQLite's own cache and those it wrote. Python's
# sqlite3 keeps the sqlite3* right after its object header (CPython 3.x).
_sq = ctypes.CDLL("libsqlite3.so.0")
_sq.sqlite3_db_status.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                  ctypes.POINTER(ctypes.c_int), ctypes.c_int]


def sq_pages(db):
    """(cache misses, pages written) so far on db's connection."""
    h = ctypes.c_void_p.from_address(id(db) + 16).value
    out = []
    for op in (8, 9):  # SQLITE_DBSTATUS_CACHE_MISS, SQLITE_DBSTATUS_CACHE_WRITE
        cur, hi = ctypes.c_int(), ctypes.c_int()
        if _sq.sqlite3_db_status(h, op, ctypes.byref(cur), ctypes.byref(hi), 0) != 0:
            raise RuntimeError("sqlite3_db_status")
        out.append(cur.value)
    return out


def now_us():
    return int(time.time() * 1e6)


def sq_open(path):
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA foreign_keys=OFF")
    db.execute("PRAGMA wal_autocheckpoint=0")  # the run's WAL frames are counted at its end
    return db


def sq_flush(db):
    """sq_deps_flush, before each COMMIT (today's protocol)."""
    while True:
        todo = db.execute(SQ_TODO, (256,)).fetchall()
        if not todo:
            return
        db.execute(SQ_TODO_DEL, (todo[-1][0],))
        for _seq, p, reopen, at in todo:
            assert not reopen
            rows = db.execute(SQ_READY, (p,)).fetchall()
            assert all(r[1] == 0 for r in rows)
            if rows:
                db.execute(SQ_MOVE, (p, at))
                db.execute(SQ_MOVE_DEL, (p,))


def sq_cycle(db, gate, acc, root):
    t0 = time.perf_counter()
    now = now_us()
    if gate:
        opened = [r[0] for r in db.execute(SQ_OPEN)]
        any_ = db.execute(SQ_ANY_GATE, (now, "noop")).fetchone() is not None or bool(opened)
    else:
        any_ = db.execute(SQ_ANY, (now, "noop")).fetchone() is not None
    if not any_:
        acc["claim_s"] += time.perf_counter() - t0
        return 0, 0
    db.execute("PRAGMA synchronous=NORMAL")  # claims relax it (sq_set_sync)
    db.execute("BEGIN IMMEDIATE")
    if gate:
        picks = [SQ_PICK_U] + [SQ_PICK_G.format(g=int(g)) for g in opened]
        sql = SQ_CLAIM_HEAD.format(gate=", gate = NULL") + " UNION ALL ".join(picks) + SQ_CLAIM_TAIL
    else:
        sql = SQ_CLAIM
    rows = db.execute(sql, (now, "w1", now + 300_000_000, BATCH, "noop")).fetchall()
    if gate and opened:
        # open gates with no child left are retired here, under the write lock (a
        # gated row is always pending: the claim clears it), so that the list of
        # open gates a claim reads stays short (SQ_OPEN reads at most 16)
        db.execute(SQ_RETIRE.format(ids=",".join(str(int(g)) for g in opened)))
    if not gate:
        sq_flush(db)
    db.execute("COMMIT")
    tp = time.perf_counter()
    for r in rows:
        db.execute(SQ_PARENTS, (r[0],)).fetchall()
    t1 = time.perf_counter()
    acc["parents_s"] = acc.get("parents_s", 0.0) + t1 - tp
    acc["claim_s"] += t1 - t0
    if not rows:
        return 0, 0
    db.execute("PRAGMA synchronous=FULL")
    db.execute("BEGIN IMMEDIATE")
    arr = json.dumps([[r[0], r[7], None] for r in rows])
    done = [r[0] for r in db.execute(SQ_DONE_INS, (arr, now_us())).fetchall()]
    db.execute(SQ_DONE_DEL, (json.dumps(done),))
    if not gate:
        sq_flush(db)
    db.execute("COMMIT")
    t2 = time.perf_counter()
    acc["complete_s"] += t2 - t1
    if root in done:
        acc["root_complete_s"] += t2 - t1
    return len(rows), len(done)


def sq_base():
    base = os.path.join(TMP, "gates-base.db")
    if not os.path.exists(base):
        os.makedirs(TMP, exist_ok=True)
        subprocess.run([JOBD, "migrate", "--db", "sqlite:" + base], check=True, capture_output=True)
    return base


def sq_fresh(gate):
    path = os.path.join(TMP, "gates-gate.db" if gate else "gates-today.db")
    for ext in ("", "-wal", "-shm"):
        if os.path.exists(path + ext):
            os.unlink(path + ext)
    shutil.copy(sq_base(), path)
    db = sq_open(path)
    if gate:
        with open(os.path.join(HERE, "gates/schema_sqlite.sql")) as f:
            db.executescript(f.read())
    return db, path


def sq_insert(db, lo, hi, table="jobs", status="pending", gate=None):
    db.execute(f"WITH RECURSIVE g(x) AS (SELECT {lo} UNION ALL SELECT x + 1 FROM g WHERE x < {hi}) "
               f"INSERT INTO {table} (id, queue, type, payload, status, priority, run_at, max_attempts,"
               f" created_at{', gate' if gate else ''}) "
               f"SELECT x, 'default', 'noop', '{{}}', '{status}', 0, 0, 25, 0{', ' + str(gate) if gate else ''} FROM g")


def sq_seed_fanout(db, n, gate):
    nj = (n + 999) // 1000
    last = n + 2 + nj
    db.execute("BEGIN")
    sq_insert(db, 1, 1)
    if not gate:
        sq_insert(db, 2, n + 1, "jobs_waiting", "waiting")
        db.execute(f"WITH RECURSIVE g(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM g WHERE x < {n + 1}) "
                   "INSERT INTO job_deps (parent, child) SELECT 1, x FROM g")
        for j in range(nj):
            jid, lo, hi = n + 2 + j, 2 + j * 1000, min(n + 1, 1 + (j + 1) * 1000)
            sq_insert(db, jid, jid, "jobs_waiting", "waiting")
            db.execute(f"WITH RECURSIVE g(x) AS (SELECT {lo} UNION ALL SELECT x + 1 FROM g WHERE x < {hi}) "
                       f"INSERT INTO job_deps (parent, child) SELECT x, {jid} FROM g")
        sq_insert(db, last, last, "jobs_waiting", "waiting")
        db.execute(f"WITH RECURSIVE g(x) AS (SELECT {n + 2} UNION ALL SELECT x + 1 FROM g WHERE x < {n + 1 + nj}) "
                   f"INSERT INTO job_deps (parent, child) SELECT x, {last} FROM g")
    else:
        db.execute(f"INSERT INTO gates (id, waiting, queue, children) VALUES (1, 1, 'default', {n})")
        db.execute("INSERT INTO gate_parents VALUES (1, 1)")
        sq_insert(db, 2, n + 1, gate=1)
        db.execute(f"WITH RECURSIVE g(x) AS (SELECT 2 UNION ALL SELECT x + 1 FROM g WHERE x < {n + 1}) "
                   "INSERT INTO job_deps (parent, child) SELECT 1, x FROM g")
        for j in range(nj):
            jid, lo, hi, gid = n + 2 + j, 2 + j * 1000, min(n + 1, 1 + (j + 1) * 1000), 2 + j
            db.execute(f"INSERT INTO gates (id, waiting, queue, children) VALUES ({gid}, {hi - lo + 1}, 'default', 1)")
            db.execute(f"WITH RECURSIVE g(x) AS (SELECT {lo} UNION ALL SELECT x + 1 FROM g WHERE x < {hi}) "
                       f"INSERT INTO gate_parents SELECT x, {gid} FROM g")
            db.execute(f"WITH RECURSIVE g(x) AS (SELECT {lo} UNION ALL SELECT x + 1 FROM g WHERE x < {hi}) "
                       f"INSERT INTO job_deps (parent, child) SELECT x, {jid} FROM g")
            sq_insert(db, jid, jid, gate=gid)
        gl = nj + 2
        db.execute(f"INSERT INTO gates (id, waiting, queue, children) VALUES ({gl}, {nj}, 'default', 1)")
        db.execute(f"WITH RECURSIVE g(x) AS (SELECT {n + 2} UNION ALL SELECT x + 1 FROM g WHERE x < {n + 1 + nj}) "
                   f"INSERT INTO gate_parents SELECT x, {gl} FROM g")
        db.execute(f"WITH RECURSIVE g(x) AS (SELECT {n + 2} UNION ALL SELECT x + 1 FROM g WHERE x < {n + 1 + nj}) "
                   f"INSERT INTO job_deps (parent, child) SELECT x, {last} FROM g")
        sq_insert(db, last, last, gate=gl)
    db.execute("COMMIT")
    return n + 2 + nj, 1


def sq_loop(db, gate, total, root, acc, tag):
    """Worker cycles until total jobs succeeded: (cycles, empty claims)."""
    done, cycles, empty = 0, 0, 0
    while done < total:
        n, d = sq_cycle(db, gate, acc, root)
        cycles += 1
        done += d
        if n == 0:
            empty += 1
            if empty > 50:
                raise RuntimeError(f"{tag}: stuck at {done} of {total}")
    return cycles, empty


def wal_frames(db, path):
    """Frames in the WAL file (auto-checkpoint is off during a run)."""
    page = db.execute("PRAGMA page_size").fetchone()[0]
    return max(0, os.path.getsize(path + "-wal") - 32) // (page + 24)


def sq_run(db, path, gate, total, root):
    db.execute("ANALYZE")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    acc = {"claim_s": 0.0, "complete_s": 0.0, "root_complete_s": 0.0}
    m0 = sq_pages(db)
    p0, t0 = time.process_time(), time.perf_counter()
    cycles, empty = sq_loop(db, gate, total, root, acc, "sqlite " + ("gate" if gate else "today"))
    t1, p1 = time.perf_counter(), time.process_time()
    m1 = sq_pages(db)
    frames = wal_frames(db, path)
    left = db.execute("SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM jobs_waiting)").fetchone()[0]
    if left:
        raise RuntimeError(f"sqlite: {left} jobs left")
    early = db.execute("SELECT count(*) FROM job_deps d JOIN jobs_done p ON p.id = d.parent"
                       " JOIN jobs_done k ON k.id = d.child WHERE k.started_at < p.finished_at").fetchone()[0]
    if early:
        raise RuntimeError(f"sqlite: {early} children started before a parent finished")
    return dict(s=t1 - t0, driver_cpu_s=p1 - p0, cycles=cycles, empty_claims=empty, wal_frames=frames,
                cache_misses=m1[0] - m0[0], pages_written=m1[1] - m0[1], **acc)


# ---- the fan-out, interleaved --------------------------------------------------------

def fanout(stores, rounds, n):
    claim, gclaim, done = pg_statements()
    PG_CLAIM[1] = done
    if "pg" in stores:
        pg_setup()
        pm = pm_pid()
    for rnd in range(rounds):
        order = ["today", "gate"] if rnd % 2 == 0 else ["gate", "today"]
        for store in stores:
            for v in order:
                for shape in ("independent", "fanout"):
                    gate = v == "gate"
                    if store == "pg":
                        c = PG(db_url(dbname(gate)))
                        if shape == "independent":
                            pg_seed_plain(c, n, gate)
                            total, root = n, None
                        else:
                            total, root = pg_seed_fanout(c, n, gate)
                        pg_settle(c)
                        if PROFILE:
                            c.q("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                            c.q("SELECT pg_stat_statements_reset()")
                        r = pg_run(c, pm, gclaim if gate else claim, v, total, root)
                        if PROFILE:
                            r["statements"] = [
                                dict(q=" ".join(x[0].split())[:90], calls=int(x[1]), ms=round(float(x[2]), 1),
                                     top=x[3] == "t")
                                for x in c.q("SELECT query, calls, total_exec_time, toplevel FROM pg_stat_statements"
                                             " WHERE query NOT LIKE '%pg_stat%' AND query NOT LIKE '%count(*) FROM jobd%'"
                                             " ORDER BY total_exec_time DESC LIMIT 10")]
                        c.close()
                    else:
                        db, path = sq_fresh(gate)
                        if shape == "independent":
                            db.execute("BEGIN")
                            sq_insert(db, 1, n)
                            db.execute("COMMIT")
                            total, root = n, None
                        else:
                            total, root = sq_seed_fanout(db, n, gate)
                        r = sq_run(db, path, gate, total, root)
                        db.close()
                    rec = dict(bench="gates_fanout", store=store, variant=v, shape=shape, round=rnd + 1,
                               n=n, total=total, batch=BATCH, **{k: round(x, 4) if isinstance(x, float) else x
                                                                for k, x in r.items()})
                    cpu = r.get("server_cpu_s", 0) + r["driver_cpu_s"]
                    rec["cpu_ms_per_1000"] = round(cpu * 1000 / n * 1000, 1)
                    emit(rec)


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["fanout", "claims", "readers"])
    ap.add_argument("--store", default="both")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--profile", action="store_true",
                    help="PostgreSQL: pg_stat_statements (track = all) per run, the 10 dearest statements")
    a = ap.parse_args()
    PROFILE = a.profile
    stores = ["pg", "sqlite"] if a.store == "both" else [a.store]
    if a.what == "fanout":
        fanout(stores, a.rounds, a.n)
    else:
        import gates_read  # noqa: E402
        gates_read.main(a.what, stores)
