#!/usr/bin/env bash
# test_search.sh — GET /v1/jobs?q=TEXT and `jobd jobs --search` through the
# real binary and a real server, on SQLite and (under scripts/with-pg.sh) on
# PostgreSQL: the text is found in a job's type, idempotency key, payload or
# last error, ASCII letters in either case, % and _ as themselves; it
# combines with the other filters and pages; a tiny scan budget (scan=N)
# stops early with "partial": true and a cursor from which the search goes on
# and finds the older job; bad q or scan is a 400 naming the parameter.
# docs/API.md, Search. Needs JOBD_BIN (set by CTest) and curl.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-search.XXXXXX")
spid="" pgdb=""
stop() { [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=""; }
cleanup() {
    stop
    [ -n "$pgdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
unset JOBD_DB JOBD_SERVER JOBD_TOKEN JOBD_LISTEN
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
get() { curl -s -H "Host: 127.0.0.1" "$url$1"; }
ids() { grep -o '"id":[0-9]*' | cut -d: -f2 | tr '\n' ' '; } # the ids of an answer, in order
submit() { # type, payload[, key] -> prints the id (POST /v1/jobs: curl costs a tenth of an ASan jobd)
    local k=""
    [ $# -gt 2 ] && k=",\"idempotency_key\":\"$3\""
    curl -s -H 'Content-Type: application/json' -d "{\"type\":\"$1\",\"payload\":$2$k}" "$url/v1/jobs" |
        sed -n 's/^{"id":\([0-9]*\).*/\1/p'
}
cat >"$dir/fail.sh" <<'SH'
#!/bin/sh
echo "Disk-Full-ZQ on /var" >&2
exit 65
SH
chmod +x "$dir/fail.sh"
printf '[worker]\nconcurrency = 1\n\n[handler "fail.hard"]\nexec = %s\ntimeout = 10s\n' \
    "$dir/fail.sh" >"$dir/worker.ini"

run() { # store name, store URL
    local name=$1 db=$2
    "$JOBD" migrate --db "$db" >/dev/null 2>&1 || { check "$name: migrate" false; return; }
    : >"$dir/server.log"
    "$JOBD" server --db "$db" --listen 127.0.0.1:0 2>"$dir/server.log" &
    spid=$!
    url=""
    for _ in $(seq 200); do
        url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/server.log")
        [ -n "$url" ] && break
        sleep 0.05
    done
    [ -n "$url" ] || { check "$name: server started" false; stop; return; }
    local mail report pct dead
    mail=$(submit mail.send '{"to":"Alice@Example.org"}')
    report=$(submit report '{"month":"2026-11"}' nightly-ReportX)
    pct=$(submit promo '{"code":"50%_off"}')
    dead=$(submit fail.hard '{}')
    local noise=()
    for i in 1 2 3 4 5; do noise+=("$(submit noise "{\"n\":$i,\"note\":\"50 percent\"}")"); done
    "$JOBD" worker --db "$db" --config "$dir/worker.ini" 2>"$dir/worker.log" &
    local wpid=$!
    for _ in $(seq 200); do
        get "/v1/jobs/$dead" | grep -q '"status":"dead"' && break
        sleep 0.05
    done
    kill -TERM "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null

    get '/v1/jobs?q=ALICE@example' >"$dir/a"
    check "$name: payload, any case" "[ \"\$(ids <'$dir/a')\" = '$mail ' ]"
    check "$name: a whole answer says partial false" "grep -q '\"next\":null' '$dir/a' && grep -q '\"partial\":false' '$dir/a'"
    check "$name: idempotency key" "[ \"\$(get '/v1/jobs?q=reportx' | ids)\" = '$report ' ]"
    check "$name: type" "[ \"\$(get '/v1/jobs?q=mail.s' | ids)\" = '$mail ' ]"
    check "$name: last error" "[ \"\$(get '/v1/jobs?q=disk-full-zq' | ids)\" = '$dead ' ]"
    check "$name: %_ as themselves" "[ \"\$(get '/v1/jobs?q=%25_' | ids)\" = '$pct ' ]"
    check "$name: nothing found" "get '/v1/jobs?q=zzzz-nowhere' | grep -q '^{\"jobs\":\\[\\],\"next\":null,\"partial\":false}'"
    check "$name: with status and limit, pages" \
        "[ \"\$(get '/v1/jobs?q=percent&status=pending&limit=2' | ids)\" = '${noise[4]} ${noise[3]} ' ]"
    get "/v1/jobs?q=percent&status=pending&limit=2" >"$dir/p1"
    check "$name: a full page's cursor" "grep -q '\"next\":\"${noise[3]}\",\"partial\":false' '$dir/p1'"
    check "$name: the next page" \
        "[ \"\$(get '/v1/jobs?q=percent&status=pending&limit=2&after=${noise[3]}' | ids)\" = '${noise[2]} ${noise[1]} ' ]"

    # A tiny budget: the newest 3 jobs hold no mail.send, so the search stops early.
    get '/v1/jobs?q=mail.send&scan=3' >"$dir/s1"
    check "$name: scan=3 is partial" "grep -q '\"jobs\":\\[\\],\"next\":\"${noise[2]}\",\"partial\":true' '$dir/s1'"
    get "/v1/jobs?q=mail.send&scan=3&after=${noise[2]}" >"$dir/s2"
    check "$name: still partial further back" "grep -q '\"partial\":true' '$dir/s2' && [ \"\$(ids <'$dir/s2')\" = '' ]"
    get "/v1/jobs?q=mail.send&scan=100&after=${noise[2]}" >"$dir/s3"
    check "$name: going on finds the older job" "[ \"\$(ids <'$dir/s3')\" = '$mail ' ] && grep -q '\"partial\":false' '$dir/s3'"
    get "/v1/jobs?q=o&scan=2" >"$dir/s4"
    check "$name: hits within the budget" "[ \"\$(ids <'$dir/s4')\" = '${noise[4]} ${noise[3]} ' ] && grep -q '\"partial\":true' '$dir/s4'"
    check "$name: scan exactly the jobs there are is whole" \
        "get '/v1/jobs?q=mail.send&scan=9' | grep -q '\"next\":null,\"partial\":false'"

    # Bad input: 400 naming the parameter.
    check "$name: scan=0" "get '/v1/jobs?q=a&scan=0' | grep -q '\"field\":\"scan\"'"
    check "$name: scan without q" "get '/v1/jobs?scan=5' | grep -q 'scan applies only to a search'"
    long=$(printf 'x%.0s' $(seq 201))
    check "$name: q over 200 bytes" "get '/v1/jobs?q=$long' | grep -q '\"field\":\"q\"'"
    check "$name: a listing without q has no partial" "! get '/v1/jobs?limit=1' | grep -q partial"

    # The CLI: --search, piped (one JSON line a job), and the partial hint.
    "$JOBD" jobs --search alice@EXAMPLE --server "$url" >"$dir/c.out" 2>"$dir/c.err"
    check "$name: jobs --search" "[ \"\$(ids <'$dir/c.out')\" = '$mail ' ] && [ ! -s '$dir/c.err' ]"
    "$JOBD" jobs --search mail.send --scan 3 --server "$url" >"$dir/c.out" 2>"$dir/c.err"
    check "$name: jobs --search --scan 3 says it stopped" \
        "[ ! -s '$dir/c.out' ] && grep -q 'stopped at its scan budget' '$dir/c.err' && grep -q -- '--search mail.send --scan 3 --after ${noise[2]}\$' '$dir/c.err'"
    stop
}

run sqlite "sqlite:$dir/jobs.db"
if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
    pgdb="search_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null
    run postgresql "${JOBD_TEST_PG_URL%/*}/$pgdb"
elif [ -n "${JOBD_TEST_REQUIRE_PG:-}" ]; then
    check "JOBD_TEST_REQUIRE_PG is set but JOBD_TEST_PG_URL is not" false
fi
[ "$fails" -eq 0 ] || { tail -5 "$dir/server.log"; exit 1; }
echo "ok: search on every store"
