#!/usr/bin/env python3
"""Table layouts for jobd's hot path, measured side by side (docs/DESIGN.md,
"Table layout, round three").

Each layout is jobd's schema (`jobd migrate`) changed by the files of
bench/sql/layout/ it names, and a pgbench script of one worker cycle on it:
claim up to 100 due jobs, then one fenced batched completion, each its own
autocommit transaction, in the shape of jobd's statements (per-type LATERAL
walk, queue filter, the 14 columns a run needs, the stats upsert, the
wake-up check) so the layouts differ in their writes, not in their SQL's
other work. The seed design's B (bench/harness/sql) runs beside them, by
the same procedure as bench/sql/ceiling.py: seed CEIL_N due no-op jobs
(one INSERT ... SELECT, VACUUM ANALYZE, CHECKPOINT), drain with pgbench
(-M prepared -j 2, just enough transactions), count the succeeded rows,
empty the tables.

  today      jobd's own statements (bench/sql/extract.py) on today's schema
  today_b    B's two statements on today's schema (a decomposition: schema vs SQL)
  today_nt   today without the UPDATE statement triggers (a decomposition: their
             transition tables)
  lease      claim = INSERT job_leases (jobs row only locked); completion = DELETE
             lease + UPDATE jobs in place (succeeded), archived later as today
  move       today's claim; completion = DELETE jobs + INSERT into jobs_arch,
             partitioned by day of finished_at (no UPDATE, no archive pass)
  move_nt    move, with the events, wake-ups and dependants' release of the claim and
             the completion in CTEs of the statements, no transition-table trigger
  move_slim  move_nt with the archive partitioned by day and then by status, three
             index entries per finished job (archive_slim.sql): the chosen layout
  defer_slim today's completion in place (events, dependants in CTEs), then the archive
             pass into move_slim's archive
  hot        status in no index or predicate: claim = HOT UPDATE + INSERT lease;
             completion = DELETE lease + move into jobs_arch
  leasemove  claim = INSERT lease; completion = DELETE lease + move into jobs_arch
  b          the seed design's B (its own schema: one partial index)
  built      the layout as built (schema version 38): this tree's own statements
             (bench/sql/extract.py) on JOBD_BIN's schema; with LAYOUT_TODAY_SRC and
             LAYOUT_TODAY_BIN (a tree and a jobd before version 38), "today" is theirs,
             so LAYOUTS="b today built" is an A/B of the build against its base

Per run it records, besides jobs/s: the WAL written (pg_current_wal_insert_lsn
before and after), and from pg_walinspect its records by kind (heap inserts,
updates, HOT updates, deletes, locks; btree leaf inserts = index entries
written; full-page images), per job; the tables' n_tup_upd / n_tup_hot_upd;
the size of the hot tables (jobs, job_leases) and of the finished-job tables
after the drain. Layouts that leave succeeded rows in jobs (today, today_b,
lease) then run today's archive pass (bench/sql/layout/archive_pass.sql),
timed and its WAL counted apart: the deferred half of their completion.

Rounds are interleaved: for each repetition and client count every layout
runs once, in an order rotated by one each time, so a neighbour's burst on
the shared machine hits all of them alike. Then a churn phase: per layout,
CHURN_ROUNDS rounds of (append CEIL_N jobs, drain at 8 clients, the deferred
pass, VACUUM of the hot tables as the plane or autovacuum would) without
emptying anything, the hot tables' size after each: is it flat?

  bench/sql/layout.py --migrate N   instead: the prototype migration from today's schema
  to "move" (bench/sql/layout/migrate_move.sql) on a store of N jobs, timed and checked.
  With JOBD_OLD_BIN (a jobd whose newest schema is version 37) the store is made by it
  and the step timed is JOBD_BIN's `jobd migrate` (version 38, the built layout).

Output: one JSON line per run on stdout (also written to LAYOUT_OUT, default
bench/results/layout-<UTC>.jsonl), and a summary table (medians, ratios to B)
on stderr and in LAYOUT_OUT with .md.

Env: BENCH_PG_URL (postgres://postgres@127.0.0.1:55432/postgres), JOBD_BIN
(build/jobd), CEIL_N (200000), CEIL_CLIENTS ("4 8"), LAYOUT_REPS (3),
LAYOUTS ("b today today_b today_nt lease move move_nt move_slim defer_slim hot leasemove"), CHURN_ROUNDS (3; 0 =
none), CHURN_LAYOUTS (default: LAYOUTS), CEIL_TIMEOUT_S (300). Stdlib only; needs pg_walinspect (PostgreSQL
15 contrib).
"""

import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
LDIR = os.path.join(HERE, "layout")
sys.path.insert(0, os.path.join(ROOT, "bench/harness/sql"))
import ceiling as seed  # noqa: E402  (the shared harness's ceiling.py)

JOBD = os.environ.get("JOBD_BIN", os.path.join(ROOT, "build/jobd"))
BATCH = 100
REPS = int(os.environ.get("LAYOUT_REPS", "3"))
N = seed.N
CHURN = int(os.environ.get("CHURN_ROUNDS", "3"))
NAMES = os.environ.get("LAYOUTS", "b today today_b today_nt lease move move_nt move_slim defer_slim hot leasemove").split()
STAMP = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
OUT = os.environ.get("LAYOUT_OUT", os.path.join(ROOT, f"bench/results/layout-{STAMP}.jsonl"))
SESSION = "-c enable_bitmapscan=off"  # as the worker loop's connection (pg_op_offload)

ARCH_DONE = "select count(*) from jobd.jobs_arch where status = 'succeeded'"
INPLACE_DONE = ("select (select count(*) from jobd.jobs where status = 'succeeded')"
                " + (select count(*) from jobd.jobs_done where status = 'succeeded')")
LAYOUTS = {
    "today": dict(setup=[], script="@today", deferred=True, done=INPLACE_DONE,
                  hot=["jobd.jobs"], fin=["jobd.jobs_done"]),
    "today_b": dict(setup=[], script="today_b.pgbench", deferred=True, done=INPLACE_DONE,
                    hot=["jobd.jobs"], fin=["jobd.jobs_done"]),
    "today_nt": dict(setup=["notrig.sql"], script="@today", deferred=True, done=INPLACE_DONE,
                     hot=["jobd.jobs"], fin=["jobd.jobs_done"]),
    "lease": dict(setup=["leases.sql"], script="lease.pgbench", deferred=True, done=INPLACE_DONE,
                  hot=["jobd.jobs", "jobd.job_leases"], fin=["jobd.jobs_done"]),
    "move": dict(setup=["archive.sql"], script="move.pgbench", deferred=False, done=ARCH_DONE,
                 hot=["jobd.jobs"], fin=["jobd.jobs_arch"]),
    "move_nt": dict(setup=["archive.sql", "move_nt.sql"], script="move_nt.pgbench", deferred=False,
                    done=ARCH_DONE, hot=["jobd.jobs"], fin=["jobd.jobs_arch"]),
    "move_slim": dict(setup=["archive_slim.sql", "move_nt.sql"], script="move_nt.pgbench", deferred=False,
                      done=ARCH_DONE, hot=["jobd.jobs"], fin=["jobd.jobs_arch"]),
    "defer_slim": dict(setup=["archive_slim.sql", "move_nt.sql", "defer_slim.sql"], script="defer_slim.pgbench",
                       deferred=True, done=INPLACE_DONE.replace("jobd.jobs_done", "jobd.jobs_arch"),
                       hot=["jobd.jobs"], fin=["jobd.jobs_arch"]),
    "hot": dict(setup=["leases.sql", "archive.sql", "hot.sql"], script="hot.pgbench",
                deferred=False, done=ARCH_DONE, hot=["jobd.jobs", "jobd.job_leases"],
                fin=["jobd.jobs_arch"]),
    "leasemove": dict(setup=["leases.sql", "archive.sql"], script="leasemove.pgbench",
                      deferred=False, done=ARCH_DONE, hot=["jobd.jobs", "jobd.job_leases"],
                      fin=["jobd.jobs_arch"]),
    "b": dict(hot=["public.jobs"], fin=[]),
    # the layout as built (schema version 38, src/store/pg): its own statements, no pass
    "built": dict(setup=[], script="@built", deferred=False, done=INPLACE_DONE,
                  hot=["jobd.jobs"], fin=["jobd.jobs_done"]),
}
# "today" from another tree and binary (LAYOUT_TODAY_SRC, LAYOUT_TODAY_BIN: main before
# version 38) beside "built" (this tree's statements and JOBD_BIN), for an A/B of the build
TODAY_SRC = os.environ.get("LAYOUT_TODAY_SRC", ROOT)
TODAY_BIN = os.environ.get("LAYOUT_TODAY_BIN", JOBD)
JOBD_TRUNCATE = ("TRUNCATE jobd.jobs, jobd.jobs_done, jobd.job_keys, jobd.stats_buckets, "
                 "jobd.job_attempts, jobd.events")
SEED_JOBD = ("INSERT INTO jobd.jobs (type, payload, run_at) SELECT 'noop', json_build_object('i', g), "
             "now() - interval '1 hour' + g * interval '1 microsecond' FROM generate_series(1, {n}) g")

out_f = None


def emit(obj):
    seed.emit(obj)
    out_f.write(json.dumps(obj) + "\n")
    out_f.flush()


def q(url, sql):
    return seed.psql(url, "-Atc", sql, capture=True).strip()


def rel_sizes(url, rels):
    """heap and index bytes of rels, partitions included."""
    if not rels:
        return dict(table=0, index=0)
    arr = "ARRAY[" + ",".join(f"'{r}'::regclass" for r in rels) + "]::regclass[]"
    row = q(url, "select coalesce(sum(pg_table_size(c.oid)), 0), coalesce(sum(pg_indexes_size(c.oid)), 0) "
                 f"from pg_class c where c.relkind = 'r' and (c.oid = ANY({arr}) or c.oid in "
                 f"(select t.relid from unnest({arr}) a(x), pg_partition_tree(a.x) t))")
    a, b = row.split("|")
    return dict(table=int(a), index=int(b))


def tup_stats(url, rels):
    arr = ",".join(f"'{r}'::regclass" for r in rels)
    row = q(url, "select coalesce(sum(n_tup_ins),0), coalesce(sum(n_tup_upd),0), coalesce(sum(n_tup_hot_upd),0), "
                 f"coalesce(sum(n_tup_del),0) from pg_stat_user_tables where relid in ({arr})")
    return [int(x) for x in row.split("|")]


PM_PID = None


def cluster_ticks():
    """CPU ticks of the server's exited children (its backends and autovacuum workers, reaped
    by the postmaster): unlike bench/harness/sql/ceiling.py's count of every process named
    postgres, not the other servers on a shared machine. Needs to read the server's
    postmaster.pid (same machine); None otherwise."""
    global PM_PID
    try:
        if PM_PID is None:
            d = q(seed.db_url("postgres"), "show data_directory")
            with open(os.path.join(d, "postmaster.pid")) as f:
                PM_PID = int(f.readline())
        with open(f"/proc/{PM_PID}/stat") as f:
            st = f.read()
        fields = st[st.rindex(")") + 2:].split()
        return int(fields[13]) + int(fields[14])
    except (OSError, ValueError, subprocess.CalledProcessError):
        return None


def lsn(url):
    return q(url, "select pg_current_wal_insert_lsn()")


def wal_between(a, b):
    """bytes, and pg_walinspect's records by kind, between two LSNs (whole cluster)."""
    base = seed.db_url("postgres")
    end = q(base, "select pg_current_wal_flush_lsn()")
    total = int(q(base, f"select pg_wal_lsn_diff('{b}', '{a}')"))
    try:
        rows = q(base, "select \"resource_manager/record_type\", count, fpi_size, combined_size "
                       f"from pg_get_wal_stats('{a}', least('{b}'::pg_lsn, '{end}'::pg_lsn), true) where count > 0")
    except subprocess.CalledProcessError as e:  # a segment recycled: only the byte count
        seed.log(f"pg_walinspect: {e.stderr.strip()[-200:]}")
        return dict(bytes=total)
    kinds, fpi = {}, 0
    for line in rows.splitlines():
        k, c, f, _ = line.split("|")
        kinds[k] = int(c)
        fpi += int(f)
    def cnt(prefix, names):
        return sum(v for k, v in kinds.items() if k.split("/")[0] == prefix
                   and k.split("/")[1].split("+")[0] in names)
    return dict(bytes=total, fpi_bytes=fpi,
                heap_insert=cnt("Heap", {"INSERT"}) + cnt("Heap2", {"MULTI_INSERT"}),
                heap_update=cnt("Heap", {"UPDATE"}), heap_hot_update=cnt("Heap", {"HOT_UPDATE"}),
                heap_delete=cnt("Heap", {"DELETE"}), heap_lock=cnt("Heap", {"LOCK"}) + cnt("Heap2", {"LOCK_UPDATED"}),
                btree_insert=cnt("Btree", {"INSERT_LEAF", "INSERT_UPPER", "INSERT_POST"}),
                btree_split=cnt("Btree", {"SPLIT_L", "SPLIT_R"}),
                prune_vacuum=cnt("Heap2", {"PRUNE", "VACUUM"}) + cnt("Btree", {"VACUUM", "DELETE"}),
                records=sum(kinds.values()))


def per_job(w, n):
    keys = ("bytes", "fpi_bytes", "heap_insert", "heap_update", "heap_hot_update", "heap_delete",
            "heap_lock", "btree_insert", "btree_split", "prune_vacuum", "records")
    return {k: round(w[k] / n, 3) if k in w else None for k in keys} if n else None


def prepare(name, scripts, today_script, built_script):
    L = LAYOUTS[name]
    if name == "b":
        return seed.prepare(), None
    url = seed.ensure_db(f"bench_layout_{name}")
    seed.psql(url, "-c", "DROP SCHEMA IF EXISTS jobd CASCADE")
    subprocess.run([JOBD if name == "built" else TODAY_BIN, "migrate", "--db", url], check=True,
                   capture_output=True, timeout=seed.TIMEOUT)
    if L["deferred"]:  # today's pass; a layout's own setup may replace it
        seed.psql(url, "-f", os.path.join(LDIR, "archive_pass.sql"))
    for f in L["setup"]:
        seed.psql(url, "-f", os.path.join(LDIR, f))
    if L["script"] == "@today":
        return url, today_script
    if L["script"] == "@built":
        return url, built_script
    with open(os.path.join(LDIR, L["script"])) as f:
        text = f.read()
    if "-- @CLAIM_TODAY" in text:
        with open(today_script) as f:
            t = f.read()
        claim = t[t.index("WITH claimed"):t.index("\\gset\n") + len("\\gset\n")]
        text = text.replace("-- @CLAIM_TODAY\n", claim)
    if "-- @CLAIM_TODAY_EV" in text:
        with open(today_script) as f:
            t = f.read()
        claim = t[t.index("WITH claimed"):t.index("\nSELECT coalesce")]
        claim += (", ev AS (INSERT INTO jobd.events (id, job, queue, type, from_st, to_st, attempt) "
                  "SELECT nextval('jobd.event_id_seq'), id, queue, type, 'pending', 'running', attempt "
                  "FROM claimed WHERE jobd.events_on())")
        claim += t[t.index("\nSELECT coalesce"):t.index("\\gset\n") + len("\\gset\n")]
        text = text.replace("-- @CLAIM_TODAY_EV\n", claim)
    path = os.path.join(scripts, f"layout_{name}.pgbench")
    with open(path, "w") as f:
        f.write(text)
    return url, path


def truncate(name, url):
    if name == "b":
        seed.psql(url, "-c", "TRUNCATE jobs RESTART IDENTITY")
        return
    extra = []
    if "jobd.job_leases" in LAYOUTS[name]["hot"]:
        extra.append("jobd.job_leases")
    if "jobd.jobs_arch" in LAYOUTS[name]["fin"]:
        extra.append("jobd.jobs_arch")
    seed.psql(url, "-c", JOBD_TRUNCATE + "".join(", " + e for e in extra))


def fill(name, url, n):
    if name == "b":
        seed.psql(url, "-c", "INSERT INTO jobs (type, payload_json, run_at) SELECT 'noop', "
                             "jsonb_build_object('i', i), now() - interval '1 hour' + i * interval "
                             f"'1 millisecond' FROM generate_series(1, {n}) AS i")
    else:
        seed.psql(url, "-c", SEED_JOBD.format(n=n))
    rels = LAYOUTS[name]["hot"]
    seed.psql(url, *sum((["-c", f"VACUUM ANALYZE {r}"] for r in rels), []), "-c", "CHECKPOINT")


def done_count(name, url):
    if name == "b":
        return int(q(url, "select count(*) from jobs where status = 'succeeded'"))
    return int(q(url, LAYOUTS[name]["done"]))


def drain(name, url, script, c, n):
    t = math.ceil(n / BATCH / c * 1.01) + 1
    args = ["-c", str(c), "-j", "2", "-t", str(t)]
    if name == "b":
        args += ["-f", os.path.join(ROOT, "bench/harness/sql/variant_b.pgbench")]
    else:
        args += ["-D", f"batch={BATCH}", "-D", "lease_ms=60000", "-D", "types={noop}", "-f", script]
        os.environ["PGOPTIONS"] = SESSION
    try:
        return seed.pgbench(url, args)
    finally:
        os.environ.pop("PGOPTIONS", None)


def deferred(name, url):
    if name == "b" or not LAYOUTS[name]["deferred"]:
        return None
    a = lsn(url)
    k0 = cluster_ticks()
    c0 = seed.snapshot()
    t0 = time.monotonic()
    # after a drain the statistics still say "no succeeded rows", and the pass's DELETE is
    # then planned as a walk of all jobs_succeeded per batch (docs/DESIGN.md, Table layout,
    # round three); autovacuum would have analyzed the table by then
    seed.psql(url, "-c", "ANALYZE jobd.jobs", "-c", "CALL jobd.bench_archive_all()")
    s = time.monotonic() - t0
    time.sleep(0.3)
    c1 = seed.snapshot()
    c1["t"] = c0["t"] + s
    k1 = cluster_ticks()
    b = lsn(url)
    return dict(s=round(s, 3), wal=wal_between(a, b), cpu=seed.cpu_delta(c0, c1),
                ticks=(k1 - k0) if k0 is not None and k1 is not None else None)


def one_run(name, url, script, c, rep, ver):
    L = LAYOUTS[name]
    base = dict(system="sql-layout", layout=name, version=f"PostgreSQL {ver}", n=N, concurrency=c,
                rep=rep, load=os.getloadavg())
    try:
        truncate(name, url)
        fill(name, url, N)
        time.sleep(0.5)
        s0 = tup_stats(url, L["hot"])
        k0 = cluster_ticks()
        a = lsn(url)
        r = drain(name, url, script, c, N)
        b = lsn(url)
        time.sleep(0.7)  # backends' table statistics reach the shared counters at exit
        k1 = cluster_ticks()
        s1 = tup_stats(url, L["hot"])
        done = done_count(name, url)
        w = wal_between(a, b)
        upd = s1[1] - s0[1]
        hot_upd = s1[2] - s0[2]
        line = dict(base, jobs_per_s=round(done / r["wall"]), wall_s=round(r["wall"], 3), completed=done,
                    not_completed=N - done, pgbench_failed=r["failed"], cpu=r["cpu"], latency_avg_ms=r["latency_avg_ms"],
                    wal_per_job=per_job(w, done),
                    server_cpu_us_per_job=round((k1 - k0) / seed.CLK_TCK / done * 1e6, 1)
                    if k0 is not None and k1 is not None and done else None, updates=upd, hot_updates=hot_upd,
                    hot_pct=round(100 * hot_upd / upd, 1) if upd else None,
                    hot_size=rel_sizes(url, L["hot"]), fin_size=rel_sizes(url, L["fin"]))
        d = deferred(name, url)
        if d is not None:
            line["deferred_s"] = d["s"]
            line["deferred_cpu"] = d["cpu"]
            if d["ticks"] is not None:
                line["deferred_server_cpu_us_per_job"] = round(d["ticks"] / seed.CLK_TCK / done * 1e6, 1)
            line["deferred_wal_per_job"] = per_job(d["wal"], done)
            line["jobs_per_s_with_deferred"] = round(done / (r["wall"] + d["s"]))
            line["fin_size"] = rel_sizes(url, L["fin"])
        if done != N:
            line["error"] = f"{done} of {N} jobs succeeded"
        truncate(name, url)
        emit(line)
        seed.log(f"layout {name} c={c} rep {rep}: {line['jobs_per_s']} jobs/s, "
                 f"WAL {line['wal_per_job']['bytes']} B/job, btree {line['wal_per_job']['btree_insert']}/job"
                 + (f", +deferred {d['s']} s" if d else ""))
    except Exception as e:  # record and move on
        emit(dict(base, error=str(e)))
        seed.log(f"layout {name} c={c} rep {rep}: ERROR {e}")


def churn(name, url, script, ver):
    L = LAYOUTS[name]
    truncate(name, url)
    sizes = []
    for rnd in range(1, CHURN + 1):
        fill(name, url, N)
        r = drain(name, url, script, 8, N)
        deferred(name, url)
        if name != "b":
            seed.psql(url, *sum((["-c", f"VACUUM {x}"] for x in L["hot"]), []))
        sizes.append(dict(round=rnd, jobs_per_s=round(N / r["wall"]), hot=rel_sizes(url, L["hot"]),
                          fin=rel_sizes(url, L["fin"])))
        seed.log(f"churn {name} round {rnd}: hot {sizes[-1]['hot']}")
    emit(dict(system="sql-layout", layout=name, phase="churn", version=f"PostgreSQL {ver}", n=N,
              rounds=sizes, load=os.getloadavg()))
    truncate(name, url)


def f0(v, spec=".0f"):
    return "–" if v is None else format(v, spec)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summary(lines):
    runs = [l for l in lines if l.get("phase") != "churn" and "error" not in l]
    clients = sorted({l["concurrency"] for l in runs})
    rows = []
    bmed = {c: med([l["jobs_per_s"] for l in runs if l["layout"] == "b" and l["concurrency"] == c]) for c in clients}
    bbest = max((v for v in bmed.values() if v), default=None)
    hdr = ("| layout | jobs/s c=" + " | jobs/s c=".join(map(str, clients)) +
           " | best / B | same round / B (median) | with deferred pass | server CPU µs/job (+ deferred pass) | WAL B/job (FPI) | index entries/job | heap writes/job "
           "(upd / HOT / ins / del / lock) | HOT % | deferred WAL B/job, index/job | job's life: WAL B/job, index entries/job | hot tables after drain "
           "(heap + index MB) |")
    rows.append(hdr)
    rows.append("|" + "---|" * (hdr.count("|") - 1))
    for name in NAMES:
        mine = [l for l in runs if l["layout"] == name]
        if not mine:
            continue
        per_c = [med([l["jobs_per_s"] for l in mine if l["concurrency"] == c]) for c in clients]
        best = max((v for v in per_c if v), default=None)
        withd = [med([l.get("jobs_per_s_with_deferred") for l in mine if l["concurrency"] == c]) for c in clients]
        wj = lambda k: med([l["wal_per_job"].get(k) for l in mine])
        dj = lambda k: med([(l.get("deferred_wal_per_job") or {}).get(k) for l in mine])
        hs = lambda k: med([l["hot_size"][k] for l in mine])
        wd = max((v for v in withd if v), default=None)
        bround = {(l["rep"], l["concurrency"]): l["jobs_per_s"] for l in runs if l["layout"] == "b"}
        rr = med([l["jobs_per_s"] / bround[(l["rep"], l["concurrency"])] for l in mine
                  if (l["rep"], l["concurrency"]) in bround])
        cells = [name] + [f"{v:,.0f}" if v else "–" for v in per_c]
        cells.append(f"{100 * best / bbest:.0f} %" if best and bbest else "–")
        cells.append(f"{100 * rr:.0f} %" if rr else "–")
        cells.append(f"{wd:,.0f} ({100 * wd / bbest:.0f} %)" if wd and bbest else "–")
        cpu = med([l.get("server_cpu_us_per_job") for l in mine])
        if cpu is None:  # older lines: every postgres process of the machine
            cpu = med([l["cpu"]["server_pct"] / 100 * l["wall_s"] / l["completed"] * 1e6 for l in mine
                       if l.get("cpu") and l.get("completed")])
        dcpu = med([l.get("deferred_server_cpu_us_per_job") for l in mine])
        if dcpu is None:
            dcpu = med([l["deferred_cpu"]["server_pct"] / 100 * l["deferred_s"] / l["completed"] * 1e6
                        for l in mine if l.get("deferred_cpu") and l.get("completed")])
        cells.append(f0(cpu) + (f" + {f0(dcpu)}" if dcpu is not None else ""))
        cells.append(f"{f0(wj('bytes'))} ({f0(wj('fpi_bytes'))})")
        cells.append(f0(wj('btree_insert'), ".2f"))
        cells.append(" / ".join(f0(wj(k), ".2f") for k in ("heap_update", "heap_hot_update", "heap_insert",
                                                           "heap_delete", "heap_lock")))
        hp = med([l.get("hot_pct") for l in mine])
        cells.append(f0(hp))
        db = dj("bytes")
        cells.append(f"{f0(db)}, {f0(dj('btree_insert'), '.2f')}" if db is not None else "none")
        life_w = (wj("bytes") or 0) + (db or 0)
        life_i = (wj("btree_insert") or 0) + (dj("btree_insert") or 0)
        cells.append(f"{life_w:.0f}, {life_i:.2f}")
        cells.append(f"{hs('table') / 1e6:.1f} + {hs('index') / 1e6:.1f}")
        rows.append("| " + " | ".join(cells) + " |")
    ch = [l for l in lines if l.get("phase") == "churn"]
    if ch:
        rows.append("")
        rows.append("| layout | hot tables after churn round 1 … %d (heap + index MB) | finished-job tables after "
                    "the last round (MB) |" % CHURN)
        rows.append("|---|---|---|")
        for l in ch:
            hs = ", ".join(f"{r['hot']['table'] / 1e6:.1f} + {r['hot']['index'] / 1e6:.1f}" for r in l["rounds"])
            f = l["rounds"][-1]["fin"]
            rows.append(f"| {l['layout']} | {hs} | {f['table'] / 1e6:.1f} + {f['index'] / 1e6:.1f} |")
    return "\n".join(rows)


MIG_FILL = """
INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority, run_at, attempt, attempt_floor, max_attempts, cancel_requested,
        worker_id, last_error, result, created_at, started_at, finished_at)
SELECT nextval('jobd.job_id_seq'), 'q' || (g % 4), 't' || (g % 8),
       json_build_object('i', g, 'note', 'a job of the migration test'),
       CASE WHEN g % 20 = 0 THEN 'dead' WHEN g % 85 = 1 THEN 'cancelled' ELSE 'succeeded' END,
       0, f - interval '2 seconds', 1, 0, 25, false, 'w' || (g % 16),
       CASE WHEN g % 20 = 0 THEN 'boom' END, CASE WHEN g % 20 <> 0 THEN '{{"ok":true}}'::json END,
       f - interval '3 seconds', f - interval '1 second', f
  FROM generate_series(1, {done}) g,
       LATERAL (SELECT now() - interval '7 days' + g * (interval '7 days' / {done}) - interval '1 minute' AS f) x;
INSERT INTO jobd.jobs (queue, type, payload, status, run_at, attempt, worker_id, result, started_at, finished_at)
SELECT 'q' || (g % 4), 't' || (g % 8), json_build_object('i', g), 'succeeded', now() - interval '1 minute', 1,
       'w1', '{{"ok":true}}', now() - interval '50 seconds', now() - interval '40 seconds' + g * interval '1 microsecond'
  FROM generate_series(1, {succ}) g;
INSERT INTO jobd.jobs (queue, type, payload, status, run_at, attempt, worker_id, lease_expires_at, started_at)
SELECT 'q' || (g % 4), 't' || (g % 8), json_build_object('i', g), 'running', now() - interval '1 minute', 1,
       'w' || (g % 16), now() + interval '1 minute', now() - interval '5 seconds'
  FROM generate_series(1, {run}) g;
INSERT INTO jobd.jobs (queue, type, payload, run_at)
SELECT 'q' || (g % 4), 't' || (g % 8), json_build_object('i', g), now() + (g % 1000 - 500) * interval '1 second'
  FROM generate_series(1, {pend}) g;
"""
MIG_CHECK = ("select status, count(*), sum(id), sum(attempt) from jobd.all_jobs group by status order by status")


def migrate(n, old_bin=None):
    """Fills a store of today's schema with n jobs (85 % finished in jobs_done over 7 days, 5 %
    succeeded and not archived yet, 1 % running, 9 % pending), migrates it to the "move"
    layout (bench/sql/layout/migrate_move.sql), and checks that every job is still there with
    its status and attempt. With old_bin (a jobd of schema version 37) the store is made by
    it and migrated by JOBD_BIN's own `jobd migrate` (version 38, the built layout)."""
    url = seed.ensure_db("bench_layout_migrate")
    seed.psql(url, "-c", "DROP SCHEMA IF EXISTS jobd CASCADE")
    subprocess.run([old_bin or JOBD, "migrate", "--db", url], check=True, capture_output=True,
                   timeout=seed.TIMEOUT)
    parts = dict(done=n * 85 // 100, succ=n * 5 // 100, run=n // 100)
    parts["pend"] = n - parts["done"] - parts["succ"] - parts["run"]
    t0 = time.monotonic()
    seed.psql(url, "-c", MIG_FILL.format(**parts))
    seed.psql(url, "-c", "VACUUM ANALYZE", "-c", "CHECKPOINT")
    seed.log(f"migrate: filled {n} jobs {parts} in {time.monotonic() - t0:.1f} s")
    before = q(url, MIG_CHECK)
    a = lsn(url)
    t0 = time.monotonic()
    if old_bin:
        subprocess.run([JOBD, "migrate", "--db", url], check=True, capture_output=True,
                       timeout=seed.TIMEOUT)
    else:
        seed.psql(url, "-f", os.path.join(LDIR, "migrate_move.sql"))
    secs = time.monotonic() - t0
    b = lsn(url)
    after = q(url, MIG_CHECK)
    left = q(url, "select count(*) from jobd.jobs where status = 'succeeded'")
    ok = before == after and left == "0"
    line = dict(system="sql-layout", phase="migrate", layout="jobd migrate 38" if old_bin else "move",
                n=n, parts=parts,
                migrate_s=round(secs, 3), wal=wal_between(a, b),
                jobs_kept=ok, before=before, after=after, load=os.getloadavg())
    print(json.dumps(line), flush=True)
    seed.log(f"migrate: {n} jobs in {secs:.2f} s, every job kept: {ok}")
    if not ok:
        sys.exit(1)


def main():
    global out_f
    if len(sys.argv) > 2 and sys.argv[1] == "--migrate":
        migrate(int(sys.argv[2]), os.environ.get("JOBD_OLD_BIN"))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--summary":
        with open(sys.argv[2]) as f:
            print(summary([json.loads(l) for l in f if l.strip()]))
        return
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    out_f = open(OUT, "w")
    tmp = os.environ.get("CEIL_TMP", "/tmp")
    today = os.path.join(tmp, "layout_today.pgbench")
    subprocess.run([sys.executable, os.path.join(HERE, "extract.py"), "--src", TODAY_SRC, "--out", today],
                   check=True, timeout=seed.TIMEOUT)
    built = os.path.join(tmp, "layout_built.pgbench")
    subprocess.run([sys.executable, os.path.join(HERE, "extract.py"), "--src", ROOT, "--out", built],
                   check=True, timeout=seed.TIMEOUT)
    seed.psql(seed.db_url("postgres"), "-c", "CREATE EXTENSION IF NOT EXISTS pg_walinspect")
    # pg_walinspect reads a run's WAL after it: keep the segments a checkpoint during the run
    # would recycle (a retention setting only; LAYOUT_WAL_KEEP=0 leaves the server as it is)
    keep = os.environ.get("LAYOUT_WAL_KEEP", "8GB")
    if keep != "0":
        seed.psql(seed.db_url("postgres"), "-c", f"ALTER SYSTEM SET wal_keep_size = '{keep}'",
                  "-c", "SELECT pg_reload_conf()")
    ver = seed.server_version()
    dbs = {n: prepare(n, tmp, today, built) for n in NAMES}
    seed.log(f"layouts {NAMES}, N={N}, clients {seed.CLIENTS}, reps {REPS}, load {os.getloadavg()}")
    k = 0
    for rep in range(1, REPS + 1):
        for c in seed.CLIENTS:
            order = NAMES[k % len(NAMES):] + NAMES[:k % len(NAMES)]
            k += 1
            for name in order:
                one_run(name, *dbs[name], c, rep, ver)
    for name in os.environ.get("CHURN_LAYOUTS", " ".join(NAMES)).split() if CHURN > 0 else []:
        try:
            churn(name, *dbs[name], ver)
        except Exception as e:
            emit(dict(system="sql-layout", layout=name, phase="churn", error=str(e)))
            seed.log(f"churn {name}: ERROR {e}")
    out_f.close()
    with open(OUT) as f:
        text = summary([json.loads(l) for l in f if l.strip()])
    with open(OUT[:-len(".jsonl")] + ".md", "w") as f:
        f.write(text + "\n")
    seed.log(text)


if __name__ == "__main__":
    main()
