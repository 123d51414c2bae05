#!/usr/bin/env python3
"""Start-time fair queueing (SFQ) tags for grouped claims, measured beside
today's grouped claim (docs/DESIGN.md, Groups, "Alternative measured:
start-time fair queueing tags (prototype, not built)").

A prototype in SQL only: two databases on the bench cluster, `sfq_today`
(jobd's schema as `jobd migrate` makes it) and `sfq_tags` (the same plus
bench/sql/groups_sfq/schema_sfq.sql: a start tag per grouped job and its two
indexes in place of jobs_group_claim). jobd's own statements are taken from
the source by bench/sql/extract.py (the C preprocessor expands the
PG_STMT macros), so "today" is what the store sends:

  claim (one worker cycle: claim 10, then the fenced batched completion
  st_complete_batch, each autocommit, as bench/sql/extract.py's script)
    plain      st_claim_types_run on an ungrouped queue (the reference)
    gr1        st_gr_one_run, a queue of one group (today)
    gr1000     st_gr_claim_run, 1,000 groups, the cursor kept per client (today)
    sfq1       bench/sql/groups_sfq/claim_sfq.sql, one group (tags 0..N-1)
    sfq1000    the same, 1,000 groups (the k-th job of each group tagged k)
    plain_t    st_claim_types_run in sfq_tags (a check that the databases match)
  enqueue (into a queue with a backlog of ENQ_BACKLOG pending jobs in 1,000 groups)
    eb_plain   st_enqueue_many_nokey, 1,000 ungrouped jobs a statement
    eb_today   the same statement, 1,000 jobs into 1,000 groups (today: untagged)
    eb_sfq     the same with the tag CTEs (sfq_batch below), 1,000 into 1,000 groups
    e1_plain   st_enqueue, one ungrouped job a statement
    e1_today   st_enqueue, one job into one of 1,000 groups
    e1_sfq     st_enqueue with the tag expression (sfq_one below)

Each run: TRUNCATE, seed, VACUUM ANALYZE, CHECKPOINT, pgbench (-M prepared),
count. Rounds are interleaved (every variant once per round, the order
rotated by one each round). CPU is the cluster's own (its postmaster and
children, reaped ones included), not the machine's other PostgreSQL
servers, and pgbench's; the load average is recorded with every run.

Then `--fair`: the contract's promise checked with the SFQ statements
(one group of 100,000, then 100 groups of 1: how many of the big group's
start before all 100), and a small group enqueueing while a big backlog
drains (its jobs' wait, in jobs of the big group claimed meanwhile).

Env: BENCH_PG_URL (postgres://postgres@127.0.0.1:55445/postgres), SFQ_N (60000),
SFQ_ROUNDS (3), SFQ_CLIENTS (3), SFQ_VARIANTS (all of the above), ENQ_BACKLOG
(50000), SFQ_OUT (bench/results/groups_sfq-<UTC>.jsonl). Stdlib only.
  bench/sql/groups_sfq.py [--fair] [--fair-only]
"""

import datetime
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit, urlunsplit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
SDIR = os.path.join(HERE, "groups_sfq")
sys.path.insert(0, HERE)
import extract  # noqa: E402

PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
BASE = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:55445/postgres")
N = int(os.environ.get("SFQ_N", "60000"))
ROUNDS = int(os.environ.get("SFQ_ROUNDS", "3"))
CLIENTS = int(os.environ.get("SFQ_CLIENTS", "3"))
BACKLOG = int(os.environ.get("ENQ_BACKLOG", "50000"))
ALL = "plain gr1 gr1000 sfq1 sfq1000 plain_t eb_plain eb_today eb_sfq e1_plain e1_today e1_sfq"
VARIANTS = os.environ.get("SFQ_VARIANTS", ALL).split()
CLK_TCK = os.sysconf("SC_CLK_TCK")
BATCH = 10
NOW = "COALESCE((timestamptz 'epoch' + ($11)::bigint * interval '1 microsecond'), now())"
STAMP = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
OUT = os.environ.get("SFQ_OUT", os.path.join(ROOT, f"bench/results/groups_sfq-{STAMP}.jsonl"))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def db_url(name):
    u = urlsplit(BASE)
    return urlunsplit((u.scheme, u.netloc, "/" + name, u.query, u.fragment))


def psql(url, sql, capture=False):
    r = subprocess.run([f"{PGBIN}/psql", url, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                       input=sql, check=True, text=True, capture_output=True, timeout=900)
    return r.stdout.strip() if capture else None


# ---- the statements ------------------------------------------------------

def statements():
    extract.WANT = ("st_claim_types_run", "st_complete_batch", "st_gr_claim_run", "st_gr_one_run",
                    "st_enqueue_many_nokey", "st_enqueue")
    extract.FILES = ("src/store/pg/read.c", "src/store/pg/report.c", "src/store/pg/groups.c",
                     "src/store/pg/enqueue.c", "src/store/pg/enqueue_one.c")
    return extract.expand(ROOT)


def once(s, old, new):
    if s.count(old) != 1:
        sys.exit(f"groups_sfq.py: expected one {old!r} in the statement (has the source changed?)")
    return s.replace(old, new)


def sfq_batch(sql):
    """st_enqueue_many_nokey with tags: V per queue (the head of jobs_sfq_claim among due
    jobs), each group's base = max(its last pending tag + 1, V), then base + its rank in
    the batch. No write besides the tag column: the group's last tag is read from jobs."""
    ctes = (
        "vq AS (SELECT q.queue, COALESCE((SELECT j.tag FROM jobd.jobs j WHERE j.queue = q.queue"
        " AND j.status = 'pending' AND j.tag IS NOT NULL AND j.run_at <= " + NOW +
        " ORDER BY j.priority DESC, j.tag, j.id LIMIT 1), 0) AS v"
        " FROM (SELECT DISTINCT queue FROM t WHERE grp IS NOT NULL) q), "
        "gb AS (SELECT d.queue, d.grp, GREATEST(COALESCE((SELECT j.tag + 1 FROM jobd.jobs j"
        " WHERE j.queue = d.queue AND COALESCE(j.grp, '') = d.grp AND j.status = 'pending'"
        " AND j.tag IS NOT NULL ORDER BY j.tag DESC LIMIT 1), 0), vq.v) AS base"
        " FROM (SELECT DISTINCT queue, grp FROM t WHERE grp IS NOT NULL) d JOIN vq ON vq.queue = d.queue), "
        "tt AS (SELECT t.*, CASE WHEN t.grp IS NULL OR t.run_at > (extract(epoch from " + NOW +
        ") * 1000000)::bigint THEN NULL"
        " ELSE gb.base + row_number() OVER (PARTITION BY t.queue, t.grp ORDER BY t.ord) - 1 END AS tag"
        " FROM t LEFT JOIN gb ON gb.queue = t.queue AND gb.grp = t.grp), ")
    sql = once(sql, "ins AS (INSERT INTO jobd.jobs (", ctes + "ins AS (INSERT INTO jobd.jobs (")
    sql = once(sql, "created_at, traceparent, grp) ", "created_at, traceparent, grp, tag) ")
    return once(sql, "t.tp, t.grp FROM (SELECT * FROM t ORDER BY ord) t",
                "t.tp, t.grp, t.tag FROM (SELECT * FROM tt ORDER BY ord) t")


def sfq_one(sql):
    """st_enqueue with the tag as one expression of its INSERT: two index probes."""
    tag = (
        "CASE WHEN $13::text IS NULL OR $5::bigint > (extract(epoch from " + NOW +
        ") * 1000000)::bigint THEN NULL ELSE GREATEST("
        "COALESCE((SELECT j.tag + 1 FROM jobd.jobs j WHERE j.queue = $3::text"
        " AND COALESCE(j.grp, '') = $13::text AND j.status = 'pending' AND j.tag IS NOT NULL"
        " ORDER BY j.tag DESC LIMIT 1), 0),"
        " COALESCE((SELECT j.tag FROM jobd.jobs j WHERE j.queue = $3::text AND j.status = 'pending'"
        " AND j.tag IS NOT NULL AND j.run_at <= " + NOW +
        " ORDER BY j.priority DESC, j.tag, j.id LIMIT 1), 0)) END")
    sql = once(sql, "created_at, traceparent, grp) ", "created_at, traceparent, grp, tag) ")
    return once(sql, "$12::text, $13::text WHERE", "$12::text, $13::text, " + tag + " WHERE")


def cycle(claim):
    """One worker cycle as bench/sql/extract.py's script, the claim's cursor (if any) kept."""
    # pgbench keeps a client's variables across transactions: the cursor lives there as it
    # lives in the connection in jobd (kept by an empty claim; it starts at "-", before every group name)
    cur = ", coalesce(max(next_cursor), :cursor) AS cursor" if "next_cursor" in claim else ""
    done = extract.params(ST["st_complete_batch"], {1: ":ids", 2: ":atts",
                                                    3: "(array_fill(NULL::json, ARRAY[:n::int]))", 4: "NULL"})
    # the claim's final UPDATE becomes the CTE `claimed` of its own WITH (a statement with
    # data-modifying CTEs cannot be nested in another WITH)
    head, sep, upd = claim.rpartition(" UPDATE jobd.jobs j SET status = 'running'")
    assert sep and head.lstrip().startswith("WITH "), "a claim is WITH ... UPDATE jobd.jobs j ..."
    s = (f"{head}, claimed AS ({sep.strip()}{upd})\n"
         "SELECT coalesce(array_agg(id), '{}') AS ids, coalesce(array_agg(attempt), '{}') AS atts,"
         f" count(*) AS n{cur} FROM claimed\n\\gset\n")
    return s + f"\\if :n > 0\n{done};\n\\endif\n"


def claim_params(q):
    return {1: ":client_id", 2: str(BATCH), 3: "60000", 4: "'{noop}'::text[]", 5: "NULL",
            6: f"'{q}'", 7: "NULL", 8: "NULL", 9: "0", 10: ":cursor"}


def scripts():
    """{variant: (database, pgbench script text)}"""
    ct = extract.params(ST["st_claim_types_run"], {1: ":client_id", 2: str(BATCH), 3: "60000",
                                                  4: "'{noop}'::text[]", 5: "NULL", 6: "NULL"})
    grc = extract.params(ST["st_gr_claim_run"], claim_params("q")) + " AS next_cursor"
    with open(os.path.join(SDIR, "claim_sfq.sql")) as f:
        sfq = "\n".join(ln for ln in f.read().split("\n") if not ln.startswith("--"))
    sfq = " ".join(extract.params(sfq, claim_params("q")).split())
    K = 1000
    arr = lambda e: f"(SELECT array_agg({e}) FROM generate_series(1, {K}) i)"  # noqa
    grp_arr = arr("'g' || lpad((i - 1)::text, 4, '0')")
    many = {1: "NULL", 2: arr("'noop'::text"), 3: arr("'{}'::json"), 4: arr("'q'::text"),
            5: arr("0"), 6: "(array_fill(NULL::bigint, ARRAY[1000]))", 7: arr("25"),
            8: "(array_fill(NULL::bigint, ARRAY[1000]))", 9: "(array_fill(NULL::text, ARRAY[1000]))",
            10: "(array_fill(NULL::bigint, ARRAY[1000]))", 11: "NULL", 12: "NULL",
            13: "(array_fill(NULL::text, ARRAY[1000]))", 14: grp_arr}
    many_plain = {**many, 4: arr("'p'::text"), 14: "(array_fill(NULL::text, ARRAY[1000]))"}
    one = {1: "'noop'", 2: "'{}'", 3: "'q'", 4: "0", 5: "NULL", 6: "25", 7: "NULL", 8: "NULL",
           9: "NULL", 10: "NULL", 11: "NULL", 12: "NULL", 13: "'g' || lpad(:g::text, 4, '0')"}
    one_plain = {**one, 3: "'p'", 13: "NULL"}
    enq_many = ST["st_enqueue_many_nokey"]
    enq_one = ST["st_enqueue"]
    rnd = "\\set g random(0, 999)\n"
    return {
        "plain": ("sfq_today", cycle(ct)),
        "gr1": ("sfq_today", cycle(extract.params(ST["st_gr_one_run"], claim_params("q")))),
        "gr1000": ("sfq_today", cycle(grc)),
        "sfq1": ("sfq_tags", cycle(sfq)),
        "sfq1000": ("sfq_tags", cycle(sfq)),
        "plain_t": ("sfq_tags", cycle(ct)),
        "eb_plain": ("sfq_today", extract.params(enq_many, many_plain) + ";\n"),
        "eb_today": ("sfq_today", extract.params(enq_many, many) + ";\n"),
        "eb_sfq": ("sfq_tags", extract.params(sfq_batch(enq_many), many) + ";\n"),
        "e1_plain": ("sfq_today", rnd + extract.params(enq_one, one_plain) + ";\n"),
        "e1_today": ("sfq_today", rnd + extract.params(enq_one, one) + ";\n"),
        "e1_sfq": ("sfq_tags", rnd + extract.params(sfq_one(enq_one), one) + ";\n"),
    }


# ---- seeding ---------------------------------------------------------------

def seed_sql(db, queue, n, groups, tagged):
    """n due jobs of queue `queue` in `groups` groups (0 = ungrouped), job i in group i % groups;
    in sfq_tags (tagged) grouped job i has tag i / groups: what a batch enqueue into an empty
    queue gives (the k-th job of each group tagged k)."""
    grp = "NULL" if groups == 0 else f"'g' || lpad((i % {groups})::text, 4, '0')"
    tag = ", tag" if db == "sfq_tags" else ""
    tagv = ""
    if db == "sfq_tags":
        tagv = f", {'NULL' if groups == 0 or not tagged else f'i / {groups}'}"
    return (
        "TRUNCATE jobd.jobs, jobd.job_groups, jobd.stats_buckets, jobd.queues CASCADE;\n"
        f"INSERT INTO jobd.queues (name, grouped) VALUES ('{queue}', {'true' if groups else 'false'});\n"
        f"INSERT INTO jobd.jobs (queue, type, payload, run_at, grp{tag})"
        f" SELECT '{queue}', 'noop', '{{}}', now() - interval '1 hour', {grp}{tagv}"
        f" FROM generate_series(0, {n - 1}) i ORDER BY i;\n"
        "INSERT INTO jobd.job_groups (queue, grp) SELECT DISTINCT queue, grp FROM jobd.jobs"
        " WHERE grp IS NOT NULL;\n"
        + (f"INSERT INTO jobd.job_groups (queue, grp) VALUES ('{queue}', '');\n" if groups else "")
        + "VACUUM ANALYZE jobd.jobs, jobd.job_groups, jobd.queues;\nCHECKPOINT;\n")


SEEDS = {  # variant: (queue, jobs, groups)
    "plain": ("p", N, 0), "gr1": ("q", N, 1), "gr1000": ("q", N, 1000),
    "sfq1": ("q", N, 1), "sfq1000": ("q", N, 1000), "plain_t": ("p", N, 0),
    "eb_plain": ("q", BACKLOG, 1000), "eb_today": ("q", BACKLOG, 1000), "eb_sfq": ("q", BACKLOG, 1000),
    "e1_plain": ("q", BACKLOG, 1000), "e1_today": ("q", BACKLOG, 1000), "e1_sfq": ("q", BACKLOG, 1000),
}
ENQ = {"eb": (2, 15, 1000), "e1": (CLIENTS, 2000, 1)}  # clients, transactions each, jobs a transaction


# ---- CPU of this cluster only ------------------------------------------------

def pm_pid():
    d = psql(BASE, "SHOW data_directory", capture=True)
    with open(os.path.join(d, "postmaster.pid")) as f:
        return int(f.readline())


def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fs = s[s.rindex(")") + 2:].split()
    return int(fs[1]), sum(int(x) for x in fs[11:15])  # ppid, utime+stime+cutime+cstime


def cluster_ticks(pm):
    t = stat(pm)[1]
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != pm:
            try:
                ppid, ticks = stat(int(d))
            except (OSError, ValueError):
                continue
            if ppid == pm:
                t += ticks
    return t


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def pgbench(url, script, clients, txns, extra):
    with tempfile.NamedTemporaryFile("w", suffix=".pgbench", delete=False) as f:
        f.write(script)
    cmd = [f"{PGBIN}/pgbench", "-n", "-M", "prepared", "-c", str(clients), "-j", str(min(clients, 2)),
           "-t", str(txns), "-D", "cursor=-", *extra, "-f", f.name, url]
    pm = PM
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    s0, l0, t0 = cluster_ticks(pm), loadavg(), time.monotonic()
    r = subprocess.run(cmd, text=True, capture_output=True, timeout=900)
    wall = time.monotonic() - t0
    time.sleep(0.3)  # the postmaster reaps the backends: their CPU lands in its cutime
    s1, l1 = cluster_ticks(pm), loadavg()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    os.unlink(f.name)
    if r.returncode != 0 or "failed transactions: 0 " not in r.stdout.replace("(", " "):
        raise RuntimeError(f"pgbench failed ({r.returncode}): {r.stdout[-800:]} {r.stderr[-800:]}")
    return dict(wall=wall, server_cpu=(s1 - s0) / CLK_TCK,
                client_cpu=(ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime),
                load=round((l0 + l1) / 2, 2))


def run(v, rnd):
    db, script = SCRIPTS[v]
    url = db_url(db)
    q, n, groups = SEEDS[v]
    psql(url, seed_sql(db, q, n, groups, True))
    if v.startswith("e"):
        c, t, per = ENQ[v[:2]]
        before = int(psql(url, "SELECT count(*) FROM jobd.jobs", capture=True))
        r = pgbench(url, script, c, t, [])
        jobs = int(psql(url, "SELECT count(*) FROM jobd.jobs", capture=True)) - before
        if jobs != c * t * per:
            raise RuntimeError(f"{v}: {jobs} jobs enqueued, expected {c * t * per}")
    else:
        t = math.ceil(n / BATCH / CLIENTS) + 5
        r = pgbench(url, script, CLIENTS, t, [])
        jobs = int(psql(url, "SELECT count(*) FROM jobd.jobs WHERE status = 'succeeded'", capture=True))
        if jobs != n:
            raise RuntimeError(f"{v}: {jobs} of {n} jobs succeeded")
    row = dict(variant=v, round=rnd, db=db, jobs=jobs, wall_s=round(r["wall"], 3),
               jobs_per_s=round(jobs / r["wall"], 1),
               server_us_per_job=round(1e6 * r["server_cpu"] / jobs, 1),
               client_us_per_job=round(1e6 * r["client_cpu"] / jobs, 1), load=r["load"])
    print(json.dumps(row), flush=True)
    with open(OUT, "a") as f:
        f.write(json.dumps(row) + "\n")
    log(f"  {v:9s} r{rnd} {row['jobs_per_s']:9.1f} jobs/s  server {row['server_us_per_job']:7.1f} us/job"
        f"  pgbench {row['client_us_per_job']:6.1f} us/job  load {row['load']}")
    return row


def summary(rows):
    by = {}
    for r in rows:
        by.setdefault(r["variant"], []).append(r)
    med = {v: dict(rate=statistics.median(x["jobs_per_s"] for x in rs),
                   cpu=statistics.median(x["server_us_per_job"] for x in rs),
                   tot=statistics.median(x["server_us_per_job"] + x["client_us_per_job"] for x in rs),
                   load=statistics.median(x["load"] for x in rs), n=len(rs)) for v, rs in by.items()}
    lines = ["| variant | runs | jobs/s (median) | vs ref | server CPU µs/job | vs ref | load |",
             "|---|---|---|---|---|---|---|"]
    for v in [v for v in ALL.split() if v in med]:
        ref = med.get("plain" if not v.startswith("e") else ("eb_plain" if v.startswith("eb") else "e1_plain"))
        m = med[v]
        rr = f"{100 * m['rate'] / ref['rate']:.0f} %" if ref else ""
        rc = f"{100 * ref['cpu'] / m['cpu']:.0f} %" if ref else ""
        lines.append(f"| {v} | {m['n']} | {m['rate']:.0f} | {rr} | {m['cpu']:.1f} | {rc} | {m['load']} |")
    lines.append("(vs ref: rate over the reference's, and the reference's CPU per job over this one's:"
                 " both 100 % = as cheap as plain; references plain, eb_plain, e1_plain)")
    return "\n".join(lines)


# ---- fairness ------------------------------------------------------------------

def fair():
    url = db_url("sfq_tags")
    enq_many = sfq_batch(ST["st_enqueue_many_nokey"])
    enq_one = sfq_one(ST["st_enqueue"])
    with open(os.path.join(SDIR, "claim_sfq.sql")) as f:
        claim = "\n".join(ln for ln in f.read().split("\n") if not ln.startswith("--"))
    claim = extract.params(claim, {**claim_params("q"), 1: "'w'"})
    done = ("UPDATE jobd.jobs SET status = 'succeeded', finished_at = clock_timestamp()"
            " WHERE queue = 'q' AND status = 'running';\n")

    def many(grps):
        k = len(grps)
        arr = lambda e: f"(SELECT array_agg({e}) FROM generate_series(1, {k}) i)"  # noqa
        nul = lambda t: f"(array_fill(NULL::{t}, ARRAY[{k}]))"  # noqa
        g = "ARRAY[" + ",".join(f"'{x}'" for x in grps) + "]::text[]"
        return extract.params(enq_many, {1: "NULL", 2: arr("'noop'::text"), 3: arr("'{}'::json"),
                                         4: arr("'q'::text"), 5: arr("0"), 6: nul("bigint"), 7: arr("25"),
                                         8: nul("bigint"), 9: nul("text"), 10: nul("bigint"), 11: "NULL",
                                         12: "NULL", 13: nul("text"), 14: g}) + ";\n"

    def one(g):
        return extract.params(enq_one, {1: "'noop'", 2: "'{}'", 3: "'q'", 4: "0", 5: "NULL", 6: "25",
                                        7: "NULL", 8: "NULL", 9: "NULL", 10: "NULL", 11: "NULL",
                                        12: "NULL", 13: f"'{g}'"}) + ";\n"

    reset = "TRUNCATE jobd.jobs, jobd.job_groups, jobd.stats_buckets, jobd.queues CASCADE;\n"
    res = {}
    # 1. one group of 100,000 (100 batches of 1,000), then 100 groups of 1 enqueued one at a
    # time; claim 10 at a time (with completion) until the 100 have started
    sql = reset + "".join(many(["big"] * 1000) for _ in range(100))
    sql += "".join(one(f"s{i:03d}") for i in range(100))
    sql += "\\o /dev/null\n" + (claim + ";\n" + done) * 15 + "\\o\n"
    sql += ("SELECT count(*) FILTER (WHERE grp = 'big' AND started_at < (SELECT max(started_at)"
            " FROM jobd.jobs WHERE grp LIKE 's%')), count(*) FILTER (WHERE grp LIKE 's%' AND"
            " started_at IS NOT NULL) FROM jobd.jobs;\n")
    big_before, small = psql(url, sql, capture=True).split("\n")[-1].split("|")
    res["promise"] = dict(big_started_before_last_small=int(big_before), small_started=int(small))
    # 2. a small group enqueueing k jobs a cycle while a 100,000-job group drains (claim 10 a
    # cycle): each small job's wait, in jobs of the big group started between its enqueue and its start
    for k in (1, 5, 20):
        sql = reset + "".join(many(["big"] * 1000) for _ in range(100)) + "\\o /dev/null\n"
        for _ in range(100):
            sql += "".join(one("small") for _ in range(k)) + claim + ";\n" + done
        sql += "\\o\n"
        sql += ("SELECT count(*), max(w), round(avg(w), 1), (SELECT count(*) FROM jobd.jobs WHERE grp = 'big'"
                " AND started_at IS NOT NULL) FROM (SELECT s.id, (SELECT count(*) FROM jobd.jobs b"
                " WHERE b.grp = 'big' AND b.started_at > s.created_at AND b.started_at <= s.started_at) w"
                " FROM jobd.jobs s WHERE s.grp = 'small' AND s.started_at IS NOT NULL) x;\n")
        started, mx, avg, big = psql(url, sql, capture=True).split("\n")[-1].split("|")
        res[f"small_k{k}"] = dict(small_enqueued=100 * k, small_started=int(started), max_wait_big_jobs=mx,
                                  avg_wait_big_jobs=avg, big_started=int(big))
    print(json.dumps(dict(fairness=res)), flush=True)
    with open(OUT, "a") as f:
        f.write(json.dumps(dict(fairness=res)) + "\n")
    log(json.dumps(res, indent=1))


def setup():
    for db in ("sfq_today", "sfq_tags"):
        if not psql(BASE, f"SELECT 1 FROM pg_database WHERE datname = '{db}'", capture=True):
            psql(BASE, f'CREATE DATABASE "{db}"')
            subprocess.run([os.environ.get("JOBD_BIN", os.path.join(ROOT, "build-asan/jobd")),
                            "migrate", "--db", db_url(db)], check=True, capture_output=True)
            if db == "sfq_tags":
                with open(os.path.join(SDIR, "schema_sfq.sql")) as f:
                    psql(db_url(db), f.read())


if __name__ == "__main__":
    ST = statements()
    SCRIPTS = scripts()
    PM = pm_pid()
    setup()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    if "--dump" in sys.argv:
        for v, (db, s) in SCRIPTS.items():
            print(f"-- {v} ({db})\n{s}")
        sys.exit(0)
    if "--fair-only" not in sys.argv:
        rows = []
        for rnd in range(ROUNDS):
            order = VARIANTS[rnd % len(VARIANTS):] + VARIANTS[:rnd % len(VARIANTS)]
            log(f"round {rnd + 1}/{ROUNDS}")
            for v in order:
                rows.append(run(v, rnd))
        s = summary(rows)
        log(s)
        with open(OUT.replace(".jsonl", ".md"), "w") as f:
            f.write(s + "\n")
    if "--fair" in sys.argv or "--fair-only" in sys.argv:
        fair()
