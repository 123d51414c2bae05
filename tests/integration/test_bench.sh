#!/usr/bin/env bash
# test_bench.sh — the benchmark tooling still works (make bench is run rarely,
# so this keeps it from rotting): jobd_bench's subcommands on SQLite at tiny
# sizes each print one JSON line with their figures and no error; with a
# PostgreSQL (JOBD_TEST_PG_URL) the SQL ceiling extracts jobd's statements
# from src/store/pg/*.c and pgbench drains a small table with them; report.py
# renders the lines; bench/clients.sh measures the three clients at tiny
# sizes (each a few hundred jobs: enough for every tool to run end to end
# and print its figures, which are not what is checked). Needs JOBD_BIN, JOBD_BUILD, JOBD_SRC (set by CTest).
set -u
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
JB="${JOBD_BUILD:?JOBD_BUILD must be set}/jobd_bench"
SRC="${JOBD_SRC:?JOBD_SRC must be set}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-test-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export JOBD_BENCH_TMP=$dir
fails=0
pass=0

# check NAME JSON-LINE PYTHON-EXPRESSION-ON-o
check() {
    if python3 -c "import json,sys; o=json.loads(sys.argv[1]); sys.exit(0 if ($3) else 1)" "$2" 2>/dev/null; then
        pass=$((pass + 1))
    else
        fails=$((fails + 1))
        printf 'FAIL %s\n  line: %s\n  want: %s\n' "$1" "$2" "$3"
    fi
}

db="sqlite:$dir/b.db"
out=$("$JB" process --db "$db" --handler c --workers 2 --n 100 2>>"$dir/log")
check "process, C handlers" "$out" "o['process_jobs_per_s'] > 0 and o['failed'] == 0 and 'error' not in o and o['worker_peak_rss_kb'] > 0"
echo "$out" >>"$dir/jobd.jsonl"

if command -v wrk >/dev/null && command -v sqlite3 >/dev/null; then
    out=$("$SRC/bench/wrk.sh" "$JOBD" "sqlite:$dir/w.db" 4 1 2>>"$dir/log")
    check "one job per request, wrk" "$out" "o['enqueue_jobs_per_s'] > 0 and o['errors'] == 0 and o['stored'] >= o['n'] and o['server_cpu_ms_per_1000_jobs'] is not None and o['jobs_per_commit'] >= 1 and 'error' not in o and o['client'] == 'wrk'"
    echo "$out" >>"$dir/wrk.jsonl"
    # ordinary clients through the same script (bench/clients/)
    out=$("$SRC/bench/wrk.sh" "$JOBD" "sqlite:$dir/w.db" 2 1 python 2>>"$dir/log")
    check "one job per request, Python http.client" "$out" "o['enqueue_jobs_per_s'] > 0 and o['errors'] == 0 and o['stored'] >= o['n'] and o['client'] == 'python' and 'error' not in o"
    echo "$out" >>"$dir/wrk.jsonl"
    if command -v node >/dev/null; then
        out=$("$SRC/bench/wrk.sh" "$JOBD" "sqlite:$dir/w.db" 2 1 node 2>>"$dir/log")
        check "one job per request, Node fetch" "$out" "o['enqueue_jobs_per_s'] > 0 and o['errors'] == 0 and o['stored'] >= o['n'] and o['client'] == 'node' and 'error' not in o"
        echo "$out" >>"$dir/wrk.jsonl"
    fi
    # a non-201 answer is counted (wrk's Lua states are per thread)
    "$JOBD" server --db "sqlite:$dir/w.db" --listen 127.0.0.1:0 --access-log off 2>"$dir/nope.log" &
    nope_pid=$!
    for _ in $(seq 100); do grep -q 'listening on' "$dir/nope.log" && break; sleep 0.05; done
    api=$(sed -n 's|.* listening on \(http://[^ ]*\).*|\1|p' "$dir/nope.log" | head -1)
    line=$(wrk -t2 -c2 -d1s -s "$SRC/bench/wrk/enqueue1.lua" "$api/v1/nope" 2>&1 | grep '^WRK ')
    kill "$nope_pid"; wait "$nope_pid" 2>/dev/null
    check "wrk counts answers other than 201" "\"$line\"" "int(o.split('non201=')[1].split()[0]) > 0 and o.split('requests=')[1].split()[0] == o.split('non201=')[1].split()[0]"
fi

# the features block's lines (bench/run.sh): jobs in groups, progress reported, a round
out=$("$JB" process --db "$db" --handler c --workers 1 --n 100 --round 1 2>>"$dir/log")
check "process, plain, round 1" "$out" "o['round'] == 1 and o['groups'] == 0 and not o['progress'] and 'error' not in o"
echo "$out" >>"$dir/jobd.jsonl"
out=$("$JB" process --db "$db" --handler c --workers 1 --n 100 --groups 7 --progress 1 --round 1 2>>"$dir/log")
check "process, 7 groups, progress reported" "$out" "o['groups'] == 7 and o['progress'] and o['round'] == 1 and o['failed'] == 0 and 'error' not in o and '7 groups' in o['variant']"
echo "$out" >>"$dir/jobd.jsonl"
if command -v sqlite3 >/dev/null; then
    check "groups seeded: every job in one of 7" "\"$(sqlite3 "$dir/b.db" "SELECT count(DISTINCT grp) || ',' || sum(grp IS NULL) FROM jobs_done")\"" "o == '7,0'"
fi

# the features block's fan-out (bench_deps.c): the rates, each timed run's CPU and the root's release
# (--n 1000: its smallest)
out=$("$JB" deps-fanout --db "$db" --n 1000 --round 1 2>>"$dir/log")
check "deps-fanout, round 1" "$out" "o['round'] == 1 and o['ratio'] > 0 and o['independent_cpu_ms_per_1000'] >= 0 and o['fanout_cpu_ms_per_1000'] >= 0 and o['release_gap_ms'] >= 0 and 'error' not in o"
echo "$out" >>"$dir/jobd.jsonl"

out=$("$JB" process --db "$db" --handler exec --jobd "$JOBD" --workers 1 --n 10 2>>"$dir/log")
check "process, exec handlers" "$out" "o['process_jobs_per_s'] > 0 and o['handler'] == 'exec' and 'error' not in o"
echo "$out" >>"$dir/jobd.jsonl"

out=$("$JB" enqueue1 --db "$db" --jobd "$JOBD" --n 200 --clients 4 2>>"$dir/log")
check "enqueue1 over HTTP" "$out" "o['held'] == 200 and o['failed_requests'] == 0 and o['server_peak_rss_kb'] > 0 and 'error' not in o"
echo "$out" >>"$dir/jobd.jsonl"

out=$("$JB" enqueue --db "$db" --via lib --n 2500 --batch 1000 2>>"$dir/log")
check "enqueue via libjobd" "$out" "o['held'] == 2500 and o['enqueue_jobs_per_s'] > 0"
echo "$out" >>"$dir/jobd.jsonl"

out=$("$JB" lateness --db "$db" --n 30 --spread-ms 600 --lead-ms 400 --lat-file "$dir/lateness-sqlite.txt" 2>>"$dir/log")
check "lateness" "$out" "o['started'] == 30 and o['early'] == 0 and o['p99_ms'] is not None and 'error' not in o"
echo "$out" >>"$dir/jobd.jsonl"
check "lateness file" "$(wc -l <"$dir/lateness-sqlite.txt")" "o == 30"

out=$("$JB" scaling --db "$db" --pending 600 --future 100 --k 200 --warm 20 2>>"$dir/log")
check "scaling" "$out" "o['claim_complete_jobs_per_s'] > 0 and o['measured_jobs'] >= 200 and 'error' not in o"
echo "$out" >>"$dir/jobd.jsonl"

out=$("$JB" process --db "$db" --handler nope 2>&1 >/dev/null)
check "bad handler is named" "\"$out\"" "'--handler must be c or exec' in o"

if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
    out=$(BENCH_PG_URL="$JOBD_TEST_PG_URL" PGBIN="${JOBD_TEST_PG_BIN:-/usr/lib/postgresql/15/bin}" \
        CEIL_N=500 CEIL_CLIENTS=2 CEIL_REPS=2 CEIL_TMP="$dir" python3 "$SRC/bench/sql/ceiling.py" 2>>"$dir/log")
    echo "$out" >"$dir/ceiling.jsonl"
    # two repetitions, each of ceiling B and of jobd's statements, B first in the first, jobd first in the second
    order=$(python3 -c "import json,sys; print(' '.join(json.loads(l)['variant'][:2] for l in sys.stdin))" <"$dir/ceiling.jsonl")
    check "SQL ceilings interleaved: B, jobd, jobd, B" "\"$order\"" "o == \"B: jo jo B:\""
    check "SQL ceiling with jobd's statements" "$(grep -m1 '"variant": "jobd' "$dir/ceiling.jsonl")" "o['completed'] == 500 and o['not_completed'] == 0 and 'error' not in o and 'st_claim_types_run' in o['variant']"
    check "SQL ceiling B beside it" "$(grep -m1 '"B: ' "$dir/ceiling.jsonl")" "o['completed'] == 500 and o['not_completed'] == {} and 'error' not in o"
    grep -q 'FOR UPDATE SKIP LOCKED' "$dir/jobd_cycle.pgbench" && pass=$((pass + 1)) \
        || { fails=$((fails + 1)); echo "FAIL the extracted claim lacks FOR UPDATE SKIP LOCKED"; }
    # the clients beside curl and jobd's worker (bench/clients.sh), tiny
    if command -v go >/dev/null && command -v node >/dev/null; then
        GOCACHE="$JOBD_BUILD/go/cache" GOPATH="$JOBD_BUILD/go/path" ROUNDS=1 ENQ_N=1000 \
            "$SRC/bench/clients.sh" "$JOBD" "$JOBD_TEST_PG_URL" 50 >"$dir/clients.jsonl" 2>>"$dir/log"
        check "clients.sh: 4 enqueues and 5 workers, none failed" "$(python3 -c "import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])]))" "$dir/clients.jsonl")" \
            "sorted((r['bench'], r['client']) for r in o if r['n'] > 0 and r['rate'] > 0) == sorted([('enqueue', c) for c in ('curl', 'python', 'node', 'go')] + [('worker', c) for c in ('jobd-http', 'go', 'python', 'node', 'jobd-exec')])"
    fi
elif [ -n "${JOBD_TEST_REQUIRE_PG:-}" ]; then
    fails=$((fails + 1))
    echo "FAIL JOBD_TEST_REQUIRE_PG is set but JOBD_TEST_PG_URL is not: the SQL ceiling did not run"
fi

if python3 "$SRC/bench/report.py" "$dir" >/dev/null 2>>"$dir/log" && grep -q 'Processing no-op jobs' "$dir/summary.md"; then
    pass=$((pass + 1))
else
    fails=$((fails + 1))
    echo "FAIL report.py did not render $dir/summary.md"
fi
# the features block: one table per store, a row per variant, the groups' against plain jobs
check "report.py tabulates the features block" "$(grep -c '^| \(plain jobs\|in 7 groups\) |' "$dir/summary.md")" "o == 2"
check "report.py gives the fan-out its CPU" "$(grep -c '^| a root, its children and a fan-in (deps-fanout) |.* ms ([0-9]* %) |$' "$dir/summary.md")" "o == 1"
if [ -s "$dir/clients.jsonl" ]; then # report.py's tables of clients.jsonl, with the ratios
    check "report.py tabulates clients.jsonl" "$(grep -c '^| \(Go\|Python\|Node\) `[A-Za-z_]*` |.*%' "$dir/summary.md")" "o == 6"
fi
if [ -s "$dir/wrk.jsonl" ]; then # report.py's table of wrk.jsonl, one row per line
    rows=$(grep -c '^| sqlite | \(wrk\|Python\|Node\)' "$dir/summary.md")
    check "report.py tabulates wrk.jsonl" "$rows" "o == $(wc -l <"$dir/wrk.jsonl")"
fi

echo "test_bench: $pass passed, $fails failed"
[ $fails -eq 0 ] || { echo "--- log"; tail -n 40 "$dir/log"; exit 1; }
