#!/usr/bin/env bash
# test_skips.sh — a PostgreSQL test cannot pass by not running
# (tests/test.h TEST_NEED_PG): without JOBD_TEST_PG_URL the pg variants of
# an API test are reported as skipped (exit 77, CTest's SKIP_RETURN_CODE,
# and "N skipped" on the last line), and under JOBD_TEST_REQUIRE_PG (what
# `make test` sets) they fail instead. Needs JOBD_BUILD (set by CTest).
set -uo pipefail
B="${JOBD_BUILD:?JOBD_BUILD must point at the build folder}"
t="$B/test_api_embedded"
[ -x "$t" ] || { echo "FAIL $t is not built"; exit 1; }
fails=0

out=$(env -u JOBD_TEST_PG_URL -u JOBD_TEST_REQUIRE_PG TEST_FILTER=pg_ "$t" 2>&1); rc=$?
if [ $rc -ne 77 ] || ! grep -q '^skip pg_' <<<"$out" || ! grep -q ', 0 failed, [1-9][0-9]* skipped$' <<<"$out" ||
   grep -q '^ok ' <<<"$out"; then
    echo "FAIL without PostgreSQL the pg tests must be skipped (exit 77), got $rc:"; echo "$out"
    fails=$((fails + 1))
fi

out=$(env -u JOBD_TEST_PG_URL JOBD_TEST_REQUIRE_PG=1 TEST_FILTER=pg_ "$t" 2>&1); rc=$?
if [ $rc -ne 1 ] || ! grep -q '^FAIL pg_' <<<"$out"; then
    echo "FAIL under JOBD_TEST_REQUIRE_PG a missing PostgreSQL must fail, got $rc:"; echo "$out"
    fails=$((fails + 1))
fi

out=$(env -u JOBD_TEST_PG_URL -u JOBD_TEST_REQUIRE_PG TEST_FILTER=sqlite_ "$t" 2>&1); rc=$?
if [ $rc -ne 0 ] || grep -q '^skip' <<<"$out"; then
    echo "FAIL the sqlite variants must run and pass without PostgreSQL, got $rc:"; echo "$out"
    fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "3 passed, 0 failed"
exit $fails
