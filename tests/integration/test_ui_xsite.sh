#!/usr/bin/env bash
# test_ui_xsite.sh — hostile web pages against a real `jobd server` without
# tokens (the packaged server.ini, `make run`), in Debian's headless
# chromium driven by playwright-core (tests/ui/, as test_ui_browser.sh):
# pages on other loopback origins try no-cors text/plain enqueues and bulk
# deletes and a JSON-looking form, a page under a rebound DNS name tries to
# read and write; nothing is written or read, and the dashboard still
# works. What it checks is in tests/ui/xsite.test.mjs. Installs what is
# missing as test_ui_browser.sh does.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
src=${JOBD_SRC:?JOBD_SRC is not set}
fail() { echo "FAIL: $*"; exit 1; }

chromium=$(command -v chromium || true)
if [ -z "$chromium" ]; then
    [ "$(id -u)" -eq 0 ] || fail "chromium is missing; as root: apt-get install chromium"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
        >/dev/null || fail "apt-get install chromium failed"
    chromium=$(command -v chromium)
fi
command -v node >/dev/null || fail "node is missing (scripts/deps.sh installs nodejs and npm)"
if [ ! -f "$src/tests/ui/node_modules/playwright-core/package.json" ]; then
    (cd "$src/tests/ui" && flock "$src/tests/ui/package.json" \
        npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci in tests/ui failed"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-uixsite.XXXXXX")
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
unset JOBD_TOKENS JOBD_ALLOWED_HOSTS JOBD_ACCESS_LOG

: >"$dir/log"
"$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 2>"$dir/log" &
spid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
    [ -n "$url" ] && break
    kill -0 "$spid" 2>/dev/null || fail "the server exited: $(cat "$dir/log")"
    sleep 0.1
done
[ -n "$url" ] || fail "the server did not say where it listens"

JOBD_URL=$url CHROMIUM=$chromium SERVER_LOG="$dir/log" \
    timeout 120 node "$src/tests/ui/xsite.test.mjs" ||
    { echo "--- server log (tail)"; tail -20 "$dir/log"; fail "the hostile pages got through"; }
