#!/usr/bin/env python3
"""The SQL ceiling of jobd itself beside the seed design's ceiling B, measured
the same way, interleaved, on one server.

jobd's ceiling: pgbench running the very statements a jobd worker sends per
batch (bench/sql/extract.py pulls the worker's claim, st_claim_types_run, and
its completion, st_complete_batch, out of src/store/pg/read.c and
pg/report.c), on jobd's own schema, with no scheduler around them, in a
session set as the worker's loop sets its own (enable_bitmapscan off,
pg_op_offload). Ceiling B: the shared harness's variant_b.pgbench on the seed
design's schema, run by that harness's own code (bench/harness/sql/
ceiling.py: run_variant), so both are measured by one procedure: seed CEIL_N
due pending no-op jobs (one INSERT ... SELECT, VACUUM ANALYZE, CHECKPOINT),
run pgbench (-M prepared -j 2) for just enough transactions to drain the
table, check from the table that every job ended succeeded, print one JSON
line: jobs/s = succeeded rows / wall-clock seconds of the pgbench run.

One pgbench run of each is too noisy to hold the two against each other (a
checkpoint or a neighbour's burst in one 5-second run moved the ratio from
97 % to 71 % between two runs of `make bench`), so for each repetition and
client count both run back to back, B first in odd repetitions and jobd first
in even ones, CEIL_REPS times, and each run empties its table when counted,
so that autovacuum does not clean up after one during the next.
bench/report.py takes the median of each at each client count and the best
client count of each, and their ratio.

Env: BENCH_PG_URL (postgres://postgres@127.0.0.1:55432/postgres), JOBD_BIN
(build/jobd, for `jobd migrate`), CEIL_N (200000), CEIL_CLIENTS ("4 8"),
CEIL_BATCH (100: the claim limit, as B's), CEIL_REPS (3), CEIL_B (1; 0 = jobd's
statements only), CEIL_TIMEOUT_S (300). Stdlib only.
"""

import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
sys.path.insert(0, os.path.join(ROOT, "bench/harness/sql"))
import ceiling as seed  # noqa: E402  (the shared harness's ceiling.py)

JOBD = os.environ.get("JOBD_BIN", os.path.join(ROOT, "build/jobd"))
BATCH = int(os.environ.get("CEIL_BATCH", "100"))
REPS = int(os.environ.get("CEIL_REPS", "3"))
WITH_B = os.environ.get("CEIL_B", "1") != "0"
N = seed.N
# The worker's loop connection plans its claim with bitmap scans off (pg_op_offload).
SESSION = "-c enable_bitmapscan=off"


def one_run(url, script, c, rep, ver):
    t = math.ceil(N / BATCH / c * 1.01) + 1
    args = ["-c", str(c), "-j", "2", "-t", str(t), "-D", f"batch={BATCH}", "-D", "lease_ms=60000",
            "-D", "types={noop}", "-f", script]
    base = dict(system="sql-ceiling", bench="ceiling", backend="pg",
                variant=f"jobd's own statements: st_claim_types_run LIMIT {BATCH} + st_complete_batch",
                version=f"PostgreSQL {ver}",
                durability="PostgreSQL commit, fsync on every commit (synchronous_commit=on)",
                mode="throughput", n=N, concurrency=c, rep=rep,
                settings=dict(pgbench="-n -M prepared " + " ".join(args[:-1]) + " jobd_cycle.pgbench",
                              session=f"PGOPTIONS='{SESSION}'", claim_batch=BATCH))
    try:
        seed.psql(url, "-c", "TRUNCATE jobd.jobs, jobd.jobs_done, jobd.job_keys RESTART IDENTITY",
                  "-c", "INSERT INTO jobd.jobs (type, payload, run_at) SELECT 'noop', "
                        "json_build_object('i', g), now() - interval '1 hour' + g * interval "
                        f"'1 microsecond' FROM generate_series(1, {N}) g",
                  "-c", "VACUUM ANALYZE jobd.jobs", "-c", "CHECKPOINT")
        os.environ["PGOPTIONS"] = SESSION
        try:
            r = seed.pgbench(url, args)
        finally:
            del os.environ["PGOPTIONS"]
        # every finished row, wherever the store keeps it (jobs_done, or jobs in place)
        done = int(seed.psql(url, "-Atc", "select count(*) from jobd.all_jobs where status = 'succeeded'",
                             capture=True))
        left = N - done
        # nothing left for autovacuum to do during the next run (B's, or ours)
        seed.psql(url, "-c", "TRUNCATE jobd.jobs, jobd.jobs_done, jobd.job_keys, jobd.stats_buckets")
        line = dict(base, process_jobs_per_s=round(done / r["wall"]), process_s=round(r["wall"], 3),
                    completed=done, not_completed=left, pgbench_tps=round(r["tps"], 1),
                    latency_avg_ms=r["latency_avg_ms"], cpu=r["cpu"],
                    notes="each statement autocommits (synchronous_commit=on); jobs/s = succeeded "
                          "rows / wall time of pgbench; statements generated from "
                          "src/store/pg/*.c by bench/sql/extract.py; interleaved with ceiling B")
        if done != N:
            line["error"] = f"{done} of {N} jobs succeeded, {left} not"
        seed.emit(line)
        seed.log(f"jobd ceiling c={c} rep {rep}: {round(done / r['wall'])} jobs/s")
    except Exception as e:  # record and move on
        seed.emit(dict(base, error=str(e)))
        seed.log(f"jobd ceiling c={c} rep {rep}: ERROR {e}")


def main():
    url = seed.ensure_db("bench_jobd_sql")
    subprocess.run([JOBD, "migrate", "--db", url], check=True, capture_output=True, timeout=seed.TIMEOUT)
    script = os.path.join(os.environ.get("CEIL_TMP", "/tmp"), "jobd_cycle.pgbench")
    subprocess.run([sys.executable, os.path.join(HERE, "extract.py"), "--src", ROOT, "--out", script],
                   check=True, timeout=seed.TIMEOUT)
    url_b = seed.prepare() if WITH_B else None
    ver = seed.server_version()
    for rep in range(1, REPS + 1):
        for c in seed.CLIENTS:
            runs = [lambda: one_run(url, script, c, rep, ver)]
            if WITH_B:
                b = lambda: seed.run_variant(url_b, "b", c, rep, ver, bench="ceiling",
                                             interleaved="with jobd's own statements")
                runs = [b] + runs if rep % 2 else runs + [b]
            for run in runs:
                run()


if __name__ == "__main__":
    main()
