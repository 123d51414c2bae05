#!/usr/bin/env bash
# test_server_config.sh — `jobd server --config FILE`: the [server] keys are
# the long flags' names; a flag beats JOBD_<NAME>, which beats the file,
# which beats the default; an unknown key or section, a bad value, a line
# that is not key = value name FILE:LINE and exit 2. Which source won is
# read from the "listening on" line (127.0.0.2/3/4 are all loopback).
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-srvconf.XXXXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$dir/log" 2>/dev/null || true; exit 1; }
unset JOBD_LISTEN JOBD_DB JOBD_THREADS JOBD_INSECURE JOBD_TOKENS JOBD_RETENTION

# Starts the server with "$@", prints the host it listens on, stops it.
listens_on() {
    : >"$dir/log"
    "$JOBD" server "$@" 2>"$dir/log" &
    pid=$!
    local at=""
    for _ in $(seq 100); do
        at=$(sed -n 's|.* listening on http://\(.*\)$|\1|p' "$dir/log")
        [ -n "$at" ] && break
        kill -0 "$pid" 2>/dev/null || { wait "$pid" || true; pid=""; fail "the server exited: $*"; }
        sleep 0.1
    done
    kill -TERM "$pid"
    wait "$pid" || fail "the server did not exit 0 on SIGTERM"
    pid=""
    echo "${at%:*}"
}

cat >"$dir/server.ini" <<INI
; a comment
[server]
db = sqlite:$dir/jobs.db
listen = 127.0.0.2:0   ; inline comment
threads = 2
retention = 1d
INI
[ "$(listens_on --config "$dir/server.ini")" = 127.0.0.2 ] || fail "the file's listen was not used"
[ -f "$dir/jobs.db" ] || fail "the file's db was not used"
[ "$(JOBD_LISTEN=127.0.0.3:0 listens_on --config "$dir/server.ini")" = 127.0.0.3 ] ||
    fail "\$JOBD_LISTEN did not beat the file"
[ "$(JOBD_LISTEN=127.0.0.3:0 listens_on --config="$dir/server.ini" --listen 127.0.0.4:0)" = 127.0.0.4 ] ||
    fail "--listen did not beat \$JOBD_LISTEN"
[ "$(listens_on --listen 127.0.0.4:0 --db "sqlite:$dir/jobs.db")" = 127.0.0.4 ] ||
    fail "without --config"

# A boolean: insecure in the file lets a non-loopback listen start.
printf '[server]\ndb = sqlite:%s/jobs.db\nlisten = 0.0.0.0:0\n' "$dir" >"$dir/open.ini"
set +e
"$JOBD" server --config "$dir/open.ini" 2>"$dir/err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q "refusing to listen on non-loopback" "$dir/err" ||
    fail "a non-loopback listen without tokens started (rc $rc)"
echo "insecure = yes" >>"$dir/open.ini"
[ "$(listens_on --config "$dir/open.ini")" = 0.0.0.0 ] || fail "insecure = yes was not honoured"

# Errors: exit 2 and a message naming FILE:LINE (or the variable).
expect_error() { # want-regex, then the server's arguments
    local want=$1; shift
    set +e
    "$JOBD" server "$@" >"$dir/out" 2>"$dir/err"; local rc=$?
    set -e
    [ $rc -eq 2 ] || fail "exit $rc, not 2, for: $* ($(cat "$dir/err"))"
    grep -Eq "$want" "$dir/err" || fail "expected /$want/, got: $(cat "$dir/err")"
}
printf '[server]\nlisten = 127.0.0.1:0\n\nbogus = 1\n' >"$dir/bad1.ini"
expect_error "^jobd server: $dir/bad1.ini:4: unknown key 'bogus' in \[server\]$" --config "$dir/bad1.ini"
printf '[server]\nreap-interval = 5 parsecs\n' >"$dir/bad2.ini"
expect_error "^jobd server: $dir/bad2.ini:2: --reap-interval: " --config "$dir/bad2.ini"
printf '[server]\nthreads = 1000\n' >"$dir/bad3.ini"
expect_error "$dir/bad3.ini:2: --threads must be 1 to 256, not '1000'" --config "$dir/bad3.ini"
printf '[server]\ninsecure = maybe\n' >"$dir/bad4.ini"
expect_error "$dir/bad4.ini:2: --insecure must be true or false, not 'maybe'" --config "$dir/bad4.ini"
expect_error "^jobd server: --backoff-cap \\(1000 ms\\) must not be shorter than --backoff-base \\(2000 ms\\)$" \
    --backoff-base 2s --backoff-cap 1s
expect_error "^jobd server: --backoff-cap \\(900000 ms\\) must not be shorter than --backoff-base \\(3600000 ms\\)$" \
    --backoff-base 1h
printf '[worker]\nconcurrency = 2\n' >"$dir/bad5.ini"
expect_error "$dir/bad5.ini:2: unknown section \[worker\]" --config "$dir/bad5.ini"
printf '[server]\nlisten\n' >"$dir/bad6.ini"
expect_error "$dir/bad6.ini:2: not a key = value line" --config "$dir/bad6.ini"
expect_error "cannot read $dir/none.ini" --config "$dir/none.ini"
JOBD_THREADS=0 expect_error '^jobd server: \$JOBD_THREADS: --threads must be 1 to 256' \
    --config "$dir/server.ini"
expect_error "^jobd server: --threads must be 1 to 256, not 'x'" --threads x
expect_error "missing value for '--config'" --config
echo "ok: server config file, environment and flags"
