#!/usr/bin/env python3
"""The SQL ceiling of jobd itself: pgbench running the very statements a jobd
worker sends per batch (bench/sql/extract.py pulls them out of
src/store/store_pg_read.c and store_pg_report.c), on jobd's own schema, with
no scheduler around them.

Run like bench/harness/sql/ceiling.py, so the two ceilings are comparable:
for each client count, seed CEIL_N due pending no-op jobs (one INSERT ...
SELECT, VACUUM ANALYZE, CHECKPOINT), run pgbench (-M prepared -j 2) for just
enough transactions to drain the table, check from the tables that every job
ended succeeded in jobd.jobs_done, and print one JSON line: jobs/s =
succeeded rows / wall-clock seconds of the pgbench run.

Env: BENCH_PG_URL (postgres://postgres@127.0.0.1:55432/postgres), JOBD_BIN
(build/jobd, for `jobd migrate`), CEIL_N (200000), CEIL_CLIENTS ("4 8"),
CEIL_BATCH (100: the claim limit, = a worker's free slots), REPS (1),
CEIL_TIMEOUT_S (300). Stdlib only.
"""

import json
import math
import os
import re
import subprocess
import sys
import time
from urllib.parse import urlsplit, urlunsplit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
BASE = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:55432/postgres")
JOBD = os.environ.get("JOBD_BIN", os.path.join(ROOT, "build/jobd"))
N = int(os.environ.get("CEIL_N", "200000"))
CLIENTS = [int(c) for c in os.environ.get("CEIL_CLIENTS", "4 8").split()]
BATCH = int(os.environ.get("CEIL_BATCH", "100"))
REPS = int(os.environ.get("REPS", "1"))
TIMEOUT = int(os.environ.get("CEIL_TIMEOUT_S", "300"))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def db_url(name):
    u = urlsplit(BASE)
    return urlunsplit((u.scheme, u.netloc, "/" + name, u.query, u.fragment))


def psql(url, *args):
    r = subprocess.run([f"{PGBIN}/psql", url, "-X", "-q", "-v", "ON_ERROR_STOP=1", *args],
                       check=True, text=True, capture_output=True, timeout=TIMEOUT)
    return r.stdout


def ticks_of(comm):
    t = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/comm") as f:
                if f.read().strip() != comm:
                    continue
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2:].split()
        t += sum(int(x) for x in fields[11:15])
    return t


def emit(obj):
    print(json.dumps(obj), flush=True)


def main():
    name = "bench_jobd_sql"
    if not psql(BASE, "-Atc", f"select 1 from pg_database where datname = '{name}'").strip():
        psql(BASE, "-c", f'create database "{name}"')
    url = db_url(name)
    subprocess.run([JOBD, "migrate", "--db", url], check=True, capture_output=True, timeout=TIMEOUT)
    script = os.path.join(os.environ.get("CEIL_TMP", "/tmp"), "jobd_cycle.pgbench")
    subprocess.run([sys.executable, os.path.join(HERE, "extract.py"), "--src", ROOT, "--out", script],
                   check=True, timeout=TIMEOUT)
    ver = psql(BASE, "-Atc", "show server_version").strip()
    for c in CLIENTS:
        t = math.ceil(N / BATCH / c * 1.01) + 1
        for rep in range(1, REPS + 1):
            base = dict(system="sql-ceiling", bench="ceiling", backend="pg",
                        variant=f"jobd's own statements: st_claim_any LIMIT {BATCH} + st_complete_batch",
                        version=f"PostgreSQL {ver}",
                        durability="PostgreSQL commit, fsync on every commit (synchronous_commit=on)",
                        mode="throughput", n=N, concurrency=c, rep=rep,
                        settings=dict(pgbench=f"-n -M prepared -c {c} -j 2 -t {t} -D batch={BATCH} "
                                               f"-D lease_ms=60000 -D types={{noop}} -f jobd_cycle.pgbench",
                                      claim_batch=BATCH))
            try:
                psql(url, "-c", "TRUNCATE jobd.jobs, jobd.jobs_done, jobd.job_keys RESTART IDENTITY",
                     "-c", "INSERT INTO jobd.jobs (type, payload, run_at) SELECT 'noop', "
                           "json_build_object('i', g), now() - interval '1 hour' + g * interval "
                           f"'1 microsecond' FROM generate_series(1, {N}) g",
                     "-c", "VACUUM ANALYZE jobd.jobs", "-c", "CHECKPOINT")
                s0 = ticks_of("postgres")
                t0 = time.monotonic()
                r = subprocess.run([f"{PGBIN}/pgbench", "-n", "-M", "prepared", "-c", str(c), "-j", "2",
                                    "-t", str(t), "-D", f"batch={BATCH}", "-D", "lease_ms=60000",
                                    "-D", "types={noop}", "-f", script, url],
                                   text=True, capture_output=True, timeout=TIMEOUT)
                wall = time.monotonic() - t0
                time.sleep(0.3)  # let the postmaster reap the backends (their CPU shows in its cutime)
                s1 = ticks_of("postgres")
                if r.returncode != 0:
                    raise RuntimeError(f"pgbench failed ({r.returncode}): {r.stderr.strip()[-500:]}")
                done = int(psql(url, "-Atc", "select count(*) from jobd.jobs_done where status = 'succeeded'"))
                left = int(psql(url, "-Atc", "select count(*) from jobd.jobs"))
                tps = float(re.search(r"tps = ([\d.]+)", r.stdout).group(1))
                lat = re.search(r"latency average = ([\d.]+) ms", r.stdout)
                line = dict(base, process_jobs_per_s=round(done / wall), process_s=round(wall, 3),
                            completed=done, not_completed=left, pgbench_tps=round(tps, 1),
                            latency_avg_ms=float(lat.group(1)) if lat else None,
                            cpu=dict(server_pct=round(100 * (s1 - s0) / CLK_TCK / wall, 1)),
                            notes="each statement autocommits (synchronous_commit=on); jobs/s = "
                                  "succeeded rows in jobd.jobs_done / wall time of pgbench; statements "
                                  "generated from src/store/store_pg_*.c by bench/sql/extract.py")
                if done != N:
                    line["error"] = f"{done} of {N} jobs succeeded, {left} left in jobd.jobs"
                emit(line)
                log(f"jobd ceiling c={c} rep {rep}: {round(done / wall)} jobs/s")
            except Exception as e:  # record and move on
                emit(dict(base, error=str(e)))
                log(f"jobd ceiling c={c} rep {rep}: ERROR {e}")


if __name__ == "__main__":
    main()
