#!/usr/bin/env bash
# test_openapi.sh — docs/openapi.yaml cannot drift from the server: a real
# `jobd server` (on SQLite and on PostgreSQL; a tokens file with one token per role, an embedded
# worker for type oa.echo) is driven through every operation of the spec
# with success and error answers by tests/openapi/drive.mjs, which
# validates each answer's status, content type, headers and body against
# the spec (ajv) and fails on a route the server has and the spec lacks
# (or the other way round), on a least role that differs, and on any
# declared (method, path, status) that no request produced.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-openapi.XXXXXX")
declare -A pids=() urls=()
pgdb=""
cleanup() {
    local n
    for n in "${!pids[@]}"; do kill -TERM "${pids[$n]}" 2>/dev/null && wait "${pids[$n]}" 2>/dev/null; done
    [ -n "$pgdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    local f
    for f in "$dir"/*.log; do [ -f "$f" ] && { echo "--- $(basename "$f")"; tail -20 "$f"; }; done
    exit 1
}

"$src/tests/openapi/install.sh" || fail "cannot install the validator (tests/openapi/install.sh)"

cat >"$dir/tokens" <<'EOF'
openapi-admin-token-0001  admin
openapi-write-token-0002  write
openapi-worker-token-0003 worker
openapi-read-token-00004  read
EOF
chmod 600 "$dir/tokens"
tokens='{"admin":"openapi-admin-token-0001","write":"openapi-write-token-0002",
         "worker":"openapi-worker-token-0003","read":"openapi-read-token-00004"}'
cat >"$dir/worker.ini" <<'EOF'
[worker]
concurrency = 2
queues = default

[handler "oa.echo"]
exec = cat
EOF

# start NAME STORE_URL: a server on the store, its log in $dir/NAME.log.
start() {
    : >"$dir/$1.log"
    "$JOBD" server --db "$2" --listen 127.0.0.1:0 --tokens "$dir/tokens" \
        --worker-config "$dir/worker.ini" --access-log off --max-schedules 2 --max-workers 2 \
        --max-waits 1 \
        2>"$dir/$1.log" &
    pids[$1]=$!
}
# listening NAME: waits until the server says where it listens (urls[NAME]).
listening() {
    local url=""
    for _ in $(seq 100); do
        url=$(sed -n 's|.* listening on \(http://[0-9.]*:[0-9]*\)$|\1|p' "$dir/$1.log")
        [ -n "$url" ] && break
        kill -0 "${pids[$1]}" 2>/dev/null || fail "the $1 server exited"; sleep 0.1
    done
    [ -n "$url" ] || fail "the $1 server did not say where it listens"
    urls[$1]=$url
}

# The servers start together; one node process then drives each in turn
# through the spec (tests/openapi/drive.mjs: the spec parsed and its
# validators compiled once). The SQLite file is deleted at the end of its
# run for /healthz 503; on PostgreSQL (no file) that answer is not driven.
start SQLite "sqlite:$dir/jobs.db"
targets=(SQLite "" "$dir/jobs.db")
if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
    pgdb="jobd_openapi_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null || fail "CREATE DATABASE"
    start PostgreSQL "${JOBD_TEST_PG_URL%/*}/$pgdb"
    targets+=(PostgreSQL "" "")
elif [ "${JOBD_TEST_REQUIRE_PG:-0}" = 1 ]; then
    fail "JOBD_TEST_PG_URL is not set (scripts/with-pg.sh)"
fi
for ((i = 0; i < ${#targets[@]}; i += 3)); do
    listening "${targets[i]}"
    targets[i + 1]=${urls[${targets[i]}]}
done
node "$src/tests/openapi/drive.mjs" "$src/docs/openapi.yaml" "$src/src/api/router.c" "$tokens" \
    "${targets[@]}" || fail "the servers' answers do not match docs/openapi.yaml"
for ((i = 0; i < ${#targets[@]}; i += 3)); do
    n=${targets[i]}
    kill -TERM "${pids[$n]}" && wait "${pids[$n]}" || fail "the $n server did not exit 0 on SIGTERM"
    unset "pids[$n]"
done
[ -n "${JOBD_TEST_PG_URL:-}" ] ||
    echo "PostgreSQL: skipped (no JOBD_TEST_PG_URL; run under scripts/with-pg.sh)"
