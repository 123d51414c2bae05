#!/usr/bin/env bash
# scenario_store_down.sh — the store goes away while a job runs longer than
# its lease.
# Injected: `pg_ctl stop -m immediate` of a private cluster while worker p
# runs an 8 s job under a 2 s lease; PostgreSQL stays down for 8 s. p cannot
# renew the lease, so by its own clock the lease ends 2 s after the last
# renewal that was answered: p must stop the handler then (self-fencing),
# not let it work on while the job may be handed to someone else. Then
# PostgreSQL comes back, the reaper hands the job on, and it succeeds as
# attempt 2; the history checker finds nothing wrong. Short and soak: 1 round.
source "$(dirname "$0")/lib.sh"
scen_init store_down
pg_private_start
start_server
write_worker_ini "$WORK/worker.ini" 2s 500ms 1 "poll_interval = 200ms"
start_worker p "$WORK/worker.ini"
id=$(submit_one 8000 1)
echo "$id" >>"$WORK/expect"
wait_until 30 "job $id to start on p" test -s "$WORK/pids/$id.1"
handler=$(cat "$WORK/pids/$id.1")
sleep 0.5
pg_ctl_priv -w -t 30 -m immediate stop >"$WORK/pg_ctl.log" 2>&1 || fail "pg_ctl stop failed"
down_at=$SECONDS
log "PostgreSQL stopped while p runs job $id (handler pid $handler, 8 s, lease 2 s)"
handler_gone() { ! kill -0 "$handler" 2>/dev/null; }
wait_until 6 "p to stop the handler of job $id when its lease ran out" handler_gone
log "p stopped the handler $((SECONDS - down_at))s after PostgreSQL went down"
grep -q "ran out without a heartbeat answer" "$WORK/worker-p.log" ||
    fail "p's log does not say why it stopped the handler"
sleep $((8 - (SECONDS - down_at) > 0 ? 8 - (SECONDS - down_at) : 0))
pg_private_start_again >>"$WORK/pg_ctl.log" 2>&1 || fail "PostgreSQL did not start again"
log "PostgreSQL back after $((SECONDS - down_at))s"
wait_job_succeeded 90 "$id"
log "job $id succeeded with attempt $(job_field "$id" attempt) on $(job_field "$id" worker_id)"
job_is "$id" attempt 2 || fail "job $id succeeded with attempt $(job_field "$id" attempt), want 2"
grep -q "^$id 1 " "$HISTORY" && fail "attempt 1's handler ran to its end, past its lease"
stop_pid "${WPID[p]}"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: the handler was stopped at the end of its lease while the store was down"
