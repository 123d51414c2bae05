#!/usr/bin/env bash
# test_numbers.sh — numbers come back as they were sent (docs/API.md,
# Conventions), through the real binary on SQLite and on PostgreSQL: a
# payload of awkward values (0.1, 0.6, 1e300, 5e-324, -0.0, 1.5e-7 and the
# integer 2^53 + 1) is printed unchanged by POST /v1/jobs, GET /v1/jobs/{id},
# GET /v1/jobs, `jobd submit`, `jobd jobs`, `jobd job show` and a schedule;
# a handler that echoes it (the embedded worker, and `jobd worker --server`)
# and a bare API client's complete make it the result, unchanged; on
# PostgreSQL a job enqueued with the SQL function jobd.enqueue (whose jsonb
# writes 1e300 out as 301 digits) prints short too. jansson's own printer
# would give 0.59999999999999998 and 1.0000000000000001e300.
# Needs JOBD_BIN (set by CTest), curl, and JOBD_TEST_PG_URL with psql for the
# PostgreSQL half (skipped without it, failed under JOBD_TEST_REQUIRE_PG=1).
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d /tmp/jobd-numbers.XXXXXX)
pgdb="numbers_$$"
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
P='{"a":0.6,"b":1e300,"c":0.1,"d":5e-324,"e":-0.0,"f":1.5e-7,"g":9007199254740993}'
has() { grep -qF -- "\"$2\":$P" "$1"; } # file, member: the member is P, as sent
post() { curl -sS -H 'Content-Type: application/json' -d "$2" "$url$1"; }
id_of() { sed -n 's/^{"id":\([0-9]*\),.*/\1/p' "$1"; }
wait_status() { # id, status: up to 60 s
    for _ in $(seq 600); do
        curl -sS "$url/v1/jobs/$1" | grep -q "\"status\":\"$2\"" && return 0
        sleep 0.1
    done
    return 1
}
printf '[worker]\nconcurrency = 1\n[handler "echo"]\nexec = /bin/cat\n' >"$dir/worker.ini"
printf '[worker]\nconcurrency = 1\n[handler "recho"]\nexec = /bin/cat\n' >"$dir/remote.ini"

run() { # backend name, store URL
    local b=$1 db=$2
    "$JOBD" server --db "$db" --listen 127.0.0.1:0 --worker-config "$dir/worker.ini" \
        2>"$dir/$b.server.log" &
    pids+=($!)
    url=""
    for _ in $(seq 300); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/$b.server.log" | head -n 1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "FAIL $b: server did not start"; cat "$dir/$b.server.log"; exit 1; }
    export JOBD_SERVER=$url

    post /v1/jobs "{\"type\":\"keep\",\"payload\":$P}" >"$dir/$b.post"
    check "$b: POST /v1/jobs answers the payload as sent" 'has "$dir/$b.post" payload'
    local id
    id=$(id_of "$dir/$b.post")
    curl -sS "$url/v1/jobs/$id" >"$dir/$b.get"
    check "$b: GET /v1/jobs/{id}" 'has "$dir/$b.get" payload'
    curl -sS "$url/v1/jobs?type=keep" >"$dir/$b.list"
    check "$b: GET /v1/jobs" 'has "$dir/$b.list" payload'
    "$JOBD" submit keep --payload "$P" >"$dir/$b.submit" 2>/dev/null
    check "$b: jobd submit" 'has "$dir/$b.submit" payload'
    "$JOBD" jobs --type keep >"$dir/$b.jobs"
    check "$b: jobd jobs, every line" '[ "$(grep -cF -- "\"payload\":$P" "$dir/$b.jobs")" -eq 2 ]'
    "$JOBD" job show "$id" >"$dir/$b.show"
    check "$b: jobd job show" 'has "$dir/$b.show" payload'
    "$JOBD" schedule add nums '0 0 * * *' keep --payload "$P" >"$dir/$b.sched" 2>/dev/null
    check "$b: jobd schedule add" 'has "$dir/$b.sched" payload'

    # Results: a handler echoing its payload, in the server and in a remote worker.
    post /v1/jobs "{\"type\":\"echo\",\"payload\":$P}" >"$dir/$b.echo"
    id=$(id_of "$dir/$b.echo")
    check "$b: the embedded worker's echo succeeded" 'wait_status "$id" succeeded'
    curl -sS "$url/v1/jobs/$id" >"$dir/$b.echo.get"
    check "$b: its result is the payload, as sent" 'has "$dir/$b.echo.get" result'
    "$JOBD" worker --server "$url" --config "$dir/remote.ini" --id "nums-$b" \
        2>"$dir/$b.worker.log" &
    local wpid=$!
    pids+=($wpid)
    post /v1/jobs "{\"type\":\"recho\",\"payload\":$P}" >"$dir/$b.recho"
    id=$(id_of "$dir/$b.recho")
    check "$b: the remote worker's echo succeeded" 'wait_status "$id" succeeded'
    curl -sS "$url/v1/jobs/$id" >"$dir/$b.recho.get"
    check "$b: its result is the payload, as sent" 'has "$dir/$b.recho.get" result'
    kill -TERM "$wpid" && wait "$wpid"

    # A bare client: claim, then complete with a result.
    post /v1/jobs "{\"type\":\"bare\",\"payload\":$P}" >/dev/null
    post /v1/claim '{"worker_id":"nums-bare","types":["bare"]}' >"$dir/$b.claim"
    check "$b: a claim hands the payload on as sent" 'has "$dir/$b.claim" payload'
    id=$(sed -n 's/.*"jobs":\[{"id":\([0-9]*\),.*/\1/p' "$dir/$b.claim")
    local att tok
    att=$(sed -n 's/.*"attempt":\([0-9]*\),.*/\1/p' "$dir/$b.claim")
    tok=$(sed -n 's/.*"lease_token":"\([0-9a-f]*\)".*/\1/p' "$dir/$b.claim")
    post "/v1/jobs/$id/complete" "{\"attempt\":$att,\"lease_token\":\"$tok\",\"result\":$P}" \
        >"$dir/$b.complete"
    check "$b: complete answers the result as sent" 'has "$dir/$b.complete" result'
    "$JOBD" job show "$id" >"$dir/$b.bare.show"
    check "$b: jobd job show prints it as sent" 'has "$dir/$b.bare.show" result'
}

run sqlite "sqlite:$dir/s.db"

if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
    [ "${JOBD_TEST_REQUIRE_PG:-0}" = 1 ] && { echo "FAIL JOBD_TEST_PG_URL is not set"; exit 1; }
    echo "$fails failed (PostgreSQL half skipped: no JOBD_TEST_PG_URL)"
    [ "$fails" -eq 0 ] || exit 1
    exit 77
fi
psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null || exit 1
pg="${JOBD_TEST_PG_URL%/*}/$pgdb"
run pg "$pg"
# jobd.enqueue takes jsonb, which keeps no -0 and writes 1e300 out in full.
sqlid=$(psql -qXAt "$pg" -c "SELECT jobd.enqueue('sqlkeep', '$P')")
curl -sS "$url/v1/jobs/$sqlid" >"$dir/pg.sql"
check "pg: a job from jobd.enqueue prints its numbers short" \
    'grep -qF "\"payload\":${P/-0.0/0.0}" "$dir/pg.sql"'

echo "$fails failed"
[ "$fails" -eq 0 ]
