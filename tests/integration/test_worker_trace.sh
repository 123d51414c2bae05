#!/usr/bin/env bash
# test_worker_trace.sh — trace context end to end (issue 28 item 7;
# docs/API.md and docs/WORKER.md, Trace context): `jobd submit --traceparent`
# enqueues a job (jobd job show prints its traceparent) whose real exec
# handler finds it in $TRACEPARENT (written to a file) and submits a child
# job with plain `jobd submit`, which takes $TRACEPARENT, so the child joins
# the trace; a job without one sees no TRACEPARENT although the worker
# itself runs with one. The worker's log
# lines about the job (started, finished, dead) end with trace_id=<its
# trace id>, and with --server so does the server's "job dead" line. Through
# `jobd worker --db` and `--server` on SQLite and on PostgreSQL (when
# JOBD_TEST_PG_URL is set, as under scripts/with-pg.sh). Start-up and
# clean-up: tests/lib/server_worker.sh.
set -euo pipefail
. "$(dirname "$0")/../lib/server_worker.sh"
sw_init trace
TP=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
TID=4bf92f3577b34da6a3ce929d0e0e4736
TP2=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
TID2=0af7651916cd43dd8448eb211c80319c

# traced: writes $TRACEPARENT (or "unset") to tp.<id>, submits a child job
# as a handler would (plain jobd submit, $JOBD_SERVER passed by env =) and
# returns the child's id. doomed: dead at once.
cat >"$dir/traced.sh" <<SH
#!/bin/sh
printf '%s' "\${TRACEPARENT-unset}" >"$dir/tp.\$JOBD_JOB_ID"
child=\$("$JOBD" submit child 2>/dev/null | sed 's/^{"id":\([0-9]*\),.*/\1/')
echo "{\"child\":\$child}"
SH
printf '#!/bin/sh\necho doomed >&2\nexit 65\n' >"$dir/doomed.sh"
chmod 755 "$dir/traced.sh" "$dir/doomed.sh"
printf '[worker]\nconcurrency = 2\n\n[handler "traced"]\nexec = %s/traced.sh\nenv = JOBD_SERVER\n\n[handler "doomed"]\nexec = %s/doomed.sh\n' \
    "$dir" "$dir" >"$dir/worker.ini"

field() { # ID FIELD: the job's FIELD as Python prints it
    curl -sfS "$server/v1/jobs/$1" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}
status_is() { # ID STATUS (polled: Python, the exact check, only once grep sees STATUS)
    curl -sfS "$server/v1/jobs/$1" >"$dir/st.json" && grep -q "\"status\": *\"$2\"" "$dir/st.json" &&
        [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' <"$dir/st.json")" = "$2" ]
}
submit() { "$JOBD" submit "$@" --server "$server" | sed 's/^{"id":\([0-9]*\),.*/\1/'; }

run() { # DB WORKER-STORE-ARGS...
    local db=$1; shift
    sw_server "$db"
    local wargs=("$@")
    [ "${wargs[0]}" = --server ] && wargs=(--server "$server")
    # The worker's own TRACEPARENT must never reach a job that has none.
    JOBD_SERVER="$server" TRACEPARENT=$TP2 "$JOBD" worker "${wargs[@]}" --config "$dir/worker.ini" \
        --id trace-worker --log-level debug 2>"$dir/worker.log" &
    wpid=$!
    rm -f "$dir"/tp.*
    # a bad one is refused, naming the field
    if TRACEPARENT= "$JOBD" submit traced --traceparent 00-nope --server "$server" \
        >/dev/null 2>"$dir/bad.err"; then
        fail "jobd submit took a bad --traceparent"
    fi
    grep -q traceparent "$dir/bad.err" || fail "the refusal does not name traceparent: $(cat "$dir/bad.err")"
    local id plain dead
    id=$(TRACEPARENT= submit traced --traceparent "$TP")
    plain=$(TRACEPARENT= submit traced)
    dead=$(TRACEPARENT= submit doomed --traceparent "$TP")
    [ "$(field "$id" traceparent)" = "$TP" ] || fail "the job does not keep its traceparent"
    # jobd job show on a terminal prints it
    script -qec "$JOBD job show $id --server $server" /dev/null >"$dir/show.txt" 2>&1 ||
        fail "jobd job show failed: $(cat "$dir/show.txt")"
    grep -Eq "^traceparent +$TP" "$dir/show.txt" ||
        fail "jobd job show does not print the traceparent: $(cat "$dir/show.txt")"
    sw_wait_for 60 "the traced job to succeed ($*)" status_is "$id" succeeded
    sw_wait_for 60 "the plain job to succeed ($*)" status_is "$plain" succeeded
    sw_wait_for 60 "the doomed job to die ($*)" status_is "$dead" dead
    [ "$(cat "$dir/tp.$id")" = "$TP" ] || fail "the handler's TRACEPARENT was '$(cat "$dir/tp.$id")'"
    [ "$(cat "$dir/tp.$plain")" = unset ] ||
        fail "a job without a traceparent saw TRACEPARENT='$(cat "$dir/tp.$plain")'"
    local child
    child=$(curl -sfS "$server/v1/jobs/$id" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["child"])')
    [ "$(field "$child" traceparent)" = "$TP" ] ||
        fail "the child job the handler submitted did not join the trace"
    [ "$(field "$plain" traceparent)" = None ] || fail "a plain job has a traceparent"
    # the worker's lines about the jobs carry the trace id; none for the plain one
    sw_wait_for 10 "the worker's job dead line" grep -q "job dead.* job=$dead .*trace_id=$TID" "$dir/worker.log"
    grep -q "job started.* job=$id .*trace_id=$TID\$" "$dir/worker.log" ||
        fail "no job started line with trace_id for job $id"
    grep -q "job finished.* job=$id .*trace_id=$TID\$" "$dir/worker.log" ||
        fail "no job finished line with trace_id for job $id"
    grep "job=$plain " "$dir/worker.log" | grep -q trace_id &&
        fail "a line about the plain job has a trace_id"
    grep -q "trace_id=$TID2" "$dir/worker.log" && fail "the worker's own TRACEPARENT reached a log line"
    if [ "${wargs[0]}" = --server ]; then
        grep -q "server: job dead job=$dead .*trace_id=$TID" "$dir/server.log" ||
            fail "the server's job dead line has no trace_id"
    fi
    sw_stop
    echo "ok: trace context end to end ($*)"
}

sw_each_store run
