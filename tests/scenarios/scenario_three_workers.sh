#!/usr/bin/env bash
# scenario_three_workers.sh — three worker processes race for the same
# seeded jobs on PostgreSQL (short: 1,000 jobs, soak: 10,000). The handler
# records every run; the history checker proves no job ran under two
# overlapping leases, every job succeeded exactly once in the store, and
# none is missing. Injected fault: none but contention (three claimers on
# one table, concurrency 8 each, short 5s leases).
source "$(dirname "$0")/lib.sh"
scen_init three_workers
pg_newdb
# 1,000 keep all 24 slots of the three claimers busy for most of the run
# (a few seconds each way of ramp); 2,000 doubled the run's CPU, not the race.
n=1000; [ "$SOAK" = 1 ] && n=10000

start_server
write_worker_ini "$WORK/worker.ini" 5s 1s 8 "poll_interval = 1s"
submit_batch "$n" 0
log "seeded $n jobs"
t0=$SECONDS
for w in w1 w2 w3; do start_worker "$w" "$WORK/worker.ini"; done

deadline=$((SECONDS + (SOAK == 1 ? 3000 : 300)))
while :; do
    done_=$(pg_count "status = 'succeeded'")
    [ "$done_" -ge "$n" ] && break
    for w in w1 w2 w3; do kill -0 "${WPID[$w]}" 2>/dev/null || fail "worker $w died"; done
    [ $SECONDS -lt $deadline ] || fail "only $done_ of $n jobs succeeded in time"
    sleep 0.25
done
log "$n jobs succeeded in $((SECONDS - t0))s"
for w in w1 w2 w3; do stop_pid "${WPID[$w]}"; done

for w in w1 w2 w3; do
    log "runs on $w: $(awk -v w="$w" '$3 == w' "$HISTORY" | wc -l)"
done
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: $n jobs, three workers"
