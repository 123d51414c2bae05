#!/usr/bin/env bash
# test_ui_browser.sh — the dashboard in a real browser: Debian's headless
# chromium driven by playwright-core (tests/ui/, pinned by its
# package-lock.json) against a real `jobd server` on SQLite with an
# embedded worker and tokens configured. What it checks is in
# tests/ui/browser.test.mjs. Installs what is missing: chromium with
# apt-get (as root, like scripts/deps.sh), playwright-core with `npm ci`.
# UI_SCREENSHOTS=1 also writes docs/ui/*.png (run it once after a change
# to the look, and commit them).
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

dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-uibrowser.XXXXXX")
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT

printf 'ui-admin-token-0123456789 admin\nui-read-token-0123456789 read\n' >"$dir/tokens"
chmod 600 "$dir/tokens"
# ui.flaky fails for good (exit 65: dead at once) while $dir/broken exists.
cat >"$dir/flaky.sh" <<SH
#!/bin/sh
cat >/dev/null
if [ -e "$dir/broken" ]; then echo "upstream refused the request (attempt \$JOBD_ATTEMPT)" >&2; exit 65; fi
echo '{"ok":true}'
SH
chmod +x "$dir/flaky.sh"
# ui.progress reports its progress on fd 3 (docs/WORKER.md, Progress) and
# runs until $dir/progress-go exists.
cat >"$dir/progress.sh" <<SH
#!/bin/sh
cat >/dev/null
echo '{"percent": 40, "message": "resizing image 4 of 10"}' >&3
while [ ! -e "$dir/progress-go" ]; do sleep 0.1; done
echo '{"ok":true}'
SH
chmod +x "$dir/progress.sh"
# ui.hold runs, with no progress, until $dir/hold-go exists.
cat >"$dir/hold.sh" <<SH
#!/bin/sh
cat >/dev/null
while [ ! -e "$dir/hold-go" ]; do sleep 0.05; done
echo '{"ok":true}'
SH
chmod +x "$dir/hold.sh"
# ui.logs writes a traceback to stderr and fails its first attempt, then
# says two lines and succeeds (docs/WORKER.md, Attempt logs).
cat >"$dir/logs.sh" <<'SH'
#!/bin/sh
cat >/dev/null
if [ "$JOBD_ATTEMPT" = 1 ]; then
    echo 'fetching https://images.example/cat.png' >&2
    echo 'Traceback (most recent call last):' >&2
    echo '  File "resize.py", line 12, in <module>' >&2
    echo 'ConnectionResetError: [Errno 104] Connection reset by peer' >&2
    exit 3
fi
echo 'fetching https://images.example/cat.png' >&2
echo 'resized to 640x480 in 0.21s' >&2
echo '{"ok":true}'
SH
chmod +x "$dir/logs.sh"
# ui.wf.hold runs until $dir/wf-go exists; ui.wf.fail fails for good
# (exit 65) while $dir/wf-broken exists (tests/ui/workflows.mjs).
cat >"$dir/wf-hold.sh" <<SH
#!/bin/sh
cat >/dev/null
while [ ! -e "$dir/wf-go" ]; do sleep 0.05; done
echo '{"ok":true}'
SH
cat >"$dir/wf-fail.sh" <<SH
#!/bin/sh
cat >/dev/null
if [ -e "$dir/wf-broken" ]; then echo "the enrichment service is down" >&2; exit 65; fi
echo '{"ok":true}'
SH
chmod +x "$dir/wf-hold.sh" "$dir/wf-fail.sh"
touch "$dir/broken"
cat >"$dir/worker.ini" <<INI
[worker]
concurrency = 4
lease = 30s
heartbeat = 2s
backoff_base = 1s

[handler "ui.flaky"]
exec = $dir/flaky.sh
timeout = 10s

[handler "echo"]
exec = /bin/cat
timeout = 10s

[handler "ui.progress"]
exec = $dir/progress.sh
timeout = 120s

[handler "ui.hold"]
exec = $dir/hold.sh
timeout = 120s

[handler "ui.logs"]
exec = $dir/logs.sh
timeout = 10s

[handler "ui.wf.hold"]
exec = $dir/wf-hold.sh
timeout = 120s

[handler "ui.wf.fail"]
exec = $dir/wf-fail.sh
timeout = 10s
INI
"$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 --tokens "$dir/tokens" \
    --worker-config "$dir/worker.ini" 2>"$dir/log" &
spid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
    [ -n "$url" ] && break
    kill -0 "$spid" 2>/dev/null || fail "the server exited: $(cat "$dir/log")"
    sleep 0.1
done
[ -n "$url" ] || fail "the server did not say where it listens"

JOBD_URL=$url CHROMIUM=$chromium BROKEN_FLAG="$dir/broken" PROGRESS_FLAG="$dir/progress-go" HOLD_FLAG="$dir/hold-go" \
    WF_GO_FLAG="$dir/wf-go" WF_BROKEN_FLAG="$dir/wf-broken" \
    ADMIN_TOKEN=ui-admin-token-0123456789 READ_TOKEN=ui-read-token-0123456789 \
    SHOTS_DIR="$src/docs/ui" timeout 180 node "$src/tests/ui/browser.test.mjs" ||
    { echo "--- server log (tail)"; tail -20 "$dir/log"; fail "the browser suite failed"; }
