#!/usr/bin/env bash
# bench/routes.sh — latency of the read-side routes against the size of the
# backlog: p50/p99 of GET /metrics, GET /v1/queues, GET /v1/jobs?type=<absent>,
# GET /v1/jobs?type=noop (a page of 100), POST /v1/claim for a type with no
# jobs, and 20 long polls (wait_s 5) parked at once for such a type, with P
# due pending jobs in the store. Each request should cost O(log n + answer)
# (docs/DESIGN.md "Cost per request"), so the figures at 1,000,000 pending
# should be those at 10,000.
#
#   bench/routes.sh JOBD DB_URL PENDING [REQUESTS]   (one JSON line per route on stdout)
#
# DB_URL is a sqlite: path (created afresh) or a postgres:// database (its
# jobd schema is dropped first). Seeding is one INSERT … SELECT, like
# jobd_bench's, through the sqlite3 or psql client. Requests run one at a
# time through curl, which times each; p99 of REQUESTS (default 200).
set -euo pipefail

JOBD=${1:?usage: routes.sh JOBD DB_URL PENDING [REQUESTS]}
URL=${2:?database URL}
P=${3:?number of pending jobs}
R=${4:-200}
work=$(mktemp -d /tmp/jobd-routes.XXXXXX)
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

now_us=$(($(date +%s%N) / 1000))
case "$URL" in
sqlite:*)
    backend=sqlite
    rm -f "${URL#sqlite:}" "${URL#sqlite:}"-wal "${URL#sqlite:}"-shm
    "$JOBD" migrate --db "$URL" >/dev/null
    sqlite3 "${URL#sqlite:}" >/dev/null <<EOF
WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $P)
INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts, created_at)
SELECT 'default', 'noop', '{"i":' || i || '}', 'pending', 0, $((now_us - 3600000000)) + i, 25,
       $now_us FROM g;
ANALYZE;
PRAGMA wal_checkpoint(TRUNCATE);
EOF
    ;;
postgres://* | postgresql://*)
    backend=pg
    psql -q "$URL" -c "DROP SCHEMA IF EXISTS jobd CASCADE" >/dev/null 2>&1
    "$JOBD" migrate --db "$URL" >/dev/null
    psql -q "$URL" >/dev/null <<EOF
INSERT INTO jobd.jobs (type, payload, priority, run_at)
SELECT 'noop', json_build_object('i', g), 0, now() - interval '1 hour' + g * interval '1 microsecond'
  FROM generate_series(1, $P) g;
VACUUM ANALYZE jobd.jobs;
CHECKPOINT;
EOF
    ;;
*)
    echo "routes.sh: DB_URL must be sqlite:PATH or postgres://…" >&2
    exit 2
    ;;
esac

"$JOBD" server --db "$URL" --listen 127.0.0.1:0 --access-log off 2>"$work/server.log" &
spid=$!
base=""
for _ in $(seq 300); do
    base=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$work/server.log" | head -n 1)
    [ -n "$base" ] && break
    sleep 0.1
done
[ -n "$base" ] || { echo "routes.sh: the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }

# Times (seconds) of R sequential requests into a file, one a line.
timed() { # NAME METHOD PATH [BODY]
    local out="$work/$1.t" i
    : >"$out"
    for ((i = 0; i < R; i++)); do
        curl -s -o /dev/null -w '%{time_total}\n' -X "$2" -H 'Content-Type: application/json' \
            ${4:+--data "$4"} "$base$3" >>"$out"
    done
}
# 20 long polls parked at once for a type with no jobs; each one's time.
parked() {
    local out="$work/parked.t" i pids=()
    : >"$out"
    for i in $(seq 20); do
        curl -s -o /dev/null -w '%{time_total}\n' -X POST -H 'Content-Type: application/json' \
            --data "{\"worker_id\":\"lp$i\",\"types\":[\"absent\"],\"wait_s\":5}" \
            "$base/v1/claim" >>"$out" &
        pids+=($!)
    done
    wait "${pids[@]}"
}
timed metrics GET /metrics
timed queues GET /v1/queues
timed list_absent GET "/v1/jobs?type=absent"
timed list_page GET "/v1/jobs?type=noop&limit=100"
timed claim_absent POST /v1/claim '{"worker_id":"b","types":["absent"]}'
parked

for f in metrics queues list_absent list_page claim_absent parked; do
    python3 - "$work/$f.t" "$f" "$backend" "$P" <<'EOF'
import json, sys
t = sorted(float(x) for x in open(sys.argv[1]) if x.strip())
q = lambda p: t[min(len(t) - 1, int(p * len(t)))] * 1000
routes = {"metrics": "GET /metrics", "queues": "GET /v1/queues",
          "list_absent": "GET /v1/jobs?type=<absent>", "list_page": "GET /v1/jobs?type=noop&limit=100",
          "claim_absent": "POST /v1/claim, a type with no jobs",
          "parked": "20 parked long polls (wait_s 5), a type with no jobs"}
print(json.dumps({"system": "jobd", "bench": "routes", "backend": sys.argv[3],
                  "pending": int(sys.argv[4]), "route": routes[sys.argv[2]], "requests": len(t),
                  "p50_ms": round(q(0.50), 2), "p99_ms": round(q(0.99), 2),
                  "max_ms": round(t[-1] * 1000, 2)}))
EOF
done
