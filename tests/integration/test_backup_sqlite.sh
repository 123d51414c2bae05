#!/usr/bin/env bash
# test_backup_sqlite.sh — the SQLite backup and restore of docs/OPERATIONS.md,
# as written there: `sqlite3 DB ".backup FILE"` (SQLite's online backup API)
# while `jobd server` runs and a client keeps submitting; the copy passes
# PRAGMA integrity_check; a server started on the restored copy has every
# job acknowledged before the backup began, and takes new ones.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-backup.XXXXXX")
spid="" cpid=""
cleanup() {
    for p in $cpid $spid; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$dir/log" 2>/dev/null || true; exit 1; }
command -v sqlite3 >/dev/null || fail "the sqlite3 CLI is missing (scripts/deps.sh installs it)"
unset JOBD_DB JOBD_SERVER JOBD_TOKEN JOBD_LISTEN

start_server() { # db file; sets spid and url
    : >"$dir/log"
    "$JOBD" server --db "sqlite:$1" --listen 127.0.0.1:0 2>"$dir/log" &
    spid=$!
    url=""
    for _ in $(seq 100); do
        url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
        [ -n "$url" ] && return
        kill -0 "$spid" 2>/dev/null || fail "the server exited"; sleep 0.1
    done
    fail "the server did not start"
}

start_server "$dir/jobs.db"
# A client that keeps writing: one job after another, each id noted once acknowledged.
: >"$dir/acked"
(
    for i in $(seq 1 100000); do
        "$JOBD" submit echo --payload "{\"i\":$i}" --server "$url" |
            sed -n 's/^{"id":\([0-9]*\).*/\1/p' >>"$dir/acked" || exit 0
    done
) &
cpid=$!
for _ in $(seq 600); do [ "$(wc -l <"$dir/acked")" -ge 10 ] && break; sleep 0.1; done
before=$(tail -n 1 "$dir/acked")
[ -n "$before" ] || fail "the client acknowledged nothing"
sqlite3 "$dir/jobs.db" ".backup '$dir/backup.db'" || fail "sqlite3 .backup while the server writes"
# The writes go on: wait for the next acknowledgement (one submit can take a
# second on a loaded machine, so no fixed pause).
for _ in $(seq 600); do [ "$(tail -n 1 "$dir/acked")" -gt "$before" ] && break; sleep 0.1; done
kill -TERM "$cpid"; wait "$cpid" 2>/dev/null || true; cpid=""
after=$(tail -n 1 "$dir/acked")
[ "$after" -gt "$before" ] || fail "the client did not write during the backup ($before, $after)"
[ "$(sqlite3 "$dir/backup.db" 'PRAGMA integrity_check')" = ok ] || fail "the backup is not intact"
kill -TERM "$spid"; wait "$spid" || fail "the server did not stop cleanly"; spid=""

# Restore: the copy in place of the lost store.
mkdir "$dir/restored"
cp "$dir/backup.db" "$dir/restored/jobs.db"
start_server "$dir/restored/jobs.db"
for id in $(seq 1 "$before"); do
    "$JOBD" job show "$id" --server "$url" </dev/null >/dev/null 2>&1 ||
        fail "job $id, acknowledged before the backup, is not in the restored store"
done
"$JOBD" submit echo --server "$url" >/dev/null || fail "the restored store does not take new jobs"
echo "ok: sqlite3 .backup during writes; restored store has all $before jobs acknowledged before it"
