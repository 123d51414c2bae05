#!/usr/bin/env bash
# test_hardening_files.sh — files and secrets (issue 27, item 8; docs/OPERATIONS.md,
# Security), through the real binary: the tokens file as the package
# installs it (0640, the server's group) draws no warning while one others
# may read does; a SQLite database and its -wal and -shm files are created
# 0600 under umask 000; a store URL's password is never printed, for a bad
# --notify-db scheme, a --db short of its "//", or a bad worker --db.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-hardfiles.XXXXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$dir/log" 2>/dev/null || true; exit 1; }
unset JOBD_DB JOBD_TOKENS JOBD_NOTIFY_DB JOBD_RETENTION

# Starts a server with "$@" (log in $dir/log) and waits for its URL in $url.
start() {
    : >"$dir/log"
    "$JOBD" server --listen 127.0.0.1:0 "$@" 2>"$dir/log" &
    pid=$!
    url=""
    for _ in $(seq 200); do
        url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
        [ -n "$url" ] && return 0
        kill -0 "$pid" 2>/dev/null || { wait "$pid" || true; pid=""; fail "the server exited: $*"; }
        sleep 0.05
    done
    fail "the server did not say where it listens"
}
stop() { kill -TERM "$pid"; wait "$pid" || fail "the server did not exit 0"; pid=""; }

# --- the tokens file: 0640 with the server's group is fine, 0644 is not ---
printf 'files-admin-token-0123456789 admin\n' >"$dir/tokens"
chgrp "$(id -g)" "$dir/tokens"
chmod 0640 "$dir/tokens"
start --db "sqlite:$dir/t.db" --tokens "$dir/tokens"
stop
! grep -q "readable by other users" "$dir/log" || fail "0640 with the server's group warned"
chmod 0644 "$dir/tokens"
start --db "sqlite:$dir/t.db" --tokens "$dir/tokens"
stop
grep -q "readable by other users" "$dir/log" || fail "0644 did not warn"
other=$(getent group nogroup | cut -d: -f3 || true)
if [ "$(id -u)" = 0 ] && [ -n "$other" ] && [ "$other" != "$(id -g)" ]; then
    chgrp "$other" "$dir/tokens"
    chmod 0640 "$dir/tokens"
    start --db "sqlite:$dir/t.db" --tokens "$dir/tokens"
    stop
    grep -q "readable by other users" "$dir/log" || fail "0640 with another group did not warn"
fi
echo "ok tokens file mode"

# --- SQLite files are 0600 whatever the umask ---
(
    umask 000
    start --db "sqlite:$dir/private.db"
    curl -sf -o /dev/null -X POST "$url/v1/jobs" -H 'Content-Type: application/json' \
        -d '{"type":"t"}' || fail "POST /v1/jobs"
    for f in private.db private.db-wal private.db-shm; do
        [ -e "$dir/$f" ] || fail "$f was not made"
        m=$(stat -c %a "$dir/$f")
        [ "$m" = 600 ] || fail "$f has mode $m, want 600"
    done
    stop
)
echo "ok SQLite file, WAL and shm 0600 under umask 000"

# --- a password is never printed ---
pw=s3cretpassw0rd
check_quiet() { # what: the command's stderr must not hold the password
    local what=$1
    shift
    if "$@" >"$dir/out" 2>&1; then fail "$what: exited 0"; fi
    ! grep -q "$pw" "$dir/out" || fail "$what printed the password: $(cat "$dir/out")"
    grep -q '\*\*\*' "$dir/out" || fail "$what: no redacted URL in: $(cat "$dir/out")"
}
check_quiet "--notify-db mysql://" "$JOBD" server --db "sqlite:$dir/n.db" \
    --notify-db "mysql://jobd:$pw@db.example/jobs"
check_quiet "--notify-db postgres:/" "$JOBD" server --db "sqlite:$dir/n.db" \
    --notify-db "postgres:/jobd:$pw@db.example/jobs"
check_quiet "--db postgres:/" "$JOBD" server --db "postgres:/jobd:$pw@db.example/jobs"
check_quiet "--db postgresql:" "$JOBD" migrate --db "postgresql:jobd:$pw@db.example/jobs"
check_quiet "worker --db pg://" "$JOBD" worker --db "pg://jobd:$pw@db.example/jobs" \
    --config /dev/null
[ ! -e "postgres:" ] && [ ! -e "postgres:/jobd:$pw@db.example" ] ||
    fail "a SQLite file was made for a mistyped URL"
echo "ok no password in any message"
