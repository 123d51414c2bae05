#!/usr/bin/env bash
# test_worker_progress.sh — an exec handler's progress (issue 28 item 3;
# docs/WORKER.md, Progress): a real handler script writes a burst of JSON
# lines to its file descriptor 3, then the line it means to be seen, and
# waits; the job object (GET /v1/jobs/{id}) must show that last line while
# the job runs and after it succeeded. Through `jobd worker --db` on SQLite
# and on PostgreSQL (when JOBD_TEST_PG_URL is set, as under
# scripts/with-pg.sh) and through `jobd worker --server` (the route). A
# server on the same database reads the jobs in every case.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d /tmp/jobd-progress.XXXXXX)
spid="" wpid="" pgdb=""
stop() {
    [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    wpid="" spid=""
}
cleanup() {
    stop || true
    [ -n "$pgdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- server log"; tail -20 "$dir/server.log" 2>/dev/null || true
    echo "--- worker log"; tail -40 "$dir/worker.log" 2>/dev/null || true
    exit 1
}
wait_for() { # SECONDS WHAT COMMAND...
    local deadline=$((SECONDS + $1)) what=$2; shift 2
    until "$@"; do
        [ $SECONDS -lt $deadline ] || fail "timed out waiting for $what"
        sleep 0.05
    done
}

cat >"$dir/slow.sh" <<SH
#!/bin/sh
i=0
while [ \$i -lt 300 ]; do
    echo "{\"percent\":\$((i / 10)),\"message\":\"burst \$i\"}" >&3
    i=\$((i + 1))
done
echo '{"percent":60,"message":"step 3 of 5","data":{"n":3}}' >&3
while [ ! -e "$dir/go" ]; do sleep 0.05; done
echo '{"ok":true}'
SH
chmod 755 "$dir/slow.sh"
printf '[worker]\nconcurrency = 1\nlease = 30s\nheartbeat = 10s\n\n[handler "slow"]\nexec = %s/slow.sh\n' \
    "$dir" >"$dir/worker.ini"

# progress_is ID STATUS: the job is STATUS with the script's last line as its progress.
progress_is() {
    curl -sfS "$server/v1/jobs/$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
p = j.get("progress") or {}
ok = (j["status"] == sys.argv[1] and p.get("percent") == 60
      and p.get("message") == "step 3 of 5" and p.get("data") == {"n": 3} and p.get("at"))
sys.exit(0 if ok else 1)' "$2"
}

run() { # DB WORKER-STORE-ARGS...
    local db=$1; shift
    rm -f "$dir/go"
    : >"$dir/server.log" # emptied first: read below before the child truncates it, a previous server's log would give a dead port
    "$JOBD" server --db "$db" --listen 127.0.0.1:0 --shutdown-grace 2s 2>"$dir/server.log" &
    spid=$!
    local port=""
    for _ in $(seq 300); do
        port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || fail "the server did not say where it listens"
    server="http://127.0.0.1:$port"
    local wargs=("$@")
    [ "${wargs[0]}" = --server ] && wargs=(--server "$server")
    "$JOBD" worker "${wargs[@]}" --config "$dir/worker.ini" --id progress-worker \
        2>"$dir/worker.log" &
    wpid=$!
    local id
    id=$(curl -sfS -H 'Content-Type: application/json' -d '{"type":"slow"}' "$server/v1/jobs" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    wait_for 60 "the handler's progress on a running job ($*)" progress_is "$id" running
    # jobd job show on a terminal prints it under the status
    script -qec "$JOBD job show $id --server $server" /dev/null >"$dir/show.txt" 2>&1 ||
        fail "jobd job show failed: $(cat "$dir/show.txt")"
    grep -Eq '^progress +60% step 3 of 5' "$dir/show.txt" ||
        fail "jobd job show does not print the progress: $(cat "$dir/show.txt")"
    touch "$dir/go"
    wait_for 60 "the job to succeed with its progress ($*)" progress_is "$id" succeeded
    # a new job starts with none
    local id2
    id2=$(curl -sfS -H 'Content-Type: application/json' -d '{"type":"nope"}' "$server/v1/jobs" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    [ "$(curl -sfS "$server/v1/jobs/$id2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["progress"])')" = None ] ||
        fail "a job that never ran has a progress"
    stop
    echo "ok: exec progress through fd 3 ($*)"
}

run "sqlite:$dir/jobs.db" --db "sqlite:$dir/jobs.db"
run "sqlite:$dir/jobs2.db" --server
if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
    pgdb="wprog_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null
    pg="${JOBD_TEST_PG_URL%/*}/$pgdb"
    "$JOBD" migrate --db "$pg" >/dev/null
    run "$pg" --db "$pg"
    run "$pg" --server
elif [ "${JOBD_TEST_REQUIRE_PG:-}" = 1 ]; then
    fail "JOBD_TEST_PG_URL is not set"
else
    echo "skip: PostgreSQL (JOBD_TEST_PG_URL is not set)"
fi
