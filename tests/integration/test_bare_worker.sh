#!/usr/bin/env bash
# test_bare_worker.sh — a claim by a worker id counts as presence (docs/API.md,
# Remote workers), through the real server on SQLite and PostgreSQL: a client
# that only calls POST /v1/claim is listed by GET /v1/workers (active, with
# the claim's types and queues), so `jobd submit` of its type does not warn
# that no live worker handles it; a worker that announced itself keeps what
# it announced when it claims. Then the minimal remote worker of docs/API.md
# (the routes in order) runs a job to the end with curl alone.
# Needs JOBD_BIN (set by CTest), curl, python3; JOBD_TEST_PG_URL with psql
# for the PostgreSQL half (skipped without it, failed under
# JOBD_TEST_REQUIRE_PG=1).
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d /tmp/jobd-bare.XXXXXX)
pgdb="bare_$$"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    [ -n "${JOBD_TEST_PG_URL:-}" ] &&
        psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
post() { curl -sS -H 'Content-Type: application/json' -d "$2" "$url$1"; }
worker() { # id, field: the worker's field as JSON ("null" if not listed)
    curl -sS "$url/v1/workers" | python3 -c 'import json, sys
ws = {w["id"]: w for w in json.load(sys.stdin)["workers"]}
print(json.dumps(ws[sys.argv[1]][sys.argv[2]] if sys.argv[1] in ws else None, separators=(",", ":")))' "$1" "$2"
}
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

run() { # backend name, store URL
    local b=$1 db=$2
    "$JOBD" server --db "$db" --listen 127.0.0.1:0 2>"$dir/$b.server.log" &
    pids+=($!)
    url=""
    for _ in $(seq 300); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/$b.server.log" | head -n 1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "FAIL $b: server did not start"; cat "$dir/$b.server.log"; exit 1; }
    export JOBD_SERVER=$url

    "$JOBD" submit bare.type >/dev/null 2>"$dir/$b.w1"
    check "$b: before any claim, submit warns" 'grep -q "no live worker handles type bare.type" "$dir/$b.w1"'
    post /v1/claim '{"worker_id":"bare-1","types":["bare.type","other.type"],"limit":2}' >"$dir/$b.c1"
    check "$b: the bare claim got the job" 'grep -q "\"type\":\"bare.type\"" "$dir/$b.c1"'
    check "$b: the bare worker is listed, active" '[ "$(worker bare-1 state)" = "\"active\"" ]'
    check "$b: with the claim's types" '[ "$(worker bare-1 types)" = "[\"bare.type\",\"other.type\"]" ]'
    check "$b: every queue, as the claim named none" '[ "$(worker bare-1 queues)" = "[]" ]'
    check "$b: its limit as concurrency" '[ "$(worker bare-1 concurrency)" = 2 ]'
    "$JOBD" submit bare.type >/dev/null 2>"$dir/$b.w2"
    check "$b: submit of its type no longer warns" '[ ! -s "$dir/$b.w2" ]'
    "$JOBD" submit other.type --queue q2 >/dev/null 2>"$dir/$b.w3"
    check "$b: nor of its other type on another queue" '[ ! -s "$dir/$b.w3" ]'

    # A worker that announced itself keeps its announcement when it claims.
    post /v1/workers '{"id":"full-1","hostname":"h1","types":["full.type"],"queues":["fq"],"heartbeat_ms":60000}' >/dev/null
    post /v1/claim '{"worker_id":"full-1","types":["full.type","x.type"],"queues":["fq"]}' >/dev/null
    check "$b: an announced worker keeps its hostname" '[ "$(worker full-1 hostname)" = "\"h1\"" ]'
    check "$b: and its types" '[ "$(worker full-1 types)" = "[\"full.type\"]" ]'
    post /v1/workers '{"id":"full-2","types":["full.type"],"heartbeat_ms":60000}' >/dev/null
    post /v1/workers/full-2/presence '{"draining":true}' >/dev/null
    check "$b: draining" '[ "$(worker full-2 state)" = "\"draining\"" ]'
    post /v1/claim '{"worker_id":"full-2","types":["full.type"]}' >/dev/null
    check "$b: a claim makes a draining worker active" '[ "$(worker full-2 state)" = "\"active\"" ]'

    # The minimal remote worker of docs/API.md, Remote workers: claim (long
    # poll), heartbeat, complete; then the job is done.
    post /v1/jobs '{"type":"mini.type","payload":{"n":1}}' >"$dir/$b.j"
    local id att tok
    id=$(field "$dir/$b.j" id)
    post /v1/claim '{"worker_id":"mini-1","types":["mini.type"],"lease_s":30,"wait_s":5}' >"$dir/$b.mc"
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
open(sys.argv[2], "w").write(json.dumps({"attempt": j["attempt"], "lease_token": j["lease_token"]}))' \
        "$dir/$b.mc" "$dir/$b.lease"
    att=$(field "$dir/$b.lease" attempt)
    tok=$(field "$dir/$b.lease" lease_token)
    post "/v1/jobs/$id/heartbeat" "{\"attempt\":$att,\"lease_token\":\"$tok\",\"lease_s\":30}" >"$dir/$b.hb"
    check "$b: mini worker: heartbeat" 'grep -q "\"cancel_requested\":false" "$dir/$b.hb"'
    post "/v1/jobs/$id/complete" "{\"attempt\":$att,\"lease_token\":\"$tok\",\"result\":{\"ok\":true}}" >"$dir/$b.done"
    check "$b: mini worker: complete" '[ "$(field "$dir/$b.done" status)" = succeeded ]'
    post "/v1/jobs/$id/complete" "{\"attempt\":$att,\"lease_token\":\"$tok\"}" >"$dir/$b.again"
    check "$b: mini worker: a second report is 409 stale_attempt" 'grep -q "\"code\":\"stale_attempt\"" "$dir/$b.again"'
    check "$b: mini worker listed" '[ "$(worker mini-1 state)" = "\"active\"" ]'
}

run sqlite "sqlite:$dir/s.db"

if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
    [ "${JOBD_TEST_REQUIRE_PG:-0}" = 1 ] && { echo "FAIL JOBD_TEST_PG_URL is not set"; exit 1; }
    echo "$fails failed (PostgreSQL half skipped: no JOBD_TEST_PG_URL)"
    [ "$fails" -eq 0 ] || exit 1
    exit 77
fi
psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null || exit 1
run pg "${JOBD_TEST_PG_URL%/*}/$pgdb"

echo "$fails failed"
[ "$fails" -eq 0 ]
