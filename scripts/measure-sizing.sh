#!/usr/bin/env bash
# measure-sizing.sh [BUILD_DIR] — the PostgreSQL sizing figures of
# docs/OPERATIONS.md: WAL written and table bytes per job over a job's whole
# life (enqueue; claim; complete, which moves the row into the partitioned
# jobs_done since schema version 38), from pg_current_wal_lsn() before and
# after N jobs (default 10,000) and the sizes of jobd's tables (a
# partitioned table's size is the sum of its leaves'). Runs its own throwaway
# PostgreSQL (scripts/with-pg.sh: fsync on, full_page_writes on, 256 MB
# shared_buffers) and a `jobd server`; jobs go in as batches through the
# API (and a tenth of them one per request, from 10 clients), and are run by a C-handler
# worker (jobd_bench cworker, no-op handler). Beside the bytes, each phase's
# commits, WAL flushes (fsyncs, pg_stat_wal.wal_sync) and PostgreSQL CPU per
# job (the postmaster's and its children's, from /proc): what one primary
# carries per core (docs/SCALING.md). Bytes and counts do not depend on the
# machine's load; CPU does a little. Prints markdown tables.
#
#   scripts/measure-sizing.sh build          (N=10000 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
    exec scripts/with-pg.sh "$0" "$@"
fi
N=${N:-10000}
jobd="$build/jobd"
bench="$build/jobd_bench"
base=${JOBD_TEST_PG_URL%/*}
psql -qAt "$JOBD_TEST_PG_URL" -c "CREATE DATABASE sizing" >/dev/null
url="$base/sizing"
q() { psql -qAt "$url" -c "$1"; }
dir=$(mktemp -d /tmp/jobd-sizing.XXXXXX)
spid="" wpid=""
trap '[ -n "$wpid" ] && kill $wpid; [ -n "$spid" ] && kill $spid; wait; rm -rf "$dir"' EXIT
"$jobd" migrate --db "$url" >/dev/null
: >"$dir/log"
"$jobd" server --db "$url" --listen 127.0.0.1:0 --access-log off 2>"$dir/log" &
spid=$!
until grep -q 'listening on' "$dir/log"; do sleep 0.1; done
api=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
q "CHECKPOINT" >/dev/null

lsn() { q "SELECT pg_current_wal_lsn()"; }
wal() { q "SELECT pg_wal_lsn_diff('$2', '$1')"; }
# CPU ticks of the cluster: the postmaster with the children it reaped
# (cutime, cstime: exited backends) and the children still alive.
pg_cpu() {
    local pm total=0 pid f
    pm=$(head -1 "$(q "SHOW data_directory")/postmaster.pid")
    for pid in "$pm" $(pgrep -P "$pm"); do
        f=$(cut -d')' -f2- "/proc/$pid/stat" 2>/dev/null) || continue
        # shellcheck disable=SC2086 # fields after "comm)": utime=12 stime=13 cutime=14 cstime=15
        set -- $f
        total=$((total + ${12} + ${13}))
        [ "$pid" = "$pm" ] && total=$((total + ${14} + ${15}))
    done
    echo "$total"
}
# the counters at phase boundary I: WAL flushes, commits, CPU ticks
declare -A cnt
count() {
    cnt[$1.sync]=$(q "SELECT wal_sync FROM pg_stat_wal")
    cnt[$1.commit]=$(q "SELECT sum(xact_commit) FROM pg_stat_database")
    cnt[$1.cpu]=$(pg_cpu)
}
# cols FROM TO JOBS: WAL flushes, commits and CPU per job between two boundaries
cols() {
    python3 -c 'import sys
s0, s1, c0, c1, t0, t1, n, hz = map(float, sys.argv[1:])
print("%.3f | %.3f | %.0f µs" % ((s1 - s0) / n, (c1 - c0) / n, (t1 - t0) / hz / n * 1e6))' \
        "${cnt[$1.sync]}" "${cnt[$2.sync]}" "${cnt[$1.commit]}" "${cnt[$2.commit]}" \
        "${cnt[$1.cpu]}" "${cnt[$2.cpu]}" "$3" "$(getconf CLK_TCK)"
}
single=$((N / 10)); batched=$((N - single))

l0=$(lsn)
count 0
python3 - "$api" "$batched" <<'PY'
import json, sys, urllib.request
api, n = sys.argv[1], int(sys.argv[2])
for start in range(0, n, 1000):
    jobs = [{"type": "noop", "payload": {"n": i, "to": "user%d@example.org" % i}}
            for i in range(start, min(n, start + 1000))]
    req = urllib.request.Request(api + "/v1/jobs/batch", json.dumps({"jobs": jobs}).encode(),
                                 {"Content-Type": "application/json"})
    urllib.request.urlopen(req).read()
PY
l1=$(lsn)
count 1
python3 - "$api" "$single" <<'PY'
# ten clients, each on one keep-alive connection, as an application's
# request handlers would enqueue: concurrent requests share a commit
import http.client, json, sys, threading, urllib.parse
api, n = urllib.parse.urlsplit(sys.argv[1]), int(sys.argv[2])
def client(k):
    c = http.client.HTTPConnection(api.hostname, api.port)
    for i in range(k, n, 10):
        c.request("POST", "/v1/jobs", json.dumps(
            {"type": "noop", "payload": {"n": i, "to": "user%d@example.org" % i}}),
            {"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        assert r.status == 201, r.status
ts = [threading.Thread(target=client, args=(k,)) for k in range(10)]
for t in ts: t.start()
for t in ts: t.join()
PY
l2=$(lsn)
count 2
pending_bytes=$(q "SELECT pg_total_relation_size('jobd.jobs')")  # not partitioned
"$bench" cworker --db "$url" --concurrency 100 >/dev/null 2>"$dir/worker.log" &
wpid=$!
until [ "$(q "SELECT count(*) FROM jobd.all_jobs WHERE status = 'succeeded'")" -ge "$N" ]; do sleep 0.5; done
kill "$wpid"; wait "$wpid" 2>/dev/null || true; wpid=""
l3=$(lsn)
count 3
q "VACUUM ANALYZE" >/dev/null
# relsize REL [heap]: a table's bytes with its indexes (or its heap alone),
# summed over its partitions when it is partitioned
relsize() {
    local f=pg_total_relation_size
    [ "${2:-}" = heap ] && f=pg_relation_size
    q "SELECT coalesce(CASE WHEN c.relkind = 'p' THEN (SELECT sum($f(relid))
         FROM pg_partition_tree(c.oid) WHERE isleaf) ELSE $f(c.oid) END, 0)
       FROM (SELECT 0) x LEFT JOIN pg_class c ON c.oid = to_regclass('$1')"
}
done_bytes=$(relsize jobd.jobs_done)
heap_done=$(relsize jobd.jobs_done heap)
jobs_after=$(relsize jobd.jobs)
attempts=$(relsize jobd.job_attempts)

per() { echo $(( $1 / $2 )); }
cat <<EOF
| what (N = $N jobs, payload ~40 bytes) | WAL, total | WAL per job | WAL flushes per job | commits per job | PostgreSQL CPU per job |
|---|---|---|---|---|---|
| enqueue, batches of 1000 through POST /v1/jobs/batch ($batched jobs) | $(wal "$l0" "$l1") B | $(per "$(wal "$l0" "$l1")" "$batched") B | $(cols 0 1 "$batched") |
| enqueue, one job per POST /v1/jobs, 10 clients ($single jobs) | $(wal "$l1" "$l2") B | $(per "$(wal "$l1" "$l2")" "$single") B | $(cols 1 2 "$single") |
| claim + complete, the row moved to jobs_done (C worker, batches of 100) | $(wal "$l2" "$l3") B | $(per "$(wal "$l2" "$l3")" "$N") B | $(cols 2 3 "$N") |
| a job's whole life | $(wal "$l0" "$l3") B | $(per "$(wal "$l0" "$l3")" "$N") B | $(cols 0 3 "$N") |

| what | total | per job |
|---|---|---|
| jobd.jobs with $N pending jobs, indexes included | $pending_bytes B | $(per "$pending_bytes" "$N") B |
| jobd.jobs_done with $N finished jobs, indexes included | $done_bytes B | $(per "$done_bytes" "$N") B |
| of which the table itself (heap) | $heap_done B | $(per "$heap_done" "$N") B |
| jobd.jobs after all ran and VACUUM | $jobs_after B | – |
| jobd.job_attempts (history of failed attempts only) | $attempts B | – |
EOF
