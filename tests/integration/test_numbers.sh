#!/usr/bin/env bash
# test_numbers.sh — numbers come back as they were sent (docs/API.md,
# "Conventions", Numbers), through the real binary, on SQLite and on PostgreSQL: a
# payload of awkward reals and integers (0.1, 0.6, 1e300, 5e-324, -0.0,
# 1.5e-7, the largest double, 2^53+1, nested, beside strings that need
# escapes and non-ASCII) comes back as the same text from POST /v1/jobs,
# GET /v1/jobs/ID, POST /v1/claim, `jobd job show` and `jobd jobs` piped
# (JSON lines); a result reported through POST /v1/jobs/ID/complete comes
# back as sent; a `jobd worker --server` and a `jobd worker --db` whose
# handlers echo their payload (/bin/cat) report it as the result
# unchanged; the store keeps exactly that text (read with sqlite3 and
# psql); and on PostgreSQL a job made by SQL jobd.enqueue (through jsonb)
# answers its numbers as sent too. Assertions are on the exact text.
# Needs JOBD_BIN (set by CTest), python3, sqlite3; the PostgreSQL half
# needs JOBD_TEST_PG_URL (and psql) and fails without it under
# JOBD_TEST_REQUIRE_PG.
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-numbers.XXXXXX")
spid=""
wpid=""
dpid=""
pgdb=""
stop() {
    [ -n "$wpid" ] && kill -TERM "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    wpid=""
    [ -n "$dpid" ] && kill -TERM "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
    dpid=""
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    spid=""
}
cleanup() {
    stop
    [ -n "$pgdb" ] && psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb WITH (FORCE)" \
        >/dev/null 2>&1
    rm -rf "$dir"
}
trap cleanup EXIT
fails=0

cat >"$dir/worker.ini" <<'INI'
[worker]
lease = 30s
[handler "echo"]
exec = /bin/cat
timeout = 30s
INI
sed 's/"echo"/"echo.db"/' "$dir/worker.ini" >"$dir/worker-db.ini"

run_store() { # store URL, then the command that runs an SQL query on it
    : >"$dir/server.log" # emptied first: read below before the child truncates it, a previous server's log would give a dead port
    "$JOBD" server --db "$1" --listen 127.0.0.1:0 2>"$dir/server.log" &
    spid=$!
    local url=""
    for _ in $(seq 300); do
        url=$(sed -n 's|.*listening on \(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/server.log" | head -n 1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "server did not start:"; cat "$dir/server.log"; exit 1; }
    "$JOBD" worker --server "$url" --config "$dir/worker.ini" --id numbers-worker \
        2>"$dir/worker.log" &
    wpid=$!
    "$JOBD" worker --db "$1" --config "$dir/worker-db.ini" --id numbers-db-worker \
        2>"$dir/worker-db.log" &
    dpid=$!
    python3 - "$store" "$url" "$JOBD" "$2" <<'PY' || fails=$((fails + 1))
import json, shlex, subprocess, sys, time, urllib.error, urllib.request
store, url, jobd, sql = sys.argv[1:]
fails = 0

# Keys sorted and every number in its shortest form: the exact text that
# must come back. "\u001F" is how a control character is written back.
NUMS = ('{"a":0.6,"b":1e300,"c":0.1,"d":5e-324,"e":-0.0,"f":1.5e-7,'
        '"g":1.7976931348623157e308,"h":9007199254740993,"i":-9223372036854775808,'
        '"j":[1.0,-2.5,{"k":0.30000000000000004,"l":[100.0,1e21,0.000001]}],'
        '"s":"caf\u00e9 \u2713 \\"q\\" \\\\ \\t\\n\\u001F"}')
RESULT = '{"big":9007199254740993,"list":[0.1,1.5e-7],"neg":-0.0,"sum":0.6,"tiny":5e-324}'

def call(method, path, body=None):
    data = body.encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

def check(name, cond, detail=""):
    global fails
    print(("ok   " if cond else "FAIL ") + store + ": " + name + ("" if cond else " " + str(detail)))
    fails += 0 if cond else 1

def cli(*args):
    p = subprocess.run([jobd, *args], capture_output=True, text=True,
                       env={"JOBD_SERVER": url, "PATH": "/usr/bin:/bin"})
    return p.returncode, p.stdout, p.stderr

# The job the worker echoes, and one completed by hand.
st, text = call("POST", "/v1/jobs", '{"type":"echo","queue":"num","payload":' + NUMS + '}')
check("POST /v1/jobs answers the payload as sent", st == 201 and '"payload":' + NUMS + ',' in text,
      text)
echo_id = json.loads(text)["id"]
st, text = call("POST", "/v1/jobs", '{"type":"echo.db","queue":"num","payload":' + NUMS + '}')
check("a job for the --db worker", st == 201, text)
db_id = json.loads(text)["id"]
st, text = call("POST", "/v1/jobs", '{"type":"manual","queue":"num","payload":' + NUMS + '}')
check("a second job", st == 201, text)
man_id = json.loads(text)["id"]

st, text = call("GET", "/v1/jobs/%d" % man_id)
check("GET /v1/jobs/ID answers the payload as sent", st == 200 and '"payload":' + NUMS + ',' in text,
      text)

rc, out, err = cli("job", "show", str(man_id))
check("jobd job show (piped) prints the payload as sent",
      rc == 0 and '"payload":' + NUMS + ',' in out, out + err)

rc, out, err = cli("jobs", "--queue", "num")
lines = [l for l in out.splitlines() if l]
check("jobd jobs (piped) prints each job's payload as sent",
      rc == 0 and len(lines) == 3 and all('"payload":' + NUMS + ',' in l for l in lines), out + err)

# Claim and complete the manual job with a result of awkward numbers.
st, text = call("POST", "/v1/claim", '{"worker_id":"by-hand","types":["manual"],"lease_s":60}')
jobs = json.loads(text).get("jobs", []) if st == 200 else []
check("claimed with the payload as sent",
      len(jobs) == 1 and '"payload":' + NUMS + ',' in text, text)
if jobs:
    st, text = call("POST", "/v1/jobs/%d/complete" % man_id,
                    '{"attempt":%d,"lease_token":"%s","result":%s}'
                    % (jobs[0]["attempt"], jobs[0]["lease_token"], RESULT))
    check("complete answers the result as sent", st == 200 and '"result":' + RESULT in text, text)
st, text = call("GET", "/v1/jobs/%d" % man_id)
check("GET answers the result as sent", '"result":' + RESULT in text, text)
rc, out, err = cli("job", "show", str(man_id))
check("jobd job show prints the result as sent", rc == 0 and '"result":' + RESULT in out, out + err)

# The workers' handlers echo their payload: the result is the payload.
for jid, how in ((echo_id, "--server"), (db_id, "--db")):
    deadline = time.time() + 90
    status = ""
    while time.time() < deadline:
        st, text = call("GET", "/v1/jobs/%d" % jid)
        status = json.loads(text)["status"] if st == 200 else ""
        if status in ("succeeded", "dead"):
            break
        time.sleep(0.2)
    check("the %s worker ran its echo job" % how, status == "succeeded", text)
    check("its handler got the payload and its result came back as sent",
          '"result":' + NUMS + ',' in text, text)
# What the store keeps: the payloads and results as text, as sent (in the
# canonical form, whose escapes are lower case: "\u001f").
table = ("jobd.all_jobs" if store == "postgres" else
         "(SELECT id, payload, result FROM jobs UNION ALL SELECT id, payload, result FROM jobs_done)")
q = subprocess.run(shlex.split(sql) + ["SELECT payload, result FROM %s ORDER BY id" % table],
                   capture_output=True, text=True)
kept = NUMS.replace("\\u001F", "\\u001f")
check("the store keeps the payloads and results as sent",
      q.returncode == 0 and q.stdout.splitlines() == [kept + "|" + kept] * 2 + [kept + "|" + RESULT],
      q.stdout + q.stderr)
# PostgreSQL: a job made inside the application's transaction goes
# through jsonb, which writes 1e300 as its 301 digits; it still comes back
# as sent (-0.0 is left out: jsonb's numeric has no negative zero).
if store == "postgres":
    SQLP = '{"a":0.6,"b":1e300,"d":5e-324,"f":1.5e-7,"h":9007199254740993,"n":-1e300}'
    q = subprocess.run(shlex.split(sql) + ["SELECT jobd.enqueue('sql.made', '%s')" % SQLP],
                       capture_output=True, text=True)
    check("jobd.enqueue in SQL", q.returncode == 0 and q.stdout.strip().isdigit(),
          q.stdout + q.stderr)
    if q.returncode == 0:
        st, text = call("GET", "/v1/jobs/%s" % q.stdout.strip())
        check("a job made by jobd.enqueue answers its payload as sent",
              st == 200 and '"payload":' + SQLP + ',' in text, text)
sys.exit(1 if fails else 0)
PY
    stop
}

store=sqlite
run_store "sqlite:$dir/jobs.db" "sqlite3 $dir/jobs.db"
[ "$fails" -eq 0 ] || { echo "--- worker logs"; cat "$dir/worker.log" "$dir/worker-db.log"; }

if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
    [ "${JOBD_TEST_REQUIRE_PG:-0}" = 1 ] && { echo "FAIL: JOBD_TEST_PG_URL is not set"; exit 1; }
    echo "PostgreSQL: skipped (no JOBD_TEST_PG_URL)"
else
    store=postgres
    pgdb="jobd_numbers_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null || { echo "FAIL create database"; exit 1; }
    run_store "${JOBD_TEST_PG_URL%/*}/$pgdb" "psql -qAtX ${JOBD_TEST_PG_URL%/*}/$pgdb -c"
fi
[ "$fails" -eq 0 ] || { echo "$fails store(s) failed"; exit 1; }
echo "all passed"
