#!/usr/bin/env bash
# scenario_workflow_dag.sh — a random workflow runs through crashes.
# A seeded random DAG (tests/scenarios/wf_dag.py: each step 0-3 parents
# among the steps before it, fan-ins, about one step in eight failing its
# first attempt or two) is submitted at once with POST /v1/workflows to a
# `jobd server` on a private PostgreSQL, and run by three `jobd worker`
# processes (w1, w2 on the store, w3 through the server's API). Injected
# while it runs: w1 killed -9 with its handlers (as when its machine dies)
# and restarted, PostgreSQL restarted (-m immediate: crash recovery), w1
# killed and restarted again. A waiting step's release is written by its
# last parent's end (docs/MODEL.md, Dependencies), so a crash between the
# two cannot exist; this checks that from outside.
# Then the history checker (check_history.py --workflow): every step ran
# once per lease and succeeded; no step started before all its parents had
# finished (their accepted runs' ends precede its first start, a killed run
# included); and GET /v1/workflows/{id} says succeeded, every count 0 but
# succeeded, and the steps and edges that were submitted.
# Short: 200 steps (about 300 edges: the kills and the restart still land
# at 20, 60 and 100 steps done, while dozens run or wait); soak: 1,000.
# SEED=N replays a DAG (the seed is logged).
source "$(dirname "$0")/lib.sh"
scen_init workflow_dag
pg_private_start
n=200; [ "$SOAK" = 1 ] && n=1000
seed=${SEED:-$((RANDOM * 32768 + RANDOM))}
log "seed $seed (SEED=$seed replays this DAG), $n steps"
python3 "$SCEN_DIR/wf_dag.py" "$seed" "$n" >"$WORK/submitted.json" 2>"$WORK/dag.txt" || fail "wf_dag.py failed"
log "DAG: $(cat "$WORK/dag.txt")"

# The server's retry delays (a reaped lease) as short as the workers' (lib.sh).
start_server --backoff-base 100ms --backoff-cap 1s
# A 3 s lease, as scenario_pg_restart: a killed worker's jobs are reaped soon.
write_worker_ini "$WORK/worker.ini" 3s 500ms 4 "poll_interval = 1s"
start_worker w1 "$WORK/worker.ini"
start_worker w2 "$WORK/worker.ini"
start_worker w3 "$WORK/worker.ini" --server "$SERVER_URL"

code=$(curl -sS -o "$WORK/post.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "@$WORK/submitted.json" "$SERVER_URL/v1/workflows") || fail "POST /v1/workflows: curl failed"
[ "$code" = 201 ] || fail "POST /v1/workflows: HTTP $code: $(head -c 300 "$WORK/post.json")"
wf=$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    f.writelines(f"{i}\n" for i in sorted(a["jobs"].values()))
print(a["id"])' "$WORK/post.json" "$WORK/expect")
[ "$(wc -l <"$WORK/expect")" = "$n" ] || fail "POST /v1/workflows answered $(wc -l <"$WORK/expect") job ids, want $n"
log "workflow $wf submitted: $n jobs"

# wf_field FIELD: the workflow's status, or one of its counts (counts.NAME).
wf_field() {
    curl -sfS "$SERVER_URL/v1/workflows/$wf" | python3 -c '
import json, sys
w = json.load(sys.stdin)
f = sys.argv[1]
print(w["counts"][f[7:]] if f.startswith("counts.") else w[f])' "$1"
}
# The progress waits count in the store (one psql; the private cluster holds
# only this workflow's jobs), not through GET /v1/workflows/{id}: that
# answer lists every step, which the server renders and a python3 parsed
# every 0.2 s of the run.
succeeded_at_least() { [ "$(pg_count "status = 'succeeded'")" -ge "$1" ]; }
all_terminal() { pg_count_is "status NOT IN ('succeeded', 'dead', 'cancelled')" 0; }
healthy() { curl -sf "$SERVER_URL/healthz" >/dev/null; }

# kill_w1 ROUND: kill -9 of w1 and its handlers while at least one runs:
# stopped first (SIGSTOP), so no run it holds can be reported; then its
# children (each handler leads its own process group) and it. Restarted.
has_children() { [ -n "$(ps -o pid= --ppid "$1")" ]; }
kill_w1() {
    local pid=${WPID[w1]} kids tries=0
    while :; do
        wait_until 30 "w1 to run a handler" has_children "$pid"
        kill -STOP "$pid"
        kids=$(ps -o pid= --ppid "$pid" | tr -s ' \n' ' ')
        [ -n "${kids// /}" ] && break
        kill -CONT "$pid"
        tries=$((tries + 1))
        [ $tries -lt 50 ] || fail "w1's handlers always ended before the kill"
    done
    kill -KILL "$pid"
    for k in $kids; do kill -KILL -- "-$k" 2>/dev/null || kill -KILL "$k" 2>/dev/null || true; done
    wait "$pid" 2>/dev/null || true
    log "kill $1: w1 (pid $pid) killed -9 with its running handler(s) $kids at $(wf_field counts.succeeded)/$n succeeded"
    start_worker w1 "$WORK/worker.ini"
}

wait_until 120 "$((n * 10 / 100)) steps to succeed" succeeded_at_least $((n * 10 / 100))
kill_w1 1
wait_until 120 "$((n * 30 / 100)) steps to succeed" succeeded_at_least $((n * 30 / 100))
before=$(wf_field counts.succeeded)
pg_ctl_priv -w -t 60 -m immediate restart >"$WORK/pg_ctl.log" 2>&1 || fail "pg_ctl restart failed"
log "PostgreSQL restarted (-m immediate) at $before/$n succeeded"
wait_until 60 "the server's /healthz after the restart" healthy
wait_until 120 "$((n * 50 / 100)) steps to succeed" succeeded_at_least $((n * 50 / 100))
kill_w1 2

ended() { [ "$(wf_field status)" != running ]; }
wait_until $((SOAK == 1 ? 1200 : 180)) "every step of workflow $wf to end" all_terminal
wait_until 60 "workflow $wf to end" ended
for w in w1 w2 w3; do kill -0 "${WPID[$w]}" 2>/dev/null || fail "worker $w died"; done
kill -0 "$SERVER_PID" 2>/dev/null || fail "the server died"
for w in w1 w2 w3; do stop_pid "${WPID[$w]}"; done
curl -sfS "$SERVER_URL/v1/workflows/$wf" >"$WORK/workflow.json" || fail "GET /v1/workflows/$wf failed"
log "workflow $wf: $(wf_field status), counts $(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["counts"]))' "$WORK/workflow.json")"

reaped=$(metric jobd_jobs_reaped_total)
log "jobd_jobs_reaped_total $reaped"
if [ "$reaped" = missing ] || [ "$reaped" -lt 2 ]; then
    fail "jobd_jobs_reaped_total is $reaped: each kill left at least one lease to reap, want at least 2"
fi
# Two batches ending parents of the same steps may deadlock; the store runs
# the aborted statement again (docs/MODEL.md, Dependencies). How often:
log "PostgreSQL's log: $(grep -c 'deadlock detected' "$WORK/postgres.log" || true) deadlock(s) detected"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" --workflow "$WORK/workflow.json" --submitted "$WORK/submitted.json" ||
    fail "the history checker found violations (seed $seed)"
log "ok: seed $seed, $n steps through 2 kills of w1 and a PostgreSQL restart; no step before its parents, workflow succeeded"
