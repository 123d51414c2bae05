#!/usr/bin/env bash
# test_openapi.sh — docs/openapi.yaml cannot drift from the server: a real
# `jobd server` (on SQLite, then on PostgreSQL; a tokens file with one token per role, an embedded
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
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$dir/log" ] && tail -20 "$dir/log"; exit 1; }

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

# One server on the store URL $1, driven through the spec; $2 is the SQLite
# file (deleted at the end for /healthz 503), empty on PostgreSQL.
drive() {
    : >"$dir/log"
    "$JOBD" server --db "$1" --listen 127.0.0.1:0 --tokens "$dir/tokens" \
        --worker-config "$dir/worker.ini" --access-log off --max-schedules 2 --max-workers 2 \
        --max-waits 1 \
        2>"$dir/log" &
    spid=$!
    local url=""
    for _ in $(seq 100); do
        url=$(sed -n 's|.* listening on \(http://[0-9.]*:[0-9]*\)$|\1|p' "$dir/log")
        [ -n "$url" ] && break
        kill -0 "$spid" 2>/dev/null || fail "the server exited"; sleep 0.1
    done
    [ -n "$url" ] || fail "the server did not say where it listens"
    node "$src/tests/openapi/drive.mjs" "$src/docs/openapi.yaml" "$src/src/api/router.c" \
        "$url" "$tokens" "$2" || fail "the server's answers ($1) do not match docs/openapi.yaml"
    kill -TERM "$spid" && wait "$spid" || fail "the server did not exit 0 on SIGTERM"
    spid=""
}

echo "== SQLite"
drive "sqlite:$dir/jobs.db" "$dir/jobs.db"

if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
    [ "${JOBD_TEST_REQUIRE_PG:-0}" = 1 ] && fail "JOBD_TEST_PG_URL is not set (scripts/with-pg.sh)"
    echo "PostgreSQL: skipped (no JOBD_TEST_PG_URL; run under scripts/with-pg.sh)"
    exit 0
fi
echo "== PostgreSQL"
pgdb="jobd_openapi_$$"
psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null || fail "CREATE DATABASE"
trap 'cleanup; psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb" >/dev/null 2>&1' EXIT
drive "${JOBD_TEST_PG_URL%/*}/$pgdb" ""
