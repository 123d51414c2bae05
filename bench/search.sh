#!/usr/bin/env bash
# bench/search.sh — GET /v1/jobs?q=TEXT timed at 1,000,000 jobs on SQLite and,
# with BENCH_PG_URL (a server whose user may CREATE DATABASE), on PostgreSQL:
# the figures of docs/BENCHMARKS.md, "Search". The rows (written by SQL, not
# through the API, as tests/integration/test_ui_scale.sh writes them): 900,000
# finished over ten types (every tenth dead, with an error), 100,000 pending,
# each with a payload of ~70 bytes naming a user and an e-mail address, every
# tenth pending job with an idempotency key. Each search is asked five times
# (with the default scan budget, but the last: the largest a caller may ask)
# through curl against a running `jobd server`; the slowest wall time is kept.
#   bench/search.sh build-deb/jobd       (N=1000000 by default; SCAN=N asks that budget)
set -euo pipefail
JOBD=${1:?usage: bench/search.sh JOBD_BINARY}
N=${N:-1000000}
dir=$(mktemp -d /tmp/jobd-benchsearch.XXXXXX)
pid="" pgdb=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    [ -n "$pgdb" ] && psql -qX "$BENCH_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
done_n=$((N * 9 / 10))
now_us=$(($(date +%s%N) / 1000))
step_us=$((3600000000 / N))
payload="'{\"user\":\"u' || i || '\",\"email\":\"user' || i || '@example.org\",\"plan\":\"basic\"}'"

fill_sqlite() {
    "$JOBD" migrate --db "sqlite:$1" >/dev/null
    sqlite3 -bail "$1" >/dev/null <<SQL
PRAGMA journal_mode = WAL;
BEGIN;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $done_n)
INSERT INTO jobs_done (id, queue, type, payload, status, priority, run_at, attempt,
                       max_attempts, worker_id, last_error, created_at, started_at, finished_at)
  SELECT i, 'default', 'mail.t' || (i % 10), $payload,
         CASE WHEN i % 10 = 0 THEN 'dead' ELSE 'succeeded' END, 0, $now_us - ($N - i) * $step_us,
         1, 25, 'w1', CASE WHEN i % 10 = 0 THEN 'smtp: 550 mailbox ' || i || ' unavailable' END,
         $now_us - ($N - i) * $step_us, $now_us - ($N - i) * $step_us, $now_us - ($N - i) * $step_us
    FROM s;
WITH RECURSIVE s(i) AS (SELECT $done_n + 1 UNION ALL SELECT i + 1 FROM s WHERE i < $N)
INSERT INTO jobs (id, queue, type, payload, status, priority, run_at, attempt, max_attempts,
                  idempotency_key, created_at)
  SELECT i, 'default', 'mail.t' || (i % 10), $payload, 'pending', 0,
         $now_us - ($N - i) * $step_us, 0, 25, CASE WHEN i % 10 = 1 THEN 'order-' || i END,
         $now_us - ($N - i) * $step_us
    FROM s;
INSERT INTO job_keys SELECT idempotency_key, id FROM jobs WHERE idempotency_key IS NOT NULL;
COMMIT;
ANALYZE;
SQL
}

fill_pg() {
    "$JOBD" migrate --db "$1" >/dev/null
    local ts="to_timestamp(($now_us - ($N - i) * $step_us) / 1e6)"
    psql -qX "$1" -v ON_ERROR_STOP=1 >/dev/null <<SQL
INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority, run_at, attempt,
                            attempt_floor, max_attempts, cancel_requested, worker_id,
                            last_error, created_at, started_at, finished_at)
  SELECT i, 'default', 'mail.t' || (i % 10), ($payload)::json,
         CASE WHEN i % 10 = 0 THEN 'dead' ELSE 'succeeded' END, 0, $ts, 1, 0, 25, false, 'w1',
         CASE WHEN i % 10 = 0 THEN 'smtp: 550 mailbox ' || i || ' unavailable' END, $ts, $ts, $ts
    FROM generate_series(1::bigint, $done_n) i;
INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at, attempt,
                       max_attempts, idempotency_key, created_at)
  SELECT i, 'default', 'mail.t' || (i % 10), ($payload)::json, 'pending', 0, $ts, 0, 25,
         CASE WHEN i % 10 = 1 THEN 'order-' || i END, $ts
    FROM generate_series($done_n + 1::bigint, $N) i;
SELECT setval('jobd.job_id_seq', $N);
INSERT INTO jobd.job_keys SELECT idempotency_key, id FROM jobd.jobs
  WHERE idempotency_key IS NOT NULL;
VACUUM ANALYZE jobd.jobs;
VACUUM ANALYZE jobd.jobs_done;
SQL
}

measure() { # store label, store URL
    "$JOBD" server --db "$2" --listen 127.0.0.1:0 2>"$dir/server.log" &
    pid=$!
    local url=""
    for _ in $(seq 600); do
        url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/server.log")
        [ -n "$url" ] && break
        sleep 0.1
    done
    printf '| %s | %s | %s | %s |\n' store search answer "slowest of 5 (s)"
    for q in 'q=nowhere-at-all' 'q=user999999@' 'q=order-95' 'q=mailbox%20900&status=dead' \
             'q=example.org' 'q=nowhere-at-all&after=500000' 'q=nowhere-at-all&scan=100000'; do
        local worst=0 t body
        [[ $q == *scan=* ]] || q="$q${SCAN:+&scan=$SCAN}"
        for _ in 1 2 3 4 5; do
            t=$(curl -s -o "$dir/body" -w '%{time_total}' -H 'Host: 127.0.0.1' "$url/v1/jobs?$q")
            worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a) ? b : a }')
        done
        body=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%d jobs, partial %s, next %s" % (len(d["jobs"]), str(d.get("partial")).lower(), d["next"]))' "$dir/body")
        printf '| %s | `%s` | %s | %.3f |\n' "$1" "$q" "$body" "$worst"
    done
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=""
}

fill_sqlite "$dir/jobs.db"
measure SQLite "sqlite:$dir/jobs.db"
if [ -n "${BENCH_PG_URL:-}" ]; then
    pgdb="benchsearch_$$"
    psql -qX "$BENCH_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null
    fill_pg "${BENCH_PG_URL%/*}/$pgdb"
    measure PostgreSQL "${BENCH_PG_URL%/*}/$pgdb"
fi
