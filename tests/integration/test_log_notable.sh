#!/usr/bin/env bash
# test_log_notable.sh — what `jobd server` logs by default, through the real
# binary on SQLite and on PostgreSQL (docs/LOGGING.md, Access log): no
# access line for successful reads (the dashboard's and Prometheus' polls,
# /healthz) or an idle long-poll claim; a line for an error, a submit and a
# claim that handed out a job; an info line when a lease is reaped (plane:
# the job, its type, queue, worker and what became of it), when the
# server's own worker's report leaves a job dead (worker:), and when a
# remote worker's does (server:); and `--access-log all` logs every request
# as before. Needs JOBD_BIN, curl and python3; PostgreSQL from
# JOBD_TEST_PG_URL (scripts/with-pg.sh), required under JOBD_TEST_REQUIRE_PG.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-notable.XXXXXX")
spid=""
pgdb=""
stop() { [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=""; }
cleanup() {
    stop
    [ -n "$pgdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb WITH (FORCE)" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
unset JOBD_SERVER JOBD_TOKEN JOBD_DB JOBD_LISTEN JOBD_ACCESS_LOG JOBD_ACCESS_LOG_SLOW
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
# until_log LOG PATTERN: waits (up to 30 s) for a line matching PATTERN.
until_log() {
    for _ in $(seq 300); do
        grep -q "$2" "$1" && return 0
        sleep 0.1
    done
    echo "  (no line matching '$2' in $1:)"; tail -20 "$1"
    return 1
}

# The server's own worker runs "boom": a handler that fails for good (exit 65).
printf '#!/bin/sh\ncat >/dev/null\necho "smtp: 550 no such user" >&2\nexit 65\n' >"$dir/boom.sh"
chmod +x "$dir/boom.sh"
printf '[worker]\nconcurrency = 1\n\n[handler "boom"]\nexec = %s\ntimeout = 10s\n' \
    "$dir/boom.sh" >"$dir/worker.ini"

# start NAME DB ARGS...: runs the server, logs to $dir/NAME.log, sets $url.
start() {
    local name=$1 db=$2 log="$dir/$1.log"
    shift 2
    : >"$log"
    "$JOBD" server --db "$db" --listen 127.0.0.1:0 --reap-interval 200ms "$@" 2>"$log" &
    spid=$!
    url=""
    for _ in $(seq 300); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$log" | head -n 1)
        [ -n "$url" ] && return 0
        sleep 0.1
    done
    echo "server $name did not start:"; cat "$log"; exit 1
}
post() { curl -s -H 'Content-Type: application/json' -d "$2" "$url$1"; }
# claim TYPE LEASE_S: one job of TYPE for worker "remote-1"; prints "ID ATTEMPT TOKEN".
claim() {
    post /v1/claim "{\"worker_id\":\"remote-1\",\"types\":[\"$1\"],\"limit\":1,\"lease_s\":$2}" |
        python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(j["id"], j["attempt"], j["lease_token"])'
}
submit() { post /v1/jobs "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }

scenario() { # NAME DB
    local name=$1 log="$dir/$1.log"
    start "$name" "$2" --worker-config "$dir/worker.ini"
    # Routine traffic: reads that succeed, and a long poll that finds nothing.
    for p in /healthz /metrics /v1/queues /v1/jobs /v1/workers; do
        curl -sf -o /dev/null "$url$p" || echo "  GET $p failed"
    done
    curl -sf -o /dev/null -I "$url/healthz"
    post /v1/claim '{"worker_id":"remote-1","types":["nobody.handles"],"wait_s":0.5}' >/dev/null
    # Notable: an error, submits, claims that hand out a job.
    curl -s -o /dev/null "$url/v1/jobs/987654321"
    dead=$(submit '{"type":"boom","payload":{"to":"x@example.org"}}')
    reap=$(submit '{"type":"mail.send","queue":"mail"}')
    read -r rid ratt _ <<<"$(claim mail.send 1)" # never heartbeated: reaped after 1 s
    fail=$(submit '{"type":"report.build","max_attempts":1}')
    read -r fid fatt ftok <<<"$(claim report.build 60)"
    post "/v1/jobs/$fid/fail" "{\"attempt\":$fatt,\"lease_token\":\"$ftok\",\"error\":\"disk full\",\"retryable\":false}" >/dev/null

    until_log "$log" "info plane: lease expired; reaped job=$reap attempt=1 type=mail.send queue=mail worker=remote-1 now=pending"
    check "$name: a reaped lease is an info line with job, type, queue, worker, fate" "[ $? = 0 ]"
    until_log "$log" "info worker: job dead worker=[^ ]* job=$dead attempt=1 type=boom error=\"smtp: 550 no such user"
    check "$name: the own worker's dead job is an info line with its error" "[ $? = 0 ]"
    check "$name: a remote worker's dead job is an info line (server:)" \
        'grep -q "info server: job dead job=$fid attempt=1 type=report.build queue=default error=\"disk full\"" "$log"'
    stop
    check "$name: no access line for successful GETs and HEADs" \
        '! grep -E "http: request method=(GET|HEAD) .*status=[23]" "$log"'
    check "$name: no access line for the idle long poll (only the 2 claims that got a job)" \
        '[ "$(grep -c "http: request method=POST path=/v1/claim status=200" "$log")" = 2 ]'
    check "$name: the 404 is logged" 'grep -q "http: request method=GET path=/v1/jobs/987654321 status=404" "$log"'
    check "$name: the 3 submits are logged" \
        '[ "$(grep -c "http: request method=POST path=/v1/jobs status=201" "$log")" = 3 ]'
    check "$name: the fail report is logged" "grep -q 'http: request method=POST path=/v1/jobs/$fid/fail status=200' '$log'"
    [ "$rid:$ratt" = "$reap:1" ] || { echo "FAIL $name: claimed $rid:$ratt, not $reap:1"; fails=$((fails + 1)); }
}

scenario sqlite "sqlite:$dir/jobs.db"
if [ -n "${JOBD_TEST_PG_URL:-}" ] && command -v psql >/dev/null; then
    pgdb="jobd_t_notable_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null
    scenario pg "${JOBD_TEST_PG_URL%/*}/$pgdb"
elif [ -n "${JOBD_TEST_REQUIRE_PG:-}" ]; then
    echo "FAIL pg: JOBD_TEST_REQUIRE_PG is set but JOBD_TEST_PG_URL is not"; fails=$((fails + 1))
else
    echo "SKIP pg: JOBD_TEST_PG_URL is not set (run under scripts/with-pg.sh)"
fi

# --access-log all: every request, as before.
start all "sqlite:$dir/all.db" --access-log all
curl -sf -o /dev/null "$url/v1/queues"
post /v1/claim '{"worker_id":"w","types":["nobody.handles"]}' >/dev/null
stop
check "--access-log all: the GET is logged" 'grep -q "http: request method=GET path=/v1/queues status=200" "$dir/all.log"'
check "--access-log all: the idle claim is logged" 'grep -q "http: request method=POST path=/v1/claim status=200" "$dir/all.log"'

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
exit "$fails"
