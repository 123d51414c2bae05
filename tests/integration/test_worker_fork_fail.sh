#!/usr/bin/env bash
# test_worker_fork_fail.sh — a handler the worker cannot fork (issue 11
# item 2) hands its job back without using an attempt. A real `jobd worker
# --server` runs under a user id of its own (no other process has it), and
# once it is up its RLIMIT_NPROC is set (prlimit) to the tasks that uid has
# now, its own threads: its next fork fails with EAGAIN. A job with
# max_attempts 1 must then be handed back (attempt history: `released`),
# stay pending, and, once the limit is lifted, run and succeed — a start
# failure that cost an attempt would have killed it. Needs root (to switch
# uids; RLIMIT_NPROC binds no root process), setpriv and prlimit; skipped
# without them.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
[ "$(id -u)" = 0 ] || { echo "SKIPPED: needs root to run the worker as another uid"; exit 77; }
command -v setpriv >/dev/null && command -v prlimit >/dev/null ||
    { echo "SKIPPED: needs setpriv and prlimit (util-linux)"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-forkfail.XXXXXX")
chmod 755 "$dir"
spid="" wpid=""
cleanup() {
    [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- server log"; tail -20 "$dir/server.log" 2>/dev/null || true
    echo "--- worker log"; tail -20 "$dir/worker.log" 2>/dev/null || true
    exit 1
}
# A uid no process has: the limit then counts the worker's own tasks only.
uid=""
for u in $(seq $((61000 + $$ % 3000)) 64999); do
    if ! ps -e -o uid= | grep -qx " *$u" && ! getent passwd "$u" >/dev/null; then uid=$u; break; fi
done
[ -n "$uid" ] || { echo "SKIPPED: no free uid"; exit 77; }

printf '#!/bin/sh\nexit 0\n' >"$dir/ok.sh"
chmod 755 "$dir/ok.sh"
printf '[worker]\nconcurrency = 1\n\n[handler "ff"]\nexec = %s/ok.sh\n' "$dir" >"$dir/worker.ini"
chmod 644 "$dir/worker.ini"

"$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 --shutdown-grace 2s \
    2>"$dir/server.log" &
spid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || fail "the server did not say where it listens"
server="http://127.0.0.1:$port"

HOME="$dir" setpriv --reuid="$uid" --regid="$uid" --clear-groups \
    "$JOBD" worker --server "$server" --config "$dir/worker.ini" 2>"$dir/worker.log" &
wpid=$!
for _ in $(seq 100); do grep -q "worker: running" "$dir/worker.log" && break; sleep 0.1; done
grep -q "worker: running" "$dir/worker.log" || fail "the worker did not start"
# Set as that uid: lowering a soft limit, then raising it back up to the
# hard one, needs no privilege (root may lack CAP_SYS_RESOURCE in a container).
as_uid() { setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }
tasks=$(ls "/proc/$wpid/task" | wc -l)
as_uid prlimit --pid "$wpid" --nproc="$tasks:" || fail "prlimit"

id=$("$JOBD" submit ff --max-attempts 1 --server "$server" |
    sed -n 's/.*"id": *\([0-9]*\).*/\1/p' | head -1)
[ -n "$id" ] || fail "submit"
deadline=$((SECONDS + 60))
until grep -q "could not start a handler; handing the job back.*job=$id" "$dir/worker.log"; do
    [ $SECONDS -lt $deadline ] || fail "the worker did not hand job $id back with RLIMIT_NPROC $tasks"
    sleep 0.1
done
# The worker logs the hand-back before it sends the release (its loop
# reports it on its next turn): wait for the report, not for the log line.
deadline=$((SECONDS + 60))
until attempts=$(curl -sf "$server/v1/jobs/$id/attempts") &&
    printf '%s' "$attempts" | grep -q '"outcome": *"released"'; do
    [ $SECONDS -lt $deadline ] || fail "no released attempt in the history: ${attempts:-GET attempts failed}"
    sleep 0.1
done
job=$(curl -sf "$server/v1/jobs/$id")
printf '%s' "$job" | grep -q '"status": *"\(pending\|running\)"' ||
    fail "job $id is not waiting for another try: $job"

hard=$(as_uid prlimit --pid "$wpid" --nproc --noheadings --output HARD | tr -d " ") || fail "prlimit (read)"
as_uid prlimit --pid "$wpid" --nproc="$hard:" || fail "prlimit (lift)"
# The worker waits up to 5 s between claims after failed starts (release_run).
deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
    job=$(curl -sf "$server/v1/jobs/$id")
    printf '%s' "$job" | grep -q '"status": *"succeeded"' && break
    sleep 0.1
done
printf '%s' "$job" | grep -q '"status": *"succeeded"' ||
    fail "job $id (max_attempts 1) did not succeed once forks worked again: $job"
echo "ok: $(grep -c 'handing the job back' "$dir/worker.log") fork failure(s) handed job $id" \
    "back unused; it then succeeded with max_attempts 1"
