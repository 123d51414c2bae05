#!/usr/bin/env bash
# scenario_late_claim.sh — a claim whose answer arrives after its lease.
# Injected: remote worker p (`--server`) talks to the API through
# tcp_forward.py; the forwarder holds the server's answers (SIGHUP), so p's
# claim commits on the server but p hears nothing. The lease runs out, the
# reaper hands the job on, w2 runs it as attempt 2. Then the answers flow
# again and p finally receives the claim of attempt 1, whose lease ended
# long ago: p must not start the handler (another worker has already run
# the job), and the job keeps w2's result. Short and soak: 1 round.
source "$(dirname "$0")/lib.sh"
scen_init late_claim
pg_newdb
start_server
write_worker_ini "$WORK/worker.ini" 2s 500ms 1 "poll_interval = 200ms"

fport=$(free_port)
sport=${SERVER_URL##*:}
python3 "$SCEN_DIR/tcp_forward.py" "$fport" 127.0.0.1 "$sport" "$WORK/fwd.pid" >"$WORK/forward.log" 2>&1 &
FWD_PID=$!
SCEN_PIDS_ALL+=("$FWD_PID")
wait_until 10 "the forwarder to listen" test -s "$WORK/fwd.pid"
start_worker p "$WORK/worker.ini" --server "http://127.0.0.1:$fport"
polled() { grep -qs "method=POST path=/v1/claim" "$WORK/server.log"; }
wait_until 20 "p to poll for work" polled

# p claims every 200 ms: if one of its claims were in flight when the answers
# are held, p would wait out its 30 s request timeout on an empty answer.
# So p is frozen first, its last answer lands in its socket, then the
# answers are held and the job submitted; thawed, p's next claim takes it.
kill -STOP "${WPID[p]}"
sleep 0.5
kill -HUP "$FWD_PID"
log "the server's answers to p are held from now on"
id=$(submit_one 0)
echo "$id" >>"$WORK/expect"
kill -CONT "${WPID[p]}"
# On a loaded machine a claim may still have been on its way when p was
# frozen; p then waits out that request (30 s) before it claims again, and
# that claim commits the same way: so wait longer than the request timeout.
wait_until 60 "p's claim of job $id to commit" job_is "$id" worker_id p
log "job $id claimed by p on the server (attempt $(job_field "$id" attempt)); p has not heard of it"
start_worker w2 "$WORK/worker.ini"
wait_job_succeeded 60 "$id" "w2 to run job $id as attempt 2"
job_is "$id" worker_id w2 || fail "job $id succeeded on $(job_field "$id" worker_id), want w2"
stop_pid "${WPID[w2]}"

kill -USR2 "$FWD_PID"
log "answers flow again: p receives the claim of attempt 1 now"
got_answer() { [ "$(grep -c "method=POST path=/v1/claim" "$WORK/server.log")" -gt "$1" ]; }
wait_until 20 "p to claim again after the heal" got_answer "$(grep -c "method=POST path=/v1/claim" "$WORK/server.log")"
# p has the late answer: wait until it has decided (dropped it, or, wrongly,
# started it), not a fixed 2 s; the checks below tell which.
decided() {
    grep -q "claim answered too close to the lease" "$WORK/worker-p.log" || grep -q "^$id 1 p " "$HISTORY.starts"
}
wait_until 30 "p to drop or start the late claim of job $id" decided
stop_pid "${WPID[p]}"
if grep -q "^$id 1 p " "$HISTORY.starts"; then
    fail "p started job $id attempt 1 after its lease had ended and w2 had run attempt 2"
fi
grep -q "claim answered too close to the lease" "$WORK/worker-p.log" ||
    fail "p's log does not say it dropped the late claim: $(tail -n 3 "$WORK/worker-p.log")"
log "p: $(grep -o 'claim answered too close.*' "$WORK/worker-p.log" | head -n 1)"
job_is "$id" status succeeded && job_is "$id" attempt 2 && job_is "$id" worker_id w2 ||
    fail "job $id changed after p's late claim"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: the late claim was not run; job $id kept w2's attempt 2"
