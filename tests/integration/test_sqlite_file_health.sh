#!/usr/bin/env bash
# test_sqlite_file_health.sh — `jobd server` on SQLite when the file under
# it goes bad, through the real binary:
#   deleted  the database file is removed while the server runs: writes
#            answer 503 (not 201 into an unlinked inode), /healthz is 503, one
#            clear error line is logged, and the file is not re-created empty;
#   readonly the file is read-only for the server's user (run as nobody with
#            runuser, since the tests run as root): it refuses to start, exit
#            3, naming the file and "read-only";
#   full     the disk is full (a 1 MiB tmpfs filled with a file): writes
#            answer 503 store_unavailable (not 500), /healthz is 503; once
#            room is made, /healthz is 200 and writes work again. A real
#            ENOSPC, so SQLite answers SQLITE_FULL as on a real disk; where
#            tmpfs cannot be mounted (no CAP_SYS_ADMIN) this case says SKIP.
# Needs JOBD_BIN (set by CTest), curl; root for the readonly and full cases.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-filehealth.XXXXXX")
chmod 755 "$dir"
spid=""
mounted=""
stop() { [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=""; }
cleanup() { stop; [ -n "$mounted" ] && umount "$mounted"; rm -rf "$dir"; }
trap cleanup EXIT
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

# start DB LOG: runs the server on sqlite:DB, logging to LOG, sets $url.
start() {
    : >"$2"
    "$JOBD" server --db "sqlite:$1" --listen 127.0.0.1:0 2>"$2" &
    spid=$!
    url=""
    for _ in $(seq 100); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$2" | head -n 1)
        [ -n "$url" ] && return 0
        sleep 0.1
    done
    echo "server did not start:"; cat "$2"; exit 1
}
# submit: prints the HTTP status of one enqueue; the body goes to $dir/body.
submit() {
    curl -s -o "$dir/body" -w '%{http_code}' -H 'Content-Type: application/json' \
        -d '{"type":"t","payload":{"pad":"'"$(head -c 2000 /dev/zero | tr '\0' x)"'"}}' "$url/v1/jobs"
}
health() { curl -s -o /dev/null -w '%{http_code}' "$url/healthz"; }

# --- deleted ---
mkdir "$dir/del"
start "$dir/del/j.db" "$dir/del.log"
check "deleted: a write before the deletion is 201" '[ "$(submit)" = 201 ]'
rm -f "$dir/del/j.db"
codes=""
for _ in 1 2 3; do codes="$codes $(submit)"; done
check "deleted: writes after the deletion are 503 ($codes)" '[ "$codes" = " 503 503 503" ]'
check "deleted: the 503 keeps the file's path for the server log" \
    'grep -q store_unavailable "$dir/body" && ! grep -q "$dir" "$dir/body" && grep -q "warn api: store unavailable.*$dir/del/j.db" "$dir/del.log"'
check "deleted: /healthz is 503" '[ "$(health)" = 503 ]'
check "deleted: the file is not re-created empty" '[ ! -e "$dir/del/j.db" ]'
check "deleted: one clear error line names the file" \
    '[ "$(grep -c "error store: the SQLite database file was deleted or replaced.*path=$dir/del/j.db" "$dir/del.log")" = 1 ]'
stop

# --- readonly ---
mkdir "$dir/ro"
"$JOBD" migrate --db "sqlite:$dir/ro/j.db" >/dev/null 2>&1 || { echo "FAIL migrate"; exit 1; }
chmod 444 "$dir/ro/j.db"
chmod 555 "$dir/ro"
runuser -u nobody -- "$JOBD" server --db "sqlite:$dir/ro/j.db" --listen 127.0.0.1:0 \
    >"$dir/ro.out" 2>&1 &
rpid=$!
for _ in $(seq 100); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$rpid" 2>/dev/null; then
    kill -TERM "$rpid"; wait "$rpid"
    check "readonly: the server refuses to start" false
else
    wait "$rpid"; rc=$?
    check "readonly: exit 3 (got $rc)" '[ "$rc" = 3 ]'
    check "readonly: the message names the file and says read-only" \
        'grep -q "$dir/ro/j.db.*read-only" "$dir/ro.out"'
fi
chmod 755 "$dir/ro"

# --- full ---
mkdir "$dir/full"
if ! mount -t tmpfs -o size=1m tmpfs "$dir/full" 2>/dev/null; then
    echo "SKIP full: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)"
else
    mounted="$dir/full"
    start "$dir/full/j.db" "$dir/full.log"
    check "full: a write with room is 201" '[ "$(submit)" = 201 ]'
    dd if=/dev/zero of="$dir/full/filler" bs=4k 2>/dev/null
    codes=""
    for _ in 1 2 3 4 5 6; do codes="$codes $(submit)"; done
    check "full: writes are 503 store_unavailable, never 500 ($codes)" \
        '[[ "$codes" == *503* && "$codes" != *500* ]] && grep -q store_unavailable "$dir/body"'
    check "full: /healthz is 503" '[ "$(health)" = 503 ]'
    check "full: the failing writes are logged" 'grep -q "error store: SQLite writes are failing" "$dir/full.log"'
    # A worker whose claims fail right after each reconnect backs off (it used
    # to reconnect every 100 ms: 4-10 log lines a second for the whole outage).
    printf '[worker]\nconcurrency = 1\n\n[handler "t"]\nexec = /bin/true\n' >"$dir/w.ini"
    "$JOBD" worker --db "sqlite:$dir/full/j.db" --config "$dir/w.ini" 2>"$dir/worker.log" &
    wpid=$!
    sleep 4
    kill -TERM "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
    n=$(grep -c "reconnected to the store" "$dir/worker.log")
    check "full: the worker's reconnects back off ($n in 4 s, want 1..7)" '[ "$n" -ge 1 ] && [ "$n" -le 7 ]'
    rm -f "$dir/full/filler"
    check "full: /healthz is 200 once there is room" '[ "$(health)" = 200 ]'
    check "full: writes work again" '[ "$(submit)" = 201 ]'
    stop
fi

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
exit "$fails"
