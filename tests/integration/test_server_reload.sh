#!/usr/bin/env bash
# test_server_reload.sh — a reload that fails is visible and grants nothing
# (docs/OPERATIONS.md, Reloading). `jobd server --check-config` exits 0 for
# a valid configuration and 1 naming FILE:LINE for a bad one. A running
# server whose tokens file gets a typo and a revocation, then SIGHUP: the
# error is logged, STATUS= says "reload failed", jobd_config_reload_failed
# is 1, the revoked token is refused (it was kept before), a token whose
# role was lowered has the lower one, a token added or on the bad line is
# refused; the file's mode is checked again. A good reload puts the gauge
# back to 0 and the status to "serving". An unreadable file leaves no token.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-reload.XXXXXX")
spid="" lpid=""
cleanup() {
    for p in $spid $lpid; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- notifications"; cat "$dir/msgs" 2>/dev/null || true
    echo "--- server log"; tail -20 "$dir/server.log" 2>/dev/null || true
    exit 1
}
unset JOBD_LISTEN JOBD_TOKENS JOBD_DB JOBD_LOG_LEVEL WATCHDOG_USEC WATCHDOG_PID

tok_admin=admin-aaaaaaaaaaaaaaaa
tok_read=read-bbbbbbbbbbbbbbbbb
tok_write=write-cccccccccccccccc
tok_new=new-dddddddddddddddddd
tok_typo=typo-eeeeeeeeeeeeeeeee
printf '# in force at start\n%s\n%s read\n%s write\n' "$tok_admin" "$tok_read" "$tok_write" \
    >"$dir/tokens"
chmod 600 "$dir/tokens"
printf '[server]\ntokens = %s\nlog-level = info\n' "$dir/tokens" >"$dir/server.ini"

# --check-config: 0 and a confirmation when valid; 1 naming FILE:LINE when not.
check() { "$JOBD" server --check-config --config "$dir/$1" >"$dir/check.out" 2>"$dir/check.err"; }
check server.ini || fail "--check-config refused a valid configuration: $(cat "$dir/check.err")"
grep -q 'configuration OK.*tokens: .*, 3)' "$dir/check.out" || fail "no confirmation: $(cat "$dir/check.out")"
cp "$dir/tokens" "$dir/tokens.good"
printf '%s reader\n' "$tok_typo" >>"$dir/tokens"
rc=0; check server.ini || rc=$?
[ "$rc" = 1 ] || fail "--check-config with role 'reader' exited $rc, not 1"
grep -q "tokens:5: unknown role 'reader'" "$dir/check.err" || fail "no FILE:LINE: $(cat "$dir/check.err")"
cp "$dir/tokens.good" "$dir/tokens"
printf '[server]\ntokens = %s\nlisten = 127.0.0.1:0\nthreds = 2\n' "$dir/tokens" >"$dir/bad.ini"
rc=0; check bad.ini || rc=$?
[ "$rc" = 1 ] && grep -q "bad.ini:4: unknown key 'threds'" "$dir/check.err" ||
    fail "--check-config on an unknown key: rc $rc, $(cat "$dir/check.err")"
printf '[server]\ntokens = %s/none\n' "$dir" >"$dir/gone.ini"
rc=0; check gone.ini || rc=$?
[ "$rc" = 1 ] && grep -q "cannot read tokens file" "$dir/check.err" ||
    fail "--check-config on a missing tokens file: rc $rc, $(cat "$dir/check.err")"
[ ! -e "$dir/jobs.db" ] || fail "--check-config opened the store"

# The service manager's side: one line per datagram, newlines as '|'.
cat >"$dir/listen.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + sys.argv[1])
s.settimeout(120)
with open(sys.argv[2], "a", buffering=1) as f:
    print("bound", file=f)
    while True:
        msg = s.recv(4096).decode().replace("\n", "|")
        print(msg, file=f)
        if "STOPPING=1" in msg:
            break
PY
python3 "$dir/listen.py" "jobd-test-reload-$$" "$dir/msgs" &
lpid=$!
wait_for() { # file, regex, what
    for _ in $(seq 200); do grep -Eq "$2" "$1" 2>/dev/null && return; sleep 0.1; done
    fail "no $3"
}
wait_for "$dir/msgs" '^bound$' "listener"
: >"$dir/server.log"
NOTIFY_SOCKET="@jobd-test-reload-$$" "$JOBD" server --db "sqlite:$dir/jobs.db" \
    --listen 127.0.0.1:0 --config "$dir/server.ini" 2>"$dir/server.log" &
spid=$!
wait_for "$dir/msgs" '^READY=1\|STATUS=serving$' "READY=1"
port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
url="http://127.0.0.1:$port"
get() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$url/v1/queues"; }
post() { # a write route: 201 for write and admin, 403 for read
    curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" \
        -H 'Content-Type: application/json' -d '{"type":"t"}' "$url/v1/jobs"
}
gauge() {
    curl -s -H "Authorization: Bearer $tok_read" "$url/metrics" |
        sed -n 's/^jobd_config_reload_failed \([0-9]*\)$/\1/p'
}
hup() { # waits for the READY=1 that ends this reload
    local before
    before=$(grep -c '^READY=1' "$dir/msgs")
    kill -HUP "$spid"
    for _ in $(seq 200); do
        [ "$(grep -c '^READY=1' "$dir/msgs")" -gt "$before" ] && return
        sleep 0.1
    done
    fail "no READY=1 after SIGHUP"
}
[ "$(gauge)" = 0 ] || fail "jobd_config_reload_failed is not 0 at start"
[ "$(get $tok_admin)" = 200 ] && [ "$(post $tok_write)" = 201 ] || fail "tokens refused at start"

# The admin token is revoked, the write token lowered to read, a token added,
# and a typo: the reload fails, loudly, and grants nothing.
printf '%s read\n%s read\n%s\n%s reader\n' "$tok_read" "$tok_write" "$tok_new" "$tok_typo" \
    >"$dir/tokens"
hup
wait_for "$dir/server.log" 'error server: SIGHUP: reload failed.*tokens:4: unknown role .reader.' \
    "error line naming the bad line"
tail -1 "$dir/msgs" | grep -q "^READY=1|STATUS=serving; reload failed: .*tokens:4: unknown role" ||
    fail "STATUS= does not say the reload failed: $(tail -1 "$dir/msgs")"
[ "$(gauge)" = 1 ] || fail "jobd_config_reload_failed is not 1 after a failed reload"
[ "$(get $tok_admin)" = 401 ] || fail "the revoked token still works after a failed reload"
[ "$(get $tok_new)" = 401 ] || fail "a token added by a failed reload works"
[ "$(get $tok_typo)" = 401 ] || fail "the token on the bad line works"
[ "$(get $tok_write)" = 200 ] || fail "a token still listed was refused"
[ "$(post $tok_write)" = 403 ] || fail "a role lowered in the failed file kept its old power"
[ "$(get $tok_read)" = 200 ] || fail "the read token was refused"
curl -sf "$url/healthz" >/dev/null || fail "/healthz refused after a failed reload"

# The mode is checked at every reload; a good reload clears the failure.
printf '%s read\n%s write\n%s read\n' "$tok_read" "$tok_write" "$tok_new" >"$dir/tokens"
chmod 644 "$dir/tokens"
hup
wait_for "$dir/server.log" 'reloaded the tokens .*tokens=3' "a good reload"
grep -q 'warn server: SIGHUP: tokens file .* is readable by other users' "$dir/server.log" ||
    fail "the tokens file's mode was not checked at reload"
[ "$(tail -1 "$dir/msgs")" = "READY=1|STATUS=serving" ] || fail "STATUS= not back to serving"
[ "$(gauge)" = 0 ] || fail "jobd_config_reload_failed is not 0 after a good reload"
[ "$(get $tok_new)" = 200 ] && [ "$(post $tok_write)" = 201 ] || fail "the good reload did not apply"
chmod 600 "$dir/tokens"

# Options that do not load fail the reload too; the tokens file in force is
# read again, so a revocation in it still takes effect.
printf '%s read\n%s write\n' "$tok_read" "$tok_write" >"$dir/tokens"
printf 'threds = 2\n' >>"$dir/server.ini"
hup
wait_for "$dir/server.log" "server.ini:4: unknown key 'threds'" "the options' error"
[ "$(gauge)" = 1 ] || fail "jobd_config_reload_failed is not 1 after bad options"
[ "$(get $tok_new)" = 401 ] || fail "a token removed while the options were bad still works"
[ "$(get $tok_write)" = 200 ] || fail "the write token was refused with bad options"

# A tokens file that cannot be read leaves no token (not the old table).
sed -i '/threds/d' "$dir/server.ini"
mv "$dir/tokens" "$dir/tokens.moved"
hup
wait_for "$dir/server.log" 'reload failed.*cannot read tokens file' "the unreadable file's error"
[ "$(get $tok_read)" = 401 ] && [ "$(get $tok_write)" = 401 ] ||
    fail "a token works though the tokens file cannot be read"
curl -sf "$url/healthz" >/dev/null || fail "/healthz refused with no token left"
mv "$dir/tokens.moved" "$dir/tokens"
hup
[ "$(get $tok_read)" = 200 ] && [ "$(gauge)" = 0 ] || fail "no recovery after the file came back"

kill -TERM "$spid"
wait "$spid" || fail "the server did not exit 0"
spid=""
echo "ok: --check-config 0/1 with FILE:LINE; a failed reload is logged, in STATUS= and" \
    "jobd_config_reload_failed, and grants nothing"
