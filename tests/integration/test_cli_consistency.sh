#!/usr/bin/env bash
# test_cli_consistency.sh — the CLI behaves alike in every command (docs/CLI.md,
# "Common to every command"), through the real binary and a real server, on
# SQLite and on PostgreSQL:
#  - exit 2 for every invalid argument, also when the server refuses it with
#    400; 1 for a failure (404, 409), 3 for no answer;
#  - every error line starts "jobd CMD: " naming the (sub)command;
#  - `jobd help CMD [SUB]` prints what `jobd CMD [SUB] --help` prints, exit 0;
#    an unknown CMD is exit 2 with one line naming it;
#  - a replayed idempotent submit says so on stderr, stdout the same job;
#  - `jobd jobs retry|cancel|delete --dry-run` prints how many jobs and which
#    would match, and changes nothing;
#  - `jobd workers` shows queues, types and held job ids, the ID column as
#    wide as its data.
# Needs JOBD_BIN (set by CTest), curl, python3 and script(1); the PostgreSQL
# half needs JOBD_TEST_PG_URL and fails without it under JOBD_TEST_REQUIRE_PG.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-cliux.XXXXXX")
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
unset JOBD_TOKEN
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $store: $1"; else echo "FAIL $store: $1"; fails=$((fails + 1)); fi
}
# run ARGS...: jobd with stdout in $dir/o, stderr in $dir/e; sets $rc.
run() { "$JOBD" "$@" >"$dir/o" 2>"$dir/e"; rc=$?; }
# every stderr line starts with "jobd $1: "
prefixed() { [ -s "$dir/e" ] && ! grep -qv "^jobd $1: " "$dir/e"; }
# tty ARGS...: jobd on a pseudo-terminal; stdout (no CRs) in $dir/t.
tty() {
    script -qec "$(printf '%q ' "$JOBD" "$@")" /dev/null | tr -d '\r' >"$dir/t"
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# ---- what needs no server: help, local usage errors, cron
store=local
for c in $("$JOBD" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do
    "$JOBD" "$c" --help >"$dir/h1" 2>&1
    run help "$c"
    check "jobd help $c is jobd $c --help, exit 0" '[ $rc -eq 0 ] && cmp -s "$dir/h1" "$dir/o" && [ -s "$dir/o" ]'
done
"$JOBD" jobs retry --help >"$dir/h1"
run help jobs retry
check "jobd help jobs retry is jobd jobs retry --help" '[ $rc -eq 0 ] && cmp -s "$dir/h1" "$dir/o"'
run help frob
check "jobd help frob: exit 2, one line naming it, nothing on stdout" \
    '[ $rc -eq 2 ] && [ ! -s "$dir/o" ] && [ "$(wc -l <"$dir/e")" -eq 1 ] && grep -q "^jobd help: unknown command '"'frob'"'" "$dir/e"'
run help
check "jobd help alone lists the commands" '[ $rc -eq 0 ] && grep -q "jobd help COMMAND" "$dir/o"'
run cron next '0 0 32 * *'
check "cron next with a bad field: exit 2, jobd cron next:" '[ $rc -eq 2 ] && prefixed "cron next"'
run migrate --db mysql://nowhere/x
check "migrate --db with an unknown scheme: exit 2, jobd migrate:" '[ $rc -eq 2 ] && prefixed migrate'
run job show 1 --server http://127.0.0.1:1
check "no server: exit 3, jobd job show:" '[ $rc -eq 3 ] && prefixed "job show"'
run workers --server http://127.0.0.1:1
check "no server: exit 3, jobd workers:" '[ $rc -eq 3 ] && prefixed workers'

run_store() { # store URL
    : >"$dir/server.log" # emptied first: read below before the child truncates it, a previous server's log would give a dead port
    "$JOBD" server --db "$1" --listen 127.0.0.1:0 2>"$dir/server.log" &
    spid=$!
    local url=""
    for _ in $(seq 300); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/server.log" | head -n 1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "server did not start:"; cat "$dir/server.log"; exit 1; }
    export JOBD_SERVER=$url

    # ---- exit 2 when the server refuses an argument (400), with the prefix
    run jobs --status bogus
    check "jobs --status bogus (400): exit 2, jobd jobs:" '[ $rc -eq 2 ] && prefixed jobs'
    run submit 'bad type'
    check "submit 'bad type' (400): exit 2, jobd submit:" '[ $rc -eq 2 ] && prefixed submit'
    run submit t --in 5 --key x
    check "submit --in 5 (400): exit 2" '[ $rc -eq 2 ] && prefixed submit && grep -q "in" "$dir/e"'
    run queues limit mail --rate 5/100ms
    check "queues limit --rate 5/100ms (400): exit 2, jobd queues limit:" \
        '[ $rc -eq 2 ] && prefixed "queues limit"'
    run schedule add nightly '61 * * * *' t
    check "schedule add with a bad minute (400): exit 2, jobd schedule add:" \
        '[ $rc -eq 2 ] && prefixed "schedule add" && grep -q minute "$dir/e"'
    run jobs retry --created-after yesterday
    check "jobs retry --created-after yesterday (400): exit 2, jobd jobs retry:" \
        '[ $rc -eq 2 ] && prefixed "jobs retry"'
    run jobs retry --created-after yesterday --dry-run
    check "the same --dry-run (400 of GET /v1/jobs): exit 2, jobd jobs retry:" \
        '[ $rc -eq 2 ] && prefixed "jobs retry"'
    # ---- other failures keep their codes
    run job show 999999
    check "job show of no job (404): exit 1, jobd job show:" '[ $rc -eq 1 ] && prefixed "job show"'
    run schedule rm nothing
    check "schedule rm of no schedule (404): exit 1, jobd schedule rm:" \
        '[ $rc -eq 1 ] && prefixed "schedule rm"'
    run submit t --queue done
    local done_id
    done_id=$(json 'd["id"]' <"$dir/o")
    "$JOBD" job cancel "$done_id" >/dev/null 2>&1
    run job cancel "$done_id"
    check "job cancel of a cancelled job (409): exit 1, jobd job cancel:" \
        '[ $rc -eq 1 ] && prefixed "job cancel"'

    # ---- a replayed idempotent submit says so on stderr
    run submit mail.send --key order-17 --payload '{"n":1}'
    cp "$dir/o" "$dir/first"
    check "the first submit with a key says nothing of a replay" \
        '[ $rc -eq 0 ] && ! grep -q replayed "$dir/e"'
    local kid
    kid=$(json 'd["id"]' <"$dir/first")
    run submit mail.send --key order-17 --payload '{"n":1}'
    check "the replay: exit 0, stdout the same job" '[ $rc -eq 0 ] && cmp -s "$dir/first" "$dir/o"'
    check "the replay: stderr names the job and the key" \
        'grep -qx "jobd submit: job $kid already exists for idempotency key order-17 (replayed): no new job was made" "$dir/e"'

    # ---- --dry-run: what would match, nothing changed
    local ids=() i
    for i in 1 2 3 4; do
        ids+=("$("$JOBD" submit dry.t --queue dq 2>/dev/null | json 'd["id"]')")
    done
    "$JOBD" job cancel "${ids[0]}" >/dev/null 2>&1
    "$JOBD" jobs --queue dq >"$dir/before"
    local newest=$((${#ids[@]} - 1))
    local got
    run jobs cancel --queue dq --dry-run
    got=$(json 'd["matched"], d["would_change"], d["would_skip"], d["ids"]' <"$dir/o")
    check "cancel --dry-run: 4 matched, 3 would change, newest first ($got)" \
        '[ $rc -eq 0 ] && [ "$got" = "4 3 1 [${ids[3]}, ${ids[2]}, ${ids[1]}, ${ids[0]}]" ]'
    run jobs retry --queue dq --dry-run
    got=$(json 'd["dry_run"], d["action"], d["matched"], d["would_change"]' <"$dir/o")
    check "retry --dry-run: 4 matched, 1 would change, the cancelled one ($got)" \
        '[ "$got" = "True retry 4 1" ]'
    run jobs delete --queue dq --dry-run --limit 2
    got=$(json 'd["ids"]' <"$dir/o")
    check "delete --dry-run --limit 2: the 2 newest ($got)" '[ "$got" = "[${ids[3]}, ${ids[2]}]" ]'
    run jobs delete --ids "${ids[0]},${ids[2]},999999" --status pending --dry-run
    got=$(json 'd["matched"], d["ids"]' <"$dir/o")
    check "delete --ids with --status --dry-run: only the pending one of the ids ($got)" \
        '[ "$got" = "1 [${ids[2]}]" ]'
    tty jobs cancel --queue dq --dry-run
    check "on a terminal: the counts and the ids" \
        'grep -qx "dry run: cancel would match 4 jobs (3 would change, 1 would be skipped); nothing was changed" "$dir/t" &&
         grep -qx "ids: ${ids[3]}, ${ids[2]}, ${ids[1]}, ${ids[0]}" "$dir/t"'
    "$JOBD" jobs --queue dq >"$dir/after"
    check "the dry runs changed nothing" 'cmp -s "$dir/before" "$dir/after" && [ "$(wc -l <"$dir/after")" -eq 4 ]'
    run jobs cancel --queue dq
    got=$(json 'd["matched"], d["changed"]' <"$dir/o")
    check "the real cancel does what the dry run said ($got)" '[ "$got" = "4 3" ]'

    # ---- jobd workers: queues, types, held jobs, ID as wide as its data
    local long=a-worker-with-a-rather-long-name:4242 held
    held=$("$JOBD" submit w.t --queue wq 2>/dev/null | json 'd["id"]')
    curl -sf -X POST "$url/v1/claim" -H 'Content-Type: application/json' \
        -d "{\"worker_id\":\"$long\",\"types\":[\"w.t\",\"w.u\"],\"queues\":[\"wq\"],\"lease_s\":600}" >/dev/null
    curl -sf -X POST "$url/v1/claim" -H 'Content-Type: application/json' \
        -d '{"worker_id":"w2","types":["other"]}' >/dev/null
    tty workers
    check "workers: a header with QUEUES, TYPES and JOBS" \
        'head -n 1 "$dir/t" | grep -Eq "^ID +HOST +STATE +PID +RUNNING +QUEUES +TYPES +LAST_SEEN_AT +JOBS$"'
    check "workers: the claimer's row has its queue, types and held job" \
        'grep -Eq "^$long +- +active +- +1/1 +wq +w\.t,w\.u +[0-9T:.Z-]+ +$held$" "$dir/t"'
    check "workers: every queue is *, no job is -" 'grep -Eq "^w2 +.* \* +other +[0-9T:.Z-]+ +-$" "$dir/t"'
    check "workers: the ID column is as wide as the longest id" \
        '[ "$(head -n 1 "$dir/t" | grep -bo HOST | cut -d: -f1)" -eq $((${#long} + 2)) ]'
    run workers
    got=$(grep "\"$long\"" "$dir/o" | json '",".join(map(str, d["running"])), ",".join(d["types"])')
    check "workers piped: JSON lines with running and types ($got)" '[ "$got" = "$held w.t,w.u" ]'
    stop
}

store=sqlite
run_store "sqlite:$dir/jobs.db"

if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
    [ "${JOBD_TEST_REQUIRE_PG:-0}" = 1 ] && { echo "FAIL: JOBD_TEST_PG_URL is not set"; exit 1; }
    echo "PostgreSQL: skipped (no JOBD_TEST_PG_URL)"
else
    store=postgres
    pgdb="jobd_cliux_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null || { echo "FAIL create database"; exit 1; }
    run_store "${JOBD_TEST_PG_URL%/*}/$pgdb"
fi
[ "$fails" -eq 0 ] || { echo "$fails checks failed"; exit 1; }
echo "all passed"
