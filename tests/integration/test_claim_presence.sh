#!/usr/bin/env bash
# test_claim_presence.sh — a claim counts as presence (docs/API.md, "A
# minimal remote worker"), through the real binary and a real server, on
# SQLite and on PostgreSQL: a client that never announces itself and only
# calls POST /v1/claim is listed by GET /v1/workers with the queues and
# types it claims and the jobs it holds, and `jobd submit` of a type it
# claims gives no "no live worker" warning; a worker that announced itself
# keeps what it announced (pid, types, draining) when it then claims; and
# a claim still gets its job when --max-workers leaves no room to list it.
# Needs JOBD_BIN (set by CTest) and python3; the PostgreSQL half needs
# JOBD_TEST_PG_URL and fails without it under JOBD_TEST_REQUIRE_PG.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-claimpres.XXXXXX")
spid=""
pgdb=""
stop() { [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; spid=""; }
cleanup() {
    stop
    [ -n "$pgdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb WITH (FORCE)" \
        >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0

run_store() { # store URL
    : >"$dir/server.log" # emptied first: read below before the child truncates it, a previous server's log would give a dead port
    "$JOBD" server --db "$1" --listen 127.0.0.1:0 --max-workers 2 2>"$dir/server.log" &
    spid=$!
    local url=""
    for _ in $(seq 300); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/server.log" | head -n 1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "server did not start:"; cat "$dir/server.log"; exit 1; }
    python3 - "$store" "$url" "$JOBD" <<'PY' || fails=$((fails + 1))
import json, subprocess, sys, urllib.error, urllib.request
store, url, jobd = sys.argv[1:]
fails = 0

def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)

def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + store + ": " + name + ("" if cond else " " + str(detail)))
    fails += 0 if cond else 1

def workers():
    st, b = call("GET", "/v1/workers")
    return {w["id"]: w for w in b["workers"]}

def submit(typ, queue):
    p = subprocess.run([jobd, "submit", typ, "--queue", queue], capture_output=True, text=True,
                       env={"JOBD_SERVER": url, "PATH": "/usr/bin:/bin"})
    return p.returncode, json.loads(p.stdout)["id"], p.stderr

# A client that never announced itself claims (nothing yet): it is present.
st, b = call("POST", "/v1/claim", {"worker_id": "bare-1", "types": ["t.a"], "queues": ["q1"]})
check("a bare claim answers", st == 200 and b["jobs"] == [], b)
w = workers().get("bare-1")
check("a bare claimer is listed", w is not None, workers())
if w:
    check("with the queues and types it claims",
          w["queues"] == ["q1"] and w["types"] == ["t.a"] and w["state"] == "active", w)

rc, jid, err = submit("t.a", "q1")
check("submit of a type it claims: no warning", rc == 0 and "no live worker" not in err, err)
rc, _, err = submit("t.nobody", "q1")
check("submit of a type nobody claims still warns", "no live worker" in err, err)

st, b = call("POST", "/v1/claim", {"worker_id": "bare-1", "types": ["t.a"], "queues": ["q1"],
                                   "lease_s": 60})
check("it claims the job", st == 200 and [j["id"] for j in b["jobs"]] == [jid], b)
check("and holds it", workers()["bare-1"]["running"] == [jid], workers())

# A worker that announced itself keeps what it said when it then claims.
st, _ = call("POST", "/v1/workers", {"id": "real", "pid": 42, "types": ["t.b"],
                                      "heartbeat_ms": 600000})
check("an announce", st == 200)
st, _ = call("POST", "/v1/workers/real/presence", {"draining": True})
st, b = call("POST", "/v1/claim", {"worker_id": "real", "types": ["t.c"]})
w = workers()["real"]
check("its claim keeps its announce and its draining flag",
      st == 200 and w["pid"] == 42 and w["types"] == ["t.b"] and w["queues"] == []
      and w["state"] == "draining", w)

# --max-workers 2: bare-1 and real are kept; a third claimer is not listed
# but still gets its job.
rc, jid2, _ = submit("t.d", "q2")
st, b = call("POST", "/v1/claim", {"worker_id": "bare-3", "types": ["t.d"], "queues": ["q2"]})
check("a claim beyond --max-workers still gets its job",
      st == 200 and [j["id"] for j in b["jobs"]] == [jid2], b)
check("and is not listed", "bare-3" not in workers(), workers())
sys.exit(1 if fails else 0)
PY
    stop
}

store=sqlite
run_store "sqlite:$dir/jobs.db"

if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
    [ "${JOBD_TEST_REQUIRE_PG:-0}" = 1 ] && { echo "FAIL: JOBD_TEST_PG_URL is not set"; exit 1; }
    echo "PostgreSQL: skipped (no JOBD_TEST_PG_URL)"
else
    store=postgres
    pgdb="jobd_claimpres_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null || { echo "FAIL create database"; exit 1; }
    run_store "${JOBD_TEST_PG_URL%/*}/$pgdb"
fi
[ "$fails" -eq 0 ] || { echo "$fails store(s) failed"; exit 1; }
echo "all passed"
