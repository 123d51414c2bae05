#!/usr/bin/env bash
# test_worker_handlers.sh — what an exec handler sees and what the worker
# makes of it, with real processes (`jobd server` + a separate `jobd worker`)
# on SQLite and, under scripts/with-pg.sh, on PostgreSQL:
#   - a clean environment: PATH, HOME, LANG/LC_*, TZ, the job's JOBD_*
#     variables and the names `env =` lists; never JOBD_TOKEN or JOBD_DB;
#   - `exec = nosuchprog` refuses the worker's start, naming file:line;
#   - bytes that are not UTF-8 on stderr and stdout: the failure is stored
#     with U+FFFD in place of them, the job reads back, the worker goes on;
#   - out of file descriptors (ulimit -n): a run that cannot start hands its
#     job back without using an attempt (max_attempts 1 jobs all succeed).
# Needs JOBD_BIN (set by CTest).
set -euo pipefail

JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-handlers.XXXXXX")
spid="" wpid="" dropdb=""
cleanup() {
    [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    [ -n "$dropdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $dropdb WITH (FORCE)" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- server log"; tail -20 "$dir/server.log" 2>/dev/null || true
    echo "--- worker log"; tail -20 "$dir/worker.log" 2>/dev/null || true
    exit 1
}

cat >"$dir/env.sh" <<EOF
#!/bin/sh
env | sort >"$dir/env.\$JOBD_JOB_ID"
EOF
cat >"$dir/badbytes.sh" <<'EOF'
#!/bin/sh
printf 'bad \377\376 bytes, then a cut character: \342\202' >&2
exit 65
EOF
cat >"$dir/badout.sh" <<'EOF'
#!/bin/sh
printf '"\377"'
EOF
chmod +x "$dir"/*.sh
cat >"$dir/worker.ini" <<EOF
[worker]
concurrency = 2
backoff_base = 30s

[handler "env"]
exec = $dir/env.sh
env = HANDLER_WANTS_THIS, NOT_SET_ANYWHERE

[handler "badbytes"]
exec = $dir/badbytes.sh

[handler "badout"]
exec = $dir/badout.sh
EOF

# start_server DB: `jobd server` on DB; sets spid and server.
start_server() {
    : >"$dir/server.log"
    "$JOBD" server --db "$1" --listen 127.0.0.1:0 --shutdown-grace 2s 2>"$dir/server.log" &
    spid=$!
    local port=""
    for _ in $(seq 100); do
        port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
        [ -n "$port" ] && break
        kill -0 "$spid" 2>/dev/null || fail "the server exited"
        sleep 0.1
    done
    [ -n "$port" ] || fail "the server did not say where it listens"
    server="http://127.0.0.1:$port"
}
stop_all() {
    kill -TERM "$wpid" "$spid" 2>/dev/null || true
    wait "$wpid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    wpid="" spid=""
}
submit() { # TYPE -> prints the id
    local out
    out=$("$JOBD" submit "$1" --max-attempts 2 --server "$server") || fail "submit $1"
    printf '%s' "$out" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p' | head -1
}
# wait_status ID STATUS: polls the job (curl: an ASan jobd per poll costs
# ~0.07 s of CPU) every 50 ms for up to 30 s; then prints it as `jobd job
# show` does.
wait_status() {
    local out="" deadline=$((SECONDS + 30))
    while :; do
        out=$(curl -sS "$server/v1/jobs/$1") || fail "GET /v1/jobs/$1: $out"
        printf '%s' "$out" | grep -q "\"status\": *\"$2\"" && break
        [ $SECONDS -lt $deadline ] || fail "job $1 never became $2: $out"
        sleep 0.05
    done
    out=$("$JOBD" job show "$1" --server "$server") || fail "job show $1: $out"
    printf '%s' "$out" | grep -q "\"status\": *\"$2\"" || fail "jobd job show $1 is not $2: $out"
    printf '%s' "$out"
}

# `exec = nosuchprog`: the worker does not start, and says where.
cat >"$dir/typo.ini" <<EOF
[handler "a"]
exec = /bin/true

[handler "b"]
exec = nosuchprog --flag
EOF
set +e
"$JOBD" worker --db "sqlite:$dir/typo.db" --config "$dir/typo.ini" 2>"$dir/typo.log"
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "the worker started with exec = nosuchprog"
grep -q "typo.ini:5: key 'exec': program 'nosuchprog' not found" "$dir/typo.log" ||
    fail "the refusal does not name file:line: $(cat "$dir/typo.log")"
echo "ok: exec = nosuchprog refused at start: $(head -1 "$dir/typo.log")"

run_store() { # DB
    local db=$1
    start_server "$db"
    JOBD_DB=$db JOBD_TOKEN=secret-token-of-the-worker HANDLER_WANTS_THIS=yes LC_TIME=C.UTF-8 \
        "$JOBD" worker --db "$db" --config "$dir/worker.ini" 2>"$dir/worker.log" &
    wpid=$!

    # The environment.
    local id
    id=$(submit env)
    wait_status "$id" succeeded >/dev/null
    local e="$dir/env.$id"
    for want in "JOBD_JOB_ID=$id" "JOBD_ATTEMPT=1" "JOBD_TYPE=env" "JOBD_QUEUE=default" \
        "JOBD_IDEMPOTENCY_KEY=job-$id" "HANDLER_WANTS_THIS=yes" "LC_TIME=C.UTF-8"; do
        grep -qx "$want" "$e" || fail "the handler did not get $want: $(cat "$e")"
    done
    grep -q '^PATH=' "$e" || fail "the handler did not get PATH"
    if grep -E '^(JOBD_TOKEN|JOBD_DB|JOBD_SERVER)=' "$e"; then
        fail "the handler saw the worker's secrets"
    fi
    echo "ok: a clean environment ($(wc -l <"$e") variables)"

    # Bytes that are not UTF-8 on stderr: stored sanitized; the worker goes on.
    id=$(submit badbytes)
    local job
    job=$(wait_status "$id" dead)
    printf '%s' "$job" | grep -q 'bad \\ufffd\\ufffd bytes\|bad ��' ||
        fail "last_error is not the sanitized stderr: $job"
    "$JOBD" jobs --type badbytes --server "$server" >/dev/null || fail "GET /v1/jobs fails"
    # ... and stdout that is not UTF-8 JSON is no result.
    id=$(submit badout)
    job=$(wait_status "$id" succeeded)
    printf '%s' "$job" | grep -q '"result": *null' || fail "not-UTF-8 stdout became a result: $job"
    # Still claiming afterwards.
    id=$(submit env)
    wait_status "$id" succeeded >/dev/null
    echo "ok: not-UTF-8 handler output stored sanitized on $db"
    stop_all
}

# Out of file descriptors: runs that cannot start are handed back unused.
# With max_attempts 1, a start failure that cost an attempt would kill the
# job; handed back, every job waits for a free descriptor and succeeds.
release_case() {
    local db="sqlite:$dir/release.db"
    printf '#!/bin/sh\nsleep 1\n' >"$dir/slow.sh"
    chmod +x "$dir/slow.sh"
    printf '[worker]\nconcurrency = 12\n\n[handler "slow"]\nexec = %s/slow.sh\n' "$dir" \
        >"$dir/release.ini"
    start_server "$db"
    local ids=() id
    for _ in 1 2 3 4 5 6 7 8; do
        id=$("$JOBD" submit slow --max-attempts 1 --server "$server" 2>/dev/null |
            sed -n 's/.*"id": *\([0-9]*\).*/\1/p' | head -1)
        ids+=("$id")
    done
    # Room for the worker itself and a few children (4 descriptors each).
    # The jobs are all due before it starts, so its first claim takes all
    # eight at once and some runs cannot start, however slow the machine
    # (submitted one by one to a running worker, each could finish before
    # the next came, and nothing ran out).
    (ulimit -n "$1" && exec "$JOBD" worker --db "$db" --config "$dir/release.ini") \
        2>"$dir/worker.log" &
    wpid=$!
    for id in "${ids[@]}"; do
        wait_status "$id" succeeded >/dev/null
    done
    grep -q "could not start a handler; handing the job back" "$dir/worker.log" ||
        fail "no run was handed back with ulimit -n $1 (the case tests nothing)"
    echo "ok: $(grep -c 'handing the job back' "$dir/worker.log") start(s) handed back" \
        "with ulimit -n $1; all ${#ids[@]} jobs (max_attempts 1) succeeded"
    stop_all
}
release_case "${JOBD_TEST_NOFILE:-24}"

run_store "sqlite:$dir/jobs.db"
if [ -n "${JOBD_TEST_PG_URL:-}" ] && command -v psql >/dev/null; then
    dropdb="jobd_handlers_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $dropdb" >/dev/null || fail "create database"
    run_store "${JOBD_TEST_PG_URL%/*}/$dropdb"
else
    echo "PostgreSQL part skipped: JOBD_TEST_PG_URL is not set"
fi
echo "ok: handlers"
