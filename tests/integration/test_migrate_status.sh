#!/usr/bin/env bash
# test_migrate_status.sh — `jobd migrate --status` on SQLite and on
# PostgreSQL: a new store is at version 0 with every step pending (named on
# PostgreSQL), --status changes nothing, after `jobd migrate` nothing is
# pending, and a store migrated by a newer jobd (a version past the newest)
# is reported as such with exit 1. Needs JOBD_TEST_PG_URL (make test's
# throwaway PostgreSQL) for the PostgreSQL half.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
: "${JOBD_TEST_PG_URL:?JOBD_TEST_PG_URL is not set (run under scripts/with-pg.sh)}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-migst.XXXXXX")
pgdb="migst_$$"
cleanup() {
    psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb" >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$dir/out" 2>/dev/null || true; exit 1; }
psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null
pg="${JOBD_TEST_PG_URL%/*}/$pgdb"

check() { # url, sql to fake a newer schema
    local url=$1 newer=$2
    "$JOBD" migrate --status --db "$url" >"$dir/out" || fail "--status on a new store"
    newest=$(sed -n 's/^newest this jobd knows: \([0-9]*\)$/\1/p' "$dir/out")
    [ -n "$newest" ] && [ "$newest" -ge 1 ] || fail "no newest version"
    grep -qx 'schema version: 0' "$dir/out" || fail "a new store is not at version 0"
    grep -qx "pending migrations: $newest" "$dir/out" || fail "not every step is pending"
    grep -qx '  1.*' "$dir/out" || fail "step 1 is not listed"
    "$JOBD" migrate --status --db "$url" >"$dir/out2" || fail "--status again"
    diff -q "$dir/out" "$dir/out2" >/dev/null || fail "--status changed the store"
    "$JOBD" migrate --db "$url" >/dev/null || fail "jobd migrate"
    "$JOBD" migrate --status --db "$url" >"$dir/out" || fail "--status after migrate"
    grep -qx "schema version: $newest" "$dir/out" || fail "not at the newest version after migrate"
    grep -qx 'pending migrations: none' "$dir/out" || fail "steps still pending after migrate"
    $newer
    set +e
    "$JOBD" migrate --status --db "$url" >"$dir/out" 2>&1; rc=$?
    set -e
    [ $rc -eq 1 ] && grep -q 'newer than this jobd' "$dir/out" ||
        fail "a newer store was not reported (rc $rc)"
}
sq_newer() { sqlite3 "$dir/jobs.db" "INSERT INTO schema_migrations VALUES (999, 0)"; }
pg_newer() { psql -qX "$pg" -c "INSERT INTO jobd.schema_migrations (version, name) VALUES (999, 'future')" >/dev/null; }
check "sqlite:$dir/jobs.db" sq_newer
check "$pg" pg_newer
"$JOBD" migrate --status --db "$pg" >/dev/null 2>&1 || true
psql -qX "$pg" -c "DELETE FROM jobd.schema_migrations WHERE version = 999" >/dev/null
psql -qX "$pg" -c "DELETE FROM jobd.schema_migrations WHERE version = (SELECT max(version) FROM jobd.schema_migrations)" >/dev/null
"$JOBD" migrate --status --db "$pg" >"$dir/out"
last=$(grep -A1 'pending migrations: 1' "$dir/out" | tail -1)
[[ $last =~ ^\ \ [0-9]+\ [a-z] ]] || fail "a pending PostgreSQL step has no name: '$last'"
echo "ok: jobd migrate --status on SQLite and PostgreSQL"
