# server_worker.sh — start-up shared by the shell tests that run a real
# `jobd server` and a separate `jobd worker` process on one database
# (test_sqlite_wake.sh, test_sqlite_ckpt.sh, test_worker_trace.sh,
# test_deps_e2e.sh, test_worker_progress.sh, test_worker_attempt_log.sh,
# test_workflow_cancel_e2e.sh).
# Sourced, not run; it lives outside tests/integration so that CTest does
# not take it for a test.
#
#   sw_init NAME       $JOBD from JOBD_BIN, a fresh $dir ($TMPDIR or /tmp: jobd-NAME.XXXXXX)
#                      and an EXIT trap that stops the worker and the server
#                      (SIGTERM, then waits) and removes $dir
#   fail MSG...        prints FAIL: MSG and both logs' last lines, exits 1
#   sw_server DB       `jobd server --db DB` on a free port of 127.0.0.1, log in
#                      $dir/server.log; sets $spid and $server (its base URL)
#                      once it says where it listens
#   sw_worker DB ARG...  `jobd worker --db DB ARG...`, log in $dir/worker.log;
#                      sets $wpid
#   sw_stop            stops the worker and the server as the EXIT trap does,
#                      keeping $dir (before the next store's server)
#   sw_wait_for SECONDS WHAT COMMAND...
#                      runs COMMAND every 50 ms until it succeeds; fails
#                      naming WHAT after SECONDS (a deadline, not a sleep)
#   sw_each_store FN   runs `FN DB --db DB` and `FN DB --server` on a fresh
#                      SQLite file each, then on a fresh PostgreSQL database
#                      (dropped on exit) when JOBD_TEST_PG_URL is set, as
#                      under scripts/with-pg.sh; without it, fails if
#                      JOBD_TEST_REQUIRE_PG=1, else says it skips. FN turns
#                      --server into `--server $server` once sw_server ran.

sw_init() {
    JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
    dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-$1.XXXXXX")
    spid="" wpid="" sw_pgdb=""
    trap sw_cleanup EXIT
}

sw_stop() {
    [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    wpid="" spid=""
}

sw_cleanup() {
    sw_stop || true
    [ -n "$sw_pgdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $sw_pgdb" >/dev/null 2>&1
    rm -rf "$dir"
}

sw_wait_for() {
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@"; do
        [ $SECONDS -lt $deadline ] || fail "timed out waiting for $what"
        sleep 0.05
    done
}

sw_each_store() {
    "$1" "sqlite:$dir/jobs.db" --db "sqlite:$dir/jobs.db"
    "$1" "sqlite:$dir/jobs2.db" --server
    if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
        sw_pgdb="sw_$$"
        psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $sw_pgdb" >/dev/null
        local pg="${JOBD_TEST_PG_URL%/*}/$sw_pgdb"
        "$JOBD" migrate --db "$pg" >/dev/null
        "$1" "$pg" --db "$pg"
        "$1" "$pg" --server
    elif [ "${JOBD_TEST_REQUIRE_PG:-}" = 1 ]; then
        fail "JOBD_TEST_PG_URL is not set"
    else
        echo "skip: PostgreSQL (JOBD_TEST_PG_URL is not set)"
    fi
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
    for _ in $(seq 300); do
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
