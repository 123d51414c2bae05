#!/usr/bin/env bash
# test_worker_attempt_log.sh — attempt logs (issue 28 item 4; docs/WORKER.md,
# Attempt logs): a real exec handler writes far more than log_bytes to its
# stderr and fails, then succeeds on its second attempt; GET
# /v1/jobs/{id}/attempts/{n}/log must give each attempt's own log, only the
# end of it (at most log_bytes, ending with the last line written, without
# the first), and 404 naming what is missing. Through `jobd worker --db` on
# SQLite and PostgreSQL (when JOBD_TEST_PG_URL is set, as under
# scripts/with-pg.sh) and `jobd worker --server` (the fenced route), with a
# server on the same database reading. A bad log_bytes is refused by name.
# Start-up and clean-up: tests/lib/server_worker.sh.
set -euo pipefail
. "$(dirname "$0")/../lib/server_worker.sh"
sw_init alog

# Attempt 1: 2000 numbered lines (about 60 KiB) to stderr, then exit 3
# (retryable); attempt 2: two lines, then success.
cat >"$dir/noisy.sh" <<'SH'
#!/bin/sh
cat >/dev/null
if [ "$JOBD_ATTEMPT" = 1 ]; then
    i=0
    while [ $i -lt 2000 ]; do
        printf 'line %05d of the first attempt, padded to be long\n' $i >&2
        i=$((i + 1))
    done
    echo 'the last line of attempt 1' >&2
    exit 3
fi
echo 'attempt 2 says hello' >&2
echo 'attempt 2 done' >&2
echo '{"ok":true}'
SH
chmod 755 "$dir/noisy.sh"
printf '[worker]\nconcurrency = 2\nlease = 30s\nheartbeat = 10s\nbackoff_base = 100ms\nbackoff_cap = 200ms\n\n[handler "noisy"]\nexec = %s/noisy.sh\nlog_bytes = 8KiB\n' \
    "$dir" >"$dir/worker.ini"

# A bad log_bytes: a clear error naming the key, and no worker.
printf '[handler "noisy"]\nexec = /bin/true\nlog_bytes = 2MiB\n' >"$dir/bad.ini"
if "$JOBD" worker --db "sqlite:$dir/bad.db" --config "$dir/bad.ini" >"$dir/bad.txt" 2>&1; then
    fail "a worker started with log_bytes = 2MiB"
fi
grep -q "log_bytes" "$dir/bad.txt" || fail "the error does not name log_bytes: $(cat "$dir/bad.txt")"
printf '[handler "h"]\nhttp = http://127.0.0.1:9/\nlog_bytes = 1KiB\n' >"$dir/bad2.ini"
if "$JOBD" worker --db "sqlite:$dir/bad.db" --config "$dir/bad2.ini" >"$dir/bad.txt" 2>&1; then
    fail "an http handler took log_bytes"
fi
grep -q "log_bytes" "$dir/bad.txt" || fail "the error does not name log_bytes: $(cat "$dir/bad.txt")"

status_is() { # ID STATUS (polled: Python, the exact check, only once grep sees STATUS)
    curl -sfS "$server/v1/jobs/$1" >"$dir/st.json" && grep -q "\"status\": *\"$2\"" "$dir/st.json" &&
        [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' <"$dir/st.json")" = "$2" ]
}

run() { # DB WORKER-STORE-ARGS...
    local db=$1; shift
    sw_server "$db"
    local wargs=("$@")
    [ "${wargs[0]}" = --server ] && wargs=(--server "$server")
    "$JOBD" worker "${wargs[@]}" --config "$dir/worker.ini" --id alog-worker \
        2>"$dir/worker.log" &
    wpid=$!
    local id
    id=$(curl -sfS -H 'Content-Type: application/json' -d '{"type":"noisy","max_attempts":3}' \
        "$server/v1/jobs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    sw_wait_for 60 "the job to succeed on its second attempt ($*)" status_is "$id" succeeded
    curl -sS -D "$dir/h1" -o "$dir/log1" "$server/v1/jobs/$id/attempts/1/log"
    grep -q '^HTTP/1.1 200' "$dir/h1" || fail "attempt 1's log: $(cat "$dir/h1" "$dir/log1")"
    grep -qi '^content-type: text/plain' "$dir/h1" || fail "attempt 1's log is not text/plain"
    local size
    size=$(wc -c <"$dir/log1")
    [ "$size" -le 8192 ] && [ "$size" -ge 8000 ] || fail "attempt 1's log has $size bytes, not the last 8 KiB"
    [ "$(tail -n 1 "$dir/log1")" = 'the last line of attempt 1' ] || fail "attempt 1's log does not end with its last line"
    grep -q 'line 01999 of the first' "$dir/log1" || fail "attempt 1's log lacks its last numbered line"
    ! grep -q 'line 00000' "$dir/log1" || fail "attempt 1's log kept its head"
    [ "$(curl -sfS "$server/v1/jobs/$id/attempts/2/log")" = $'attempt 2 says hello\nattempt 2 done' ] ||
        fail "attempt 2's log: $(curl -sS "$server/v1/jobs/$id/attempts/2/log")"
    # the attempt history says which attempts kept a log, and its size
    [ "$(curl -sfS "$server/v1/jobs/$id/attempts" | python3 -c 'import json,sys; print([a["log_bytes"] for a in json.load(sys.stdin)["attempts"]])')" = "[$size, 36]" ] ||
        fail "the attempts' log_bytes: $(curl -sS "$server/v1/jobs/$id/attempts")"
    # 404s naming what is missing
    curl -sS -o "$dir/e" -w '%{http_code}' "$server/v1/jobs/$id/attempts/3/log" | grep -q 404 ||
        fail "no 404 for an attempt the job never had"
    grep -q '"field":"attempt"' "$dir/e" || fail "the 404 does not name the attempt: $(cat "$dir/e")"
    curl -sS -o "$dir/e" -w '%{http_code}' "$server/v1/jobs/987654/attempts/1/log" | grep -q 404 ||
        fail "no 404 for a job that is not there"
    grep -q '"field":"id"' "$dir/e" || fail "the 404 does not name the job: $(cat "$dir/e")"
    # the CLI prints it as it is
    "$JOBD" job log "$id" 2 --server "$server" >"$dir/cli.txt" || fail "jobd job log failed"
    [ "$(cat "$dir/cli.txt")" = $'attempt 2 says hello\nattempt 2 done' ] ||
        fail "jobd job log printed: $(cat "$dir/cli.txt")"
    sw_stop
    echo "ok: the end of each attempt's stderr kept ($*)"
}

sw_each_store run
