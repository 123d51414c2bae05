#!/usr/bin/env bash
# scenario_groups_fair.sh — the promise of docs/MODEL.md, Groups, on
# PostgreSQL: one group holds 100,000 due jobs under SOAK=1 (5,000 in the
# short version of `make test`, whose enqueues through the sanitized build
# would take two minutes at full size, and still five times the 1,000 the
# check allows: an unfair claim order fails it the same) (enqueued first, so
# plain claim order would run them all first) and 100 other groups hold one
# due job each; three `jobd worker` processes (concurrency 8) claim them.
# From the handlers' own start records, all 100 single jobs start before
# 1,000 of the large group's have. The large group is not drained: the
# workers stop once the singles have run. Injected fault: none but the
# backlog and three claimers.
source "$(dirname "$0")/lib.sh"
scen_init groups_fair
pg_newdb
big=5000; [ "$SOAK" = 1 ] && big=100000

start_server
write_worker_ini "$WORK/worker.ini" 30s 5s 8 "poll_interval = 1s"

# groups_batch COUNT GROUP_PREFIX SINGLE: COUNT jobs of one group (SINGLE=0)
# or of COUNT groups of one job each; their ids go to $WORK/ids.GROUP_PREFIX.
groups_batch() {
    local count=$1 prefix=$2 single=$3 done_=0 n
    while [ $done_ -lt "$count" ]; do
        n=$((count - done_)); [ $n -gt 1000 ] && n=1000
        python3 -c '
import json, sys
n, base, prefix, single = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
json.dump({"jobs": [{"type": "scen", "payload": {"sleep_ms": 0},
                     "group": "%s-%03d" % (prefix, base + i) if single else prefix}
                    for i in range(n)]}, sys.stdout)
' "$n" "$done_" "$prefix" "$single" >"$WORK/batch.json"
        curl -sS -o "$WORK/batch.out" -w '%{http_code}' -H 'Content-Type: application/json' \
            --data-binary "@$WORK/batch.json" "$SERVER_URL/v1/jobs/batch" >"$WORK/batch.code" ||
            fail "batch enqueue: curl failed"
        [ "$(cat "$WORK/batch.code")" = 201 ] || fail "batch enqueue: HTTP $(cat "$WORK/batch.code")"
        python3 -c '
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]: print(j["id"])
' "$WORK/batch.out" >>"$WORK/ids.$prefix"
        done_=$((done_ + n))
    done
}

t0=$SECONDS
groups_batch "$big" big 0
groups_batch 100 tenant 1
log "seeded $big jobs of group big and 100 groups of one job in $((SECONDS - t0))s"

for w in w1 w2 w3; do start_worker "$w" "$WORK/worker.ini"; done
singles_started() {
    python3 - "$WORK/ids.tenant" "$HISTORY.starts" <<'PY'
import sys
singles = set(open(sys.argv[1]).read().split())
try:
    started = {l.split()[0] for l in open(sys.argv[2]) if l.strip()}
except FileNotFoundError:
    started = set()
sys.exit(0 if singles <= started else 1)
PY
}
wait_until 120 "all 100 single jobs to start" singles_started
for w in w1 w2 w3; do stop_pid "${WPID[$w]}"; done

python3 - "$WORK/ids.tenant" "$HISTORY.starts" <<'PY' || fail "the large group ran ahead"
import sys
singles = set(open(sys.argv[1]).read().split())
starts = sorted((int(l.split()[3]), l.split()[0]) for l in open(sys.argv[2]) if l.strip())
last_single = max(ns for ns, job in starts if job in singles)
big_before = sum(1 for ns, job in starts if job not in singles and ns <= last_single)
print("[groups_fair] %d jobs of group big started before the last of the 100 single ones"
      % big_before)
sys.exit(0 if big_before < 1000 else 1)
PY
log "ok: 100 single groups before 1,000 of a group of $big"
