#!/usr/bin/env bash
# scenario_blackhole.sh — the worker's link to PostgreSQL goes silent (every
# packet dropped, no RST, no FIN) while a job runs longer than its lease.
# Injected: worker p reaches PostgreSQL only through tcp_forward.py; while p
# runs a 10 s job under a 2 s lease, the forwarder is cut (SIGUSR1): it holds
# what it read and reads no more, nothing is closed. p's next heartbeat
# blocks inside libpq, on its loop thread, until the heal; the forwarder
# ACKs at the kernel level, so no TCP timeout fires either — only a lease
# check that does not depend on the loop thread can stop the handler. p must
# stop it by the end of its lease by its own clock (+ 1.5 s of slack for
# SIGTERM and the poll), while the link is still cut. The reaper hands the
# job on to worker w2 (direct to PostgreSQL, started after the cut), where
# it succeeds as attempt 2; then (at least 8 s after the cut) the link
# heals, p's late words are refused, p takes new work, and the history
# checker finds nothing wrong. Fails without the watchdog (src/worker/
# fence.c): the handler then runs until the heal. Short and soak: 1 round.
source "$(dirname "$0")/lib.sh"
scen_init blackhole
pg_newdb
start_forwarder
P_DB_URL=$FWD_DB_URL

start_server
write_worker_ini "$WORK/worker.ini" 2s 500ms 1 "poll_interval = 200ms"
start_worker p "$WORK/worker.ini" --db "$P_DB_URL"
id=$(submit_one 10000 1)
echo "$id" >>"$WORK/expect"
wait_until 30 "job $id to start on p" test -s "$WORK/pids/$id.1"
handler=$(cat "$WORK/pids/$id.1")
# A heartbeat just answered: the lease now ends at most 2 s after the cut.
hb_answered() { pg_sql "SELECT lease_expires_at > now() + interval '1700 ms' FROM jobd.jobs WHERE id = $id" | grep -qx t; }
wait_until 10 "a fresh heartbeat of job $id" hb_answered
kill -USR1 "$FWD_PID"
cut_ns=$(date +%s%N)
log "cut: p's link to PostgreSQL silently blackholed while it runs job $id (handler pid $handler, 10 s, lease 2 s)"
handler_gone() { ! kill -0 "$handler" 2>/dev/null; }
deadline=$((SECONDS + 8))
until handler_gone; do
    [ $SECONDS -lt $deadline ] || break
    sleep 0.05
done
handler_gone || fail "p's handler of job $id still runs $(( ($(date +%s%N) - cut_ns) / 1000000 )) ms after the cut (lease 2 s): it outlives its lease while the store call blocks"
gone_ms=$(( ($(date +%s%N) - cut_ns) / 1000000 ))
log "p stopped the handler ${gone_ms} ms after the cut (lease 2 s, slack 1.5 s)"
[ "$gone_ms" -le 3500 ] || fail "the handler was stopped ${gone_ms} ms after the cut, later than the lease + 1.5 s"
grep -q "ran out without a heartbeat answer" "$WORK/worker-p.log" ||
    fail "p's log does not say why it stopped the handler"
grep -q "^$id 1 " "$HISTORY" && fail "attempt 1's handler ran to its end, past its lease"
# Another worker takes the job over while p is still cut off.
start_worker w2 "$WORK/worker.ini"
wait_job_succeeded 60 "$id" "job $id to succeed on w2"
cut_for=$(( ($(date +%s%N) - cut_ns) / 1000000000 ))
[ "$cut_for" -lt 8 ] && sleep $((8 - cut_for))
kill -USR2 "$FWD_PID"
log "healed"
# p is back: it reports (refused or dropped) and takes new work.
id2=$(submit_one 0)
echo "$id2" >>"$WORK/expect"
wait_job_succeeded 60 "$id2"
job_is "$id" attempt 2 || fail "job $id succeeded with attempt $(job_field "$id" attempt), want 2"
stop_pid "${WPID[p]}"; stop_pid "${WPID[w2]}"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: the handler was stopped at the end of its lease while its store call hung in a silent partition"
