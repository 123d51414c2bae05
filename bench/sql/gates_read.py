#!/usr/bin/env python3
"""What the gate data model of issue 29 costs the jobs that have no
parents, and the readers of a job's status (docs/DESIGN.md, Dependencies,
"Gates, measured"); the fan-out itself is bench/sql/gates.py, whose
statements, databases and worker cycle this reuses.

  claims   a worker (claim BATCH of type noop, then complete them) draining
           CLAIM_N plain jobs, today's claim in today's schema against the
           gate claim in the gate schema, with nothing else in the queue,
           with 10 closed gates of 1,000 children and 1,000 of 10 (today:
           the same 10,000 children in jobs_waiting), and with 1,000 open
           gates that have no child left (what a late sweep costs); then
           the grouped claim (st_gr_claim_run, 1,000 groups) with and
           without 10 closed gates of 1,000 grouped children; EXPLAIN of
           the gate claim with 1,000 closed gates. Rounds interleaved.
  readers  get by id (st_get through all_jobs) of a plain, a gated and a
           finished job, and the first page of a list by status (pg/list.c's
           branch shape) for pending and waiting, 10,000 plain pending jobs
           beside 10,000 children in 10 or 1,000 closed gates.

  cpusplit PostgreSQL: the worker backend's CPU per statement (claim, parents'
           read, completion), 50 batches of plain jobs against the fan-out's children
  plans    load-independent: shared buffers of one claim (PostgreSQL, EXPLAIN
           ANALYZE BUFFERS) and SQLite VM instructions of one claim, per variant

  bench/sql/gates_read.py claims|readers|plans|cpusplit [--store pg|sqlite|both] [--rounds R]
Env as bench/sql/gates.py, and CLAIM_N (20000). Stdlib only.
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import extract  # noqa: E402
import gates as G  # noqa: E402

N = int(os.environ.get("CLAIM_N", "20000"))
GID0 = 1_000_000  # gated children's ids start here (after the plain jobs)


# ---- PostgreSQL ----------------------------------------------------------------------

def pg_more_statements():
    extract.WANT = ("st_gr_claim_run", "st_get")
    extract.FILES = ("src/store/pg/groups.c", "src/store/pg/read.c")
    s = extract.expand(G.ROOT)
    gr = s["st_gr_claim_run"]
    walk = "FROM jobd.jobs WHERE queue = $6::text AND "
    assert gr.count(walk) == 4, "st_gr_claim_run changed shape"
    return gr, gr.replace(walk, walk + "gate IS NULL AND "), s["st_get"]


def pg_seed_claims(c, gate, shape, grouped=False):
    """N plain jobs (grouped: queue q of 1,000 groups), then the shape's children."""
    G.pg_reset(c, gate)
    c.q("TRUNCATE jobd.job_groups, jobd.queues CASCADE")
    q, grp = ("'q'", "'g' || lpad((g % 1000)::text, 4, '0')") if grouped else ("'default'", "NULL")
    if grouped:
        c.q("INSERT INTO jobd.queues (name, grouped) VALUES ('q', true)")
    c.q(f"INSERT INTO jobd.jobs (id, queue, type, status, grp) SELECT g, {q}, 'noop', 'pending', {grp}"
        f" FROM generate_series(1, {N}) g")
    if grouped:
        c.q("INSERT INTO jobd.job_groups (queue, grp) SELECT DISTINCT queue, grp FROM jobd.jobs")
        c.q("INSERT INTO jobd.job_groups (queue, grp) VALUES ('q', '')")
    if shape in ("10x1000", "1000x10"):
        ng, k = (10, 1000) if shape == "10x1000" else (1000, 10)
        if gate:
            c.q(f"INSERT INTO jobd.gates (id, waiting, children) SELECT g, 1, {k} FROM generate_series(1, {ng}) g")
            c.q(f"INSERT INTO jobd.jobs (id, queue, type, status, gate, grp) SELECT {GID0} + i, {q}, 'noop',"
                f" 'pending', 1 + i / {k}, {grp.replace('g %', 'i %')} FROM generate_series(0, {ng * k - 1}) i")
        else:
            c.q(f"INSERT INTO jobd.jobs_waiting (id, queue, type, status, grp) SELECT {GID0} + i, {q}, 'noop',"
                f" 'waiting', {grp.replace('g %', 'i %')} FROM generate_series(0, {ng * k - 1}) i")
    elif shape == "open1000":
        assert gate
        c.q("INSERT INTO jobd.gates (id, waiting, children) SELECT g, 0, 0 FROM generate_series(1, 1000) g")
    G.pg_settle(c)


def pg_drain(c, pm, claim_sql, tag, grouped=False):
    acc = {"claim_s": 0.0, "complete_s": 0.0}
    w0 = G.pg_wal(c)
    b0 = G.stat(c.pid)[1]
    k0, p0, t0 = G.cluster_ticks(pm), time.process_time(), time.perf_counter()
    done, cursor, empty = 0, "-", 0
    while done < N:
        a = time.perf_counter()
        if grouped:
            rows = c.x("gclaim_" + tag, claim_sql, "w1", G.BATCH, 300000, "{noop}", None, "q",
                       None, None, 0, cursor)
            if rows and rows[0][-1] is not None:
                cursor = rows[0][-1]
        else:
            rows = c.x("claim_" + tag, claim_sql, "w1", G.BATCH, 300000, "{noop}", None, None)
        if rows:
            c.x("parents", G.PG_CLAIM[2], "{" + ",".join(r[0] for r in rows) + "}")
        b = time.perf_counter()
        acc["claim_s"] += b - a
        if not rows:
            empty += 1
            if empty > 50:
                raise RuntimeError(f"{tag}: stuck at {done}")
            continue
        d = c.x("complete", G.PG_CLAIM[1], "{" + ",".join(r[0] for r in rows) + "}",
                "{" + ",".join(r[6] for r in rows) + "}", "{" + ",".join(["NULL"] * len(rows)) + "}", None)
        acc["complete_s"] += time.perf_counter() - b
        done += len(d)
    t1, p1, k1 = time.perf_counter(), time.process_time(), G.cluster_ticks(pm)
    b1 = G.stat(c.pid)[1]
    w1 = G.pg_wal(c)
    bad = int(c.q(f"SELECT count(*) FROM jobd.jobs WHERE id >= {GID0} AND status <> 'pending'")[0][0])
    if bad:
        raise RuntimeError(f"{tag}: {bad} gated children claimed")
    cpu = (k1 - k0) / G.TCK + p1 - p0
    return dict(s=round(t1 - t0, 4), cpu_ms_per_1000=round(cpu * 1e6 / N, 1),
                backend_cpu_ms_per_1000=round((b1 - b0) / G.TCK * 1e6 / N, 1),
                claim_ms_per_1000=round(acc["claim_s"] * 1e6 / N, 1),
                complete_ms_per_1000=round(acc["complete_s"] * 1e6 / N, 1),
                wal_bytes_per_job=round((int(w1[2]) - int(w0[2])) / N, 1))


PG_CLAIM_VARIANTS = [  # (name, gate schema, shape, grouped)
    ("today_0", False, "0", False), ("gate_0", True, "0", False),
    ("today_w10000", False, "10x1000", False), ("gate_10x1000", True, "10x1000", False),
    ("gate_1000x10", True, "1000x10", False), ("gate_open1000", True, "open1000", False),
    ("today_gr1000", False, "0", True), ("gate_gr1000", True, "0", True),
    ("today_gr1000_w10000", False, "10x1000", True), ("gate_gr1000_10x1000", True, "10x1000", True),
]


def pg_claims(rounds):
    claim, gclaim, done = G.pg_statements()
    G.PG_CLAIM[1] = done
    gr, ggr, _get = pg_more_statements()
    G.pg_setup()
    pm = G.pm_pid()
    for rnd in range(rounds):
        vs = PG_CLAIM_VARIANTS[rnd % 2:] + PG_CLAIM_VARIANTS[:rnd % 2]
        if rnd % 2:
            vs = vs[::-1]
        for name, gate, shape, grouped in vs:
            c = G.PG(G.db_url(G.dbname(gate)))
            pg_seed_claims(c, gate, shape, grouped)
            sql = (ggr if gate else gr) if grouped else (gclaim if gate else claim)
            r = pg_drain(c, pm, sql, name, grouped)
            c.close()
            G.emit(dict(bench="gates_claims", store="pg", variant=name, round=rnd + 1, n=N, **r))
    # the plan of the gate claim with 1,000 closed gates' children in the queue
    c = G.PG(G.db_url(G.dbname(True)))
    pg_seed_claims(c, True, "1000x10")
    plan = explain_pg(c, gclaim, ("w1", G.BATCH, 300000, "{noop}", None, None))
    c.close()
    path = os.path.join(os.path.dirname(G.OUT), "gates-explain-pg.txt")
    with open(path, "w") as f:
        f.write(plan)
    G.log(plan)


def explain_pg(c, sql, params):
    lit = ["NULL" if p is None else "'" + str(p) + "'" for p in params]
    c.q("BEGIN")
    c.q("PREPARE ex AS " + sql)  # a PREPARE outlives the ROLLBACK: deallocated below
    try:
        rows = c.q("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE ex" +
                   ("(" + ", ".join(lit) + ")" if lit else ""))
    finally:
        c.q("ROLLBACK")
        c.q("DEALLOCATE ex")
    return "\n".join(r[0] for r in rows) + "\n"


def pg_plans(_rounds):
    """Load-independent: the shared buffers one claim of BATCH touches (EXPLAIN ANALYZE
    BUFFERS, rolled back), per variant; the plan with 1,000 closed gates is kept."""
    claim, gclaim, done = G.pg_statements()
    gr, ggr, _get = pg_more_statements()
    G.pg_setup()
    for name, gate, shape, grouped in PG_CLAIM_VARIANTS:
        c = G.PG(G.db_url(G.dbname(gate)))
        pg_seed_claims(c, gate, shape, grouped)
        sql = (ggr if gate else gr) if grouped else (gclaim if gate else claim)
        params = (("w1", G.BATCH, 300000, "{noop}", None, "q", None, None, 0, "-") if grouped
                  else ("w1", G.BATCH, 300000, "{noop}", None, None))
        hits, ms = [], []
        for _ in range(3):
            plan = explain_pg(c, sql, params)
            top = [x for x in plan.split("\n") if "Buffers:" in x][0]
            hits.append(sum(int(t.split("=")[1]) for t in top.split("Buffers:")[1].replace(",", " ").split()
                            if "=" in t))
            ms.append(float([x for x in plan.split("\n") if "Execution Time" in x][0].split()[2]))
        if name == "gate_1000x10":
            with open(os.path.join(os.path.dirname(G.OUT), "gates-explain-pg.txt"), "w") as f:
                f.write(plan)
        c.close()
        G.emit(dict(bench="gates_plans", store="pg", variant=name, buffers=hits, exec_ms=ms))


def pg_cpusplit(rounds):
    """The worker backend's CPU per statement (/proc ticks around each, summed over 50
    batches of 100) in the gate schema: plain jobs against the fan-out's children."""
    _claim, gclaim, done = G.pg_statements()
    G.PG_CLAIM[1] = done
    G.pg_setup()
    for rnd in range(rounds):
        for shape in (("plain", "fanout") if rnd % 2 == 0 else ("fanout", "plain")):
            c = G.PG(G.db_url(G.dbname(True)))
            if shape == "plain":
                G.pg_seed_plain(c, 10000, True)
            else:
                G.pg_seed_fanout(c, 10000, True)
            G.pg_settle(c)
            acc = {"claim_s": 0.0, "complete_s": 0.0, "root_complete_s": 0.0}
            if shape == "fanout":
                G.pg_cycle(c, gclaim, "g", acc, 1)  # the root: its gate opens
            ticks = {"claim": 0, "parents": 0, "complete": 0}
            for _ in range(50):
                b0 = G.stat(c.pid)[1]
                rows = c.x("claim_g", gclaim, "w1", G.BATCH, 300000, "{noop}", None, None)
                b1 = G.stat(c.pid)[1]
                ids = "{" + ",".join(r[0] for r in rows) + "}"
                for _ in range(10):  # ten times: one read is under a tick
                    c.x("parents", G.PG_CLAIM[2], ids)
                b2 = G.stat(c.pid)[1]
                c.x("complete", done, ids, "{" + ",".join(r[6] for r in rows) + "}",
                    "{" + ",".join(["NULL"] * len(rows)) + "}", None)
                b3 = G.stat(c.pid)[1]
                ticks["claim"] += b1 - b0
                ticks["parents"] += b2 - b1
                ticks["complete"] += b3 - b2
            c.close()
            ms = 1000 / G.TCK / 50
            G.emit(dict(bench="gates_cpusplit", store="pg", shape=shape, round=rnd + 1,
                        claim_ms=round(ticks["claim"] * ms, 2), parents_ms=round(ticks["parents"] * ms / 10, 2),
                        complete_ms=round(ticks["complete"] * ms, 2)))


def pg_readers(rounds):
    _claim, _gclaim, _done = G.pg_statements()
    _gr, _ggr, get = pg_more_statements()
    G.pg_setup()
    # the gate schema's all_jobs: the same columns, the status as the gate says
    c = G.PG(G.db_url(G.dbname(True)))
    cols = [r[0] for r in c.q("SELECT column_name FROM information_schema.columns WHERE table_schema = 'jobd'"
                              " AND table_name = 'all_jobs' ORDER BY ordinal_position")]
    sel = ", ".join("jobd.gate_status(j.status, j.gate) AS status" if x == "status" else "j." + x for x in cols)
    plain = ", ".join(cols)
    c.q(f"CREATE VIEW jobd.all_jobs_g AS SELECT {sel} FROM jobd.jobs j UNION ALL SELECT {plain} FROM jobd.jobs_done"
        f" UNION ALL SELECT {plain} FROM jobd.jobs_waiting")
    # the lists' indexes, split as the claim's are: ungated pending rows, gated rows by
    # id, and by gate (in a build they would replace the pending list indexes' predicates)
    c.q("CREATE INDEX jobs_ungated_id ON jobd.jobs (id) WHERE status NOT IN ('running', 'succeeded')"
        " AND gate IS NULL")
    c.q("CREATE INDEX jobs_gated_id ON jobd.jobs (id) WHERE status NOT IN ('running', 'succeeded')"
        " AND gate IS NOT NULL")
    c.q("CREATE INDEX jobs_gate_id ON jobd.jobs (gate, id) WHERE gate IS NOT NULL")
    c.close()
    jc = get[len("SELECT "):get.index(" FROM jobd.all_jobs")]
    # pg/list.c's shape for one status: a branch per table, ORDER BY id DESC LIMIT
    list_t = ("SELECT * FROM ((SELECT " + jc + " FROM jobd.{t} WHERE status = '{st}'{x}"
              " ORDER BY id DESC LIMIT 51)) l ORDER BY id DESC LIMIT 51")
    closed = "EXISTS (SELECT 1 FROM jobd.gates x WHERE x.id = gate AND x.waiting > 0)"
    sts = {
        "today": {"get": get, "list_pending": list_t.format(t="jobs", st="pending", x=""),
                  "list_waiting": list_t.format(t="jobs_waiting", st="waiting", x="")},
        "gate": {
            "get": get.replace("FROM jobd.all_jobs", "FROM jobd.all_jobs_g"),
            # naive: pending rows newest first, past the closed gates' rows
            "list_pending_naive": list_t.format(t="jobs", st="pending", x=" AND NOT (gate IS NOT NULL AND " + closed + ")"),
            # split: ungated pending rows, and each open gate's rows
            "list_pending": "SELECT * FROM ((SELECT " + jc + " FROM jobd.jobs WHERE status = 'pending'"
                            " AND gate IS NULL ORDER BY id DESC LIMIT 51) UNION ALL (SELECT " + jc +
                            " FROM (SELECT j.* FROM jobd.gates g CROSS JOIN LATERAL (SELECT * FROM jobd.jobs"
                            " WHERE gate = g.id AND status = 'pending' ORDER BY id DESC LIMIT 51) j"
                            " WHERE g.waiting = 0) o)) l ORDER BY id DESC LIMIT 51",
            # naive: a walk per closed gate
            "list_waiting_naive": "SELECT " + jc + " FROM (SELECT c.* FROM jobd.gates g CROSS JOIN LATERAL"
                                  " (SELECT * FROM jobd.jobs WHERE gate = g.id AND status = 'pending'"
                                  " ORDER BY id DESC LIMIT 51) c WHERE g.waiting > 0) x ORDER BY id DESC LIMIT 51",
            # gated rows newest first, past the open gates' rows (claimed soon after opening)
            "list_waiting": list_t.format(t="jobs", st="pending", x=" AND gate IS NOT NULL AND " + closed),
        },
    }
    reps = 300
    for rnd in range(rounds):
        for shape in ("10x1000", "1000x10"):
            for v in (("today", "gate") if rnd % 2 == 0 else ("gate", "today")):
                gate = v == "gate"
                c = G.PG(G.db_url(G.dbname(gate)))
                pg_seed_claims(c, gate, shape)
                c.q("INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority, run_at, attempt,"
                    " attempt_floor, max_attempts, cancel_requested, created_at, finished_at)"
                    f" VALUES ({GID0 - 1}, 'default', 'noop', '{{}}', 'succeeded', 0, now(), 1, 0, 25, false,"
                    " now(), now())")
                # an open gate's 100 children (today: 100 more pending jobs), newer than the rest
                if gate:
                    c.q("INSERT INTO jobd.gates (id, waiting, children) VALUES (999999, 0, 100)")
                    c.q(f"INSERT INTO jobd.jobs (id, type, status, gate) SELECT {N} + 1 + i, 'noop',"
                        " 'pending', 999999 FROM generate_series(0, 99) i")
                else:
                    c.q(f"INSERT INTO jobd.jobs (id, type, status) SELECT {N} + 1 + i, 'noop',"
                        " 'pending' FROM generate_series(0, 99) i")
                c.q("VACUUM ANALYZE jobd.jobs")
                if gate:
                    c.q("VACUUM ANALYZE jobd.gates")
                res = {}
                for op, i in (("get_plain", N // 2), ("get_child", GID0 + 5), ("get_done", GID0 - 1)):
                    row = c.x(v + "get", sts[v]["get"], i)
                    if op == "get_child" and row[0][cols.index("status")] != "waiting":
                        raise RuntimeError(f"{v}: child reads {row[0][cols.index('status')]}")
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        c.x(v + "get", sts[v]["get"], i)
                    res[op + "_us"] = round((time.perf_counter() - t0) * 1e6 / reps, 1)
                    res[op + "_buffers"] = plan_buffers(explain_pg(c, sts[v]["get"], (i,)))
                for op, sql in sts[v].items():
                    if not op.startswith("list"):
                        continue
                    rows = c.x(v + op, sql)
                    if len(rows) != 51:
                        raise RuntimeError(f"{v} {op}: {len(rows)} rows")
                    t0 = time.perf_counter()
                    for _ in range(reps // 5):
                        c.x(v + op, sql)
                    res[op + "_us"] = round((time.perf_counter() - t0) * 1e6 / (reps // 5), 1)
                    plan = explain_pg(c, sql, ())
                    res[op + "_buffers"] = plan_buffers(plan)
                    res[op + "_rows_removed"] = sum(int(x.split("Rows Removed by Filter:")[1])
                                                    for x in plan.split("\n") if "Rows Removed by Filter:" in x)
                c.close()
                G.emit(dict(bench="gates_readers", store="pg", variant=v, shape=shape, round=rnd + 1, **res))


def plan_buffers(plan):
    """Shared buffers the whole statement touched (its top node's line)."""
    for x in plan.split("\n"):
        if "Buffers:" in x:
            return sum(int(t.split("=")[1]) for t in x.split("Buffers:")[1].replace(",", " ").split() if "=" in t)
    return 0


# ---- SQLite ------------------------------------------------------------------------------

def sq_seed_claims(gate, shape, grouped=False):
    db, path = G.sq_fresh(gate)
    db.execute("BEGIN")
    G.sq_insert(db, 1, N)
    if shape in ("10x1000", "1000x10"):
        ng, k = (10, 1000) if shape == "10x1000" else (1000, 10)
        if gate:
            db.execute(f"WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < {ng}) "
                       f"INSERT INTO gates (id, waiting, queue, children) SELECT x, 1, 'default', {k} FROM g")
            db.execute(f"WITH RECURSIVE g(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM g WHERE x < {ng * k - 1}) "
                       f"INSERT INTO jobs (id, queue, type, payload, status, priority, run_at, max_attempts,"
                       f" created_at, gate) SELECT {GID0} + x, 'default', 'noop', '{{}}', 'pending', 0, 0, 25, 0,"
                       f" 1 + x / {k} FROM g")
        else:
            G.sq_insert(db, GID0, GID0 + ng * k - 1, "jobs_waiting", "waiting")
    elif shape == "open1000":
        db.execute("WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g WHERE x < 1000) "
                   "INSERT INTO gates (id, waiting, queue, children) SELECT x, 0, 'default', 0 FROM g")
    db.execute("COMMIT")
    db.execute("ANALYZE")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db, path


def sq_drain(db, path, gate, tag):
    acc = {"claim_s": 0.0, "complete_s": 0.0, "root_complete_s": 0.0}
    p0, t0 = time.process_time(), time.perf_counter()
    G.sq_loop(db, gate, N, -1, acc, tag)
    t1, p1 = time.perf_counter(), time.process_time()
    frames = G.wal_frames(db, path)
    bad = db.execute(f"SELECT count(*) FROM jobs WHERE id >= {GID0} AND status <> 'pending'").fetchone()[0]
    if bad:
        raise RuntimeError(f"{tag}: {bad} gated children claimed")
    return dict(s=round(t1 - t0, 4), cpu_ms_per_1000=round((p1 - p0) * 1e6 / N, 1),
                claim_ms_per_1000=round(acc["claim_s"] * 1e6 / N, 1),
                complete_ms_per_1000=round(acc["complete_s"] * 1e6 / N, 1),
                wal_frames_per_1000=round(frames * 1000 / N, 1))


SQ_CLAIM_VARIANTS = [("today_0", False, "0"), ("gate_0", True, "0"), ("today_w10000", False, "10x1000"),
                     ("gate_10x1000", True, "10x1000"), ("gate_1000x10", True, "1000x10"),
                     ("gate_open1000", True, "open1000")]


def sq_claims(rounds):
    for rnd in range(rounds):
        vs = SQ_CLAIM_VARIANTS if rnd % 2 == 0 else SQ_CLAIM_VARIANTS[::-1]
        for name, gate, shape in vs:
            db, path = sq_seed_claims(gate, shape)
            r = sq_drain(db, path, gate, name)
            db.close()
            G.emit(dict(bench="gates_claims", store="sqlite", variant=name, round=rnd + 1, n=N, **r))
    db, _ = sq_seed_claims(True, "1000x10")
    now = G.now_us()
    opened = [r[0] for r in db.execute(G.SQ_OPEN)]
    sql = G.SQ_CLAIM_HEAD.format(gate=", gate = NULL") + " UNION ALL ".join(
        [G.SQ_PICK_U] + [G.SQ_PICK_G.format(g=g) for g in opened or [0]]) + G.SQ_CLAIM_TAIL
    plan = "\n".join(str(r) for r in db.execute("EXPLAIN QUERY PLAN " + sql, (now, "w1", now, G.BATCH, "noop")))
    plan += "\n-- probe\n" + "\n".join(str(r) for r in db.execute("EXPLAIN QUERY PLAN " + G.SQ_ANY_GATE, (now, "noop")))
    db.close()
    with open(os.path.join(os.path.dirname(G.OUT), "gates-explain-sqlite.txt"), "w") as f:
        f.write(plan + "\n")
    G.log(plan)


def sq_plans(_rounds):
    """Load-independent: SQLite VM instructions (progress handler) of one claim of BATCH."""
    for name, gate, shape in SQ_CLAIM_VARIANTS:
        db, _ = sq_seed_claims(gate, shape)
        now = G.now_us()
        opened = [r[0] for r in db.execute(G.SQ_OPEN)] if gate else []
        sql = (G.SQ_CLAIM_HEAD.format(gate=", gate = NULL") + " UNION ALL ".join(
            [G.SQ_PICK_U] + [G.SQ_PICK_G.format(g=g) for g in opened]) + G.SQ_CLAIM_TAIL) if gate else G.SQ_CLAIM
        cnt = [0]

        def tick():
            cnt[0] += 1
            return 0
        db.set_progress_handler(tick, 100)
        ops = []
        for _ in range(3):
            c0 = cnt[0]
            db.execute("BEGIN IMMEDIATE")
            db.execute(G.SQ_ANY_GATE if gate else G.SQ_ANY, (now, "noop")).fetchall()
            db.execute(sql, (now, "w1", now, G.BATCH, "noop")).fetchall()
            db.execute("ROLLBACK")
            ops.append((cnt[0] - c0) * 100)
        db.close()
        G.emit(dict(bench="gates_plans", store="sqlite", variant=name, vm_ops=ops, open_gates=len(opened)))


def sq_readers(rounds):
    """As pg_readers; SQLite's cost also as VM instructions (load-independent)."""
    cols = G.SQ_JOB_COLS
    get_t = "SELECT " + cols + " FROM jobs WHERE id = ?1"
    get_g = ("SELECT " + cols.replace("status,", "CASE WHEN gate IS NOT NULL AND EXISTS (SELECT 1 FROM gates x"
                                      " WHERE x.id = gate AND x.waiting > 0) THEN 'waiting' ELSE status END,") +
             " FROM jobs WHERE id = ?1")
    lp = "SELECT " + cols + " FROM jobs WHERE status = 'pending'{x} ORDER BY id DESC LIMIT 51"
    closed = "EXISTS (SELECT 1 FROM gates x WHERE x.id = gate AND x.waiting > 0)"
    sts = {"today": {"get": get_t, "get_w": get_t.replace("FROM jobs WHERE", "FROM jobs_waiting WHERE"),
                     "list_pending": lp.format(x=""),
                     "list_waiting": "SELECT " + cols + " FROM jobs_waiting WHERE status = 'waiting'"
                                     " ORDER BY id DESC LIMIT 51"},
           "gate": {"get": get_g, "get_w": get_g,
                    "list_pending_naive": lp.format(x=" AND NOT (gate IS NOT NULL AND " + closed + ")"),
                    "list_pending": "SELECT * FROM (SELECT * FROM (" + lp.format(x=" AND gate IS NULL") + ")"
                                    " UNION ALL SELECT * FROM (SELECT " + cols + " FROM jobs WHERE status = 'pending'"
                                    " AND gate IN (SELECT id FROM gates WHERE waiting = 0) ORDER BY id DESC LIMIT 51))"
                                    " ORDER BY id DESC LIMIT 51",
                    "list_waiting": lp.format(x=" AND gate IS NOT NULL AND " + closed)}}
    reps = 1000
    for rnd in range(rounds):
        for shape in ("10x1000", "1000x10"):
            for v in (("today", "gate") if rnd % 2 == 0 else ("gate", "today")):
                gate = v == "gate"
                db, _ = sq_seed_claims(gate, shape)
                db.execute("BEGIN")
                if gate:
                    db.execute("INSERT INTO gates (id, waiting, queue, children) VALUES (999999, 0, 'default', 100)")
                    db.execute(f"WITH RECURSIVE g(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM g WHERE x < 99) "
                               f"INSERT INTO jobs (id, queue, type, payload, status, priority, run_at, max_attempts,"
                               f" created_at, gate) SELECT {N} + 1 + x, 'default', 'noop', '{{}}', 'pending',"
                               f" 0, 0, 25, 0, 999999 FROM g")
                    db.execute("CREATE INDEX jobs_ungated_id ON jobs (id) WHERE status = 'pending' AND gate IS NULL")
                    db.execute("CREATE INDEX jobs_gated_id ON jobs (id) WHERE status = 'pending' AND gate IS NOT NULL")
                else:
                    G.sq_insert(db, N + 1, N + 100)
                db.execute("COMMIT")
                db.execute("ANALYZE")
                cnt = [0]

                def tick():
                    cnt[0] += 1
                    return 0
                res = {}
                for op, sqlk, i in (("get_plain", "get", N // 2), ("get_child", "get_w", GID0 + 5)):
                    sql = sts[v][sqlk]
                    row = db.execute(sql, (i,)).fetchone()
                    if op == "get_child" and row[4] != "waiting":
                        raise RuntimeError(f"{v}: child reads {row[4]}")
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        db.execute(sql, (i,)).fetchone()
                    res[op + "_us"] = round((time.perf_counter() - t0) * 1e6 / reps, 1)
                    db.set_progress_handler(tick, 1)
                    c0 = cnt[0]
                    db.execute(sql, (i,)).fetchone()
                    res[op + "_vm_ops"] = cnt[0] - c0
                    db.set_progress_handler(None, 0)
                for op, sql in sts[v].items():
                    if not op.startswith("list"):
                        continue
                    rows = db.execute(sql).fetchall()
                    if len(rows) != 51:
                        raise RuntimeError(f"{v} {op}: {len(rows)} rows")
                    t0 = time.perf_counter()
                    for _ in range(reps // 10):
                        db.execute(sql).fetchall()
                    res[op + "_us"] = round((time.perf_counter() - t0) * 1e6 / (reps // 10), 1)
                    db.set_progress_handler(tick, 100)
                    c0 = cnt[0]
                    db.execute(sql).fetchall()
                    res[op + "_vm_ops"] = (cnt[0] - c0) * 100
                    db.set_progress_handler(None, 0)
                db.close()
                G.emit(dict(bench="gates_readers", store="sqlite", variant=v, shape=shape, round=rnd + 1, **res))


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["claims", "readers", "plans", "cpusplit"])
    ap.add_argument("--store", default="both")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    for st in (["pg", "sqlite"] if a.store == "both" else [a.store]):
        if a.what == "cpusplit" and st == "sqlite":
            continue
        {"claims": {"pg": pg_claims, "sqlite": sq_claims}, "plans": {"pg": pg_plans, "sqlite": sq_plans},
         "cpusplit": {"pg": pg_cpusplit},
         "readers": {"pg": pg_readers, "sqlite": sq_readers}}[a.what][st](a.rounds)
