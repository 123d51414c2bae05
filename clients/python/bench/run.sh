#!/usr/bin/env bash
# bench/run.sh [N] — the Python client beside jobd's own worker, on one
# `jobd server` and one PostgreSQL database (run under scripts/with-pg.sh):
#   1. enqueue of 10,000 jobs: enqueue_many, then curl with the same two
#      batches of 5,000 (POST /v1/jobs/batch);
#   2. N no-op jobs (default 10,000) enqueued first, then processed by one
#      Python Worker at its defaults (bench.py process), and the same N by
#      `jobd worker --server` (concurrency 8, exec = /bin/true: jobd's worker
#      has no in-process handler over HTTP, so each job is a process).
# JOBD_BIN: the jobd to use (default build/jobd, a Release build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
JOBD=${JOBD_BIN:-$src/build/jobd}
N=${1:-10000}
PY=${PYTHON:-/usr/bin/python3}
: "${JOBD_TEST_PG_URL:?run under scripts/with-pg.sh}"
dir=$(mktemp -d /tmp/jobd-pybench.XXXXXX)
db=jobd_pybench_$$
spid="" wpid=""
cleanup() {
    [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $db" >/dev/null
pg="${JOBD_TEST_PG_URL%/*}/$db"
"$JOBD" server --db "$pg" --listen 127.0.0.1:0 --access-log off 2>"$dir/server.log" &
spid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's|.* listening on \(http://[0-9.]*:[0-9]*\)$|\1|p' "$dir/server.log")
    [ -n "$url" ] && break; sleep 0.1
done
[ -n "$url" ] || { cat "$dir/server.log"; exit 1; }

"$PY" "$here/bench.py" enqueue "$url" 10000
"$PY" - "$dir" <<'PYEOF'
import json, sys
for k in (0, 1):
    with open(f"{sys.argv[1]}/batch{k}.json", "w") as f:
        json.dump({"jobs": [{"type": "bench.noop", "queue": "bench-curl", "payload": {"i": i}}
                            for i in range(k * 5000, (k + 1) * 5000)]}, f)
PYEOF
t0=$(date +%s.%N)
for k in 0 1; do
    curl -sf -o /dev/null -H 'Content-Type: application/json' --data-binary "@$dir/batch$k.json" "$url/v1/jobs/batch"
done
t1=$(date +%s.%N)
echo "curl batches: 10000 jobs in $(echo "$t1 - $t0" | bc -l | cut -c1-5) s: $(echo "10000 / ($t1 - $t0)" | bc) jobs/s"

"$PY" "$here/bench.py" process "$url" "$N"

printf '[worker]\nconcurrency = 8\nqueues = bench-jobd\n\n[handler "bench.noop"]\nexec = /bin/true\n' >"$dir/worker.ini"
PYTHONPATH="$here/.." "$PY" -c "
import sys, jobd
c = jobd.Client(sys.argv[1])
c.enqueue_many([{'type': 'bench.noop', 'queue': 'bench-jobd', 'payload': {'i': i}} for i in range($N)])
" "$url"
t0=$(date +%s.%N)
"$JOBD" worker --server "$url" --config "$dir/worker.ini" 2>"$dir/worker.log" &
wpid=$!
PYTHONPATH="$here/.." "$PY" -c "
import sys, time, jobd
c = jobd.Client(sys.argv[1])
while any(True for _ in c.jobs(queue='bench-jobd', status='pending', page_size=1)) or \
      any(True for _ in c.jobs(queue='bench-jobd', status='running', page_size=1)):
    time.sleep(0.05)
" "$url"
t1=$(date +%s.%N)
echo "jobd worker --server (exec /bin/true, concurrency 8): $N jobs in $(echo "$t1 - $t0" | bc -l | cut -c1-5) s: $(echo "$N / ($t1 - $t0)" | bc) jobs/s"
