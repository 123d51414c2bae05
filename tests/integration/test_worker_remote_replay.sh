#!/usr/bin/env bash
# test_worker_remote_replay.sh — a `jobd worker --server` whose report
# landed but whose answer was lost sends it again and is told it landed
# (issue 28 item 6; docs/API.md, Repeated reports).
#
# The worker reaches the server through a small HTTP proxy that forwards
# the first /complete and the first /fail it sees, then drops the
# connection instead of answering: the server applied the report, the
# worker heard nothing (a network error) and retries. The retry must be
# answered 200 with Idempotent-Replayed: true (before, 409 stale_attempt,
# which a worker cannot tell from a report that never counted), and the
# jobs end as the first reports said: one succeeded, one dead, attempt 1.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-remote-replay.XXXXXX")
spid="" wpid="" ppid_=""
cleanup() {
    [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null || true
    [ -n "$ppid_" ] && kill -KILL "$ppid_" 2>/dev/null && wait "$ppid_" 2>/dev/null || true
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- proxy log"; cat "$dir/proxy.log" 2>/dev/null || true
    echo "--- server log"; tail -20 "$dir/server.log" 2>/dev/null || true
    echo "--- worker log"; tail -40 "$dir/worker.log" 2>/dev/null || true
    exit 1
}
wait_for() {
    local deadline=$((SECONDS + $1)) what=$2; shift 2
    until "$@"; do
        [ $SECONDS -lt $deadline ] || fail "timed out waiting for $what"
        sleep 0.05
    done
}

printf '#!/bin/sh\nexit 0\n' >"$dir/ok.sh"
printf '#!/bin/sh\necho broken >&2\nexit 65\n' >"$dir/bad.sh"
chmod 755 "$dir/ok.sh" "$dir/bad.sh"
printf '[worker]\nconcurrency = 2\nlease = 30s\n\n[handler "ok"]\nexec = %s/ok.sh\n\n[handler "bad"]\nexec = %s/bad.sh\n' \
    "$dir" "$dir" >"$dir/worker.ini"

"$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 --shutdown-grace 2s \
    2>"$dir/server.log" &
spid=$!
port=""
for _ in $(seq 300); do
    port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || fail "the server did not say where it listens"
server="http://127.0.0.1:$port"

# The proxy: prints its port, then one line per report it forwards.
cat >"$dir/proxy.py" <<'PY'
import http.client, http.server, socket, sys, threading
upstream = int(sys.argv[1])
dropped = set()
lock = threading.Lock()

class P(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def relay(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        c = http.client.HTTPConnection("127.0.0.1", upstream, timeout=120)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        c.request(self.command, self.path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        kind = self.path.rsplit("/", 1)[-1]
        if kind in ("complete", "fail"):
            with lock:
                drop = kind not in dropped
                dropped.add(kind)
            print("%s %s -> %d replayed=%s%s" % (kind, self.path, r.status,
                  r.getheader("Idempotent-Replayed"), " DROPPED" if drop else ""))
            if drop:  # the server applied it; the worker hears nothing
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("connection", "transfer-encoding", "date", "server"):
                self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
    do_GET = relay
    do_POST = relay

s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), P)
print("port", s.server_address[1])
s.serve_forever()
PY
python3 -u "$dir/proxy.py" "$port" >"$dir/proxy.log" 2>&1 &
ppid_=$!
wait_for 10 "the proxy" grep -q '^port ' "$dir/proxy.log"
pport=$(sed -n 's/^port //p' "$dir/proxy.log")

enqueue() {
    curl -sfS -H 'Content-Type: application/json' -d "{\"type\":\"$1\"}" "$server/v1/jobs" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}
field() {
    curl -sfS "$server/v1/jobs/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}
ok=$(enqueue ok)
bad=$(enqueue bad)

"$JOBD" worker --server "http://127.0.0.1:$pport" --config "$dir/worker.ini" --id replay-worker \
    2>"$dir/worker.log" &
wpid=$!

twice() { [ "$(grep -c "^$1 " "$dir/proxy.log")" -ge 2 ]; }
wait_for 60 "the worker to send its completion again" twice complete
wait_for 60 "the worker to send its failure again" twice fail
for kind in complete fail; do
    first=$(grep -m1 "^$kind " "$dir/proxy.log")
    again=$(grep "^$kind " "$dir/proxy.log" | sed -n 2p)
    case "$first" in *"-> 200 replayed=None DROPPED") ;; *) fail "first $kind: $first" ;; esac
    case "$again" in *"-> 200 replayed=true") ;; *) fail "repeated $kind: $again" ;; esac
done
[ "$(field "$ok" status)" = succeeded ] || fail "job $ok is $(field "$ok" status)"
[ "$(field "$ok" attempt)" = 1 ] || fail "job $ok ran $(field "$ok" attempt) attempts"
[ "$(field "$bad" status)" = dead ] || fail "job $bad is $(field "$bad" status)"
[ "$(field "$bad" attempt)" = 1 ] || fail "job $bad ran $(field "$bad" attempt) attempts"
echo "ok"
