#!/usr/bin/env bash
# test_deps_e2e.sh — dependencies through the real binary (issue 29;
# docs/MODEL.md, Dependencies; docs/WORKER.md, Parents): `jobd submit
# --depends-on` makes a waiting job (`jobd jobs --status waiting` lists it),
# `jobd worker` runs the parent, and the child's exec handler reads its
# parents from the file $JOBD_PARENTS names (the parent's id, type, status
# and result), which is gone after the run. Through `jobd worker --db` on
# SQLite and on PostgreSQL (when JOBD_TEST_PG_URL is set, as under
# scripts/with-pg.sh) and through `jobd worker --server`.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d /tmp/jobd-deps.XXXXXX)
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

cat >"$dir/extract.sh" <<'SH'
#!/bin/sh
echo '{"rows":3}'
SH
cat >"$dir/load.sh" <<SH
#!/bin/sh
[ -n "\$JOBD_PARENTS" ] && [ -r "\$JOBD_PARENTS" ] || { echo "no JOBD_PARENTS" >&2; exit 1; }
echo "\$JOBD_PARENTS" >"$dir/path-\$JOBD_JOB_ID"
cp "\$JOBD_PARENTS" "$dir/parents-\$JOBD_JOB_ID.json"
echo '{"ok":true}'
SH
chmod 755 "$dir/extract.sh" "$dir/load.sh"
printf '[worker]\nconcurrency = 2\n\n[handler "extract"]\nexec = %s/extract.sh\n\n[handler "load"]\nexec = %s/load.sh\n' \
    "$dir" "$dir" >"$dir/worker.ini"

status_is() { # ID STATUS
    [ "$(curl -sfS "$server/v1/jobs/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')" = "$2" ]
}

run() { # DB WORKER-STORE-ARGS...
    local db=$1; shift
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
    local e l
    e=$("$JOBD" submit extract --server "$server" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    l=$("$JOBD" submit load --depends-on "$e" --on-parent-failure cancel --server "$server" 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["status"]=="waiting", j; print(j["id"])') ||
        fail "jobd submit --depends-on did not make a waiting job"
    "$JOBD" jobs --status waiting --server "$server" | grep -q "\"id\": *$l\b" ||
        fail "jobd jobs --status waiting does not list job $l"
    local wargs=("$@")
    [ "${wargs[0]}" = --server ] && wargs=(--server "$server")
    "$JOBD" worker "${wargs[@]}" --config "$dir/worker.ini" --id deps-worker 2>"$dir/worker.log" &
    wpid=$!
    wait_for 60 "the child to succeed ($*)" status_is "$l" succeeded
    python3 - "$dir/parents-$l.json" "$e" <<'PY' || fail "JOBD_PARENTS held $(cat "$dir/parents-$l.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert isinstance(p, list) and len(p) == 1, p
q = p[0]
assert q["id"] == int(sys.argv[2]) and q["type"] == "extract", q
assert q["status"] == "succeeded" and q["result"] == {"rows": 3} and q["step"] is None, q
PY
    [ ! -e "$(cat "$dir/path-$l")" ] || fail "the JOBD_PARENTS file is still there after the run"
    stop
    echo "ok: a child waits, runs after its parent and reads its parents ($*)"
}

run "sqlite:$dir/jobs.db" --db "sqlite:$dir/jobs.db"
run "sqlite:$dir/jobs2.db" --server
if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
    pgdb="wdeps_$$"
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
