#!/usr/bin/env bash
# scenario_stop_race.sh — a run that finished while its worker's loop was
# blocked keeps its result, even though the lease watchdog fired meanwhile.
# Injected: worker p reaches PostgreSQL only through tcp_forward.py; a
# fresh heartbeat of its 1.5 s job (lease 4 s) is answered, then the link is
# cut silently. p's next heartbeat blocks its loop thread in libpq; the
# handler succeeds while the loop is blocked, and the watchdog's deadline
# passes before the loop can take the result. The server's reaper is off
# (--reap-interval 1h), so nobody claims the job again: after the heal p
# must report the success and the store must take it (fencing is by
# attempt, and attempt 1 is still the live one). Before the fix the worker
# dropped every result of a run the watchdog had fired on, and the job
# stayed running. Short and soak: 1 round.
source "$(dirname "$0")/lib.sh"
scen_init stop_race
pg_newdb
start_forwarder
P_DB_URL=$FWD_DB_URL

start_server --reap-interval 1h
write_worker_ini "$WORK/worker.ini" 4s 500ms 1 "poll_interval = 200ms"
start_worker p "$WORK/worker.ini" --db "$P_DB_URL"
id=$(submit_one 1500 1)
echo "$id" >>"$WORK/expect"
wait_until 30 "job $id to start on p" test -s "$WORK/pids/$id.1"
fresh() { pg_sql "SELECT lease_expires_at > now() + interval '3700 ms' FROM jobd.jobs WHERE id = $id" | grep -qx t; }
wait_until 10 "a fresh lease of job $id" fresh
kill -USR1 "$FWD_PID"
cut_at=$SECONDS
log "cut: p's link blackholed while it runs job $id (1.5 s, lease 4 s)"
wait_until 10 "the handler of job $id to finish" grep -q "^$id 1 p " "$HISTORY"
wait_until 10 "p's watchdog to fire" grep -q "ran out without a heartbeat answer" "$WORK/worker-p.log"
log "the handler succeeded while p's loop was blocked; then the watchdog fired"
[ $((SECONDS - cut_at)) -lt 8 ] && sleep $((8 - (SECONDS - cut_at)))
kill -USR2 "$FWD_PID"
log "healed"
wait_until 30 "job $id to succeed with p's result" job_is "$id" status succeeded
job_is "$id" attempt 1 || fail "job $id succeeded with attempt $(job_field "$id" attempt), want 1"
log "job $id succeeded with attempt 1, result $(job_field "$id" result)"
stop_pid "${WPID[p]}"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: a success that beat the watchdog's stop was reported and taken"
