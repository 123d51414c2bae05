#!/usr/bin/env bash
# test_log_cli.sh — the one logger through the real binary: `jobd server`
# with --log-format text and json writes RFC 3339-stamped lines, the access
# line of a request whose path carries an escape sequence and a forged
# newline reaches the log escaped (text) or as a proper JSON string (json),
# --access-log all logs a successful GET (the default leaves it out:
# test_log_notable.sh), --access-log off drops the access lines only, --log-level warn drops the
# info lines, a worker's line per finished job is at debug (absent at the
# default level, present with --log-level debug), and bad values are usage
# errors (exit 2) naming the flag.
# Needs JOBD_BIN (set by CTest) and curl.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-log.XXXXXX")
spid=""
stop() { [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=""; }
trap 'stop; rm -rf "$dir"' EXIT
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

# start NAME ARGS...: runs the server, logs to $dir/NAME.log, sets $url.
start() {
    local name=$1 log="$dir/$1.log"
    shift
    : >"$log"
    "$JOBD" server --db "sqlite:$dir/$name.db" --listen 127.0.0.1:0 "$@" 2>"$log" &
    spid=$!
    url=""
    for _ in $(seq 100); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$log" | head -n 1)
        [ -n "$url" ] && return 0
        sleep 0.1
    done
    echo "server $name did not start:"; cat "$log"; exit 1
}
# The path: ESC [31m and a CR LF pair that would forge a second line.
evil='/v1/%1b%5b31mred%0d%0afake%20line'

start text --access-log all
curl -s -o /dev/null "$url$evil"
curl -s -o /dev/null "$url/healthz"
stop
log="$dir/text.log"
check "every text line starts with an RFC 3339 UTC instant and a level" \
    '! grep -Evq "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (debug|info|warn|error) " "$log"'
check "access line with key=value fields" \
    'grep -q " info http: request method=GET path=/healthz status=200 ms=" "$log"'
check "client bytes escaped in text" \
    'grep -qF "path=\"/v1/\\x1b[31mred\\r\\nfake line\" status=404" "$log"'
check "no raw ESC and no forged line in text" \
    '! grep -q $'"'"'\x1b'"'"' "$log" && ! grep -q "^fake" "$log"'
check "shutdown logged with the signal" 'grep -q "info server: shutting down signal=SIGTERM" "$log"'

start json --log-format json
curl -s -o /dev/null "$url$evil"
stop
log="$dir/json.log"
check "every json line is one JSON object with ts, level, component, msg" \
    'python3 -c "
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    assert set([\"ts\", \"level\", \"component\", \"msg\"]) <= set(o), l
    assert o[\"ts\"].endswith(\"Z\") and len(o[\"ts\"]) == 24, l
" "$log"'
check "client bytes kept exactly in a JSON string" \
    'python3 -c "
import json, sys
paths = [json.loads(l).get(\"path\") for l in open(sys.argv[1])]
assert \"/v1/\x1b[31mred\r\nfake line\" in paths, paths
" "$log"'
check "the listening line in json" 'grep -q "\"msg\":\"listening on http://127.0.0.1:" "$log"'

start quiet --access-log off --log-level info
curl -s -o /dev/null "$url/healthz"
stop
check "--access-log off: no access lines, still the info lines" \
    '! grep -q " http: request" "$dir/quiet.log" && grep -q "listening on" "$dir/quiet.log"'

# run_one NAME ARGS...: a server with an embedded worker runs one job to the end.
cat >"$dir/worker.ini" <<EOF
[worker]
concurrency = 1

[handler "t"]
exec = /bin/true
EOF
run_one() {
    local name=$1 id st="" deadline=$((SECONDS + 60))
    shift
    start "$name" --worker-config "$dir/worker.ini" "$@"
    id=$(curl -s -H 'Content-Type: application/json' -d '{"type":"t"}' "$url/v1/jobs" |
        sed -n 's/^{"id":\([0-9]*\).*/\1/p')
    while [ -n "$id" ] && [ $SECONDS -lt $deadline ]; do
        st=$(curl -s "$url/v1/jobs/$id" | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p')
        [ "$st" = succeeded ] && break
        sleep 0.1
    done
    stop
    [ "$st" = succeeded ] || { echo "job ${id:-?} of $name did not succeed: ${st:-?}"; exit 1; }
}
run_one perjob
check "the line per finished job is not at the default level" \
    '! grep -q "job finished" "$dir/perjob.log" && grep -q "embedded worker running" "$dir/perjob.log"'
run_one perjob_debug --log-level debug
check "the line per finished job is at debug" \
    'grep -q " debug worker: job finished .*outcome=succeeded" "$dir/perjob_debug.log"'

: >"$dir/warn.log"
"$JOBD" server --db "sqlite:$dir/warn.db" --listen 127.0.0.1:0 --log-level warn 2>"$dir/warn.log" &
spid=$!
sleep 1
stop
check "--log-level warn: no info lines" '! grep -q " info " "$dir/warn.log"'

"$JOBD" server --log-format xml >/dev/null 2>"$dir/bad.err"; rc=$?
check "bad --log-format is a usage error" '[ $rc -eq 2 ] && grep -q "log-format.*xml" "$dir/bad.err"'
"$JOBD" worker --config /nonexistent --log-level loud >/dev/null 2>"$dir/bad.err"; rc=$?
check "bad worker --log-level is a usage error" '[ $rc -eq 2 ] && grep -q "log-level.*loud" "$dir/bad.err"'
"$JOBD" server --access-log maybe >/dev/null 2>"$dir/bad.err"; rc=$?
check "bad --access-log is a usage error" '[ $rc -eq 2 ] && grep -q "access-log.*maybe" "$dir/bad.err"'
# --help is captured first: under pipefail, `jobd --help | grep -q` fails
# when grep exits before jobd has written all of its help (SIGPIPE).
shelp=$("$JOBD" server --help) whelp=$("$JOBD" worker --help)
grep -q -- "--log-format" <<<"$shelp" && grep -q -- "--log-level" <<<"$whelp"
rc=$?
check "--help documents the flags" '[ $rc -eq 0 ]'

[ "$fails" -eq 0 ] || { echo "--- logs"; cat "$dir"/*.log; exit 1; }
