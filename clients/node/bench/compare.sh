#!/usr/bin/env bash
# compare.sh — the client's benchmark beside jobd's own remote worker, on
# one `jobd server` on a PostgreSQL database of its own:
#   scripts/with-pg.sh clients/node/bench/compare.sh [N]
# 1. enqueueMany of 10,000 jobs, and the same 10,000 as one curl batch
#    (three rounds, alternating);
# 2. one @jobd/client Worker at its defaults on N no-op jobs;
# 3. `jobd worker --server` (concurrency 8, like the client's default) on N
#    jobs of an exec handler (/bin/true), and of an http handler answering
#    at once (a Node no-op server): the no-op handlers a config can name.
# Needs JOBD_TEST_PG_URL, node, curl, psql; JOBD_BIN (default build/jobd).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
n=${1:-5000}
jobd=${JOBD_BIN:-$root/build/jobd}
: "${JOBD_TEST_PG_URL:?run under scripts/with-pg.sh}"
dir=$(mktemp -d /tmp/jobd-node-bench.XXXXXX)
db="jobd_node_bench_$$"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $db" >/dev/null
"$jobd" server --db "${JOBD_TEST_PG_URL%/*}/$db" --listen 127.0.0.1:0 --access-log off 2>"$dir/server.log" &
pids+=($!)
for _ in $(seq 100); do
    url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/server.log")
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { cat "$dir/server.log"; exit 1; }
bench() { node "$here/bench.mjs" "$@" --server "$url"; }

node -e 'const a=[];for(let i=0;i<10000;i++)a.push({type:"bench.curl",queue:"bench-curl",payload:{i}});process.stdout.write(JSON.stringify({jobs:a}))' >"$dir/batch.json"
for round in 1 2 3; do  # alternate: this machine's noise is larger than the difference
    bench enqueue-many --n 10000
    t=$(curl -s -o /dev/null -w '%{time_total}' -H 'content-type: application/json' --data-binary @"$dir/batch.json" "$url/v1/jobs/batch")
    echo "curl batch: 10000 jobs in $t s: $(awk -v t="$t" 'BEGIN{printf "%d", 10000/t}') jobs/s"
done

bench process --n "$n"

node -e 'require("http").createServer((q,r)=>{q.resume();q.on("end",()=>{r.writeHead(200,{"content-type":"application/json"});r.end("null")})}).listen(0,"127.0.0.1",function(){console.log(this.address().port)})' >"$dir/port" &
pids+=($!)
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
cat >"$dir/worker.ini" <<INI
[worker]
concurrency = 8

[handler "bench.true"]
exec = /bin/true

[handler "bench.http"]
http = http://127.0.0.1:$(cat "$dir/port")/
INI
for kind in true http; do
    bench seed --type "bench.$kind" --queue "bench-$kind" --n "$n"
    "$jobd" worker --server "$url" --config "$dir/worker.ini" --queues "bench-$kind" 2>"$dir/worker-$kind.log" &
    wpid=$!
    pids+=($wpid)
    echo -n "jobd worker --server, $kind handler: "
    bench window --queue "bench-$kind" --n "$n"
    kill -TERM "$wpid"; wait "$wpid" || true
done
