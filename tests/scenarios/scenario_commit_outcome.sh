#!/usr/bin/env bash
# scenario_commit_outcome.sh — a 503 never hides a write, a 201 never hides
# a loss (issue 27, item 2; docs/API.md, Errors).
# Injected: `jobd server` reaches PostgreSQL only through pg_commit_cut.py,
# which breaks the connection at the commit of a transaction that inserts
# jobs: 2 in 8 right after forwarding the commit (the server commits, the
# client hears nothing), 1 in 8 just before it (nothing commits).
# Driven: 300 POST /v1/jobs and 50 POST /v1/jobs/batch of 3, without
# idempotency keys, from 8 clients at once (so group commits batch them),
# each job marked in its payload.
# Checked in the store afterwards: every job answered 201 exists once with
# the id it was given, every job answered 503 does not exist, no job exists
# twice, no answer is anything else but the rare 504 commit_unknown (at
# most 2), and the proxy cut many commits of both kinds. Before the fix the
# server answered 503 for commits that happened.
# Then the rare case, where the server cannot learn the outcome: the proxy
# refuses new connections for 3 s after each cut after COMMIT, and the
# server (a test build) waits 300 ms for them ($JOBD_TEST_OUTCOME_WAIT_MS):
# those requests must be 504 commit_unknown, never 503, and the rest as
# above. 60 more enqueues.
# Short and soak alike: 510 jobs, ~60 cuts, about 15 s.
source "$(dirname "$0")/lib.sh"
scen_init commit_outcome
pg_newdb
DIRECT_URL=$DB_URL

port=$(free_port)
pg_port=$(python3 -c 'import sys, urllib.parse as u; print(u.urlparse(sys.argv[1]).port)' "$DB_URL")
python3 "$SCEN_DIR/pg_commit_cut.py" "$port" 127.0.0.1 "$pg_port" "$WORK/cut.pid" "$WORK/cuts" \
    >"$WORK/cut.log" 2>&1 &
SCEN_PIDS_ALL+=("$!")
wait_until 10 "the proxy to listen" test -s "$WORK/cut.pid"
log "proxy on port $port"
# The server's store goes through the proxy (no TLS: it reads the protocol).
PROXY_URL="postgresql://jobd@127.0.0.1:$port/${DIRECT_URL##*/}?sslmode=disable"
DB_URL=$PROXY_URL start_server
DB_URL=$DIRECT_URL
: >>"$WORK/cuts"

# drive MARKER SINGLES BATCHES: the requests from 8 clients; answers in $WORK/answers.MARKER.
drive() {
python3 - "$SERVER_URL" "$1" "$2" "$3" "$WORK/answers.$1" <<'EOF'
import json, sys, threading, urllib.request, urllib.error
url, marker, singles, batches, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
reqs = [("/v1/jobs", {"type": "scen", "payload": {"m": marker, "n": i}}, [i])
        for i in range(singles)]
for b in range(batches):
    ns = [1000 + 3 * b + k for k in range(3)]
    reqs.append(("/v1/jobs/batch",
                 {"jobs": [{"type": "scen", "payload": {"m": marker, "n": n}} for n in ns]}, ns))
answers, lock, nxt = [], threading.Lock(), [0]

def post(path, body):
    rq = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(rq, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")

def client():
    while True:
        with lock:
            if nxt[0] == len(reqs):
                return
            path, body, ns = reqs[nxt[0]]
            nxt[0] += 1
        code, got = post(path, body)
        ids = [got["id"]] if code == 201 and "id" in got else \
              [j["id"] for j in got.get("jobs", [])] if code == 201 else []
        with lock:
            answers.append({"ns": ns, "code": code, "ids": ids,
                            "error": got.get("error", {}).get("code")})

ts = [threading.Thread(target=client) for _ in range(8)]
for t in ts: t.start()
for t in ts: t.join()
json.dump(answers, open(out, "w"))
EOF
}

# check MARKER MAX_UNKNOWN MIN_UNKNOWN MIN_AFTER MIN_BEFORE: the answers
# against the store and the cuts of the phase ($WORK/cuts, then emptied).
check() {
    pg_sql "SELECT payload->>'n', count(*), min(id) FROM jobd.all_jobs
            WHERE payload->>'m' = '$1' GROUP BY 1" >"$WORK/stored.$1"
    python3 - "$WORK/answers.$1" "$WORK/stored.$1" "$WORK/cuts" "$2" "$3" "$4" "$5" <<'EOF' ||
import collections, json, sys
answers = json.load(open(sys.argv[1]))
stored = {}
for line in open(sys.argv[2]):
    n, count, first = line.strip().split("|")
    stored[int(n)] = (int(count), int(first))
cuts = collections.Counter(l.strip() for l in open(sys.argv[3]) if l.strip())
max_unknown, min_unknown, min_after, min_before = (int(v) for v in sys.argv[4:8])
codes = collections.Counter(a["code"] for a in answers)
print(f"answers {dict(codes)}, cuts {dict(cuts)}, jobs stored {len(stored)}")
bad = []
for a in answers:
    for k, n in enumerate(a["ns"]):
        count, first = stored.get(n, (0, 0))
        if count > 1:
            bad.append(f"job n={n} is stored {count} times")
        if a["code"] == 201 and (count != 1 or first != a["ids"][k]):
            bad.append(f"job n={n} was answered 201 id {a['ids'][k]} but is stored {count} time(s)")
        elif a["code"] == 503 and count != 0:
            bad.append(f"job n={n} was answered 503 ({a['error']}) but is stored (id {first})")
        elif a["code"] not in (201, 503, 504):
            bad.append(f"job n={n} was answered {a['code']} {a['error']}")
        elif a["code"] == 504 and a["error"] != "commit_unknown":
            bad.append(f"job n={n} was answered 504 {a['error']}")
if not min_unknown <= codes[504] <= max_unknown:
    bad.append(f"{codes[504]} answers were 504 commit_unknown, want {min_unknown}..{max_unknown}")
if cuts["after"] < min_after or cuts["before"] < min_before:
    bad.append(f"too few commits were cut to tell anything: {dict(cuts)}")
for b in bad[:20]:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF
        fail "phase $1: the answers do not match the store"
    : >"$WORK/cuts"
}

drive co1 300 50
check co1 2 0 15 6
grep -q 'warn api: store unavailable' "$WORK/server.log" ||
    fail "no 503 was logged: the commits cut before they were sent must answer 503"
log "ok: every 201 is stored once, every 503 is not stored, no job twice"

# The rare case: nothing to ask for 3 s after a cut; a test build gives up after 300 ms.
if grep -q JOBD_TEST_OUTCOME_WAIT_MS "$JOBD_BIN"; then
    stop_pid "$SERVER_PID"
    DB_URL=$PROXY_URL JOBD_TEST_OUTCOME_WAIT_MS=300 start_server
    DB_URL=$DIRECT_URL
    touch "$WORK/cuts.blackout"
    drive co2 60 0
    check co2 60 1 1 0
    log "ok: a commit whose outcome cannot be learned is 504 commit_unknown, never 503"
else
    log "the 504 phase needs a build with JOBD_TEST_HOOKS (JOBD_TEST_OUTCOME_WAIT_MS): not run"
fi
