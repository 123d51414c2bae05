#!/usr/bin/env bash
# test_migrate_cli.sh — `jobd migrate` through the real binary says what it
# did (created the schema, or found it up to date, with the version) and
# never prints a password: on SQLite, and on PostgreSQL (JOBD_TEST_PG_URL,
# trust auth, so a made-up password in the URL still connects) where an
# unreachable server's error must not show it either.
# Needs JOBD_BIN (set by CTest); psql for the PostgreSQL part.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-migrate.XXXXXX")
db=""
cleanup() {
    [ -n "$db" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

out=$("$JOBD" migrate --db "sqlite:$dir/j.db" 2>&1)
check "sqlite: first run creates ($out)" '[[ "$out" =~ ^created\ the\ schema\ at\ version\ [0-9]+\ \(sqlite:$dir/j.db\)$ ]]'
v=${out#created the schema at version }; v=${v%% *}
out=$("$JOBD" migrate --db "sqlite:$dir/j.db" 2>&1)
check "sqlite: second run is up to date ($out)" '[ "$out" = "the schema is up to date at version $v (sqlite:$dir/j.db)" ]'
out=$("$JOBD" migrate --db "mysql://jobd:s3cret-pw@h/x" 2>&1)
check "unknown scheme: the error hides the password ($out)" '[[ "$out" == *"jobd:***@h"* && "$out" != *s3cret-pw* ]]'

if [ -n "${JOBD_TEST_PG_URL:-}" ] && command -v psql >/dev/null; then
    db="jobd_t_migrate_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $db" >/dev/null
    base=${JOBD_TEST_PG_URL%/*}
    url=${base/:\/\/jobd@/://jobd:s3cret-pw@}/$db
    out=$("$JOBD" migrate --db "$url" 2>&1)
    check "pg: first run creates ($out)" '[[ "$out" == "created the schema at version "* ]]'
    check "pg: the password is redacted" '[[ "$out" == *"jobd:***@"* && "$out" != *s3cret-pw* ]]'
    out=$("$JOBD" migrate --db "$url" 2>&1)
    check "pg: second run is up to date ($out)" '[[ "$out" == "the schema is up to date at version "* ]]'
    out=$("$JOBD" migrate --db "postgresql://jobd:s3cret-pw@127.0.0.1:1/x?connect_timeout=2" 2>&1)
    rc=$?
    check "pg: unreachable exits 3 without the password ($out)" '[ "$rc" = 3 ] && [[ "$out" != *s3cret-pw* ]]'
else
    echo "SKIP pg: JOBD_TEST_PG_URL is not set (run under scripts/with-pg.sh)"
fi
[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
exit "$fails"
