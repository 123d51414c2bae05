#!/usr/bin/env bash
# test_workflow_cancel_e2e.sh — a whole workflow cancelled through the real
# binary (docs/API.md, POST /v1/workflows/{id}/cancel): a separate `jobd
# worker` runs the first step's exec handler (a long sleep); the cancel
# answers 200 with the other steps cancelled and the running one asked to
# stop, the worker stops the handler (within seconds, not its 60 s) and
# reports, so the workflow ends failed with every step cancelled. Then the
# workflow is deleted (204) and its jobs are gone. Through `jobd worker
# --db` and `--server` on SQLite and PostgreSQL (when JOBD_TEST_PG_URL is
# set). Start-up and clean-up: tests/lib/server_worker.sh.
set -euo pipefail
. "$(dirname "$0")/../lib/server_worker.sh"
sw_init wfcancel

cat >"$dir/long.sh" <<SH
#!/bin/sh
touch "$dir/started-\$JOBD_JOB_ID"
sleep 60
SH
chmod 755 "$dir/long.sh"
printf '[worker]\nconcurrency = 2\n\n[handler "wf.long"]\nexec = %s/long.sh\n' "$dir" >"$dir/worker.ini"

field() { # JSON-FILE PYTHON-EXPRESSION (j is the document)
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
wf_status_is() { # ID STATUS (polled: Python, the exact check, only once grep sees STATUS)
    curl -sfS "$server/v1/workflows/$1" >"$dir/wf.json" && grep -q "\"status\": *\"$2\"" "$dir/wf.json" &&
        [ "$(field "$dir/wf.json" 'j["status"]')" = "$2" ]
}

run() { # DB WORKER-STORE-ARGS...
    local db=$1; shift
    sw_server "$db"
    curl -sfS "$server/v1/workflows" -H 'Content-Type: application/json' -d '{"name": "etl",
      "steps": [{"ref": "extract", "type": "wf.long"},
                {"ref": "t1", "type": "wf.none", "depends_on": ["extract"]},
                {"ref": "t2", "type": "wf.none", "depends_on": ["extract"]},
                {"ref": "load", "type": "wf.none", "depends_on": ["t1", "t2"]}]}' >"$dir/sub.json" ||
        fail "POST /v1/workflows"
    local id e
    id=$(field "$dir/sub.json" 'j["id"]')
    e=$(field "$dir/sub.json" 'j["jobs"]["extract"]')
    local wargs=("$@")
    [ "${wargs[0]}" = --server ] && wargs=(--server "$server")
    "$JOBD" worker "${wargs[@]}" --config "$dir/worker.ini" --id wf-worker 2>"$dir/worker.log" &
    wpid=$!
    sw_wait_for 30 "the first step's handler to start ($*)" test -e "$dir/started-$e"
    curl -sfS -X POST "$server/v1/workflows/$id/cancel" >"$dir/cancel.json" || fail "POST cancel"
    # the three waiting steps cancelled; the running one asked to stop (its
    # worker may have stopped it already when the answer is read)
    [ "$(field "$dir/cancel.json" 'j["counts"]["running"] + j["counts"]["cancelled"]')" = 4 ] &&
        [ "$(field "$dir/cancel.json" '[s["status"] for s in j["steps"][1:]]')" = \
            "['cancelled', 'cancelled', 'cancelled']" ] ||
        fail "cancel answered $(cat "$dir/cancel.json")"
    sw_wait_for 20 "the running step to be stopped ($*)" wf_status_is "$id" failed
    [ "$(field "$dir/wf.json" 'j["counts"]["cancelled"]')" = 4 ] ||
        fail "after the cancel: $(cat "$dir/wf.json")"
    [ "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$server/v1/workflows/$id")" = 204 ] ||
        fail "DELETE /v1/workflows/$id"
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$server/v1/jobs/$e")" = 404 ] ||
        fail "job $e is still there after the delete"
    sw_stop
    echo "ok: a workflow cancelled whole, its running step stopped, then deleted ($*)"
}

sw_each_store run
