#!/usr/bin/env bash
# test_ui_scale.sh — every request the dashboard makes (docs/DASHBOARD.md
# "Fast at size"), timed with 1,000,000 jobs in the store, on SQLite and, under
# scripts/with-pg.sh, on PostgreSQL: each must take under 100 ms of server
# time (the access log's ms=, the slowest of five). The list is that of ui/js/views:
# the overview (queues, the hour of stats), the job list with each filter the
# page offers alone and with a status or queue, a cursor page, find by key, a job
# and its attempts, the schedules with one's next firings and jobs, the workers.
# The rows (900,000 pending or running over ten types and two queues, 100,000
# finished, every tenth pending job with an idempotency key, every thousandth
# made by a schedule) are written by SQL, not through the API. Slow (a minute
# or two per store), so skipped unless JOBD_TEST_SCALE=1; test_ui_plans keeps
# the cheap check (no full scan in any listing's plan) in `make test`.
#   JOBD_TEST_SCALE=1 scripts/with-pg.sh ctest --test-dir build-rel -R ui_scale
set -euo pipefail
[ "${JOBD_TEST_SCALE:-}" = 1 ] || { echo "SKIPPED: set JOBD_TEST_SCALE=1 (minutes)"; exit 77; }
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
N=${JOBD_TEST_SCALE_JOBS:-1000000}
LIMIT_MS=100
TRIES=${JOBD_TEST_SCALE_TRIES:-5}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-uiscale.XXXXXX")
pgdb="uiscale_$$"
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
        psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb" >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -n 20 "$dir/server.log" 2>/dev/null || true; exit 1; }

done_n=$((N / 10))
now_us=$(($(date +%s%N) / 1000))
# Job i (1..N) was made at now - (N - i) * step: the N jobs span the last hour.
step_us=$((3600000000 / N))

fill_sqlite() { # $1: database file
    "$JOBD" migrate --db "$1" >/dev/null || fail "jobd migrate"
    sqlite3 -bail "$1" >/dev/null <<SQL || fail "filling $N jobs in SQLite"
PRAGMA journal_mode = WAL;
BEGIN;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $done_n)
INSERT INTO jobs_done (id, queue, type, payload, status, priority, run_at, attempt,
                       max_attempts, schedule, scheduled_for, worker_id, last_error,
                       created_at, started_at, finished_at)
  SELECT i, CASE WHEN i % 4 = 0 THEN 'q1' ELSE 'default' END, 't' || (i % 10), '{}',
         CASE WHEN i % 100 = 0 THEN 'cancelled' WHEN i % 10 = 0 THEN 'dead' ELSE 'succeeded' END,
         0, $now_us - ($N - i) * $step_us, 1, 25,
         CASE WHEN i % 1000 = 0 THEN 'nightly' END, CASE WHEN i % 1000 = 0 THEN i END,
         'w1', CASE WHEN i % 10 = 0 THEN 'boom' END, $now_us - ($N - i) * $step_us,
         $now_us - ($N - i) * $step_us, $now_us - ($N - i) * $step_us
    FROM s;
WITH RECURSIVE s(i) AS (SELECT $done_n + 1 UNION ALL SELECT i + 1 FROM s WHERE i < $N)
INSERT INTO jobs (id, queue, type, payload, status, priority, run_at, attempt, max_attempts,
                  idempotency_key, schedule, scheduled_for, worker_id, lease_expires_at,
                  created_at, started_at)
  SELECT i, CASE WHEN i % 4 = 0 THEN 'q1' ELSE 'default' END,
         CASE WHEN i = $N THEN 'rare' ELSE 't' || (i % 10) END, '{}',
         CASE WHEN i % 10000 = 0 THEN 'running' ELSE 'pending' END, i % 3,
         $now_us - ($N - i) * $step_us, CASE WHEN i % 10000 = 0 THEN 1 ELSE 0 END, 25,
         CASE WHEN i % 10 = 1 THEN 'k' || i END,
         CASE WHEN i % 1000 = 0 THEN 'nightly' END, CASE WHEN i % 1000 = 0 THEN i END,
         CASE WHEN i % 10000 = 0 THEN 'w1' END,
         CASE WHEN i % 10000 = 0 THEN $now_us + 3600000000 END,
         $now_us - ($N - i) * $step_us,
         CASE WHEN i % 10000 = 0 THEN $now_us END
    FROM s;
INSERT INTO job_keys SELECT idempotency_key, id FROM jobs WHERE idempotency_key IS NOT NULL;
INSERT INTO job_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome, error)
  SELECT id, 1, 'w1', finished_at - 1000, finished_at, 'dead', 'boom' FROM jobs_done
   WHERE status = 'dead';
COMMIT;
ANALYZE;
SQL
}

fill_pg() { # $1: database URL
    "$JOBD" migrate --db "$1" >/dev/null || fail "jobd migrate"
    local ts="to_timestamp(($now_us - ($N - i) * $step_us) / 1e6)"
    psql -qX "$1" -v ON_ERROR_STOP=1 >/dev/null <<SQL || fail "filling $N jobs in PostgreSQL"
INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority, run_at, attempt,
                            attempt_floor, max_attempts, cancel_requested, schedule,
                            scheduled_for, worker_id, last_error, created_at, started_at,
                            finished_at)
  SELECT i, CASE WHEN i % 4 = 0 THEN 'q1' ELSE 'default' END, 't' || (i % 10), '{}',
         CASE WHEN i % 100 = 0 THEN 'cancelled' WHEN i % 10 = 0 THEN 'dead' ELSE 'succeeded' END,
         0, $ts, 1, 0, 25, false, CASE WHEN i % 1000 = 0 THEN 'nightly' END,
         CASE WHEN i % 1000 = 0 THEN to_timestamp(i) END, 'w1',
         CASE WHEN i % 10 = 0 THEN 'boom' END, $ts, $ts, $ts
    FROM generate_series(1::bigint, $done_n) i;
INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at, attempt,
                       max_attempts, idempotency_key, schedule, scheduled_for, worker_id,
                       lease_expires_at, created_at, started_at)
  SELECT i, CASE WHEN i % 4 = 0 THEN 'q1' ELSE 'default' END,
         CASE WHEN i = $N THEN 'rare' ELSE 't' || (i % 10) END, '{}',
         CASE WHEN i % 10000 = 0 THEN 'running' ELSE 'pending' END, i % 3, $ts,
         CASE WHEN i % 10000 = 0 THEN 1 ELSE 0 END, 25,
         CASE WHEN i % 10 = 1 THEN 'k' || i END,
         CASE WHEN i % 1000 = 0 THEN 'nightly' END,
         CASE WHEN i % 1000 = 0 THEN to_timestamp(i) END,
         CASE WHEN i % 10000 = 0 THEN 'w1' END,
         CASE WHEN i % 10000 = 0 THEN now() + interval '1 hour' END, $ts,
         CASE WHEN i % 10000 = 0 THEN now() END
    FROM generate_series($done_n + 1::bigint, $N) i;
SELECT setval('jobd.job_id_seq', $N);
INSERT INTO jobd.job_keys SELECT idempotency_key, id FROM jobd.jobs
  WHERE idempotency_key IS NOT NULL;
INSERT INTO jobd.job_attempts (job_id, attempt, worker_id, started_at, finished_at, outcome,
                               error)
  SELECT id, 1, 'w1', finished_at - interval '1 ms', finished_at, 'dead', 'boom'
    FROM jobd.jobs_done WHERE status = 'dead';
VACUUM ANALYZE jobd.jobs;
VACUUM ANALYZE jobd.jobs_done;
VACUUM ANALYZE jobd.job_keys;
VACUUM ANALYZE jobd.job_attempts;
SQL
}

# RFC 3339 of now - $1 seconds.
ago() { date -u -d "@$(($(date +%s) - $1))" +%Y-%m-%dT%H:%M:%SZ; }

slowest() { # first log line to read: the slowest ms of the request lines after it
    tail -n +"$1" "$dir/server.log" | sed -n 's/.* http: request .* ms=\([0-9.]*\).*/\1/p' |
        sort -g | tail -n 1
}

all_ms() { # the ms of every request line after line $1
    tail -n +"$1" "$dir/server.log" | sed -n 's/.* http: request .* ms=\([0-9.]*\).*/\1/p' |
        tr '\n' ' '
}

run_store() { # $1: store name, $2: --db value
    local t0=$SECONDS
    if [ "$1" = sqlite ]; then fill_sqlite "$2"; else fill_pg "$2"; fi
    echo "$1: filled $N jobs in $((SECONDS - t0)) s"
    : >"$dir/server.log"
    "$JOBD" server --db "$2" --listen 127.0.0.1:0 --access-log all >"$dir/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do grep -qs 'listening on http://' "$dir/server.log" && break; sleep 0.1; done
    url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$dir/server.log" | head -n 1)
    [ -n "$url" ] || fail "$1: the server did not start"
    curl -sf -o /dev/null -X POST "$url/v1/schedules" -H 'Content-Type: application/json' \
        -d '{"name": "nightly", "cron": "0 3 * * *", "type": "t1"}' || fail "POST /v1/schedules"
    # The counts thread's first recount (PostgreSQL; it may take seconds at this size).
    local want=$((N - done_n)) got=
    for _ in $(seq 1 600); do
        got=$(curl -sf "$url/v1/queues" | python3 -c \
            'import json,sys; print(sum(q["pending"] + q["running"] for q in json.load(sys.stdin)["queues"]))')
        [ "$got" = "$want" ] && break
        sleep 0.1
    done
    [ "$got" = "$want" ] || fail "$1: GET /v1/queues counts $got pending or running, want $want"

    local mid=$((N / 2)) old recent
    old=$(ago 3000) recent=$(ago 600)
    local routes=(
        "/v1/whoami" "/v1/queues" "/v1/stats?since=1h&step=1m"
        "/v1/jobs?limit=50"
        "/v1/jobs?status=pending&limit=50" "/v1/jobs?status=running&limit=50"
        "/v1/jobs?status=succeeded&limit=50" "/v1/jobs?status=dead&limit=50"
        "/v1/jobs?status=cancelled&limit=50"
        "/v1/jobs?queue=q1&limit=50" "/v1/jobs?queue=absent&limit=50"
        "/v1/jobs?status=pending&queue=q1&limit=50" "/v1/jobs?status=running&queue=q1&limit=50"
        "/v1/jobs?status=dead&queue=q1&limit=50" "/v1/jobs?status=cancelled&queue=absent&limit=50"
        "/v1/jobs?type=t3&limit=50" "/v1/jobs?type=rare&limit=50" "/v1/jobs?type=absent&limit=50"
        "/v1/jobs?type=t3&status=dead&limit=50" "/v1/jobs?type=t3&queue=q1&limit=50"
        "/v1/jobs?schedule=nightly&limit=50" "/v1/jobs?schedule=absent&limit=50"
        "/v1/jobs?schedule=nightly&status=succeeded&limit=50"
        "/v1/jobs?created_after=$recent&limit=50" "/v1/jobs?created_before=$old&limit=50"
        "/v1/jobs?created_after=$old&created_before=$recent&limit=50"
        "/v1/jobs?status=dead&created_before=$old&limit=50"
        "/v1/jobs?key=k$((mid + 1))&limit=50" "/v1/jobs?key=absent&limit=50"
        "/v1/jobs?after=$mid&limit=50" "/v1/jobs?status=pending&queue=q1&after=$mid&limit=50"
        "/v1/jobs?status=dead&after=$((done_n / 2))&limit=50"
        "/v1/jobs/$mid" "/v1/jobs/$((done_n / 2))" "/v1/jobs/$((done_n / 2))/attempts"
        "/v1/schedules" "/v1/schedules/nightly/next?count=5"
        "/v1/jobs?schedule=nightly&limit=10" "/v1/workers"
    )
    local bad=0 r from ms
    for r in "${routes[@]}"; do
        from=$(($(wc -l <"$dir/server.log") + 1))
        for _ in $(seq 1 "$TRIES"); do curl -sf -o /dev/null "$url$r" || fail "$1: GET $r"; done
        sleep 0.1
        ms=$(slowest "$from")
        printf '%s: %8s ms  GET %s  (all: %s)\n' "$1" "$ms" "$r" "$(all_ms "$from")"
        awk -v v="$ms" -v lim="$LIMIT_MS" 'BEGIN { exit !(v + 0 < lim) }' || bad=1
    done
    kill "$pid" && wait "$pid" 2>/dev/null || true
    pid=
    [ "$bad" = 0 ] || slow_stores="$slow_stores $1"
}
slow_stores=

[ "${JOBD_TEST_SCALE_STORES:-sqlite}" = pg ] || run_store sqlite "$dir/jobd.db"
rm -f "$dir"/jobd.db*
if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null
    run_store postgresql "${JOBD_TEST_PG_URL%/*}/$pgdb"
else
    echo "postgresql: not run (no JOBD_TEST_PG_URL; run under scripts/with-pg.sh)"
fi
[ -z "$slow_stores" ] || fail "a dashboard request took $LIMIT_MS ms or more with $N jobs on:$slow_stores"
echo "ok: every dashboard request under $LIMIT_MS ms with $N jobs"
