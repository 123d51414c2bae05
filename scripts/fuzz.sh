#!/usr/bin/env bash
# Runs each libFuzzer target of build-fuzz/ (made by `make fuzz`) for
# FUZZ_SECONDS seconds, one after the other, and prints per target the
# executions, coverage and outcome from libFuzzer's final stats.
#
# New inputs go to build-fuzz/corpus/<target>/ (never into the committed
# seeds in tests/fuzz/corpus/); a crash leaves its input in
# build-fuzz/artifacts/ and makes this script exit 1 after the others ran.
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_TARGETS   space-separated subset (default: every tests/fuzz/fuzz_*.c)
#   FUZZ_ARGS      extra libFuzzer flags
# A target's dictionary, tests/fuzz/<target>.dict, is passed when it exists.
set -uo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
bin=${FUZZ_BUILD:-$src/build-fuzz}
secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-$(cd "$src/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//')}

mkdir -p "$bin/artifacts" "$bin/logs"
failed=()
summary=()
for t in $targets; do
    [ -x "$bin/$t" ] || { echo "fuzz: $bin/$t is not built (run make fuzz)" >&2; exit 2; }
    mkdir -p "$bin/corpus/$t"
    log=$bin/logs/$t.log
    echo "fuzz: $t for ${secs}s (log: $log)"
    dict=()
    [ -f "$src/tests/fuzz/$t.dict" ] && dict=(-dict="$src/tests/fuzz/$t.dict")
    # shellcheck disable=SC2086
    "$bin/$t" -max_total_time="$secs" -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$bin/artifacts/$t-" "${dict[@]}" ${FUZZ_ARGS:-} \
        "$bin/corpus/$t" "$src/tests/fuzz/corpus/$t" >"$log" 2>&1
    rc=$?
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(echo "$last" | grep -o 'cov: [0-9]*' | awk '{print $2}')
    ft=$(echo "$last" | grep -o 'ft: [0-9]*' | awk '{print $2}')
    if [ $rc -ne 0 ]; then
        failed+=("$t")
        status="FAILED (rc $rc): $(grep -m1 -E 'ERROR|fuzz_[a-z]*:|runtime error' "$log")"
    else
        status=ok
    fi
    summary+=("$(printf '%-14s %6ss  execs %-10s cov %-6s ft %-6s %s' "$t" "$secs" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$status")")
done
echo
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz: crashes in: ${failed[*]} (inputs in $bin/artifacts/)" >&2
    exit 1
fi
