#!/usr/bin/env bash
# test_due_visible.sh — jobs due later are visible, and so are types nobody
# handles, through the real binary and a real server, on SQLite and on
# PostgreSQL: a queue whose only pending job is scheduled for later has
# oldest_pending_age_s null (not 0); GET /v1/jobs?due=true|false and
# `jobd jobs --due|--scheduled` split the pending jobs by run_at; `jobd jobs`
# on a terminal says when a pending job may run ("in 59m", "3s late");
# `jobd queues` ends a queue's row with a warning naming its unhandled types.
# Needs JOBD_BIN (set by CTest), curl, python3 and script(1); the PostgreSQL
# half needs JOBD_TEST_PG_URL (make test's throwaway PostgreSQL) and fails
# without it under JOBD_TEST_REQUIRE_PG.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-due.XXXXXX")
spid=""
pgdb=""
stop() { [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=""; }
cleanup() {
    stop
    [ -n "$pgdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb WITH (FORCE)" \
        >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $store: $1"; else echo "FAIL $store: $1"; fails=$((fails + 1)); fi
}
# tty ARGS...: runs jobd on a pseudo-terminal; stdout in $dir/tty.out (no CRs).
tty() {
    local cmd
    cmd=$(printf '%q ' "$JOBD" "$@")
    script -qec "$cmd 2>$dir/tty.err" /dev/null >"$dir/tty.raw"
    local rc=$?
    tr -d '\r' <"$dir/tty.raw" >"$dir/tty.out"
    return $rc
}
# ids JSON-LINES-FILE: the jobs' ids (each line starts {"id":N,), sorted, space-separated.
ids() { sed -n 's/^{"id":\([0-9]*\),.*/\1/p' "$1" | sort -n | tr '\n' ' ' | sed 's/ $//'; }
# submit ARGS...: submits a job, prints its id.
submit() { "$JOBD" submit "$@" 2>/dev/null | sed -n 's/^{"id":\([0-9]*\),.*/\1/p'; }
# row NAME: the tty table line whose first word is NAME.
row() { awk -v n="$1" '$1 == n' "$dir/tty.out"; }

printf '[worker]\nconcurrency = 1\n[handler "handled.type"]\nexec = /bin/cat\n' >"$dir/worker.ini"

run_store() { # store URL
    : >"$dir/server.log" # emptied first: read below before the child truncates it, a previous server's log would give a dead port
    "$JOBD" server --db "$1" --listen 127.0.0.1:0 --worker-config "$dir/worker.ini" \
        2>"$dir/server.log" &
    spid=$!
    url=""
    for _ in $(seq 200); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/server.log" | head -n 1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "server did not start:"; cat "$dir/server.log"; exit 1; }
    export JOBD_SERVER=$url

    local later due soon done
    later=$(submit handled.type --queue later --in 1h)
    due=$(submit nobody.here --queue work)
    soon=$(submit nobody.here --queue work --in 10m)
    done=$(submit handled.type --queue finished)

    # ---- the API, in one python3 (its start-up costs seconds on a loaded machine)
    python3 - "$store" "$url" "$later" "$due" "$soon" "$done" <<'PY'
import json, sys, time, urllib.error, urllib.request
store, url = sys.argv[1], sys.argv[2]
later, due, soon, done = map(int, sys.argv[3:])
fails = 0

def get(path):
    try:
        with urllib.request.urlopen(url + path, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)

def check(name, cond):
    global fails
    print(("ok   " if cond else "FAIL ") + store + ": " + name)
    fails += 0 if cond else 1

def queues():
    return {q["name"]: q for q in get("/v1/queues")[1]["queues"]}

def ids(path):
    return [j["id"] for j in get(path)[1]["jobs"]]

# The handled job runs; the PostgreSQL counts come from a cache recounted about once a second.
end = time.time() + 30
while time.time() < end:
    q = queues()
    if get(f"/v1/jobs/{done}")[1]["status"] == "succeeded" and q.get("work", {}).get("pending") == 2 \
            and q.get("finished", {}).get("pending") == 0 and q.get("later", {}).get("pending") == 1:
        break
    time.sleep(0.1)
check("the handled job ran", get(f"/v1/jobs/{done}")[1]["status"] == "succeeded")
q = queues()
# ---- oldest_pending_age_s: due jobs only, null when none is due
check("a queue whose only job is due in an hour: oldest_pending_age_s null",
      q["later"]["oldest_pending_age_s"] is None)
check("a queue with a due job: a number", isinstance(q["work"]["oldest_pending_age_s"], (int, float)))
check("a queue with nothing pending: null", q["finished"]["oldest_pending_age_s"] is None)
# ---- GET /v1/jobs?due=
check("due=true: the pending jobs whose run_at has come", ids("/v1/jobs?due=true") == [due])
check("due=false: the pending jobs scheduled for later, newest first",
      ids("/v1/jobs?due=false") == [soon, later])
check("due=false with a queue", ids("/v1/jobs?due=false&queue=work") == [soon])
check("due=true with status=pending", ids("/v1/jobs?due=true&status=pending") == [due])
check("due=false with a cursor and a page of one",
      ids(f"/v1/jobs?due=false&limit=1&after={soon}") == [later])
st, body = get("/v1/jobs?due=maybe")
check("due=maybe: 400 invalid_query naming due",
      st == 400 and body["error"]["code"] == "invalid_query" and body["error"]["field"] == "due")
st, body = get("/v1/jobs?due=true&status=succeeded")
check("due with another status: 400 invalid_query",
      st == 400 and body["error"]["code"] == "invalid_query")
sys.exit(fails)
PY
    fails=$((fails + $?))

    # ---- jobd jobs --due / --scheduled
    "$JOBD" jobs --due >"$dir/due.out"
    check "jobs --due (piped)" '[ "$(ids "$dir/due.out")" = "$due" ]'
    "$JOBD" jobs --scheduled >"$dir/sch.out"
    check "jobs --scheduled (piped)" '[ "$(ids "$dir/sch.out")" = "$later $soon" ]'
    "$JOBD" jobs --due --scheduled >/dev/null 2>"$dir/both.err"
    check "jobs --due --scheduled: exit 2, says why" \
        '[ $? -eq 2 ] && grep -q -- "--due and --scheduled exclude each other" "$dir/both.err"'
    "$JOBD" jobs --scheduled --status dead >/dev/null 2>"$dir/dead.err"
    check "jobs --scheduled --status dead: the server's refusal" \
        '[ $? -ne 0 ] && grep -q "pending jobs only" "$dir/dead.err"'
    "$JOBD" jobs --scheduled -n 1 >/dev/null 2>"$dir/more.err"
    check "the next-page hint keeps --scheduled" \
        'grep -q "^more: jobd jobs --scheduled --limit 1 --after $soon$" "$dir/more.err"'

    # ---- RUN_AT on a terminal
    tty jobs
    check "RUN_AT of the job due in an hour" '[[ "$(row "$later")" =~ \ in\ (59m|1h00m)$ ]]'
    check "RUN_AT of the job due in ten minutes" '[[ "$(row "$soon")" =~ \ in\ (9m|10m)$ ]]'
    check "RUN_AT of the due job: late" '[[ "$(row "$due")" =~ \ [0-9]+s\ late$ ]]'
    check "RUN_AT of a finished job: -" '[[ "$(row "$done")" =~ \ -$ ]]'

    # ---- jobd queues: the oldest due age, the warning
    tty queues
    check "queues: the later queue's OLDEST_PENDING is -" \
        '[[ "$(row later)" =~ ^later\ +no\ +1\ +0\ +0\ +0\ +0\ +-\  ]]'
    check "queues: a warning names the type nobody handles" \
        '[[ "$(row work)" == *"  warning: no live worker handles nobody.here" ]]'
    check "queues: no warning where every type is handled" '[[ "$(row later)" != *warning* ]]'
    stop
}

store=sqlite
run_store "sqlite:$dir/s.db"
if [ -n "${JOBD_TEST_PG_URL:-}" ] && command -v psql >/dev/null; then
    store=postgresql
    pgdb="due_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null || { echo "FAIL create database"; exit 1; }
    run_store "${JOBD_TEST_PG_URL%/*}/$pgdb"
elif [ -n "${JOBD_TEST_REQUIRE_PG:-}" ]; then
    echo "FAIL JOBD_TEST_REQUIRE_PG is set but JOBD_TEST_PG_URL is not"
    fails=$((fails + 1))
else
    echo "PostgreSQL part skipped: JOBD_TEST_PG_URL is not set"
fi
[ $fails -eq 0 ] && echo "all passed"
exit $fails
