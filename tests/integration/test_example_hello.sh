#!/usr/bin/env bash
# test_example_hello.sh — runs examples/hello (linked against the shared
# libjobd) on a fresh SQLite file, twice, and checks it enqueued, worked and
# completed its jobs in priority order. Skips, saying so, only while the
# store answers "the sqlite backend is not built yet".
set -euo pipefail

hello="${JOBD_BUILD:?JOBD_BUILD is not set}/examples/hello"
[ -x "$hello" ] || { echo "FAIL: $hello was not built"; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-hello.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir"

set +e
JOBD_DB= "$hello" >out1 2>err1
rc=$?
set -e
if [ $rc -ne 0 ] && grep -q "the sqlite backend is not built yet" err1; then
    echo "SKIP: $(cat err1)"
    exit 0
fi
[ $rc -eq 0 ] || { echo "FAIL: hello exited $rc"; cat out1 err1; exit 1; }
[ -f hello.db ] || { echo "FAIL: the default store sqlite:hello.db was not created"; exit 1; }
grep -q '^summary: enqueued 3, worked 3, failed 0, 3 of ours succeeded$' out1 ||
    { echo "FAIL: unexpected summary"; cat out1; exit 1; }
# Highest priority first: Edsger (2), Grace (1), Ada (0); payloads canonical.
grep '^job ' out1 | sed 's/^job [0-9]* attempt 1 (hello.greet): //' >payloads
printf '%s\n' '{"n":2,"name":"Edsger"}' '{"n":1,"name":"Grace"}' '{"n":0,"name":"Ada"}' >want
diff -u want payloads || { echo "FAIL: payloads or order differ"; exit 1; }

# Again, on the same file given as an argument: new ids, only new jobs worked.
"$hello" "sqlite:$dir/hello.db" >out2 2>err2 || { echo "FAIL: second run"; cat out2 err2; exit 1; }
grep -q 'ids 4\.\.6' out2 || { echo "FAIL: second run did not get ids 4..6"; cat out2; exit 1; }
grep -q 'worked 3, failed 0, 3 of ours succeeded' out2 || { echo "FAIL: second summary"; cat out2; exit 1; }

# A store that cannot be opened is a one-line error and exit 1.
set +e
"$hello" "mysql://nowhere/x" >out3 2>err3
rc=$?
set -e
[ $rc -eq 1 ] && grep -q "unknown store URL scheme" err3 ||
    { echo "FAIL: bad URL: rc $rc"; cat err3; exit 1; }
echo "ok: examples/hello"
