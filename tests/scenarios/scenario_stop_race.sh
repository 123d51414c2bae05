#!/usr/bin/env bash
# scenario_stop_race.sh — a run that finished while its worker's loop was
# blocked keeps its result, even though the lease watchdog fired meanwhile.
# Injected: worker p reaches PostgreSQL only through tcp_forward.py; while
# p runs a job (lease 10 s, heartbeat 500 ms), right after a heartbeat was
# answered, the link is cut silently. p's next heartbeat blocks its loop
# thread in libpq; the handler then succeeds while the loop is blocked, and
# the watchdog's deadline passes before the loop can take the result. The
# server's reaper is off (--reap-interval 1h), so nobody claims the job
# again; once the store's own lease has run out too, the link heals, and p
# must report the success and the store must take it (fencing is by
# attempt, and attempt 1 is still the live one). Before the fix the worker
# dropped every result of a run the watchdog had fired on, and the job
# stayed running.
# The run waits on a gate file (handler.sh) instead of sleeping a fixed
# time: the scenario opens it 1.5 s after the cut (three heartbeat
# intervals: p's loop is blocked by then), and the watchdog fires at the
# earliest ~4.5 s after the cut, so the order of events does not depend on
# how fast a loaded machine reaches each step. Short and soak: 1 round.
source "$(dirname "$0")/lib.sh"
scen_init stop_race
pg_newdb
start_forwarder
P_DB_URL=$FWD_DB_URL

start_server --reap-interval 1h
write_worker_ini "$WORK/worker.ini" 10s 500ms 1 "poll_interval = 200ms"
start_worker p "$WORK/worker.ini" --db "$P_DB_URL"
gate="$WORK/gate"
id=$("$JOBD_BIN" submit scen --payload "{\"gate\":\"$gate\"}" --server "$SERVER_URL" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo "$id" >>"$WORK/expect"
wait_until 30 "job $id to start on p" test -s "$WORK/pids/$id.1"
# A heartbeat answered less than 0.5 s ago: the watchdog is ~5 s away.
fresh() { pg_sql "SELECT lease_expires_at > now() + interval '9500 ms' FROM jobd.jobs WHERE id = $id" | grep -qx t; }
wait_until 30 "a fresh lease of job $id" fresh
kill -USR1 "$FWD_PID"
log "cut: p's link blackholed while it runs job $id (lease 10 s)"
sleep 1.5
touch "$gate"
wait_until 10 "the handler of job $id to finish" grep -q "^$id 1 p " "$HISTORY"
wait_until 30 "p's watchdog to fire" grep -q "ran out without a heartbeat answer" "$WORK/worker-p.log"
log "the handler succeeded while p's loop was blocked; then the watchdog fired"
expired() { pg_sql "SELECT lease_expires_at < now() FROM jobd.jobs WHERE id = $id" | grep -qx t; }
wait_until 30 "the store's lease of job $id to run out" expired
kill -USR2 "$FWD_PID"
log "healed"
wait_job_succeeded 30 "$id" "job $id to succeed with p's result"
job_is "$id" attempt 1 || fail "job $id succeeded with attempt $(job_field "$id" attempt), want 1"
log "job $id succeeded with attempt 1, result $(job_field "$id" result)"
stop_pid "${WPID[p]}"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: a success that beat the watchdog's stop was reported and taken"
