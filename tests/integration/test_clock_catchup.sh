#!/usr/bin/env bash
# test_clock_catchup.sh — catch-up and clock jumps through the real binary
# (docs/CRON.md, "Schedules and catch-up" and "Clock jumps"), on a SQLite file:
#   0. a stall: every-second schedules with catchup skip, once and all; the
#      server is frozen (SIGSTOP) for 3 s. A running scheduler that is late
#      is not an outage: every firing of the stall still makes its own job,
#      under every policy.
#   1. outage: the same schedules; the
#      server is stopped for 6 s and restarted. Firings over a second overdue
#      when the restarted server first sees them are missed: skip makes none
#      of them, once exactly one job for all of them, all one job each.
#   2. the host clock jumps forward an hour: a `* * * * *` schedule with
#      once makes exactly one job, and its next_run_at is the next minute.
#   3. the clock jumps back an hour: a job that was due stays due (claimable
#      at once), and a `* * * * *` schedule's next_run_at is within a minute.
# The server's clock is moved through $JOBD_TEST_CLOCK_FILE, which only the
# test build honours (src/util/clock.c); with another build the test skips.
# Nothing waits a fixed time for the server: each step polls for what it
# needs (the schedules' next_run_at) with a generous deadline, so a loaded
# machine only makes the test slower. Needs JOBD_BIN (set by CTest) and python3.
set -euo pipefail

JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-clock.XXXXXX")
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- server log"; tail -30 "$dir/server.log" || true
    exit 1
}
db="sqlite:$dir/jobs.db"
export JOBD_TEST_CLOCK_FILE="$dir/offset"
# set_offset SECONDS: written whole (rename): the server re-reads the file
# every 50 ms, and a read between `>`'s truncation and its write is offset 0.
set_offset() {
    echo "$1" >"$JOBD_TEST_CLOCK_FILE.new" && mv -f "$JOBD_TEST_CLOCK_FILE.new" "$JOBD_TEST_CLOCK_FILE"
}
set_offset 0

start_server() {
    : >"$dir/server.log"
    "$JOBD" server --db "$db" --listen 127.0.0.1:0 --shutdown-grace 1s 2>"$dir/server.log" &
    spid=$!
    local port="" deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ]; do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/server.log" | head -n 1)
        [ -n "$port" ] && break
        kill -0 "$spid" 2>/dev/null || fail "the server exited"
        sleep 0.1
    done
    [ -n "$port" ] || fail "the server did not say where it listens"
    server="http://127.0.0.1:$port"
    if ! grep -q 'test clock: real time plus an offset' "$dir/server.log"; then
        echo "SKIPPED: this jobd was built without JOBD_TEST_HOOKS (no test clock)"
        exit 77
    fi
}
stop_server() {
    kill -TERM "$spid" && wait "$spid" || true
    spid=""
}
api() { # METHOD PATH [BODY]
    curl -sS -X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "$server$2"
}
add_schedule() { # NAME CRON CATCHUP
    api POST /v1/schedules "{\"name\":\"$1\",\"cron\":\"$2\",\"type\":\"t.$1\",\"catchup\":\"$3\"}" \
        >/dev/null
}
# The scheduled_for instants (epoch seconds) of a schedule's jobs, oldest first.
fired() {
    api GET "/v1/jobs?schedule=$1&limit=1000" | python3 -c '
import datetime, json, sys
for j in sorted(json.load(sys.stdin)["jobs"], key=lambda j: j["scheduled_for"]):
    t = datetime.datetime.strptime(j["scheduled_for"], "%Y-%m-%dT%H:%M:%S.%fZ")
    print(int(t.replace(tzinfo=datetime.timezone.utc).timestamp()))'
}
# The polls below run in one Python process each, not a curl and a Python
# per poll: $dir/poll.py WHAT ARGS... polls every 0.1 s until its condition
# holds (exit 0) or 60 s have passed (exit 1), then prints what it last read.
# Times are epoch seconds; "now" is the server's clock (real time plus the
# offset in $JOBD_TEST_CLOCK_FILE).
cat >"$dir/poll.py" <<'PY'
import datetime, json, sys, time, urllib.request
base, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # as curl, no proxy
def get(path):
    with opener.open(base + path, timeout=10) as r:
        return json.load(r)
def ts(v):
    return (datetime.datetime.strptime(v, "%Y-%m-%dT%H:%M:%S.%fZ")
            .replace(tzinfo=datetime.timezone.utc).timestamp())
def fake_now():
    return time.time() + float(open(args[0]).read())
def min_next():  # the smallest next_run_at of the every_* schedules
    t = [ts(s["next_run_at"]) for s in get("/v1/schedules")["schedules"]
         if s["name"].startswith("every_")]
    return int(min(t)) if t else 0
def check():
    if what == "min_next":  # every every_* schedule is past T: prints the smallest next_run_at
        n = min_next()
        return n > int(args[0]), n
    if what == "next_after_now":  # CLOCK NAME: next_run_at > now, now read after it
        n = ts(get("/v1/schedules/" + args[1])["next_run_at"])
        t = fake_now()
        return n > t, "next_run_at %.3f, now %.3f" % (n, t)
    if what == "next_within_minute":  # CLOCK NAME: now < next_run_at <= now + 60, now read first
        t = fake_now()
        n = ts(get("/v1/schedules/" + args[1])["next_run_at"])
        return t < n <= t + 60, "next_run_at %.3f, now %.3f" % (n, t)
    if what == "back":  # CLOCK NAME JOB: next_run_at <= now + 60 and the job's run_at <= now
        t = fake_now()
        n = ts(get("/v1/schedules/" + args[1])["next_run_at"])
        r = ts(get("/v1/jobs/" + args[2])["run_at"])
        return n <= t + 60 and r <= t, "next_run_at %.3f, due job's run_at %.3f, now %.3f" % (n, r, t)
    raise SystemExit("poll.py: unknown " + what)
deadline, last = time.monotonic() + 60, "nothing read"
while True:
    try:
        ok, last = check()
    except (OSError, ValueError, KeyError) as e:  # a server restarting: read again
        ok, last = False, "error: %s" % e
    if ok or time.monotonic() > deadline:
        print(last)
        sys.exit(0 if ok else 1)
    time.sleep(0.1)
PY
poll() { python3 "$dir/poll.py" "$server" "$@"; }
# The smallest next_run_at of the every_* schedules, once: every firing
# before it has been materialized (or skipped) by the server.
min_next() { poll min_next -1; }
# until_next T WHAT: waits (up to 60 s) until every every_* schedule is past T.
until_next() {
    poll min_next "$1" >/dev/null || fail "timed out waiting for $2"
}
# gapless NAME FROM TO: NAME made a job for every second in [FROM, TO].
gapless() {
    local x want=$2
    for x in $(fired "$1"); do
        [ "$x" -lt "$2" ] && continue
        [ "$x" -gt "$3" ] && break
        [ "$x" -eq "$want" ] || fail "$1 has no job for the firing at $want (next: $x)"
        want=$((x + 1))
    done
    [ "$want" -gt "$3" ] || fail "$1 has no job for the firings $want..$3"
}
fake_now() { # the server's clock: real time plus the offset
    python3 -c 'import sys, time; print("%.3f" % (time.time() + float(open(sys.argv[1]).read())))' \
        "$JOBD_TEST_CLOCK_FILE"
}

# ---- 0. a 3 s stall of the running server
start_server
for c in skip once all; do add_schedule "every_$c" "* * * * * *" "$c"; done
lo=$(($(date +%s) + 1)) # from here on all three fire; the adds may straddle a second
until_next $((lo + 1)) "the schedules to fire"
kill -STOP "$spid"
stall=$(date +%s)
sleep 3
kill -CONT "$spid"
resumed=$(date +%s)
until_next $((resumed + 1)) "the schedules to fire after the stall"
echo "stall $stall..$resumed"
for c in skip once all; do gapless "every_$c" "$lo" $((resumed + 1)); done

# ---- 1. a 6 s outage
stop_server
down=$(date +%s)
sleep 6
up=$(date +%s)
start_server
until_next $((up + 2)) "the restarted server to fire on time"
cut=$(($(min_next) - 1)) # every firing up to here was materialized before the stop below
stop_server
start_server # for the API; its own start is another short outage, after the cut
mapfile -t skip < <(fired every_skip)
mapfile -t once < <(fired every_once)
mapfile -t all < <(fired every_all)
upto() { # how many of the instants lie in [lo, cut]
    local x n=0
    for x in "$@"; do [ "$x" -ge "$lo" ] && [ "$x" -le "$cut" ] && n=$((n + 1)); done
    echo $n
}
ns=$(upto "${skip[@]}") no=$(upto "${once[@]}") na=$(upto "${all[@]}")
echo "outage $down..$up: skip $ns, once $no, all $na jobs in $lo..$cut"
inside=0
for x in "${skip[@]}"; do
    [ "$x" -ge $((down + 1)) ] && [ "$x" -le $((up - 2)) ] && inside=$((inside + 1))
done
[ "$inside" -eq 0 ] || fail "skip made $inside job(s) for firings inside the outage"
[ "$no" -eq $((ns + 1)) ] || fail "once made $no jobs, expected skip's $ns plus one"
[ "$na" -ge $((ns + 4)) ] || fail "all made $na jobs, expected skip's $ns plus one per missed firing"
prev=""
for x in "${all[@]}"; do
    [ "$x" -ge "$lo" ] || continue
    [ "$x" -le "$cut" ] || break
    [ -z "$prev" ] || [ "$x" -eq $((prev + 1)) ] || fail "all skipped the firings after $prev"
    prev=$x
done
for c in skip once all; do api DELETE "/v1/schedules/every_$c" >/dev/null; done

# ---- 2. the clock jumps forward an hour, landing mid-minute
# The jump must come before the schedule's first firing by the real clock
# (the next minute), or that firing is on time and makes a job of its own:
# the schedule is added at least 10 s before a minute ends.
while [ $(($(date +%s) % 60)) -ge 50 ]; do sleep 0.5; done
add_schedule hop_fwd "* * * * *" once
off=$(python3 -c 'import time; t = time.time(); print(3600 + (30 - t % 60) % 60)')
set_offset "$off"
jumped=$(fake_now) # mid-minute: the next firing on time is ~30 s later
poll next_after_now "$JOBD_TEST_CLOCK_FILE" hop_fwd >/dev/null ||
    fail "the +1 h jump was not caught up within 60 s"
# The catch-up's jobs: a loaded machine may reach the next minute by now,
# whose firing is on time and not part of it.
mapfile -t fwd < <(fired hop_fwd | awk -v j="${jumped%.*}" '$1 <= j')
[ "${#fwd[@]}" -eq 1 ] || fail "after a +1 h jump once made ${#fwd[@]} jobs, expected 1"
# now is read before next_run_at, and again while a minute that ended in
# between is not materialized yet.
got=$(poll next_within_minute "$JOBD_TEST_CLOCK_FILE" hop_fwd) ||
    fail "next_run_at is not within a minute after now: $got"

# ---- 3. the clock jumps back an hour
add_schedule hop_back "* * * * *" skip
id=$(api POST /v1/jobs '{"type":"t.due"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
sleep 1.5 # the plane sees the due job's time once before the jump
set_offset "$(python3 -c "print($off - 3600)")"
got=$(poll back "$JOBD_TEST_CLOCK_FILE" hop_back "$id") || fail "after a -1 h jump: $got"
got=$(api POST /v1/claim '{"worker_id":"w1","types":["t.due"]}' |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')
[ "$got" -eq 1 ] || fail "the job due before the jump was not claimable after it"
grep -q 'the clock went back; due times re-evaluated' "$dir/server.log" || fail "the server did not log the jump"
echo "PASS"
