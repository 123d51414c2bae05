#!/usr/bin/env bash
# test_cli_consistency.sh — the CLI behaves the same in every command,
# through the real binary and a real server (SQLite): an argument the server
# refuses (400) exits 2 like any usage error; every message starts with
# `jobd CMD: `; `jobd help CMD` prints that command's help; a replayed
# idempotent submit says so on stderr; `jobd workers` on a terminal shows
# the queues, types and held job ids, with an ID column as wide as its
# longest id. Needs JOBD_BIN (set by CTest), curl and script(1).
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d /tmp/jobd-clicons.XXXXXX)
spid=""
stop() { [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=""; }
trap 'stop; rm -rf "$dir"' EXIT
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
# run NAME ARGS...: jobd's stdout in $dir/NAME.out, stderr in $dir/NAME.err, status in $rc
run() { local n=$1; shift; "$JOBD" "$@" >"$dir/$n.out" 2>"$dir/$n.err"; rc=$?; }

# ---- jobd help CMD
run help_submit help submit
check "jobd help submit: exit 0, submit's usage on stdout" \
    '[ $rc -eq 0 ] && head -1 "$dir/help_submit.out" | grep -q "^usage: jobd submit TYPE" && [ ! -s "$dir/help_submit.err" ]'
"$JOBD" submit --help >"$dir/submit_help.out"
check "the same as jobd submit --help" 'cmp -s "$dir/submit_help.out" "$dir/help_submit.out"'
run help_workers help workers
check "jobd help workers" '[ $rc -eq 0 ] && grep -q "^usage: jobd workers" "$dir/help_workers.out"'
run help_nope help nope
check "jobd help of an unknown command: exit 2, one line" \
    '[ $rc -eq 2 ] && [ "$(wc -l <"$dir/help_nope.err")" -eq 1 ] && grep -q "^jobd help: unknown command .nope." "$dir/help_nope.err"'
run bare help
check "jobd help alone lists the commands" '[ $rc -eq 0 ] && grep -q "^  workers " "$dir/bare.out"'

# ---- an unreachable server: exit 3, the command's prefix
run unreach queues --server http://127.0.0.1:1
check "unreachable: exit 3, 'jobd queues: cannot reach'" \
    '[ $rc -eq 3 ] && grep -q "^jobd queues: cannot reach http://127.0.0.1:1" "$dir/unreach.err"'

# ---- a server
"$JOBD" server --db "sqlite:$dir/s.db" --listen 127.0.0.1:0 2>"$dir/server.log" &
spid=$!
url=""
for _ in $(seq 300); do
    url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/server.log" | head -n 1)
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "server did not start:"; cat "$dir/server.log"; exit 1; }
export JOBD_SERVER=$url

# ---- what the server refuses (400) is a usage error: exit 2, one line, the prefix
refused() { # name, expected start of stderr, args...
    local name=$1 want=$2
    shift 2
    run "$name" "$@"
    check "$name: exit 2" '[ $rc -eq 2 ]'
    check "$name: one line on stderr, '$want'" \
        '[ "$(wc -l <"$dir/$name.err")" -eq 1 ] && grep -q "^$want" "$dir/$name.err"'
    check "$name: nothing on stdout" '[ ! -s "$dir/$name.out" ]'
}
refused "submit to a bad queue name" "jobd submit: queue " submit t --queue 'bad queue'
refused "jobs --status nope" "jobd jobs: status must be" jobs --status nope
refused "schedule with a bad cron" "jobd schedule: " schedule add s1 '61 * * * *' t
refused "queues limit with a bad value" "jobd queues: " queues limit q --max-running -1
run missing job show 999999
check "a missing job is still exit 1 (404), with the prefix" \
    '[ $rc -eq 1 ] && grep -q "^jobd job: " "$dir/missing.err"'

# ---- a replayed idempotent submit says so
run k1 submit t --key order-1
check "first submit with a key: exit 0, no replay note" '[ $rc -eq 0 ] && ! grep -q "used before" "$dir/k1.err"'
run k2 submit t --key order-1
check "the same again: exit 0, the same job" \
    '[ $rc -eq 0 ] && [ "$(sed "s/,.*//" "$dir/k1.out")" = "$(sed "s/,.*//" "$dir/k2.out")" ]'
check "and stderr says it was replayed" \
    'grep -qx "jobd submit: key '"'order-1'"' was used before: this is the job it made then, not a new one" "$dir/k2.err"'

# ---- jobd workers on a terminal
long=a-rather-long-worker-id-for-the-id-column-0123456789
curl -sS -H 'Content-Type: application/json' \
    -d '{"worker_id":"'$long'","types":["t","t2"],"queues":["default","q2"],"limit":3}' \
    "$url/v1/claim" >"$dir/claim.json"
held=$(sed -n 's/.*"jobs":\[{"id":\([0-9]*\),.*/\1/p' "$dir/claim.json")
curl -sS -H 'Content-Type: application/json' -d '{"worker_id":"w2","types":["other"]}' \
    "$url/v1/claim" >/dev/null
script -qec "$(printf '%q ' "$JOBD" workers)" /dev/null | tr -d '\r' >"$dir/w.out"
check "workers: a header with QUEUES, TYPES and JOBS" \
    'head -1 "$dir/w.out" | grep -Eq "^ID +HOST +STATE +PID +RUNNING +LAST_SEEN_AT +QUEUES +TYPES +JOBS$"'
hostcol=$(awk 'NR == 1 { print index($0, "HOST") }' "$dir/w.out")
check "the ID column is as wide as the longest id (plus two spaces)" \
    '[ "$hostcol" -eq $(( ${#long} + 3 )) ]'
check "the long id's row: its queues, types and the job it holds" \
    'grep -Eq "^$long +active .* default,q2 +t,t2 +$held$" "$dir/w.out"'
check "a worker of every queue shows *, and holds nothing: -" 'grep -Eq "^w2 .* \* +other +-$" "$dir/w.out"'

echo "$fails failed"
[ "$fails" -eq 0 ]
