#!/usr/bin/env bash
# clients/go/bench/run.sh — the Go client's figures beside jobd's own
# (clients/go/README.md, Benchmark). Run it under scripts/with-pg.sh:
#
#   scripts/with-pg.sh clients/go/bench/run.sh [N]
#
# On a `jobd server` on a fresh PostgreSQL database ($JOBD_BIN, default
# build/jobd): enqueue 10,000 jobs through EnqueueMany and through one curl
# batch; then N (default 20000) no-op jobs run by one worker process at its
# default settings, measured from the worker's start until its queue has
# nothing pending or running — the Go Worker (handler returns nil) and
# `jobd worker --server` (an http handler to a no-op endpoint, and exec
# /bin/true for N/10 jobs). N=0 runs the enqueue rounds only.
set -euo pipefail
N=${1:-20000}
here=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$here/../.." && pwd)
JOBD=${JOBD_BIN:-$root/build/jobd}
: "${JOBD_TEST_PG_URL:?run under scripts/with-pg.sh}"
dir=$(mktemp -d /tmp/jobd-gobench.XXXXXX)
export GOCACHE=${GOCACHE:-$root/build/go/cache} GOPATH=${GOPATH:-$root/build/go/path} \
    GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
pgdb="gobench_$$"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null
(cd "$here" && go build -o "$dir/bench" ./bench)

"$JOBD" server --db "${JOBD_TEST_PG_URL%/*}/$pgdb" --listen 127.0.0.1:0 --access-log off 2>"$dir/server.log" &
pids+=($!)
for _ in $(seq 300); do
    port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "the server did not start"; cat "$dir/server.log"; exit 1; }
export JOBD_SERVER="http://127.0.0.1:$port" JOBD_TOKEN=""

echo "== enqueue of 10,000 jobs, three rounds alternating"
python3 -c 'import json; print(json.dumps({"jobs": [{"type": "noop", "queue": "enq-curl", "payload": {"n": i}} for i in range(10000)]}))' >"$dir/batch.json"
for round in 1 2 3; do
    t0=$(date +%s%N)
    curl -sfS -o /dev/null -H 'Content-Type: application/json' --data-binary @"$dir/batch.json" "$JOBD_SERVER/v1/jobs/batch"
    t1=$(date +%s%N)
    awk -v ns=$((t1 - t0)) 'BEGIN { printf "curl batch: 10000 jobs in %.3fs: %.0f jobs/s\n", ns / 1e9, 10000 / (ns / 1e9) }'
    "$dir/bench" enqueue -n 10000 -queue enq-go
done
[ "$N" -gt 0 ] || exit 0

# run_worker LABEL QUEUE COUNT CMD...: prefill COUNT jobs, then time CMD.
run_worker() {
    local label=$1 queue=$2 count=$3; shift 3
    "$dir/bench" enqueue -n "$count" -queue "$queue" >/dev/null
    echo "== $label"
    "$@" 2>"$dir/$queue.log" &
    local wpid=$!
    "$dir/bench" wait -n "$count" -queue "$queue"
    kill -TERM "$wpid"; wait "$wpid" 2>/dev/null || true
}

run_worker "Go Worker, default settings (concurrency 8), no-op handler, $N jobs" go-w "$N" \
    "$dir/bench" worker -queue go-w

"$dir/bench" sink -listen 127.0.0.1:18931 &
pids+=($!)
printf '[worker]\nqueues = jobd-http\n\n[handler "noop"]\nhttp = http://127.0.0.1:18931/\n' >"$dir/http.ini"
run_worker "jobd worker --server, default settings, http handler to a no-op endpoint, $N jobs" jobd-http "$N" \
    "$JOBD" worker --server "$JOBD_SERVER" --config "$dir/http.ini"

printf '[worker]\nqueues = jobd-exec\n\n[handler "noop"]\nexec = /bin/true\n' >"$dir/exec.ini"
run_worker "jobd worker --server, default settings, exec /bin/true, $((N / 10)) jobs" jobd-exec "$((N / 10))" \
    "$JOBD" worker --server "$JOBD_SERVER" --config "$dir/exec.ini"
