#!/usr/bin/env bash
# test_make_run.sh — what `make run` says (scripts/run.sh --build, which the
# Makefile runs): first that it is building and where the build's output
# goes, then how long the build took, then the URLs and the server's log;
# and a failed build shows the build's output and says so. CMake is a stub
# here (CMAKE=...) that "builds" by linking the jobd under test, so the
# test takes a second, not a build's minutes. Needs JOBD_BIN and JOBD_SRC.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-makerun.XXXXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; cat "$dir/out"; fails=$((fails + 1)); fi
}
cat >"$dir/cmake" <<STUB
#!/bin/sh
# -S . -B DIR ...: configure (make DIR); --build DIR ...: link the jobd under test.
case "\$1" in
-S) mkdir -p "\$4" ;;
--build) [ -n "\${STUB_FAIL:-}" ] && { echo "src/x.c:1: error: broken"; exit 1; }
         ln -sf "$JOBD" "\$2/jobd" ;;
esac
STUB
chmod +x "$dir/cmake"
export CMAKE="$dir/cmake" JOBD_RUN_BUILD="$dir/build" JOBD_DB="sqlite:$dir/jobs.db" \
    JOBD_LISTEN=127.0.0.1:0
unset JOBD_SERVER JOBD_TOKEN

"$src/scripts/run.sh" --build >"$dir/out" 2>&1 &
pid=$!
for _ in $(seq 300); do
    grep -q 'listening on http://' "$dir/out" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
check "the first line says it is building, and where the output goes" \
    '[ "$(head -n 1 "$dir/out")" = "make run: building $dir/build/jobd (RelWithDebInfo; the output goes to $dir/build/make-run.log)" ]'
check "the second says how long the build took" \
    'sed -n 2p "$dir/out" | grep -Eq "^make run: built in [0-9]+\.[0-9]s$"'
check "then the API URL and the database" \
    'grep -q "^API: *http://127.0.0.1:0/v1/" "$dir/out" && grep -q "^database: *$dir/jobs.db$" "$dir/out"'
check "then the server's log" 'grep -q "info server: listening on http://127.0.0.1:" "$dir/out"'
kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
pid=""

STUB_FAIL=1 "$src/scripts/run.sh" --build >"$dir/out" 2>&1
rc=$?
check "a failed build exits non-zero, shows its output and says so" \
    '[ $rc != 0 ] && grep -q "src/x.c:1: error: broken" "$dir/out" && grep -q "^make run: the build failed$" "$dir/out"'
[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
exit "$fails"
