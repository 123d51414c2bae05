#!/usr/bin/env bash
# bench/wrk.sh JOBD DB_URL [CONNECTIONS] [SECONDS] — one job per HTTP request,
# driven by wrk (a load generator in C that is not the bottleneck, Debian
# package wrk) with bench/wrk/enqueue1.lua: a fresh `jobd server` on DB_URL
# (migrated, emptied of jobs first), wrk -t2 -c CONNECTIONS (10) -d SECONDS
# (10), keep-alive. Prints one JSON line: jobs/s (= 201 answers / wrk's
# duration), mean/p50/p99 latency, and the server's CPU per 1,000 jobs (its
# utime + stime from /proc over the run), plus PostgreSQL's when the URL is
# postgres:// and its postmaster.pid is $PG_PIDFILE (default: that of
# bench/harness/pg.sh's cluster in $BENCH_PG_DIR).
# The store must hold every acknowledged job afterwards: checked by count.
set -euo pipefail
JOBD=${1:?usage: bench/wrk.sh JOBD DB_URL [CONNECTIONS] [SECONDS]}
URL=${2:?usage: bench/wrk.sh JOBD DB_URL [CONNECTIONS] [SECONDS]}
CONNS=${3:-10}
SECS=${4:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v wrk >/dev/null || { echo "bench/wrk.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/jobd-wrk.XXXXXX)
spid=""
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$JOBD" migrate --db "$URL" >/dev/null
count() {
    case "$URL" in
        postgres*) psql -XAtq "$URL" -c "SELECT count(*) FROM jobd.all_jobs" ;;
        sqlite:*) sqlite3 "${URL#sqlite:}" "SELECT (SELECT count(*) FROM jobs) + (SELECT count(*) FROM jobs_done)" ;;
    esac
}
"$JOBD" server --db "$URL" --listen 127.0.0.1:0 --access-log off 2>"$tmp/server.log" &
spid=$!
for _ in $(seq 200); do grep -q 'listening on' "$tmp/server.log" && break; sleep 0.05; done
api=$(sed -n 's|.* listening on \(http://[^ ]*\).*|\1|p' "$tmp/server.log" | head -1)
[ -n "$api" ] || { echo "bench/wrk.sh: the server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# PostgreSQL's CPU: its postmaster (with the time of backends that exited) and
# its live children; the postmaster from $PG_PIDFILE (default: bench/harness/pg.sh's).
PG_PIDFILE=${PG_PIDFILE:-${BENCH_PG_DIR:-/tmp/bench-pg}/data/postmaster.pid}
pg_ticks() {
    local pm t=0
    pm=$(head -1 "$PG_PIDFILE" 2>/dev/null) || { echo 0; return; }
    t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat" 2>/dev/null || echo 0)
    for p in $(pgrep -P "$pm" || true); do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}
before=$(count)
s0=$(ticks "$spid"); p0=$(pg_ticks)
wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s "$HERE/wrk/enqueue1.lua" "$api/v1/jobs" >"$tmp/wrk.out" 2>&1
s1=$(ticks "$spid"); p1=$(pg_ticks)
after=$(count)
line=$(grep '^WRK ' "$tmp/wrk.out") || { cat "$tmp/wrk.out" >&2; exit 1; }
python3 - "$line" "$CONNS" "$((s1 - s0))" "$((p1 - p0))" "$((after - before))" "$(getconf CLK_TCK)" "$URL" <<'PY'
import json, sys
kv = dict(x.split("=") for x in sys.argv[1].split()[1:])
conns, st, pt, stored, hz, url = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
ok = int(kv["requests"]) - int(kv["non201"])
secs = int(kv["duration_us"]) / 1e6
out = {"system": "jobd", "bench": "enqueue1_wrk", "backend": "pg" if url.startswith("postgres") else "sqlite",
       "mode": "enqueue1", "concurrency": conns, "n": ok, "enqueue_jobs_per_s": round(ok / secs),
       "latency_ms": {"mean": round(float(kv["lat_mean_us"]) / 1000, 3),
                      "p50": int(kv["lat_p50_us"]) / 1000, "p99": int(kv["lat_p99_us"]) / 1000},
       "server_cpu_ms_per_1000_jobs": round(st / hz * 1000 / ok * 1000, 1) if ok else None,
       "postgres_cpu_ms_per_1000_jobs": round(pt / hz * 1000 / ok * 1000, 1) if ok and pt > 0 else None,
       "errors": int(kv["errors"]) + int(kv["non201"]), "stored": stored,
       "notes": f"wrk -t2 -c{conns} with bench/wrk/enqueue1.lua, keep-alive; a fresh jobd server; "
                "CPU from /proc (postgres: its postmaster and children)"}
if stored < ok:
    out["error"] = f"{ok} jobs acknowledged, {stored} stored"
print(json.dumps(out))
PY
