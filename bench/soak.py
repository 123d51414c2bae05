#!/usr/bin/env python3
"""bench/soak.py — jobd under steady churn for minutes (`make soak-perf`): does
anything decay?

A throughput figure says how fast jobd is for 20,000 jobs; it cannot say
whether the store keeps that pace while rows churn for half an hour (dead
tuples, index bloat, a hot table that fills with finished rows, an archive
pass that falls behind). So this runs one `jobd server` (the scheduling
plane: reaper, archive pass, retention) and one C-handler worker
(`jobd_bench cworker`) on a throwaway PostgreSQL (bench/harness/pg.sh) and
offers a steady load at a fraction of the measured capacity, a mix of:

  immediate   no-op jobs due now                          (70 %)
  delayed     no-op jobs due 30 s later                   (15 %)
  failing     jobs whose handler fails: retried once, dead (10 %, max_attempts 2)
  cancelled   jobs due 60 s later, cancelled after ~1 s   (5 %)

Capacity is measured first (SOAK_CAPACITY overrides it): the same server and
worker processing SOAK_PROBE_N immediate jobs while they are being enqueued
through the API, as fast as the generator can, so it counts both halves. Every
SOAK_SAMPLE_S (60) it samples: jobs finished per second, the p99 claim
latency of jobs started in the interval (started_at minus the later of
run_at and created_at), table and index sizes of jobd.jobs and
jobd.jobs_done, dead tuples, and jobs still pending that were due over 10 s
ago. At the end it prints one JSON line per sample and a summary line with
the least-squares slope of each series per minute and its change over the
run relative to the mean, the same change over the steady part only (from
SOAK_WARMUP_MIN on: the tables start empty and take minutes to reach the size
the churn keeps them at), and checks that nothing was lost (every offered
job is accounted for: succeeded, dead, cancelled, or pending not yet due).

Env: SOAK_MIN (30), SOAK_FRACTION (0.5), SOAK_CAPACITY (measured),
SOAK_SAMPLE_S (60), SOAK_PROBE_N (60000), SOAK_CONCURRENCY (10),
SOAK_WARMUP_MIN (a third of SOAK_MIN), JOBD_BIN (build-bench/jobd), JOBD_BENCH_BIN (build-bench/jobd_bench),
BENCH_PG_PORT (55434), BENCH_PG_DIR (/tmp/jobd-soak-pg), SOAK_OUT (a
directory for the JSON lines (soak.jsonl, also on stdout), the logs and
PostgreSQL's per-table and per-index statistics at the end
(pg-stats-at-end.txt); default bench/results/soak-<UTC>), SOAK_TRACE_S (0 =
off; else every that many seconds one line in trace.jsonl: dead tuples,
vacuum counts, the heap's and indexes' sizes of jobd.jobs, and the oldest
transaction's age and statement: what holds vacuum back when the sizes step),
SOAK_PG_SETTINGS (harness = the shared harness's cluster as bench/harness/pg.sh
makes it; recommended = that plus the settings docs/OPERATIONS.md section 4
recommends for jobd: PG_RECOMMENDED below).
Stdlib only.
"""

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
JOBD = os.environ.get("JOBD_BIN", os.path.join(ROOT, "build-bench/jobd"))
JB = os.environ.get("JOBD_BENCH_BIN", os.path.join(ROOT, "build-bench/jobd_bench"))
MINUTES = float(os.environ.get("SOAK_MIN", "30"))
FRACTION = float(os.environ.get("SOAK_FRACTION", "0.5"))
SAMPLE_S = float(os.environ.get("SOAK_SAMPLE_S", "60"))
PROBE_N = int(os.environ.get("SOAK_PROBE_N", "60000"))
CONC = os.environ.get("SOAK_CONCURRENCY", "10")
WARMUP_MIN = float(os.environ.get("SOAK_WARMUP_MIN", str(MINUTES / 3)))
PORT = os.environ.get("BENCH_PG_PORT", "55434")
OUT = os.environ.get("SOAK_OUT") or os.path.join(
    ROOT, "bench/results", "soak-" + time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))
TRACE_S = float(os.environ.get("SOAK_TRACE_S", "0"))
PG_SETTINGS = os.environ.get("SOAK_PG_SETTINGS", "harness")
# docs/OPERATIONS.md, section 4, "What to set on the server"
PG_RECOMMENDED = (("autovacuum_naptime", "10s"), ("autovacuum_vacuum_cost_limit", "2000"),
                  ("wal_compression", "on"), ("max_wal_size", "4GB"))
MIX = (("immediate", 0.70), ("delayed", 0.15), ("failing", 0.10), ("cancelled", 0.05))


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, file=sys.stderr, flush=True)


def psql(url, sql):
    r = subprocess.run([f"{PGBIN}/psql", url, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       check=True, text=True, capture_output=True, timeout=120)
    return r.stdout.strip()


def http(api, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(api + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null")


def start(args, logname):
    f = open(os.path.join(OUT, logname), "w")
    return subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT)


def start_server(url):
    logf = os.path.join(OUT, "server.log")
    p = start([JOBD, "server", "--db", url, "--listen", "127.0.0.1:0", "--access-log", "off"],
              "server.log")
    for _ in range(200):
        m = re.search(r"listening on (http://\S+)", open(logf).read())
        if m:
            return p, m.group(1)
        time.sleep(0.05)
    raise RuntimeError("jobd server did not start (see server.log)")


def stop(p):
    if p and p.poll() is None:
        p.terminate()
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()


def enqueue(api, kind, n, now_s):
    jobs = []
    for _ in range(n):
        j = {"type": "noop", "payload": {}}
        if kind == "delayed":
            j["in"] = "30s"
        elif kind == "failing":
            j.update(payload={"fail": True}, max_attempts=2)
        elif kind == "cancelled":
            j["in"] = "60s"
        jobs.append(j)
    ids = []
    for i in range(0, len(jobs), 1000):
        r = http(api, "POST", "/v1/jobs/batch", {"jobs": jobs[i:i + 1000]})
        ids += [j["id"] for j in r["jobs"]]
    return ids


def cancel(api, ids):
    """One bulk request per batch: a request per job would cap the generator."""
    if ids:
        http(api, "POST", "/v1/jobs/bulk",
             {"action": "cancel", "filter": {"ids": ids}, "limit": len(ids)})


def capacity(url, api):
    """Jobs/s the machine sustains enqueueing and processing at once, as in the soak.

    The worker runs while the probe's jobs go in through the API, so the rate
    counts both halves of the work. A probe that enqueued first and processed
    after measured processing alone, about twice what the machine sustains
    with the generator running: half of it saturated the worker (claim p99
    over a minute, a million jobs overdue within 8 minutes, run of 21:16).
    """
    if os.environ.get("SOAK_CAPACITY"):
        return float(os.environ["SOAK_CAPACITY"])
    w = start([JB, "cworker", "--db", url, "--concurrency", CONC], "probe-worker.log")
    t0 = time.monotonic()
    for i in range(0, PROBE_N, 1000):
        enqueue(api, "immediate", min(1000, PROBE_N - i), time.time())
    while int(psql(url, "select count(*) from jobd.all_jobs where status = 'succeeded'")) < PROBE_N:
        if time.monotonic() - t0 > 300:
            raise RuntimeError("the capacity probe did not finish in 300 s")
        time.sleep(0.1)
    rate = PROBE_N / (time.monotonic() - t0)
    stop(w)
    return rate


# jobs_done is partitioned since schema version 38 (by day, then status): its
# sizes are its leaves'; other_b is every other table of the schema with its
# indexes and TOAST (events, stats, attempts, keys...), which must stay flat too.
# No part of the sample reads all finished jobs: a statement that does holds
# one snapshot for seconds, and VACUUM cannot clean jobd.jobs behind it (the
# first v38 soak's count of all_jobs took 8 s a minute). Jobs finished come
# from the leaves' insert counters; the claim p99 (claim_p99) reads the jobs
# enqueued in the last 3 minutes' ids at the offered rate (the delayed jobs
# start 30 s after their enqueue, retries seconds after their failure), in
# ranges of CLAIM_CHUNK ids, each its own statement and snapshot: read at
# once, the minute's half a million rows held one snapshot 2.7 s, and the
# soak of 2026-12-08 00:13 saw jobd.jobs' heap and indexes step up in the
# minutes where that snapshot kept VACUUM from cleaning (SOAK_TRACE_S).
SAMPLE_SQL = """
with done_leaves as (select relid from pg_partition_tree('jobd.jobs_done') where isleaf)
select (select coalesce(sum(n_tup_ins), 0) from pg_stat_user_tables
      where relid in (select relid from done_leaves)),
  pg_relation_size('jobd.jobs'), pg_indexes_size('jobd.jobs'),
  (select coalesce(sum(pg_relation_size(relid)), 0) from done_leaves),
  (select coalesce(sum(pg_indexes_size(relid)), 0) from done_leaves),
  (select coalesce(sum(n_dead_tup), 0) from pg_stat_user_tables
      where relid = 'jobd.jobs'::regclass or relid in (select relid from done_leaves)),
  (select count(*) from jobd.jobs where status = 'pending' and run_at < now() - interval '10 s'),
  (select count(*) from jobd.jobs where status = 'succeeded'),
  (select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c
      where c.relnamespace = 'jobd'::regnamespace and c.relkind = 'r'
      and c.oid <> 'jobd.jobs'::regclass and c.oid not in (select relid from done_leaves))
"""
FIELDS = ("finished", "jobs_heap_b", "jobs_idx_b", "done_heap_b", "done_idx_b",
          "dead_tuples", "overdue_pending", "succeeded_unarchived", "other_b")


CLAIM_CHUNK = 40000
CLAIM_SQL = (
    "set max_parallel_workers_per_gather = 0;"
    " select floor(extract(epoch from started_at - greatest(run_at, created_at)) * 10000)::bigint,"
    " count(*) from jobd.all_jobs where id > {lo} and id <= {hi}"
    " and started_at >= to_timestamp({since}) group by 1")


def claim_p99(url, floor, top, since):
    """p99 claim latency (ms, nearest rank at 0.1 ms) of the jobs of ids
    (floor, top] started since the epoch second `since`."""
    hist = {}
    for lo in range(max(floor, 0), top, CLAIM_CHUNK):
        out = psql(url, CLAIM_SQL.format(lo=lo, hi=min(lo + CLAIM_CHUNK, top), since=since))
        for line in out.splitlines():
            k, n = line.split("|")
            hist[int(k)] = hist.get(int(k), 0) + int(n)
    total = sum(hist.values())
    if total == 0:
        return 0.0
    rank, seen = max(1, -(-99 * total // 100)), 0
    for k in sorted(hist):
        seen += hist[k]
        if seen >= rank:
            return k / 10.0
    return 0.0


def slope(xs, ys):
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    d = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / d if d else 0.0


def changes(samples, key):
    """(slope per minute, change over the span relative to the mean, in %)."""
    t = [s["t_min"] for s in samples]
    ys = [s[key] for s in samples]
    b = slope(t, ys)
    mean = sum(ys) / len(ys) if ys else 0
    span = (t[-1] - t[0]) if len(t) > 1 else 0
    return b, (round(100 * b * span / mean, 1) if mean else 0.0)


def summarize(samples, rate, offered):
    steady = [s for s in samples if s["t_min"] >= WARMUP_MIN]
    out = {"bench": "soak", "minutes": MINUTES, "offered_per_s": round(rate, 1),
           "offered": offered, "samples": len(samples), "slopes_per_min": {}, "change_pct": {},
           "warmup_min": WARMUP_MIN, "change_pct_steady": {}}
    for k in ("rate", "claim_p99_ms", "jobs_heap_b", "jobs_idx_b", "done_heap_b", "done_idx_b",
              "dead_tuples", "overdue_pending", "succeeded_unarchived", "other_b"):
        b, pct = changes(samples, k)
        out["slopes_per_min"][k] = round(b, 3)
        out["change_pct"][k] = pct
        if len(steady) > 1:
            out["change_pct_steady"][k] = changes(steady, k)[1]
    return out


PG_STATS_SQL = (
    "select relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_dead_tup, vacuum_count,"
    " autovacuum_count from pg_stat_user_tables where schemaname = 'jobd' order by relname;"
    " select indexrelname, idx_scan, idx_tup_read, idx_tup_fetch,"
    " pg_size_pretty(pg_relation_size(indexrelid)) from pg_stat_user_indexes"
    " where relname = 'jobs' order by idx_tup_read desc;"
    " select checkpoints_timed, checkpoints_req, buffers_checkpoint from pg_stat_bgwriter")


TRACE_SQL = (
    "select round(extract(epoch from clock_timestamp())::numeric, 1), t.n_dead_tup,"
    " t.vacuum_count, t.autovacuum_count, pg_relation_size('jobd.jobs'),"
    " pg_indexes_size('jobd.jobs'),"
    " coalesce((select round(extract(epoch from clock_timestamp() - min(xact_start))::numeric, 2)"
    "   from pg_stat_activity where backend_xmin is not null and pid <> pg_backend_pid()), 0),"
    " coalesce((select left(regexp_replace(query, '\\s+', ' ', 'g'), 80) from pg_stat_activity"
    "   where backend_xmin is not null and pid <> pg_backend_pid()"
    "   order by xact_start limit 1), '')"
    " from pg_stat_user_tables t where t.schemaname = 'jobd' and t.relname = 'jobs'")
TRACE_FIELDS = ("t", "dead", "vacuums", "autovacuums", "heap_b", "idx_b", "oldest_xact_s",
                "oldest_query")


def trace(url, stop):
    """SOAK_TRACE_S: the vacuum's view, one line every TRACE_S into trace.jsonl."""
    with open(os.path.join(OUT, "trace.jsonl"), "a") as f:
        while not stop.wait(TRACE_S):
            try:
                v = psql(url, TRACE_SQL).split("|", len(TRACE_FIELDS) - 1)
            except subprocess.SubprocessError:
                continue
            row = {k: (x if k == "oldest_query" else float(x or 0)) for k, x in zip(TRACE_FIELDS, v)}
            f.write(json.dumps(row) + "\n")
            f.flush()


def run():
    os.makedirs(OUT, exist_ok=True)
    env = dict(os.environ, BENCH_PG_PORT=PORT,
               BENCH_PG_DIR=os.environ.get("BENCH_PG_DIR", "/tmp/jobd-soak-pg"))
    base = subprocess.run([os.path.join(ROOT, "bench/harness/pg.sh"), "start"], env=env,
                          check=True, text=True, capture_output=True).stdout.strip()
    url = base.rsplit("/", 1)[0] + "/soak"
    if PG_SETTINGS == "recommended":
        for k, v in PG_RECOMMENDED:
            psql(base, f"alter system set {k} = '{v}'")
        psql(base, "select pg_reload_conf()")
    elif PG_SETTINGS != "harness":
        raise SystemExit(f"SOAK_PG_SETTINGS must be harness or recommended, not {PG_SETTINGS!r}")
    psql(base, "drop database if exists soak")
    psql(base, "create database soak")
    subprocess.run([JOBD, "migrate", "--db", url], check=True, capture_output=True)
    server = worker = None
    trace_stop = threading.Event()
    try:
        server, api = start_server(url)
        rate = FRACTION * capacity(url, api)
        psql(url, "truncate jobd.jobs, jobd.jobs_done, jobd.job_keys, jobd.job_attempts")
        log(f"offering {rate:.0f} jobs/s for {MINUTES} min ({FRACTION:.0%} of capacity)")
        worker = start([JB, "cworker", "--db", url, "--concurrency", CONC], "worker.log")
        samples, offered, cancel_later = [], 0, []
        if TRACE_S > 0:
            threading.Thread(target=trace, args=(url, trace_stop), daemon=True).start()
        t0 = time.monotonic()
        # the leaves' insert counters count the capacity probe's jobs too
        done0 = float(psql(url, SAMPLE_SQL).split("|")[0])
        next_sample, prev = t0 + SAMPLE_S, (done0, t0)
        credit, last = 0.0, t0
        while time.monotonic() - t0 < MINUTES * 60:
            tick = time.monotonic()
            # by the time passed, so a slow tick is made up by the next ones
            credit += rate * (tick - last)
            last = tick
            n, credit = int(credit), credit - int(credit)
            for kind, share in MIX:
                k = sum(random.random() < share for _ in range(n)) if n < 50 else round(n * share)
                if k:
                    ids = enqueue(api, kind, k, time.time())
                    offered += k
                    if kind == "cancelled":
                        cancel_later.append((tick + 1.0, ids))
            while cancel_later and cancel_later[0][0] <= tick:
                cancel(api, cancel_later.pop(0)[1])
            if tick >= next_sample:
                top = int(psql(url, "select coalesce(max(id), 0) from jobd.jobs") or 0)
                floor = top - int(rate * 180)
                v = psql(url, SAMPLE_SQL).split("|")
                s = dict(zip(FIELDS, (float(x) for x in v)))
                s["claim_p99_ms"] = claim_p99(url, floor, top, time.time() - SAMPLE_S)
                s["t_min"] = round((tick - t0) / 60, 2)
                s["rate"] = round((s["finished"] - prev[0]) / (tick - prev[1]), 1)
                prev = (s["finished"], tick)
                samples.append(s)
                print(json.dumps(s), flush=True)
                with open(os.path.join(OUT, "soak.jsonl"), "a") as f:
                    f.write(json.dumps(s) + "\n")
                next_sample += SAMPLE_S
            time.sleep(max(0.0, 0.2 - (time.monotonic() - tick)))
        for _, ids in cancel_later:
            cancel(api, ids)
        summary = summarize(samples, rate, offered)
        # what the generator managed, which a slow enqueue can hold below the rate asked
        summary["offered_actual_per_s"] = round(offered / (time.monotonic() - t0), 1)
        summary["pg_settings"] = PG_SETTINGS
        counts = dict(tuple(x.split("|")) for x in psql(
            url, "select status, count(*) from jobd.all_jobs group by status").splitlines())
        summary["final_counts"] = {k: int(v) for k, v in counts.items()}
        summary["lost"] = offered - sum(summary["final_counts"].values())
        print(json.dumps(summary), flush=True)
        with open(os.path.join(OUT, "soak.jsonl"), "a") as f:
            f.write(json.dumps(summary) + "\n")
        with open(os.path.join(OUT, "pg-stats-at-end.txt"), "w") as f:
            f.write(subprocess.run([f"{PGBIN}/psql", url, "-X", "-c", PG_STATS_SQL], text=True,
                                   capture_output=True, timeout=120).stdout)
        return 0 if summary["lost"] == 0 else 1
    finally:
        trace_stop.set()
        stop(worker)
        stop(server)
        subprocess.run([os.path.join(ROOT, "bench/harness/pg.sh"), "stop"], env=env,
                       capture_output=True)


if __name__ == "__main__":
    sys.exit(run())
