#!/usr/bin/env bash
# test_cli_polish.sh — what a new user stumbled on in the CLI, through the
# real binary and a real server (SQLite): options parsed the usual way
# (-n2, -n 2, --name=value, --name value, -- ends options) in every command;
# a usage error is one line naming what is wrong and pointing at --help,
# exit 2; `jobd jobs` on a terminal (a pty from script(1)) has a header over
# every column and columns as wide as the data, says on stderr how to get the
# next page, and takes --schedule and --after; `cron next --tz` prints the
# zone's offset; `schedule add` says whether it created or replaced and a
# replace with the same cron and zone keeps next_run_at; `submit` warns when
# no live worker handles the type; `jobd queues` prints the oldest pending
# age readably and the API prints seconds to the millisecond, short; the
# ATTEMPT column counts from the last manual retry (attempt - attempt_floor).
# Needs JOBD_BIN (set by CTest), curl and script(1).
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-clipolish.XXXXXX")
spid=""
stop() { [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=""; }
trap 'stop; rm -rf "$dir"' EXIT
fails=0
check() { # name, condition (evaluated)
    if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
# tty ARGS...: runs jobd on a pseudo-terminal; stdout in $dir/tty.out (no CRs),
# stderr in $dir/tty.err; returns jobd's exit status.
tty() {
    local cmd
    cmd=$(printf '%q ' "$JOBD" "$@")
    script -qec "$cmd 2>$dir/tty.err" /dev/null >"$dir/tty.raw"
    local rc=$?
    tr -d '\r' <"$dir/tty.raw" >"$dir/tty.out"
    return $rc
}

# ---- usage errors: one line, naming the problem, pointing at --help, exit 2
usage_case() { # name, expected substring, args...
    local name=$1 want=$2
    shift 2
    "$JOBD" "$@" >"$dir/u.out" 2>"$dir/u.err"
    local rc=$?
    check "$name: exit 2" "[ $rc -eq 2 ]"
    check "$name: one line on stderr" "[ \"\$(wc -l <'$dir/u.err')\" -eq 1 ]"
    check "$name: names it" "grep -qF -- \"$want\" '$dir/u.err'"
    check "$name: points at --help" "grep -qF \"see 'jobd \" '$dir/u.err'"
    check "$name: nothing on stdout" "[ ! -s '$dir/u.out' ]"
}
usage_case "jobs unknown option" "unknown option '--bogus'" jobs --bogus
usage_case "jobs bad --limit" "--limit must be a positive integer, not 'x'" jobs --limit=x
usage_case "jobs missing value" "missing value for '-n'" jobs -n
usage_case "submit no TYPE" "missing TYPE" submit
usage_case "submit bad priority" "--priority must be an integer" submit t --priority=high
usage_case "job bad id" "ID must be a positive integer" job show abc
usage_case "schedule add-only option on ls" "unknown option '--queue'" schedule ls --queue q
usage_case "cron unknown option" "unknown option '--bogus'" cron next '* * * * *' --bogus
usage_case "cron -n0" "-n must be a number from 1 to 100000" cron next '* * * * *' -n0
usage_case "worker unknown option" "unknown option '--nope'" worker --nope
usage_case "migrate switch with a value" "takes no value" migrate --status=yes
usage_case "queues extra argument" "unexpected argument 'x'" queues x
usage_case "jobs bulk without filter" "give at least one filter" jobs retry
usage_case "unknown command" "unknown command 'frob'" frob

# ---- the usual option forms
from=--from=2026-01-01T00:00:00Z
check "-n2" '[ "$("$JOBD" cron next @hourly $from -n2 | wc -l)" -eq 2 ]'
check "-n 2" '[ "$("$JOBD" cron next @hourly $from -n 2 | wc -l)" -eq 2 ]'
check "--count=2" '[ "$("$JOBD" cron next @hourly $from --count=2 | wc -l)" -eq 2 ]'
check "--from value" '[ "$("$JOBD" cron next @hourly --from 2026-01-01T00:00:00Z -n1)" = 2026-01-01T01:00:00.000Z ]'
check "-- ends options" '[ "$("$JOBD" cron next $from -n1 -- @daily)" = 2026-01-02T00:00:00.000Z ]'
"$JOBD" cron next $from -n1 -- @daily --bogus >/dev/null 2>&1
check "after --, --bogus is part of EXPR (exit 2: not a cron field)" '[ $? -eq 2 ]'

# ---- cron next --tz: the zone's offset; UTC stays Z
out=$("$JOBD" cron next '0 3 * * *' --tz Europe/Berlin --from 2026-03-28T12:00:00Z -n 2)
check "--tz Europe/Berlin across spring forward" \
    '[ "$out" = "$(printf "2026-03-29T03:00:00+02:00\n2026-03-30T03:00:00+02:00")" ]'
out=$("$JOBD" cron next '0 9 * * *' --tz America/New_York --from 2026-11-01T00:00:00Z -n 2)
check "--tz America/New_York negative offset, before and after fall back" \
    '[ "$out" = "$(printf "2026-11-01T09:00:00-05:00\n2026-11-02T09:00:00-05:00")" ]'
out=$("$JOBD" cron next '0 9 * * *' --tz Asia/Kolkata --from 2026-01-01T00:00:00Z -n 1)
check "--tz half-hour offset" '[ "$out" = 2026-01-01T09:00:00+05:30 ]'
out=$("$JOBD" cron next '0 9 * * *' --tz UTC --from 2026-01-01T00:00:00Z -n 1)
check "--tz UTC stays Z" '[ "$out" = 2026-01-01T09:00:00.000Z ]'

# ---- a server for the client commands, with a worker that handles one type
printf '[worker]\nconcurrency = 1\n[handler "handled.type"]\nexec = /bin/cat\n[handler "fails.type"]\nexec = /bin/false\n' \
    >"$dir/worker.ini"
"$JOBD" server --db "sqlite:$dir/s.db" --listen 127.0.0.1:0 --worker-config "$dir/worker.ini" \
    2>"$dir/server.log" &
spid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/server.log" | head -n 1)
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "server did not start:"; cat "$dir/server.log"; exit 1; }
export JOBD_SERVER=$url

for _ in $(seq 600); do # polled with curl: an ASan jobd per poll costs ~0.07 s of CPU
    curl -s "$url/v1/workers" | grep -q '"state":"active"' && break
    sleep 0.05
done

# ---- submit: a warning on stderr when no live worker handles the type
"$JOBD" submit handled.type >"$dir/h.out" 2>"$dir/h.err"
check "submit of a handled type: exit 0, no warning" '[ $? -eq 0 ] && [ ! -s "$dir/h.err" ]'
"$JOBD" submit handled.type --queue elsewhere >/dev/null 2>"$dir/h2.err"
check "the worker claims from every queue: no warning" '[ ! -s "$dir/h2.err" ]'
"$JOBD" submit short >"$dir/w.out" 2>"$dir/w.err"
check "submit of an unhandled type: exit 0, the job on stdout" \
    '[ $? -eq 0 ] && grep -q "\"type\":\"short\"" "$dir/w.out"'
check "the warning names the type and says it will wait" \
    'grep -qx "jobd submit: warning: no live worker handles type short on queue default; the job will wait until one starts" "$dir/w.err"'
for i in 2 3; do "$JOBD" submit short >/dev/null 2>&1 || exit 1; done
"$JOBD" submit --queue=a-rather-long-queue-name --in 1h -- a.much.longer.job.type.name >/dev/null 2>&1
check "submit --name=value and -- before TYPE" '[ $? -eq 0 ]'

# ---- jobs on a terminal
tty jobs
check "jobs on a tty: exit 0" '[ $? -eq 0 ]'
header=$(head -1 "$dir/tty.out")
check "a header over every column" \
    '[[ "$header" =~ ^ID\ +STATUS\ +QUEUE\ +TYPE\ +ATTEMPT\ +RUN_AT$ ]]'
check "six rows under it" '[ "$(wc -l <"$dir/tty.out")" -eq 7 ]'
# Every column starts where its header does (widths from the data).
qcol=$(awk 'NR == 1 { print index($0, "QUEUE") }' "$dir/tty.out")
tcol=$(awk 'NR == 1 { print index($0, "TYPE") }' "$dir/tty.out")
check "the long queue name fits its column" \
    '[ "$(awk -v q=$qcol "NR == 2 { print substr(\$0, q, 24) }" "$dir/tty.out")" = a-rather-long-queue-name ]'
check "types start under TYPE on every row" \
    '[ -z "$(awk -v t=$tcol "NR > 1 && substr(\$0, t - 1, 1) != \" \" { print }" "$dir/tty.out")" ]'
check "the attempt column reads 0/25 for a new job" 'grep -q " short .* 0/25 " "$dir/tty.out"'
check "no hint when everything fit" '[ ! -s "$dir/tty.err" ]'

# ---- the page is full: a hint on stderr with the command for the next page
"$JOBD" jobs --type short -n2 >"$dir/p1.out" 2>"$dir/p1.err"
check "two JSON lines" '[ "$(wc -l <"$dir/p1.out")" -eq 2 ]'
last=$(tail -1 "$dir/p1.out" | sed 's/^{"id":\([0-9]*\),.*/\1/')
check "the hint" 'grep -qx -- "more: jobd jobs --type short --limit 2 --after $last" "$dir/p1.err"'
"$JOBD" jobs --type short --limit 2 --after "$last" >"$dir/p2.out" 2>"$dir/p2.err"
check "--after gives the rest" '[ "$(wc -l <"$dir/p2.out")" -eq 1 ]'
check "no hint on the last page" '[ ! -s "$dir/p2.err" ]'
usage_case "--after not an id" "--after must be a job ID" jobs --after=x

# ---- --schedule: the jobs one schedule made
"$JOBD" schedule add nightly '0 0 * * *' sched.job >"$dir/a1.out" 2>"$dir/a1.err" || exit 1
check "schedule add of a new name says created" \
    'grep -qx "jobd schedule: created schedule '"'nightly'"'" "$dir/a1.err"'
"$JOBD" schedule add nightly '0 0 * * *' sched.job --payload '{"v":2}' >"$dir/a2.out" 2>"$dir/a2.err"
check "schedule add of an existing name says replaced" \
    'grep -qx "jobd schedule: replaced schedule '"'nightly'"'" "$dir/a2.err"'
next_of() { sed 's/.*"next_run_at":"\([^"]*\)".*/\1/' "$1"; }
check "the same cron and zone: next_run_at kept" '[ "$(next_of "$dir/a1.out")" = "$(next_of "$dir/a2.out")" ]'
check "the replaced definition is printed" 'grep -q "\"payload\":{\"v\":2}" "$dir/a2.out"'
"$JOBD" schedule add nightly '0 0 * * *' sched.job --tz Asia/Kolkata >"$dir/a3.out" 2>/dev/null
check "another zone: next_run_at computed again" '[ "$(next_of "$dir/a1.out")" != "$(next_of "$dir/a3.out")" ]'

"$JOBD" schedule trigger nightly >/dev/null || exit 1
"$JOBD" jobs --schedule nightly >"$dir/s.out"
check "--schedule lists that schedule's job only" \
    '[ "$(wc -l <"$dir/s.out")" -eq 1 ] && grep -q "\"type\":\"sched.job\"" "$dir/s.out"'

# ---- seconds: to the millisecond in the API, readable in `jobd queues`
for _ in $(seq 100); do
    [ "$(curl -s "$url/v1/jobs?type=handled.type&status=succeeded" | grep -o '"id"' | wc -l)" -eq 2 ] &&
        break
    sleep 0.1
done
hid=$(sed 's/^{"id":\([0-9]*\),.*/\1/' "$dir/h.out")
"$JOBD" submit handled.type --queue exact-q --payload '[0.18888888888888883]' >/dev/null 2>&1
"$JOBD" jobs --queue exact-q >"$dir/pl.out"
check "a payload's reals stay exact (17 digits) in jobs" 'grep -qF "\"payload\":[0.18888888888888883]" "$dir/pl.out"'
curl -s "$url/v1/jobs/$hid/attempts" >"$dir/att.json"
check "duration_s to the millisecond, printed short" \
    'grep -Eq "\"duration_s\":[0-9]+(\.[0-9]{1,3})?[,}]" "$dir/att.json"'
curl -s "$url/v1/queues" >"$dir/q.json"
unhandled() { # queue: its unhandled_types, comma-separated
    python3 -c 'import json, sys
q = {q["name"]: q for q in json.load(open(sys.argv[1]))["queues"]}
print(",".join(q[sys.argv[2]]["unhandled_types"]))' "$dir/q.json" "$1"
}
check "the queue object lists the types no live worker handles" \
    '[ "$(unhandled default)" = sched.job,short ]'
check "a queue whose pending types are all handled lists none" '[ "$(unhandled elsewhere)" = "" ]'
check "another queue, another unhandled type" \
    '[ "$(unhandled a-rather-long-queue-name)" = a.much.longer.job.type.name ]'
check "oldest_pending_age_s to the millisecond, printed short" \
    '[ "$(grep -Eo "\"oldest_pending_age_s\":[^,}]*" "$dir/q.json" | grep -Evc ":([0-9]+(\.[0-9]{1,3})?|null)$")" -eq 0 ]'
"$JOBD" job attempts "$hid" >"$dir/att.out"
check "the CLI keeps it short when it passes it on" \
    'grep -Eq "\"duration_s\":[0-9]+(\.[0-9]{1,3})?[,}]" "$dir/att.out"'
tty queues
check "queues on a tty: an OLDEST_PENDING column" 'head -1 "$dir/tty.out" | grep -q " OLDEST_PENDING  LAST 1M OK/FAILED/DEAD  LIMITS$"'
check "the default queue's oldest pending age, readable" \
    'grep -Eq "^default .* ([0-9]+ms|[0-9]+\.[0-9]s|[0-9]+m[0-9]{2}s)  [0-9]+/[0-9]+/[0-9]+ +-  warning: no live worker handles sched.job, short$" "$dir/tty.out"'
check "a queue with nothing pending shows -" 'grep -Eq "^elsewhere .* -  [0-9]+/[0-9]+/[0-9]+ +-$" "$dir/tty.out"'

# ---- the attempt column right after a manual retry: the attempts left again
fid=$("$JOBD" submit fails.type --queue flaky --max-attempts 1 | sed 's/^{"id":\([0-9]*\),.*/\1/')
for _ in $(seq 100); do
    curl -s "$url/v1/jobs/$fid" | grep -q '"status":"dead"' && break
    sleep 0.1
done
tty jobs --queue flaky
check "jobs shows 1/1 for the dead job" 'grep -Eq "^ *$fid +dead +flaky +fails.type +1/1 " "$dir/tty.out"'
curl -s -X POST "$url/v1/queues/flaky/pause" >/dev/null
"$JOBD" job retry "$fid" >"$dir/r.out"
check "a retried job: attempt stays 1, attempt_floor becomes 1" \
    'grep -q "\"attempt\":1," "$dir/r.out" && grep -q "\"attempt_floor\":1," "$dir/r.out"'
tty jobs --queue flaky
check "jobs shows 0/1 after the retry, not 1/1" 'grep -Eq "^ *$fid +pending +flaky +fails.type +0/1 " "$dir/tty.out"'

echo "$fails failed"
[ "$fails" -eq 0 ]
