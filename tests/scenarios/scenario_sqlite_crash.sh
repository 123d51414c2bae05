#!/usr/bin/env bash
# scenario_sqlite_crash.sh — the embedded default (one `jobd server` with
# its worker, on SQLite) dies mid-run while a client enqueues.
# Injected: kill -9 of the whole server (API, scheduling plane and embedded
# worker; its handlers are orphaned and finish on their own) while a client
# sends one POST /v1/jobs after another and jobs are running; then a restart
# on the same file and port. Every enqueue the client saw acknowledged must be
# in the store, no retried enqueue may have made a second job (idempotency
# keys), and every job must finish, exactly once by the history checker's rules.
# Short: 40 enqueues, 1 crash; soak: 400 enqueues, 5 crashes.
source "$(dirname "$0")/lib.sh"
scen_init sqlite_crash
DB_URL=sqlite:$WORK/jobd.db
total=40 crashes=1
[ "$SOAK" = 1 ] && total=400 crashes=5
SERVER_LISTEN=127.0.0.1:$(free_port)
write_worker_ini "$WORK/worker.ini" 2s 500ms 4 "id = server"
start_server --worker-config "$WORK/worker.ini"

# The client: one enqueue at a time, each with its own idempotency key, and
# like a careful client it sends a request again (same key) until it is
# acknowledged: 201 created, or 200 replayed when an earlier try had been
# committed but its answer was lost in the crash. Acknowledged ids go to
# $WORK/expect at once; failed tries are counted in $WORK/refused.
client() {
    local i code body
    for i in $(seq 1 "$total"); do
        while :; do
            body=$(curl -sS -m 5 -w '\n%{http_code}' -H 'Content-Type: application/json' \
                -H "Idempotency-Key: client-$i" \
                -d '{"type":"scen","payload":{"sleep_ms":300}}' "$SERVER_URL/v1/jobs" 2>/dev/null) ||
                body=$'\n000'
            code=${body##*$'\n'}
            if [[ $code =~ ^20[01]$ ]] && [[ $body =~ \"id\":[[:space:]]*([0-9]+) ]]; then
                echo "${BASH_REMATCH[1]}" >>"$WORK/expect"
                [ "$code" = 200 ] && echo "$i replayed" >>"$WORK/replayed"
                break
            fi
            echo "$i $code" >>"$WORK/refused"
            sleep 0.1
        done
        sleep 0.05
    done
    echo done >"$WORK/client.done"
}
: >"$WORK/expect"; : >"$WORK/refused"; : >"$WORK/replayed"
client &
SCEN_PIDS_ALL+=("$!")

acked() { [ "$(wc -l <"$WORK/expect")" -ge "$1" ]; }
for c in $(seq 1 "$crashes"); do
    wait_until 60 "$((c * total / (crashes + 1))) acknowledged enqueues" acked $((c * total / (crashes + 1)))
    running=$(sq_count "status = 'running'")
    kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
    log "crash $c: kill -9 jobd server after $(wc -l <"$WORK/expect") acks, $running job(s) running"
    sleep 0.5
    start_server --worker-config "$WORK/worker.ini"
done
wait_until 120 "the client to finish" test -e "$WORK/client.done"
nacked=$(wc -l <"$WORK/expect")
log "client: $nacked of $total enqueues acknowledged ($(wc -l <"$WORK/replayed") replayed by key), $(wc -l <"$WORK/refused") tries failed"
[ "$nacked" = "$total" ] || fail "$nacked of $total enqueues acknowledged"

all_done() { sq_count_is "status <> 'succeeded'" 0; }
wait_until 120 "every job to succeed" all_done
sq_dump_jobs "$WORK/jobs.json"
present=$(python3 -c '
import json, sys
ids = {json.loads(l)["id"] for l in open(sys.argv[1]) if l.strip()}
print(sum(1 for l in open(sys.argv[2]) if l.strip() and int(l) in ids))' "$WORK/jobs.json" "$WORK/expect")
log "acknowledged and present: $present/$nacked; jobs in the store: $(wc -l <"$WORK/jobs.json")"
[ "$present" = "$nacked" ] || fail "only $present of $nacked acknowledged jobs are in the store"
stop_pid "$SERVER_PID"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: $crashes crash(es), $present/$nacked acknowledged enqueues present, every job succeeded"
