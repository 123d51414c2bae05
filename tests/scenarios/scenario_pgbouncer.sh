#!/usr/bin/env bash
# scenario_pgbouncer.sh — servers and workers through PgBouncer in
# transaction pooling mode (Debian 12: PgBouncer 1.18, which cannot keep
# named prepared statements across transactions). Every jobd URL says
# ?pooler=transaction, so jobd sends unnamed statements, keeps no session
# state and takes advisory locks only inside a transaction. LISTEN needs a
# session: the server and workers w1, w2 get a direct --notify-db
# connection for wake-ups; w3 has none and must fall back to polling (and
# say so). Three workers, concurrency 8, and the server share a PgBouncer
# pool of 4 server connections; half the jobs are seeded before they start, half enqueued
# while they run. Then every job must have succeeded exactly once (history
# checker), PgBouncer must never have held more than its 4 server
# connections, and it must have multiplexed more clients than that.
# Short: 1,000 jobs; soak: 10,000 (the 3 workers x 10,000 jobs of the
# three_workers scenario, through PgBouncer).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ha_lib.sh"
scen_init pgbouncer
ha_need pgbouncer
pg_newdb
n=1000; [ "$SOAK" = 1 ] && n=10000
pool=4
direct=$DB_URL
db=${DB_URL##*/}
ha_pgbouncer_start "${JOBD_TEST_PG_PORT:?JOBD_TEST_PG_PORT is not set (run under scripts/with-pg.sh)}" $pool
bounced="postgresql://jobd@127.0.0.1:$HA_BOUNCER_PORT/$db?pooler=transaction"

DB_URL=$bounced
start_server --notify-db "$direct"
DB_URL=$direct
write_worker_ini "$WORK/worker.ini" 5s 1s 8 "poll_interval = 1s"
submit_batch $((n / 2)) 0
log "seeded $((n / 2)) jobs through PgBouncer"
t0=$SECONDS
start_worker w1 "$WORK/worker.ini" --db "$bounced" --notify-db "$direct"
start_worker w2 "$WORK/worker.ini" --db "$bounced" --notify-db "$direct"
start_worker w3 "$WORK/worker.ini" --db "$bounced"
wait_until 30 "w3 to say it polls" grep -q "no LISTEN connection: polling.*pooler=transaction" "$WORK/worker-w3.log"
for w in w1 w2; do
    grep -q "no LISTEN connection" "$WORK/worker-$w.log" && fail "$w polls although it has --notify-db"
done
submit_batch $((n / 2)) 0
log "enqueued $((n / 2)) more while the workers run"

max_c=0 max_s=0
deadline=$((SECONDS + (SOAK == 1 ? 3000 : 300)))
while :; do
    read -r c s < <(ha_bouncer_pool "$db")
    [ "$c" -gt "$max_c" ] && max_c=$c
    [ "$s" -gt "$max_s" ] && max_s=$s
    done_=$(pg_count "status = 'succeeded'")
    [ "$done_" -ge "$n" ] && break
    for w in w1 w2 w3; do kill -0 "${WPID[$w]}" 2>/dev/null || fail "worker $w died"; done
    [ $SECONDS -lt $deadline ] || fail "only $done_ of $n jobs succeeded in time"
    sleep 0.3
done
secs=$((SECONDS - t0))
for w in w1 w2 w3; do stop_pid "${WPID[$w]}"; done
runs=""
for w in w1 w2 w3; do
    runs="$runs $w=$(awk -v w="$w" '$3 == w' "$HISTORY" | wc -l)"
done
log "$n jobs in ${secs}s; runs:$runs; PgBouncer peak: $max_c clients on $max_s server connections"
[ "$max_s" -le "$pool" ] || fail "PgBouncer held $max_s server connections, over its pool of $pool"
[ "$max_c" -gt "$max_s" ] || fail "PgBouncer multiplexed nothing ($max_c clients, $max_s servers)"
case "$runs" in *=0\ *|*=0) fail "a worker ran no job:$runs" ;; esac
if grep -l "prepared statement" "$WORK"/*.log; then fail "a prepared statement error went through PgBouncer"; fi
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
rate=$(python3 -c "print(round($n / max($secs, 1)))")
echo "SUMMARY pgbouncer: jobs=$n workers=3 seconds=$secs jobs_per_s=$rate pool_mode=transaction" \
    "pool_size=$pool peak_clients=$max_c peak_server_conns=$max_s runs:$runs checker=clean"
log "ok: $n jobs, three workers, through PgBouncer in transaction mode"
