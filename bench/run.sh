#!/usr/bin/env bash
# bench/run.sh — every jobd benchmark, end to end, unattended (`make bench`).
#
#   1. builds jobd and jobd_bench in Release ($BENCH_BUILD, default build-bench/);
#   2. starts a throwaway PostgreSQL 15 (bench/harness/pg.sh: stock durability, as the
#      shared harness's) and runs jobd's own measurements on it and on SQLite
#      (bench/jobd_bench.c): enqueue rates, processing rates with C and exec
#      handlers for 1, 2, 4 and 8 workers, lateness, scaling, memory, and the
#      features beside plain jobs (groups, the event log, progress, a dependency
#      fan-out), interleaved in FEAT_ROUNDS rounds;
#   3. the SQL ceiling of jobd's own statements and the seed design's ceiling B,
#      interleaved on a fresh server, CEIL_REPS times each (bench/sql/ceiling.py);
#   4. the clients of clients/ (Python, Node, Go) beside curl and jobd's own
#      `--server` worker on one server (bench/clients.sh);
#   5. the shared harness with the peers and jobd's adapter, in the same run
#      (bench/peers/run-shared.sh);
#   6. bench/report.py: tables and ratios into docs/BENCHMARKS.md (between its
#      markers), plots into docs/bench/*.png.
#
# Results: bench/results/<UTC timestamp>/ (jobd.jsonl (the features block's lines carry "round"), routes.jsonl, wrk.jsonl, ceiling.jsonl, clients.jsonl,
# shared.jsonl, lateness-{pg,sqlite}[-now].txt, env.md, run.log, summary.md). About 15 minutes
# on 2 cores. Every step is bounded by `timeout`; a failed step leaves an
# "error" line and the run goes on. Servers it started are stopped on exit.
#
# Knobs (env), e.g. a 2-minute smoke run:
#   QUICK=1 bench/run.sh            small sizes everywhere (see below)
#   BACKENDS="pg sqlite" WORKERS="1 2 4 8" N=20000 ENQ1_N=20000 EXEC_N=2000
#   LAT_N=2000 LAT_SPREAD_MS=10000 LAT_NOW_N=500 LAT_NOW_SPREAD_MS=5000
#   SCALE_SIZES="10000 100000 1000000"
#   DEPS_CHAIN_N=500 DEPS_CHAIN_SPREAD_MS=5000 (bench_deps.c; its fan-out: FEAT_DEPS_N below)
#   SCALE_FUTURE=10000 SCALE_K=5000 CEIL_N=200000 CEIL_REPS=3 CEILING=1 (0 = skip it) SHARED=1 (0 = skip the peers)
#   ROUTE_SIZES="10000 1000000" ROUTE_REQUESTS=200 (bench/routes.sh: p50/p99 per read-side route)
#   WRK_CONNS="10 50" WRK_S=10 (bench/wrk.sh: one job per request driven by wrk, into wrk.jsonl)
#   CLIENTS="python node" CLIENT_S=3 (the same from ordinary clients at 10 connections, into wrk.jsonl)
#   CLIENTBENCH=1 (0 = skip bench/clients.sh) CLIENT_N=5000 (jobs per worker there);
#   CLIENTS_ONLY=1: that step alone (no other step; report.py rewrites only its block)
#   FEAT_ROUNDS=3 FEAT_N=50000 FEAT_DEPS_N=10000 FEAT_GROUPS="1 1000" (the features block: one C
#   worker on plain jobs, jobs in each of FEAT_GROUPS groups, the event log recording, progress
#   reported, and deps-fanout, every round in a rotated order); FEATURES=0 skips it;
#   FEATURES_ONLY=1: that block alone on both stores (report.py rewrites only its block)
#   PEERS_ONLY="..." (the shared harness's ONLY), REPORT=1 (0 = no docs update)
#   STEP_TIMEOUT_S=300 (per step, also the shared harness's), BENCH_PG_PORT=55433, BENCH_OUT=DIR
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${BENCH_OUT:-$ROOT/bench/results/$STAMP}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/run.log
BUILD=${BENCH_BUILD:-$ROOT/build-bench}

if [ "${QUICK:-0}" = 1 ]; then
    : "${N:=3000}" "${ENQ1_N:=2000}" "${EXEC_N:=200}" "${WORKERS:=1 2}" "${LAT_N:=300}" "${LAT_NOW_N:=100}"
    : "${LAT_NOW_SPREAD_MS:=1000}"
    : "${DEPS_CHAIN_N:=100}" "${DEPS_CHAIN_SPREAD_MS:=1000}"
    : "${LAT_SPREAD_MS:=2000}" "${SCALE_SIZES:=10000 50000}" "${SCALE_FUTURE:=5000}" "${SCALE_K:=3000}"
    : "${ROUTE_SIZES:=10000 50000}" "${ROUTE_REQUESTS:=50}" "${WRK_S:=3}" "${CLIENT_S:=2}"
    : "${CEIL_N:=20000}" "${CEIL_CLIENTS:=4}" "${CEIL_REPS:=1}" "${CLIENT_N:=1000}"
    : "${FEAT_ROUNDS:=2}" "${FEAT_N:=5000}" "${FEAT_DEPS_N:=3000}"
    export N_PEERS=${N_PEERS:-3000} LAT_JOBS=${LAT_JOBS:-300} LAT_SPREAD_MS ENQ1_N
    export CEIL_VARIANTS=${CEIL_VARIANTS:-b} PGBENCH_SECONDS=${PGBENCH_SECONDS:-2}
fi
if [ "${CLIENTS_ONLY:-0}" = 1 ]; then
    BACKENDS=none SHARED=0 CLIENTBENCH=1
fi
FEATURES_ONLY=${FEATURES_ONLY:-0}
if [ "$FEATURES_ONLY" = 1 ]; then
    SHARED=0 CLIENTBENCH=0 CEILING=0 FEATURES=1
fi
BACKENDS=${BACKENDS:-pg sqlite}
WORKERS=${WORKERS:-1 2 4 8}
N=${N:-20000}
ENQ1_N=${ENQ1_N:-20000}
EXEC_N=${EXEC_N:-2000}
LAT_N=${LAT_N:-2000}
LAT_SPREAD_MS=${LAT_SPREAD_MS:-10000}
LAT_NOW_N=${LAT_NOW_N:-500}
LAT_NOW_SPREAD_MS=${LAT_NOW_SPREAD_MS:-5000}
SCALE_SIZES=${SCALE_SIZES:-10000 100000 1000000}
DEPS_CHAIN_N=${DEPS_CHAIN_N:-500}
DEPS_CHAIN_SPREAD_MS=${DEPS_CHAIN_SPREAD_MS:-5000}
SCALE_FUTURE=${SCALE_FUTURE:-10000}
SCALE_K=${SCALE_K:-5000}
ROUTE_SIZES=${ROUTE_SIZES:-10000 1000000}
ROUTE_REQUESTS=${ROUTE_REQUESTS:-200}
WRK_CONNS=${WRK_CONNS:-10 50}
WRK_S=${WRK_S:-10}
CLIENTS=${CLIENTS:-python node}
CLIENT_S=${CLIENT_S:-3}
export CEIL_N=${CEIL_N:-200000}
export CEIL_CLIENTS=${CEIL_CLIENTS:-4 8}
CEIL_REPS=${CEIL_REPS:-3}
SHARED=${SHARED:-1}
CLIENTBENCH=${CLIENTBENCH:-1}
CLIENT_N=${CLIENT_N:-5000}
CEILING=${CEILING:-1}
FEATURES=${FEATURES:-1}
FEAT_ROUNDS=${FEAT_ROUNDS:-3}
FEAT_N=${FEAT_N:-50000}
FEAT_DEPS_N=${FEAT_DEPS_N:-10000}
FEAT_GROUPS=${FEAT_GROUPS:-1 1000}
REPORT=${REPORT:-1}
STEP_TIMEOUT_S=${STEP_TIMEOUT_S:-300}
export BENCH_PG_PORT=${BENCH_PG_PORT:-55433}
export BENCH_PG_DIR=${BENCH_PG_DIR:-/tmp/jobd-bench-pg}
export JOBD_BENCH_TMP=${JOBD_BENCH_TMP:-/tmp/jobd-bench}
PGURL_BASE="postgres://postgres@127.0.0.1:$BENCH_PG_PORT/postgres"
PGURL="postgres://postgres@127.0.0.1:$BENCH_PG_PORT/bench_jobd"
SQURL="sqlite:$JOBD_BENCH_TMP/bench.db"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
mkdir -p "$JOBD_BENCH_TMP"

say() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
T0=$(date +%s)

STEP_PID=
cleanup() {
    if [ -n "$STEP_PID" ]; then kill "$STEP_PID" 2>/dev/null; wait "$STEP_PID" 2>/dev/null; fi
    bench/harness/pg.sh stop >/dev/null 2>&1
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# step FILE CMD...: one measurement; its JSON line(s) go to FILE, logs to run.log.
step() {
    local file=$1; shift
    say "$*"
    timeout -k 10 "$STEP_TIMEOUT_S" "$@" >>"$file" 2>>"$LOG" &
    STEP_PID=$!
    wait "$STEP_PID"
    local rc=$?
    STEP_PID=
    if [ $rc -ne 0 ]; then
        say "  -> exit $rc"
        printf '{"system":"jobd","bench":"step","error":"exit %s: %s"}\n' "$rc" "$(echo "$*" | tr '"' "'")" >>"$file"
    else
        tail -n 1 "$file" | cut -c1-300 >>"$LOG"
    fi
}

# ---- prerequisites -----------------------------------------------------------------
need=()
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
command -v cmake >/dev/null || need+=(cmake)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        say "apt-get install ${need[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >>"$LOG" 2>&1 \
            || say "apt-get failed: plots will be missing"
    else
        say "missing ${need[*]}: run 'sudo apt-get install ${need[*]}' (plots need gnuplot)"
    fi
fi

say "building Release in $BUILD"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >>"$LOG" 2>&1 \
    && cmake --build "$BUILD" -j 2 --target jobd jobd_bench jobd_bench_cworker >>"$LOG" 2>&1 \
    || { say "build failed (see $LOG)"; exit 1; }
JOBD=$BUILD/jobd
JB=$BUILD/jobd_bench

# ---- the machine ----------------------------------------------------------------------
FSYNC=$("$PGBIN/pg_test_fsync" -s 1 -f "$JOBD_BENCH_TMP/fsync.tmp" 2>/dev/null | awk '/^ +fdatasync/{print $2 " " $3; exit}')
rm -f "$JOBD_BENCH_TMP/fsync.tmp"
{
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); jobd $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)'), $("$JOBD" --version)"
    echo "- CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); memory $(free -g | awk '/Mem:/{print $2}') GiB; kernel $(uname -r); Debian $(cat /etc/debian_version 2>/dev/null)"
    echo "- Disk sync speed (pg_test_fsync, one 8 kB write + fdatasync): ${FSYNC:-unknown}"
    echo "- Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- Compiler: $(cc --version | head -1); build: CMake Release (-O3)"
} >"$OUT/env.md"

# ---- the features beside plain jobs ------------------------------------------------------------
# One C worker on FEAT_N jobs: plain, in each of FEAT_GROUPS groups, with the
# event log recording, with progress reported once a job; and deps-fanout (its
# independent jobs against a fan-out and fan-in of as many). FEAT_ROUNDS rounds,
# each in an order rotated by one, so that the machine's noise and the order
# hit all alike; report.py holds each against plain from the same rounds.
features() {
    local url=$1 r i k v g
    local -a vs=(plain)
    for g in $FEAT_GROUPS; do vs+=("groups $g"); done
    vs+=(events progress deps)
    for ((r = 1; r <= FEAT_ROUNDS; r++)); do
        for ((i = 0; i < ${#vs[@]}; i++)); do
            k=$(( (i + r - 1) % ${#vs[@]} ))
            v=${vs[$k]}
            case $v in
            plain) step "$J" "$JB" process --db "$url" --handler c --workers 1 --n "$FEAT_N" --round "$r" ;;
            groups*) step "$J" "$JB" process --db "$url" --handler c --workers 1 --n "$FEAT_N" \
                --groups "${v#groups }" --round "$r" ;;
            events) step "$J" "$JB" process --db "$url" --handler c --workers 1 --n "$FEAT_N" --events 1 \
                --round "$r" ;;
            progress) step "$J" "$JB" process --db "$url" --handler c --workers 1 --n "$FEAT_N" \
                --progress 1 --round "$r" ;;
            deps) step "$J" "$JB" deps-fanout --db "$url" --n "$FEAT_DEPS_N" --round "$r" ;;
            esac
        done
    done
}

# ---- jobd's own measurements ----------------------------------------------------------------
J=$OUT/jobd.jsonl
: >"$J"
if [[ " $BACKENDS " == *" pg "* ]]; then
    bench/harness/pg.sh stop >/dev/null 2>&1
    say "pg.sh start (fresh): $(bench/harness/pg.sh start)"
    "$PGBIN/psql" "$PGURL_BASE" -XAqc "create database bench_jobd" >>"$LOG" 2>&1
    "$PGBIN/psql" "$PGURL_BASE" -XAtc "select version()" >>"$OUT/env.md.pg" 2>&1
    {
        echo "- PostgreSQL: $("$PGBIN/psql" "$PGURL_BASE" -XAtc 'show server_version'), bench/harness/pg.sh: $("$PGBIN/psql" "$PGURL_BASE" -XAt -F '=' -c "select name, current_setting(name) from pg_settings where name in ('shared_buffers','max_connections','fsync','synchronous_commit','full_page_writes','wal_sync_method') order by name" | tr '\n' ' ')"
    } >>"$OUT/env.md"
    rm -f "$OUT/env.md.pg"
fi
echo "- SQLite: $(sqlite3 --version 2>/dev/null | cut -d' ' -f1) (CLI); the library linked: see each line's version; WAL, synchronous=FULL" >>"$OUT/env.md"

for be in $BACKENDS; do
    [ "$be" = none ] && continue
    url=$PGURL; [ "$be" = sqlite ] && url=$SQURL
    if [ "$FEATURES_ONLY" = 1 ]; then
        features "$url"
        continue
    fi
    step "$J" "$JB" enqueue1 --db "$url" --jobd "$JOBD" --n "$ENQ1_N" --clients 10
    if command -v wrk >/dev/null; then # the same with wrk (bench/wrk.sh), and server CPU per job
        for c in $WRK_CONNS; do
            step "$OUT/wrk.jsonl" bench/wrk.sh "$JOBD" "$url" "$c" "$WRK_S"
        done
    fi
    for cl in $CLIENTS; do # what ordinary clients get, 10 connections
        step "$OUT/wrk.jsonl" bench/wrk.sh "$JOBD" "$url" 10 "$CLIENT_S" "$cl"
    done
    step "$J" "$JB" enqueue --db "$url" --via http --jobd "$JOBD" --n "$N" --batch 1000
    step "$J" "$JB" enqueue --db "$url" --via lib --n "$N" --batch 1000
    [ "$be" = pg ] && step "$J" "$JB" enqueue --db "$url" --via sql --n "$N" --batch 1000
    for w in $WORKERS; do
        step "$J" "$JB" process --db "$url" --handler c --workers "$w" --n "$N"
    done
    # groups, the event log, progress and a dependency fan-out beside plain jobs
    [ "$FEATURES" = 1 ] && features "$url"
    for w in $WORKERS; do
        step "$J" "$JB" process --db "$url" --handler exec --jobd "$JOBD" --workers "$w" --n "$EXEC_N"
    done
    step "$J" "$JB" lateness --db "$url" --n "$LAT_N" --spread-ms "$LAT_SPREAD_MS" --lat-file "$OUT/lateness-$be.txt"
    step "$J" "$JB" lateness --db "$url" --n "$LAT_NOW_N" --spread-ms "$LAT_NOW_SPREAD_MS" --due-now 1 \
        --lat-file "$OUT/lateness-$be-now.txt"
    # dependencies: a child's start after its parent, a fan-out with a fan-in (bench_deps.c)
    step "$J" "$JB" deps-chain --db "$url" --n "$DEPS_CHAIN_N" --spread-ms "$DEPS_CHAIN_SPREAD_MS" \
        --lat-file "$OUT/deps-chain-$be.txt"
    for p in $SCALE_SIZES; do
        step "$J" "$JB" scaling --db "$url" --pending "$p" --k "$SCALE_K"
    done
    first=${SCALE_SIZES%% *}
    [ "$SCALE_FUTURE" -gt 0 ] && step "$J" "$JB" scaling --db "$url" --pending "$first" --future "$SCALE_FUTURE" --k "$SCALE_K"
    for p in $ROUTE_SIZES; do # read-side routes vs the backlog (bench/routes.sh)
        step "$OUT/routes.jsonl" bench/routes.sh "$JOBD" "$url" "$p" "$ROUTE_REQUESTS"
    done
done
rm -f "$JOBD_BENCH_TMP"/bench.db*

# ---- the clients beside curl and jobd's own worker (bench/clients.sh) -------------------------
# On a fresh server: the steps above leave a million-row database behind.
if [ "$CLIENTBENCH" = 1 ]; then
    bench/harness/pg.sh stop >/dev/null 2>&1
    say "pg.sh start (fresh, for the clients): $(bench/harness/pg.sh start)"
    step "$OUT/clients.jsonl" bench/clients.sh "$JOBD" "$PGURL_BASE" "$CLIENT_N"
    bench/harness/pg.sh stop >/dev/null 2>&1
fi

# ---- the SQL ceilings: jobd's own statements and the seed design's B ----------------------------
# Interleaved on one fresh server (the steps above leave a million-row database, its
# autovacuum and their WAL behind), CEIL_REPS runs of each at each client count:
# bench/sql/ceiling.py; report.py holds the medians against each other.
if [[ " $BACKENDS " == *" pg "* ]] && [ "$CEILING" = 1 ]; then
    bench/harness/pg.sh stop >/dev/null 2>&1
    say "pg.sh start (fresh, for the ceilings): $(bench/harness/pg.sh start)"
    STEP_TIMEOUT_S=$(( STEP_TIMEOUT_S > 1200 ? STEP_TIMEOUT_S : 1200 )) \
        step "$OUT/ceiling.jsonl" env BENCH_PG_URL="$PGURL_BASE" JOBD_BIN="$JOBD" CEIL_TMP="$JOBD_BENCH_TMP" \
        CEIL_REPS="$CEIL_REPS" python3 bench/sql/ceiling.py
    bench/harness/pg.sh stop
fi

# ---- the peers, and jobd beside them, in the shared harness --------------------------------------
if [ "$SHARED" = 1 ]; then
    say "shared harness (peers + jobd adapter): bench/peers/run-shared.sh"
    ONLY=${PEERS_ONLY:-} N=${N_PEERS:-20000} JOBD_BIN="$JOBD" JOBD_BENCH_BIN="$JB" \
        STEP_TIMEOUT_S="$STEP_TIMEOUT_S" bench/peers/run-shared.sh "$OUT" >>"$LOG" 2>&1 &
    STEP_PID=$!
    wait "$STEP_PID" || say "  -> the shared harness failed (see $OUT/shared.log)"
    STEP_PID=
fi

say "measurements done in $(( $(date +%s) - T0 )) s"
if [ "$REPORT" = 1 ]; then
    python3 bench/report.py "$OUT" --docs docs/BENCHMARKS.md --plots docs/bench >>"$LOG" 2>&1 \
        && say "wrote docs/BENCHMARKS.md, docs/bench/*.png, $OUT/summary.md" \
        || say "report.py failed (see $LOG)"
else
    python3 bench/report.py "$OUT" >>"$LOG" 2>&1 && say "wrote $OUT/summary.md"
fi
say "total $(( $(date +%s) - T0 )) s; results in $OUT"
