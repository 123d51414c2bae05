#!/usr/bin/env bash
# test.sh STORE — the client's suites (test/*.test.mjs, node:test) against a
# real `jobd server` on STORE (sqlite or pg), as ctest runs them
# (clients/node/tests.cmake): installs the pinned devDependencies with
# `npm ci` when node_modules does not match package-lock.json, compiles
# src/ with tsc, then runs the tests. pg needs JOBD_TEST_PG_URL (run under
# scripts/with-pg.sh); without it the run is skipped (exit 77), or fails
# when JOBD_TEST_REQUIRE_PG=1. JOBD_BIN is the jobd binary (default: the
# worktree's build-asan/jobd or build/jobd).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
store=${1:?usage: test.sh sqlite|pg}
fail() { echo "FAIL: $*" >&2; exit 1; }

case $store in
sqlite) ;;
pg)
    if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
        [ "${JOBD_TEST_REQUIRE_PG:-0}" = 1 ] && fail "JOBD_TEST_PG_URL is not set but JOBD_TEST_REQUIRE_PG is (scripts/with-pg.sh)"
        echo "skipped: JOBD_TEST_PG_URL is not set (run under scripts/with-pg.sh)"
        exit 77
    fi
    command -v psql >/dev/null || fail "psql is missing (scripts/deps.sh installs postgresql-client)"
    ;;
*) fail "unknown store '$store' (sqlite or pg)" ;;
esac

for t in node npm; do
    command -v "$t" >/dev/null || fail "$t is missing (scripts/deps.sh installs Debian's nodejs and npm)"
done
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 18 || (a === 18 && b >= 17) ? 0 : 1)' ||
    fail "node $(node --version) is too old: @jobd/client needs 18.17 or later"

if [ -z "${JOBD_BIN:-}" ]; then
    root=$(cd "$here/../.." && pwd)
    for b in "$root/build-asan/jobd" "$root/build/jobd"; do [ -x "$b" ] && JOBD_BIN=$b && break; done
    [ -n "${JOBD_BIN:-}" ] || fail "JOBD_BIN is not set and no build/jobd was found (cmake --build build --target jobd)"
fi
export JOBD_BIN JOBD_CLIENT_STORE=$store

"$here/scripts/build.sh" || fail "clients/node: install or compile failed"

cd "$here"
files=(test/client.test.mjs test/worker.test.mjs test/process.test.mjs)
# The files side by side (each has its own server; node's default is one
# at a time on a 2-core machine): their waits on leases, heartbeats and
# timeouts overlap. --test-concurrency is node 20.10's; older runs them in turn.
conc=()
node --test-concurrency=1 -e 0 2>/dev/null && conc=(--test-concurrency=4)
if [ "$store" = pg ]; then
    exec timeout 300 node --test "${conc[@]}" "${files[@]}"
fi
# What does not depend on the store runs once, with SQLite; the checks of
# test/meta.test.mjs (mostly the compiler and npm) beside the rest.
out=$(mktemp "${TMPDIR:-/tmp}/jobd-node-meta.XXXXXX")
timeout 300 node --test test/meta.test.mjs >"$out" 2>&1 &
meta=$!
rc=0
timeout 300 node --test "${conc[@]}" "${files[@]}" test/stub.test.mjs || rc=$?
wait "$meta" || rc=$((rc ? rc : 1))
echo "--- test/meta.test.mjs"
cat "$out"
rm -f "$out"
exit "$rc"
