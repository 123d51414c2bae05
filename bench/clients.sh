#!/usr/bin/env bash
# bench/clients.sh JOBD PGURL [N] — the clients of clients/ beside jobd's own
# worker and curl, on one `jobd server` and one PostgreSQL database, each
# measured the same way (a step of bench/run.sh; docs/BENCHMARKS.md,
# "Clients"). PGURL names any database of the cluster; this makes its own.
#
#   enqueue: 10,000 no-op jobs through each client's enqueue_many (Python,
#     Node, Go; the call's own time, as the program measures it) and through
#     curl (POST /v1/jobs/batch, ten batches of 1,000 on one connection; the
#     process's wall time), ROUNDS rounds (3) alternating, so a slow minute
#     of the machine hits each alike;
#   worker: N jobs (5,000) prefilled into a queue of their own, then one
#     worker process at its default settings with a no-op handler, timed
#     from its start until its queue has nothing pending or running: the Go,
#     Python and Node Workers, and `jobd worker --server` with an http
#     handler to an endpoint answering at once (the Go bench's sink) and,
#     on N/10 jobs, with exec /bin/true.
#
# ENQ_N (10000, a multiple of 10) sets the enqueue's size, in ten batches
# for curl (tests/integration/test_bench.sh runs it tiny).
#
# Each measurement is one JSON line on stdout:
#   {"system":"client","bench":"enqueue"|"worker","client":C,"round":R,"n":N,"s":S,"rate":R}
# Needs go (golang-go), node and npm, python3, curl, psql; nothing is
# fetched but the Node client's pinned devDependencies (npm ci, once).
set -euo pipefail
JOBD=${1:?usage: bench/clients.sh JOBD PGURL [N]}
PGURL=${2:?usage: bench/clients.sh JOBD PGURL [N]}
N=${3:-5000}
ROUNDS=${ROUNDS:-3}
ENQ_N=${ENQ_N:-10000}
[ $((ENQ_N % 10)) -eq 0 ] && [ "$ENQ_N" -gt 0 ] || { echo "clients.sh: ENQ_N must be a multiple of 10" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d /tmp/jobd-clientbench.XXXXXX)
db=jobd_clientbench_$$
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    psql -qX "$PGURL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
log() { echo "clients.sh: $*" >&2; }

# ---- the three clients' bench programs
export GOCACHE=${GOCACHE:-$root/build/go/cache} GOPATH=${GOPATH:-$root/build/go/path} \
    GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GONOSUMDB='*' GOSUMDB=off
(cd "$root/clients/go" && go build -o "$dir/gobench" ./bench) >&2
"$root/clients/node/scripts/build.sh" >&2
PY=(python3 "$root/clients/python/bench/bench.py")
NODE=(node "$root/clients/node/bench/bench.mjs")

psql -qX "$PGURL" -c "CREATE DATABASE $db" >/dev/null
"$JOBD" server --db "${PGURL%/*}/$db" --listen 127.0.0.1:0 --access-log off 2>"$dir/server.log" &
pids+=($!)
url=""
for _ in $(seq 300); do
    url=$(sed -n 's|.* listening on \(http://127.0.0.1:[0-9]*\)$|\1|p' "$dir/server.log")
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { cat "$dir/server.log" >&2; exit 1; }
export JOBD_SERVER=$url JOBD_TOKEN=""

# emit BENCH CLIENT ROUND N SECONDS
emit() {
    awk -v b="$1" -v c="$2" -v r="$3" -v n="$4" -v s="$5" 'BEGIN {
        printf "{\"system\":\"client\",\"bench\":\"%s\",\"client\":\"%s\",\"round\":%d,\"n\":%d,\"s\":%.3f,\"rate\":%.0f}\n",
               b, c, r, n, s, n / s }'
    log "$1 $2 round $3: $4 jobs in $5 s"
}
# secs CMD...: runs CMD, prints the seconds its "N jobs in S s" line gives:
# the time of the enqueue_many call itself, as a program sees it, without
# the start of an interpreter (curl's own start is in its figure).
secs() {
    "$@" | tee -a "$dir/enqueue.log" | sed -n 's/.* jobs in \([0-9.]*\) *s.*/\1/p' | tail -n 1
}
# wall CMD...: runs CMD (its output to the log), prints its wall time in seconds.
wall() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" >&2
    t1=$(date +%s%N)
    awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.3f", ns / 1e9 }'
}

# ---- enqueue of 10,000 jobs (ENQ_N)
python3 - "$dir" "$((ENQ_N / 10))" <<'EOF'
import json, sys
b = int(sys.argv[2])
for k in range(10):
    with open(f"{sys.argv[1]}/batch{k}.json", "w") as f:
        json.dump({"jobs": [{"type": "noop", "queue": "enq-curl", "payload": {"i": i}}
                            for i in range(k * b, (k + 1) * b)]}, f)
EOF
curl_args=()
for k in $(seq 0 9); do
    [ "$k" -gt 0 ] && curl_args+=(--next)
    curl_args+=(-sfS -o /dev/null -H 'Content-Type: application/json' --data-binary "@$dir/batch$k.json"
                "$url/v1/jobs/batch")
done
for r in $(seq "$ROUNDS"); do
    emit enqueue curl "$r" "$ENQ_N" "$(wall curl "${curl_args[@]}")"
    emit enqueue python "$r" "$ENQ_N" "$(secs "${PY[@]}" enqueue "$url" "$ENQ_N" enq-python)"
    emit enqueue node "$r" "$ENQ_N" "$(secs "${NODE[@]}" enqueue-many --server "$url" --n "$ENQ_N" --queue enq-node)"
    emit enqueue go "$r" "$ENQ_N" "$(secs "$dir/gobench" enqueue -n "$ENQ_N" -queue enq-go)"
done

# ---- one worker process on N no-op jobs
# worker CLIENT COUNT CMD...: prefills COUNT jobs into queue w-CLIENT (CMD may
# name it as QUEUE), then times CMD until the queue is empty.
worker() {
    local client=$1 count=$2 q=w-$1
    shift 2
    "$dir/gobench" enqueue -n "$count" -queue "$q" >/dev/null
    local args=() a
    for a in "$@"; do args+=("${a//QUEUE/$q}"); done
    local t0 t1
    t0=$(date +%s%N)
    "${args[@]}" >"$dir/$client.log" 2>&1 &
    local wpid=$!
    "$dir/gobench" wait -n "$count" -queue "$q" >/dev/null
    t1=$(date +%s%N)
    kill -TERM "$wpid" 2>/dev/null || true
    wait "$wpid" 2>/dev/null || true
    emit worker "$client" 1 "$count" "$(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.3f", ns / 1e9 }')"
}
"$dir/gobench" sink -listen 127.0.0.1:0 >/dev/null 2>&1 &
# the sink picks its own port: ask the kernel which
sink_pid=$!
pids+=("$sink_pid")
port=""
for _ in $(seq 100); do
    port=$(ss -ltnpH 2>/dev/null | awk -v p="pid=$sink_pid," '$0 ~ p { n = split($4, a, ":"); print a[n]; exit }')
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { log "the sink did not start"; exit 1; }
printf '[worker]\nqueues = w-jobd-http\n\n[handler "noop"]\nhttp = http://127.0.0.1:%s/\n' "$port" >"$dir/http.ini"
printf '[worker]\nqueues = w-jobd-exec\n\n[handler "noop"]\nexec = /bin/true\n' >"$dir/exec.ini"

worker jobd-http "$N" "$JOBD" worker --server "$url" --config "$dir/http.ini"
worker go "$N" "$dir/gobench" worker -queue QUEUE
worker python "$N" "${PY[@]}" work "$url" QUEUE
worker node "$N" "${NODE[@]}" work --server "$url" --queue QUEUE
worker jobd-exec "$((N / 10))" "$JOBD" worker --server "$url" --config "$dir/exec.ini"
