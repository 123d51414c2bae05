#!/usr/bin/env bash
# scenario_pg_restart.sh — PostgreSQL crashes and comes back under load.
# Injected: `pg_ctl restart -m immediate` (no shutdown checkpoint, every
# connection cut: crash recovery at start) while two workers run jobs and
# the server answers; on a private cluster, so other tests are not hit.
# Nothing is restarted by hand: the server and the workers must reconnect by
# themselves; the server must take new enqueues again; then every job must
# have succeeded exactly once, none lost (history checker).
# Short: 100 jobs (the restart at 50 done, with all 8 slots busy), 1
# restart; soak: 2,000 jobs, 5 restarts.
source "$(dirname "$0")/lib.sh"
scen_init pg_restart
pg_private_start
n=100 restarts=1
[ "$SOAK" = 1 ] && n=2000 restarts=5

start_server
write_worker_ini "$WORK/worker.ini" 3s 500ms 4 "poll_interval = 500ms"
submit_batch "$n" 100
for w in w1 w2; do start_worker "$w" "$WORK/worker.ini"; done

healthy() { curl -sf "$SERVER_URL/healthz" >/dev/null; }
for r in $(seq 1 "$restarts"); do
    at=$((r * n / (restarts + 1)))
    enough() { [ "$(pg_count "status = 'succeeded'")" -ge "$at" ]; }
    wait_until 300 "$at jobs to succeed" enough
    before=$(pg_count "status = 'succeeded'")
    pg_ctl_priv -w -t 60 -m immediate restart >"$WORK/pg_ctl.log" 2>&1 || fail "pg_ctl restart failed"
    log "restart $r: pg_ctl restart -m immediate with $before/$n succeeded"
    wait_until 60 "the server's /healthz after restart $r" healthy
done
for w in w1 w2; do kill -0 "${WPID[$w]}" 2>/dev/null || fail "worker $w died with PostgreSQL"; done
kill -0 "$SERVER_PID" 2>/dev/null || fail "the server died with PostgreSQL"

# The server takes new work again, and the workers run it.
submit_batch 20 0
n=$((n + 20))
all_done() { [ "$(pg_count "status = 'succeeded'")" -ge "$n" ]; }
wait_until $((SOAK == 1 ? 1200 : 180)) "all $n jobs to succeed" all_done
for w in w1 w2; do stop_pid "${WPID[$w]}"; done
log "$(pg_count "status = 'succeeded'")/$n succeeded after $restarts restart(s)"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: $restarts immediate restart(s) of PostgreSQL under load; $n/$n jobs succeeded once"
