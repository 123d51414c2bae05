# lib.sh — shared helpers for the fault-injection scenarios (sourced, not run).
#
# A scenario is a bash script that drives the real `jobd` binary ($JOBD_BIN,
# from the ctest build), real worker processes running handler.sh, and a real
# PostgreSQL (the cluster scripts/with-pg.sh started, $JOBD_TEST_PG_URL; each
# scenario makes its own database on it, or starts a private cluster when it
# must restart or cut off PostgreSQL, so that other tests running at the same
# time are not disturbed). Everything it starts is killed by the EXIT trap.
#
# Exit codes: 0 pass, 1 fail, 77 skipped (ctest SKIP_RETURN_CODE); a skip
# always prints "SKIPPED: reason". SOAK=1 selects the long version.
set -euo pipefail

SCEN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${JOBD_BIN:-}" ]; then   # ctest sets it; by hand: build/, else build-asan/
    JOBD_BIN=$SCEN_DIR/../../build/jobd
    [ -x "$JOBD_BIN" ] || JOBD_BIN=$SCEN_DIR/../../build-asan/jobd
fi
SOAK=${SOAK:-0}
SCEN_PIDS_ALL=()        # every background process we started
declare -A WPID=()      # worker name -> pid
SERVER_PID=
SERVER_URL=
DB_URL=
SCEN_DB_DROP=           # "URL NAME": a database to drop at exit
PRIV_PG_DIR=            # a private cluster to stop at exit

log()  { printf '[%s %s] %s\n' "$(date -u +%H:%M:%S.%3N)" "${SCEN_NAME:-scenario}" "$*"; }
fail() { log "FAIL: $*"; scen_dump_logs; exit 1; }
skip() { echo "SKIPPED: $*"; exit 77; }

# scen_init NAME: a fresh work folder ($WORK) and the cleanup trap.
scen_init() {
    SCEN_NAME=$1
    [ -x "$JOBD_BIN" ] || { echo "FAIL: no jobd binary at $JOBD_BIN (set JOBD_BIN)"; exit 1; }
    command -v python3 >/dev/null || skip "python3 is not installed"
    command -v curl >/dev/null || skip "curl is not installed"
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/jobd-scen-$SCEN_NAME.XXXXXX")
    chmod 755 "$WORK"
    mkdir -p "$WORK/pids"
    HISTORY=$WORK/history
    : >"$HISTORY"
    export SCEN_HISTORY=$HISTORY SCEN_PIDS=$WORK/pids
    # ASan: leaks at a kill -9 are not findings; a report must not block exit.
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
    trap scen_cleanup EXIT
    trap 'exit 130' INT TERM
    log "work folder $WORK, jobd $JOBD_BIN, soak=$SOAK"
}

scen_cleanup() {
    local rc=$? p
    for p in "${SCEN_PIDS_ALL[@]}"; do
        kill -CONT "$p" 2>/dev/null || true
        kill -KILL "$p" 2>/dev/null || true
    done
    # Handlers live in their own process groups: kill those left over.
    # (only if that pid is still a handler.sh: a pid may have been reused).
    for p in "$WORK"/pids/*; do
        [ -f "$p" ] || continue
        p=$(cat "$p")
        grep -qs handler.sh "/proc/$p/cmdline" && kill -KILL -- "-$p" 2>/dev/null || true
    done
    # A scenario's own services (ha_lib.sh: Patroni, etcd, PgBouncer).
    [ -n "${SCEN_EXTRA_CLEANUP:-}" ] && { "$SCEN_EXTRA_CLEANUP" || true; }
    wait 2>/dev/null || true
    if [ -n "$SCEN_DB_DROP" ]; then
        psql -q "${SCEN_DB_DROP% *}" -c "DROP DATABASE IF EXISTS ${SCEN_DB_DROP#* } WITH (FORCE)" \
            >/dev/null 2>&1 || true
    fi
    if [ -n "$PRIV_PG_DIR" ]; then
        pg_ctl_priv -m immediate stop >/dev/null 2>&1 || true
    fi
    if [ $rc -eq 0 ] || [ $rc -eq 77 ] || [ -n "${KEEP_WORK:-}" ]; then
        [ -n "${KEEP_WORK:-}" ] && log "kept $WORK" || rm -rf "$WORK"
    else
        log "exit $rc; logs kept in $WORK"
        rm -rf "$PRIV_PG_DIR"
    fi
    exit $rc
}

scen_dump_logs() {
    local f
    for f in "$WORK"/*.log; do
        [ -f "$f" ] || continue
        echo "---- tail of $f"
        tail -n 15 "$f"
    done
}

# wait_until SECONDS WHAT CMD...: polls CMD every 0.2 s until it succeeds.
wait_until() {
    local limit=$1 what=$2; shift 2
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || fail "timed out after ${limit}s waiting for $what"
        sleep 0.2
    done
}

# ---- PostgreSQL ----------------------------------------------------------

# Under JOBD_TEST_REQUIRE_PG (`make test`) a missing PostgreSQL fails the
# scenario instead of skipping it: no PostgreSQL test passes by not running.
need_pg() {
    local why=""
    [ -n "${JOBD_TEST_PG_URL:-}" ] || why="JOBD_TEST_PG_URL is not set (run under scripts/with-pg.sh)"
    [ -n "$why" ] || command -v psql >/dev/null || why="psql is not installed"
    [ -z "$why" ] && return 0
    [ -n "${JOBD_TEST_REQUIRE_PG:-}" ] && fail "JOBD_TEST_REQUIRE_PG is set: $why"
    skip "$why"
}

# pg_newdb: a fresh database on the shared cluster; sets DB_URL.
pg_newdb() {
    need_pg
    local name="scen_${SCEN_NAME}_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $name" >/dev/null || fail "cannot create database $name"
    SCEN_DB_DROP="$JOBD_TEST_PG_URL $name"
    DB_URL="${JOBD_TEST_PG_URL%/*}/$name"
    log "database $DB_URL"
}

# pg_initdb_priv: a fresh cluster in $PRIV_PG_DIR. Under scripts/with-pg.sh
# (its TMPDIR lives as long as the run) the first scenario runs initdb into
# $TMPDIR/jobd-scen-initdb and every private cluster is a copy of that
# (cp -a: the same files initdb would write, owner and modes kept), so a
# `make test` pays initdb's ~1 s once instead of once per private cluster.
pg_initdb_priv() {
    local tpl=${TMPDIR:-}/jobd-scen-initdb
    if [ -z "${JOBD_TEST_PG_DATA:-}" ] || [ -z "${TMPDIR:-}" ] || ! command -v flock >/dev/null; then
        "${PG_RUNAS[@]}" "$PG_BIN/initdb" -D "$PRIV_PG_DIR" -U jobd --auth=trust -E UTF8 --locale=C.UTF-8 \
            >"$WORK/initdb.log" 2>&1 || fail "initdb failed"
        return 0
    fi
    (
        flock 9
        [ -f "$tpl/data/PG_VERSION" ] && exit 0
        rm -rf "$tpl.new"
        mkdir -p "$tpl.new"
        [ ${#PG_RUNAS[@]} -gt 0 ] && chown postgres "$tpl.new"
        "${PG_RUNAS[@]}" "$PG_BIN/initdb" -D "$tpl.new/data" -U jobd --auth=trust -E UTF8 --locale=C.UTF-8 \
            >"$WORK/initdb.log" 2>&1 && mv "$tpl.new" "$tpl"
    ) 9>"$tpl.lock" || fail "initdb failed: $(tail -n 5 "$WORK/initdb.log" 2>/dev/null)"
    cp -a "$tpl/data" "$PRIV_PG_DIR" || fail "cannot copy the initdb template $tpl/data"
}

# pg_private_start [EXTRA_LISTEN_ADDR]: a private cluster in $WORK/pg (for
# scenarios that restart or cut off PostgreSQL); sets DB_URL, PRIV_PG_PORT.
PG_RUNAS=()
pg_ctl_priv() { "${PG_RUNAS[@]}" "$PG_BIN/pg_ctl" -D "$PRIV_PG_DIR" -l "$WORK/postgres.log" "$@"; }
pg_private_start() {
    local extra=${1:-}
    PG_BIN=${JOBD_TEST_PG_BIN:-/usr/lib/postgresql/15/bin}
    [ -x "$PG_BIN/initdb" ] || skip "no PostgreSQL server binaries in $PG_BIN"
    command -v psql >/dev/null || skip "psql is not installed"
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || skip "running as root and there is no postgres user"
        PG_RUNAS=(runuser -u postgres --)
    fi
    mkdir -p "$WORK/pgsock"
    PRIV_PG_DIR=$WORK/pg
    [ ${#PG_RUNAS[@]} -gt 0 ] && chown postgres "$WORK" "$WORK/pgsock"
    pg_initdb_priv
    # PG_HBA_EXTRA: more pg_hba.conf lines (e.g. trust for a test network);
    # PG_MAX_CONN: its max_connections (default 100).
    [ -n "${PG_HBA_EXTRA:-}" ] && printf '%s\n' "$PG_HBA_EXTRA" >>"$PRIV_PG_DIR/pg_hba.conf"
    local try
    for try in 1 2 3 4 5 6 7 8; do
        PRIV_PG_PORT=$((20000 + RANDOM % 30000))
        PRIV_PG_OPTS="-c listen_addresses=127.0.0.1${extra:+,$extra} -p $PRIV_PG_PORT \
            -k $WORK/pgsock -c max_connections=${PG_MAX_CONN:-100} -c shared_buffers=32MB -c fsync=on"
        if pg_ctl_priv -w -t 30 -o "$PRIV_PG_OPTS" start >/dev/null 2>&1; then
            DB_URL="postgresql://jobd@127.0.0.1:$PRIV_PG_PORT/postgres"
            log "private PostgreSQL at $DB_URL"
            return 0
        fi
    done
    fail "the private PostgreSQL did not start"
}

# pg_private_start_again: starts the private cluster after a stop, on the
# same port and with the same options.
pg_private_start_again() { pg_ctl_priv -w -t 60 -o "$PRIV_PG_OPTS" start; }

pg_sql() { psql -qXAt "$DB_URL" -c "$1"; }

# ---- SQLite (through python3's sqlite3 module: no sqlite3 CLI needed) -----

sq_sql() {
    python3 -c '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
for row in db.execute(sys.argv[2]): print("|".join(str(c) for c in row))
' "${DB_URL#sqlite:}" "$1"
}
sq_count() { sq_sql "SELECT count(*) FROM (SELECT id, status FROM jobs UNION ALL SELECT id, status FROM jobs_done) WHERE $1"; }
sq_count_is() { [ "$(sq_count "$1")" = "$2" ]; }
sq_dump_jobs() {
    python3 -c '
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30)
q = "SELECT id, status, attempt, worker_id, result FROM jobs UNION ALL " \
    "SELECT id, status, attempt, worker_id, result FROM jobs_done ORDER BY id"
for i, st, a, w, r in db.execute(q):
    print(json.dumps({"id": i, "status": st, "attempt": a, "worker_id": w,
                      "result": json.loads(r) if r else None}))
' "${DB_URL#sqlite:}" >"$1"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_forwarder: a tcp_forward.py in front of $DB_URL's PostgreSQL, which
# a scenario can cut (kill -USR1 "$FWD_PID": nothing closed, nothing
# answered) and heal (-USR2). Sets FWD_PID and FWD_DB_URL (the same
# database, through the forwarder).
start_forwarder() {
    local port pg_port
    port=$(free_port)
    pg_port=$(python3 -c 'import sys, urllib.parse as u; print(u.urlparse(sys.argv[1]).port)' "$DB_URL")
    python3 "$SCEN_DIR/tcp_forward.py" "$port" 127.0.0.1 "$pg_port" "$WORK/fwd.pid" >"$WORK/forward.log" 2>&1 &
    FWD_PID=$!
    SCEN_PIDS_ALL+=("$FWD_PID")
    wait_until 10 "the forwarder to listen" test -s "$WORK/fwd.pid"
    FWD_DB_URL="postgresql://jobd@127.0.0.1:$port/${DB_URL##*/}"
    log "forwarder pid $FWD_PID: 127.0.0.1:$port -> PostgreSQL port $pg_port"
}

# ---- jobd processes ------------------------------------------------------

# write_worker_ini FILE LEASE HEARTBEAT CONCURRENCY [EXTRA [worker] LINES...]
write_worker_ini() {
    local f=$1 lease=$2 hb=$3 conc=$4; shift 4
    {
        echo "; generated by tests/scenarios/lib.sh"
        echo "[worker]"
        echo "concurrency = $conc"
        echo "lease = $lease"
        echo "heartbeat = $hb"
        echo "backoff_base = 100ms"
        echo "backoff_cap = 1s"
        echo "shutdown_grace = 5s"
        local l
        for l in "$@"; do echo "$l"; done
        echo
        echo '[handler "scen"]'
        echo "exec = $SCEN_DIR/handler.sh"
        echo "env = SCEN_HISTORY,SCEN_PIDS,SCEN_WORKER"  # handlers get a clean environment
        echo "timeout = 60s"
    } >"$f"
}

# start_server [ARGS...]: `jobd server` on $DB_URL and $SERVER_LISTEN (default
# a free port), logging to $WORK/$SERVER_LOG_NAME.log (default server.log);
# sets SERVER_PID and SERVER_URL. The reaper runs every 250 ms; every
# request is logged (--access-log all: scenarios read the idle claims too).
# A reaped job is due again after the server's backoff: 100 ms to 1 s here,
# as the workers' own (write_worker_ini), not the default 5 s doubling per
# attempt, which was most of the time of the scenarios that reap a lease
# (a job waited up to 10 s for its attempt 2) and is not what they check.
# ARGS come last, so a scenario can override any of these.
start_server() {
    local logf=$WORK/${SERVER_LOG_NAME:-server}.log
    [ -f "$logf" ] && mv "$logf" "$WORK/server.$(date +%s%N).log"
    SCEN_WORKER=server "$JOBD_BIN" server --db "$DB_URL" --listen "${SERVER_LISTEN:-127.0.0.1:0}" --reap-interval 250ms \
        --backoff-base 100ms --backoff-cap 1s --shutdown-grace 2s --access-log all "$@" >"$logf" 2>&1 &
    SERVER_PID=$!
    SCEN_PIDS_ALL+=("$SERVER_PID")
    local deadline=$((SECONDS + 30))
    until grep -qs 'listening on http://' "$logf"; do
        kill -0 "$SERVER_PID" 2>/dev/null || fail "jobd server exited at start: $(tail -n 5 "$logf")"
        [ $SECONDS -lt $deadline ] || fail "jobd server did not start listening within 30s"
        sleep 0.1
    done
    SERVER_URL=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$logf" | head -n 1)
    export JOBD_SERVER=$SERVER_URL
    log "server pid $SERVER_PID at $SERVER_URL"
}

# start_worker NAME INI [ARGS...]: a `jobd worker --id NAME` process on
# $DB_URL (or whatever ARGS say, e.g. --server URL); WPID[NAME] is its pid.
start_worker() {
    local name=$1 ini=$2; shift 2
    local args=("$@")
    [ ${#args[@]} -eq 0 ] && args=(--db "$DB_URL")
    SCEN_WORKER=$name "$JOBD_BIN" worker --config "$ini" --id "$name" "${args[@]}" \
        >"$WORK/worker-$name.log" 2>&1 &
    WPID[$name]=$!
    SCEN_PIDS_ALL+=("$!")
    log "worker $name pid $!"
}

# stop_pid PID: SIGTERM, then wait up to 15 s, then SIGKILL.
stop_pid() {
    local p=$1 i
    kill -TERM "$p" 2>/dev/null || return 0
    for i in $(seq 1 300); do
        kill -0 "$p" 2>/dev/null || { wait "$p" 2>/dev/null || true; return 0; }
        sleep 0.05
    done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
}

# ---- jobs ----------------------------------------------------------------

# submit_batch COUNT SLEEP_MS [IDS_FILE]: enqueues COUNT "scen" jobs through
# POST /v1/jobs/batch (1,000 a request); appends their ids to IDS_FILE
# (default $WORK/expect).
submit_batch() {
    local count=$1 ms=$2 ids=${3:-$WORK/expect} done_=0 n
    while [ $done_ -lt "$count" ]; do
        n=$((count - done_)); [ $n -gt 1000 ] && n=1000
        python3 -c '
import json, sys
n, ms = int(sys.argv[1]), int(sys.argv[2])
json.dump({"jobs": [{"type": "scen", "payload": {"sleep_ms": ms}, "max_attempts": 25} for _ in range(n)]}, sys.stdout)
' "$n" "$ms" >"$WORK/batch.json"
        curl -sS -o "$WORK/batch.out" -w '%{http_code}' -H 'Content-Type: application/json' \
            --data-binary "@$WORK/batch.json" "$SERVER_URL/v1/jobs/batch" >"$WORK/batch.code" ||
            fail "batch enqueue: curl failed"
        [ "$(cat "$WORK/batch.code")" = 201 ] || fail "batch enqueue: HTTP $(cat "$WORK/batch.code"): $(head -c 300 "$WORK/batch.out")"
        python3 -c '
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]: print(j["id"])
' "$WORK/batch.out" >>"$ids"
        done_=$((done_ + n))
    done
}

# submit_one SLEEP_MS [SLEEP_ATTEMPT]: one job through `jobd submit` (only
# attempt SLEEP_ATTEMPT sleeps, if given); prints its id.
submit_one() {
    "$JOBD_BIN" submit scen --payload "{\"sleep_ms\":$1${2:+,\"sleep_attempt\":$2}}" --server "$SERVER_URL" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}

# job_field ID FIELD: one field of GET /v1/jobs/ID (objects and null as JSON).
job_field() {
    curl -sfS "$SERVER_URL/v1/jobs/$1" |
        python3 -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print(v if isinstance(v,(str,int)) else json.dumps(v))' "$2"
}

# job_is ID FIELD VALUE: true when the job's FIELD is VALUE (for wait_until).
job_is() { [ "$(job_field "$1" "$2")" = "$3" ]; }

# wait_job_succeeded SECONDS ID [WHAT]: until job ID has ended, then fails
# unless it succeeded. It asks GET /v1/jobs/ID?wait=2s, which the server
# answers as soon as the job is terminal (docs/API.md, Waiting for a
# result), instead of a curl and a python3 every 0.2 s; the 2 s bound keeps
# it looking even if a wake-up were missed. Between two requests 0.2 s
# (a server that cannot park the wait answers at once, a failed request:
# the store down). Fails at the deadline too.
wait_job_succeeded() {
    local limit=$1 id=$2 what=${3:-job $2 to succeed} deadline=$((SECONDS + $1)) st
    while :; do
        st=$(curl -sf -m 10 "$SERVER_URL/v1/jobs/$id?wait=2s" 2>/dev/null |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null) || st=
        case $st in
            succeeded) return 0 ;;
            dead|cancelled) fail "job $id ended $st while waiting for $what" ;;
        esac
        [ $SECONDS -lt $deadline ] || fail "timed out after ${limit}s waiting for $what (job $id ${st:-unknown})"
        sleep 0.2
    done
}

# pg_count WHERE: jobs in the PostgreSQL store matching the condition.
pg_count() { pg_sql "SELECT count(*) FROM jobd.all_jobs WHERE $1"; }
pg_count_is() { [ "$(pg_count "$1")" = "$2" ]; }

# pg_dump_jobs FILE: the final job rows as JSON lines, for check_history.py.
pg_dump_jobs() {
    pg_sql "SELECT json_build_object('id', id, 'status', status, 'attempt', attempt,
            'worker_id', worker_id, 'result', result) FROM jobd.all_jobs ORDER BY id" >"$1"
}

# metric NAME: the value of an unlabelled metric from GET /metrics.
metric() {
    curl -sfS "$SERVER_URL/metrics" | awk -v n="$1" '$1 == n { print $2; found=1 } END { if (!found) print "missing" }'
}

# check_history [ARGS...]: runs the checker on $HISTORY and $WORK/jobs.json.
check_history() {
    python3 "$SCEN_DIR/check_history.py" --history "$HISTORY" --jobs "$WORK/jobs.json" "$@"
}
