#!/usr/bin/env bash
# test_sdnotify.sh — the systemd notification protocol and SIGHUP, without
# systemd (CI has no systemd as PID 1): a datagram listener written here
# stands in for the service manager at $NOTIFY_SOCKET. `jobd server` must
# send READY=1 once listening, WATCHDOG=1 every half $WATCHDOG_USEC,
# RELOADING=1 then READY=1 around SIGHUP, STOPPING=1 on SIGTERM. SIGHUP
# swaps the tokens file in (the old token stops working, the new one works),
# says in STATUS= when the new file is bad, and does not drop a
# long-poll claim in flight. `jobd worker` does the same on a path socket
# and survives SIGHUP. Abstract ('@') and path sockets are both used.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-sdnotify.XXXXXX")
spid="" lpid="" wpid="" cpid=""
cleanup() {
    for p in $cpid $wpid $spid $lpid; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- notifications"; cat "$dir"/msgs.* 2>/dev/null || true
    echo "--- server log"; tail -20 "$dir/server.log" 2>/dev/null || true
    exit 1
}
unset JOBD_LISTEN JOBD_TOKENS JOBD_DB WATCHDOG_PID

cat >"$dir/listen.py" <<'PY'
# The service manager's side: one line per datagram (newlines as '|') until STOPPING=1.
import socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
s.settimeout(60)
with open(out, "a", buffering=1) as f:
    print("bound", file=f)
    while True:
        msg = s.recv(4096).decode().replace("\n", "|")
        print(msg, file=f)
        if "STOPPING=1" in msg:
            break
PY
listen() { # address, output file
    python3 "$dir/listen.py" "$1" "$2" &
    lpid=$!
    for _ in $(seq 50); do grep -q bound "$2" 2>/dev/null && return; sleep 0.1; done
    fail "the listener did not bind $1"
}
wait_for() { # file, regex, what
    for _ in $(seq 100); do grep -Eq "$2" "$1" 2>/dev/null && return; sleep 0.1; done
    fail "no $3"
}
count() { grep -c "$2" "$1" || true; }

tok_a=aaaaaaaaaaaaaaaaaaaa1
tok_b=bbbbbbbbbbbbbbbbbbbb2
echo "$tok_a" >"$dir/tokens"
listen "@jobd-test-sdnotify-$$" "$dir/msgs.server"
: >"$dir/server.log"
printf '[server]\ntokens = %s\nlog-level = info\naccess-log = all\n' "$dir/tokens" >"$dir/server.ini"
NOTIFY_SOCKET="@jobd-test-sdnotify-$$" WATCHDOG_USEC=400000 \
    "$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 --config "$dir/server.ini" \
    --shutdown-grace 5s 2>"$dir/server.log" &
spid=$!
wait_for "$dir/msgs.server" '^READY=1\|STATUS=serving$' "READY=1 from the server"
port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
url="http://127.0.0.1:$port"
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$url/v1/queues"; }
[ "$(code $tok_a)" = 200 ] || fail "token A refused before the reload"
[ "$(code $tok_b)" = 401 ] || fail "token B accepted before the reload"

# The watchdog: every 200 ms, so at least 4 in 1.5 s even on a loaded machine.
# Counted until 4 have come or 1.5 s has passed, whichever is first.
before=$(count "$dir/msgs.server" '^WATCHDOG=1$')
t0=${EPOCHREALTIME/./}
while :; do
    t=${EPOCHREALTIME/./} # read before the count: a count taken when 1.5 s are up
    after=$(count "$dir/msgs.server" '^WATCHDOG=1$')
    [ $((after - before)) -ge 4 ] || [ $((t - t0)) -ge 1500000 ] && break
    sleep 0.05
done
[ $((after - before)) -ge 4 ] || fail "only $((after - before)) WATCHDOG=1 in 1.5 s (WATCHDOG_USEC=400000)"

# A long-poll claim (3 s) in flight across the reload must still be answered.
curl -s -o "$dir/claim.out" -w '%{http_code}' -H "Authorization: Bearer $tok_a" \
    -H 'Content-Type: application/json' \
    -d '{"worker_id":"t","types":["nothing"],"limit":1,"wait_s":3}' \
    "$url/v1/claim" >"$dir/claim.code" &
cpid=$!
sleep 0.5
printf "# rotated\n%s\n" "$tok_b" >"$dir/tokens"
sed -i 's/^log-level = info$/log-level = warn/' "$dir/server.ini"
kill -HUP "$spid"
wait_for "$dir/msgs.server" '^RELOADING=1' "RELOADING=1 after SIGHUP"
wait_for "$dir/server.log" 'reloaded the tokens .*tokens=1' "reload message"
wait_for "$dir/msgs.server" 'RELOADING=1.*' "READY=1 after the reload"
[ "$(sed -n '/^RELOADING=1/{n;p;}' "$dir/msgs.server" | head -1)" = "READY=1|STATUS=serving" ] ||
    fail "READY=1 did not follow RELOADING=1"
wait_for "$dir/server.log" 'SIGHUP: log level level=warn' "the new log level"
requests=$(count "$dir/server.log" 'http: request')
[ "$(code $tok_b)" = 200 ] || fail "token B refused after the reload"
sleep 0.2
[ "$(count "$dir/server.log" 'http: request')" = "$requests" ] ||
    fail "info lines (requests) still logged after log-level = warn and SIGHUP"
[ "$(code $tok_a)" = 401 ] || fail "token A still accepted after the reload"
wait "$cpid" || fail "the long-poll claim's curl failed across SIGHUP"
cpid=""
[ "$(cat "$dir/claim.code")" = 200 ] || fail "the long-poll claim got $(cat "$dir/claim.code")"

# A bad file fails the reload, visibly, and grants nothing: an empty file
# lists no token, so none stays (test_server_reload.sh has the rest).
: >"$dir/tokens"
kill -HUP "$spid"
wait_for "$dir/server.log" 'SIGHUP: reload failed' "refusal of an empty tokens file"
wait_for "$dir/msgs.server" '^READY=1\|STATUS=serving; reload failed: .*holds no token' \
    "STATUS= after a failed reload"
[ "$(code $tok_b)" = 401 ] || fail "token B still accepted though the file lists no token"
kill -0 "$spid" || fail "the server died on a bad reload"

kill -TERM "$spid"
wait "$spid" || fail "the server did not exit 0"
spid=""
wait "$lpid" || true
lpid=""
tail -1 "$dir/msgs.server" | grep -q '^STOPPING=1' || fail "no STOPPING=1 at the end"

# The worker, on a path socket: READY, survives SIGHUP, STOPPING.
cat >"$dir/worker.ini" <<INI
[worker]
concurrency = 1
[handler "echo"]
exec = /bin/cat
INI
listen "$dir/notify.sock" "$dir/msgs.worker"
NOTIFY_SOCKET="$dir/notify.sock" WATCHDOG_USEC=400000 \
    "$JOBD" worker --db "sqlite:$dir/jobs.db" --config "$dir/worker.ini" 2>"$dir/worker.log" &
wpid=$!
wait_for "$dir/msgs.worker" '^READY=1\|STATUS=running$' "READY=1 from the worker"
wait_for "$dir/msgs.worker" '^WATCHDOG=1$' "WATCHDOG=1 from the worker"
kill -HUP "$wpid"
wait_for "$dir/msgs.worker" '^RELOADING=1' "RELOADING=1 from the worker"
sleep 0.3
kill -0 "$wpid" || fail "SIGHUP killed the worker"
kill -TERM "$wpid"
wait "$wpid" || fail "the worker did not exit 0"
wpid=""
wait "$lpid" || true
lpid=""
tail -1 "$dir/msgs.worker" | grep -q '^STOPPING=1' || fail "no STOPPING=1 from the worker"

# Outside systemd (no NOTIFY_SOCKET) nothing is sent and nothing fails;
# a watchdog meant for another process (WATCHDOG_PID) is not pinged by us.
listen "@jobd-test-sdnotify2-$$" "$dir/msgs.other"
NOTIFY_SOCKET="@jobd-test-sdnotify2-$$" WATCHDOG_USEC=200000 WATCHDOG_PID=1 \
    "$JOBD" worker --db "sqlite:$dir/jobs.db" --config "$dir/worker.ini" 2>>"$dir/worker.log" &
wpid=$!
wait_for "$dir/msgs.other" '^READY=1' "READY=1 with WATCHDOG_PID=1"
sleep 0.6
kill -TERM "$wpid"; wait "$wpid" || fail "the worker did not exit 0"
wpid=""
wait "$lpid" || true
lpid=""
[ "$(count "$dir/msgs.other" '^WATCHDOG=1$')" = 0 ] || fail "pinged a watchdog meant for PID 1"
echo "ok: sd_notify READY/WATCHDOG/RELOADING/STOPPING, SIGHUP token reload"
