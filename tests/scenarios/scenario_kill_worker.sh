#!/usr/bin/env bash
# scenario_kill_worker.sh — the seed's acceptance test: kill -9 a worker in
# the middle of a job (with its handler, as when its machine dies); the
# server's reaper finds the expired lease and hands the job to another
# worker, where it succeeds with attempt 2. The history checker then proves
# the job ran once under each lease, and /metrics counts the reap.
# Short and soak versions: 1 job / 20 jobs killed one after another.
# The handler's run waits on a gate file until the kill is done.
# The lease is 6 s with a heartbeat every 1 s: the worker's watchdog stops
# a run whose heartbeats go unanswered for 3.5 s, which a loaded machine
# (ASan, PostgreSQL at load 30) does not reach; with a 2 s lease it did
# (0.75 s of slack), and w1 stopped the job itself before the kill.
source "$(dirname "$0")/lib.sh"
scen_init kill_worker
pg_newdb
rounds=1; [ "$SOAK" = 1 ] && rounds=20

start_server
write_worker_ini "$WORK/worker.ini" 6s 1s 1 "poll_interval = 200ms"

for r in $(seq 1 "$rounds"); do
    # The run waits on a gate (handler.sh) that opens only after the kill, so
    # it is still running when killed however slow the machine: a fixed 5 s
    # sleep ended before the kill once at load 20 (fresh-clone CI, 21:01).
    gate="$WORK/gate-$r"
    id=$("$JOBD_BIN" submit scen --payload "{\"gate\":\"$gate\"}" --server "$SERVER_URL" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    echo "$id" >>"$WORK/expect"
    start_worker "w1-$r" "$WORK/worker.ini"
    wait_until 30 "job $id to start on w1-$r" test -s "$WORK/pids/$id.1"
    handler=$(cat "$WORK/pids/$id.1")
    [ "$(job_field "$id" worker_id)" = "w1-$r" ] || fail "job $id is not held by w1-$r"
    kill -KILL "${WPID[w1-$r]}" && kill -KILL -- "-$handler"
    wait "${WPID[w1-$r]}" 2>/dev/null || true
    log "round $r: killed worker w1-$r and its handler (pid $handler) in the middle of job $id"
    touch "$gate" # attempt 2 runs through

    start_worker "w2-$r" "$WORK/worker.ini"
    wait_job_succeeded 60 "$id"
    attempt=$(job_field "$id" attempt)
    holder=$(job_field "$id" worker_id)
    log "round $r: job $id succeeded with attempt $attempt on $holder"
    [ "$attempt" = 2 ] || fail "job $id succeeded with attempt $attempt, want 2"
    [ "$holder" = "w2-$r" ] || fail "job $id was finished by $holder, want w2-$r"
    stop_pid "${WPID[w2-$r]}"
done

reaped=$(metric jobd_jobs_reaped_total)
log "jobd_jobs_reaped_total $reaped"
if [ "$reaped" = missing ] || [ "$reaped" -lt "$rounds" ]; then
    fail "jobd_jobs_reaped_total is $reaped, want at least $rounds"
fi
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: $rounds kill(s), each job succeeded with attempt 2 on the second worker; reaped $reaped"
