#!/usr/bin/env bash
# test_worker_user.sh — exec handlers with `user = NAME` (docs/WORKER.md,
# Handlers as another user), run as the packaged unit runs the worker: a
# non-root user (here `daemon`) holding CAP_SETUID and CAP_SETGID as
# ambient capabilities (setpriv stands in for systemd's AmbientCapabilities=),
# with no_new_privs, talking to the server over HTTP ($JOBD_SERVER). A
# handler with `user = nobody` runs as nobody, with nobody's groups and HOME,
# no capability, and cannot read a file only the worker's user may read; a
# handler without `user =` runs as the worker's user and, above all, without
# the worker's capabilities (ambient ones would otherwise pass through exec,
# and CAP_SETUID lets a handler become root). A worker without the
# capabilities refuses to start, naming FILE:LINE; an unknown user too.
# Needs root (to start the worker as another user): skipped (77) otherwise.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
[ "$(id -u)" = 0 ] || { echo "skip: needs root to start a worker as another user"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv (util-linux)"; exit 77; }
getent passwd daemon >/dev/null && getent passwd nobody >/dev/null ||
    { echo "skip: no daemon or nobody user"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-wuser.XXXXXX")
spid="" wpid=""
cleanup() {
    for p in $wpid $spid; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- worker log"; tail -20 "$dir/worker.log" 2>/dev/null || true
    exit 1
}
unset JOBD_DB JOBD_SERVER JOBD_TOKEN JOBD_LISTEN JOBD_TOKENS
chmod 755 "$dir"
mkdir "$dir/db" "$dir/handlers"
# The worker's secret: only its user (daemon) may read it.
echo "worker-secret" >"$dir/secret"
chown daemon "$dir/secret"
chmod 600 "$dir/secret"

# What a handler sees of itself, as JSON (the job's result).
cat >"$dir/handlers/whoami" <<SH
#!/bin/sh
cat >/dev/null
caps=\$(grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/self/status | awk '{printf "%s%s ", \$1, \$2}')
secret=\$(cat "$dir/secret" 2>/dev/null || echo refused)
printf '{"uid":%s,"gid":%s,"groups":"%s","home":"%s","caps":"%s","secret":"%s"}\n' \
    "\$(id -u)" "\$(id -g)" "\$(id -G)" "\$HOME" "\$caps" "\$secret"
SH
chmod 755 "$dir/handlers/whoami"
cat >"$dir/worker.ini" <<INI
[worker]
concurrency = 2
[handler "as-nobody"]
exec = $dir/handlers/whoami
user = nobody
[handler "as-worker"]
exec = $dir/handlers/whoami
INI
chmod 644 "$dir/worker.ini"

"$JOBD" server --db "sqlite:$dir/db/jobs.db" --listen 127.0.0.1:0 2>"$dir/server.log" &
spid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/server.log")
    [ -n "$url" ] && break
    kill -0 "$spid" 2>/dev/null || fail "the server exited"; sleep 0.1
done

# Without the capabilities: refused at start, naming the line.
rc=0
setpriv --reuid=daemon --regid=daemon --init-groups --inh-caps=-all --bounding-set=-all \
    env JOBD_SERVER="$url" "$JOBD" worker --config "$dir/worker.ini" 2>"$dir/worker.log" || rc=$?
[ "$rc" != 0 ] || fail "a worker without CAP_SETUID started a user = handler"
grep -q "worker.ini:4: \[handler \"as-nobody\"\]: cannot run it as user 'nobody'.*CAP_SETUID" \
    "$dir/worker.log" ||
    fail "no FILE:LINE for the missing capability"
# An unknown user: refused when the file is read.
sed 's/^user = nobody$/user = no-such-user-here/' "$dir/worker.ini" >"$dir/bad.ini"
rc=0
"$JOBD" worker --server "$url" --config "$dir/bad.ini" 2>"$dir/bad.log" || rc=$?
[ "$rc" = 2 ] && grep -q "bad.ini:5: key 'user': no such user 'no-such-user-here'" "$dir/bad.log" ||
    fail "an unknown user: rc $rc, $(cat "$dir/bad.log")"

: >"$dir/worker.log"
# The unit's credentials: daemon, ambient CAP_SETUID/CAP_SETGID, no_new_privs
# (setpriv execs jobd, so $! is the worker).
JOBD_SERVER="$url" setpriv --reuid=daemon --regid=daemon --init-groups \
    --inh-caps=-all,+setuid,+setgid --ambient-caps=-all,+setuid,+setgid \
    --bounding-set=-all,+setuid,+setgid --no-new-privs \
    "$JOBD" worker --config "$dir/worker.ini" 2>"$dir/worker.log" &
wpid=$!
result() { # type -> the job's result, once it succeeded
    local id body
    id=$("$JOBD" submit "$1" --server "$url" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    for _ in $(seq 300); do
        body=$(curl -sf "$url/v1/jobs/$id") || true
        if echo "$body" | grep -q '"status": *"succeeded"'; then
            echo "$body" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["result"]))'
            return
        fi
        kill -0 "$wpid" 2>/dev/null || fail "the worker exited"
        sleep 0.1
    done
    fail "job $1 did not succeed: $body"
}
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
nobody_uid=$(id -u nobody) nobody_gid=$(id -g nobody) daemon_uid=$(id -u daemon)
r=$(result as-nobody)
[ "$(field "$r" uid)" = "$nobody_uid" ] && [ "$(field "$r" gid)" = "$nobody_gid" ] ||
    fail "the user = nobody handler ran as $r"
[ "$(field "$r" groups)" = "$(id -G nobody)" ] || fail "not nobody's groups: $r"
[ "$(field "$r" home)" = "$(getent passwd nobody | cut -d: -f6)" ] || fail "not nobody's HOME: $r"
[ "$(field "$r" caps)" = "CapInh:0000000000000000 CapPrm:0000000000000000 CapEff:0000000000000000 CapAmb:0000000000000000 " ] ||
    fail "the user = nobody handler holds capabilities: $r"
[ "$(field "$r" secret)" = refused ] || fail "the user = nobody handler read the worker's file"
r=$(result as-worker)
[ "$(field "$r" uid)" = "$daemon_uid" ] || fail "the handler without user = ran as $r"
[ "$(field "$r" secret)" = worker-secret ] || fail "the worker's own handler could not read its file"
[ "$(field "$r" caps)" = "CapInh:0000000000000000 CapPrm:0000000000000000 CapEff:0000000000000000 CapAmb:0000000000000000 " ] ||
    fail "a handler inherited the worker's capabilities: $r"
# The worker keeps only what it needs.
caps=$(grep -E '^CapEff:' "/proc/$wpid/status" | awk '{print $2}')
[ "$caps" = 00000000000000c0 ] || fail "the worker holds capabilities $caps, not just SETGID/SETUID"
kill -TERM "$wpid"
wait "$wpid" || fail "the worker did not exit 0"
wpid=""
echo "ok: user = runs handlers as that user without capabilities; no handler inherits the worker's"
