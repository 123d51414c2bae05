# server_worker.sh — start-up shared by the shell tests that run a real
# `jobd server` and a separate `jobd worker` process on one database
# (test_sqlite_wake.sh, test_sqlite_ckpt.sh). Sourced, not run; it lives
# outside tests/integration so that CTest does not take it for a test.
#
#   sw_init NAME       $JOBD from JOBD_BIN, a fresh $dir (/tmp/jobd-NAME.XXXXXX)
#                      and an EXIT trap that stops the worker and the server
#                      (SIGTERM, then waits) and removes $dir
#   fail MSG...        prints FAIL: MSG and both logs' last lines, exits 1
#   sw_server DB       `jobd server --db DB` on a free port of 127.0.0.1, log in
#                      $dir/server.log; sets $spid and $server (its base URL)
#                      once it says where it listens
#   sw_worker DB ARG...  `jobd worker --db DB ARG...`, log in $dir/worker.log;
#                      sets $wpid

sw_init() {
    JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
    dir=$(mktemp -d "/tmp/jobd-$1.XXXXXX")
    spid="" wpid=""
    trap sw_cleanup EXIT
}

sw_cleanup() {
    [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$dir"
}

fail() {
    echo "FAIL: $*"
    echo "--- server log"; tail -20 "$dir/server.log" || true
    echo "--- worker log"; tail -20 "$dir/worker.log" || true
    exit 1
}

sw_server() {
    : >"$dir/server.log" # exists before the child opens it: sed below may run first
    "$JOBD" server --db "$1" --listen 127.0.0.1:0 --shutdown-grace 2s 2>"$dir/server.log" &
    spid=$!
    local port=""
    for _ in $(seq 100); do
        port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
        [ -n "$port" ] && break
        kill -0 "$spid" 2>/dev/null || fail "the server exited"
        sleep 0.1
    done
    [ -n "$port" ] || fail "the server did not say where it listens"
    server="http://127.0.0.1:$port"
}

sw_worker() {
    local db=$1
    shift
    "$JOBD" worker --db "$db" "$@" 2>"$dir/worker.log" &
    wpid=$!
}
