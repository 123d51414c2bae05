#!/usr/bin/env bash
# test_worker_progress.sh — an exec handler's progress (issue 28 item 3;
# docs/WORKER.md, Progress): a real handler script writes a burst of JSON
# lines to its file descriptor 3, then the line it means to be seen, and
# waits; the job object (GET /v1/jobs/{id}) must show that last line while
# the job runs and after it succeeded. Through `jobd worker --db` on SQLite
# and on PostgreSQL (when JOBD_TEST_PG_URL is set, as under
# scripts/with-pg.sh) and through `jobd worker --server` (the route). A
# server on the same database reads the jobs in every case. Start-up and
# clean-up: tests/lib/server_worker.sh.
set -euo pipefail
. "$(dirname "$0")/../lib/server_worker.sh"
sw_init progress

cat >"$dir/slow.sh" <<SH
#!/bin/sh
i=0
while [ \$i -lt 300 ]; do
    echo "{\"percent\":\$((i / 10)),\"message\":\"burst \$i\"}" >&3
    i=\$((i + 1))
done
echo '{"percent":60,"message":"step 3 of 5","data":{"n":3}}' >&3
while [ ! -e "$dir/go" ]; do sleep 0.05; done
echo '{"ok":true}'
SH
chmod 755 "$dir/slow.sh"
printf '[worker]\nconcurrency = 1\nlease = 30s\nheartbeat = 10s\n\n[handler "slow"]\nexec = %s/slow.sh\n' \
    "$dir" >"$dir/worker.ini"

# progress_is ID STATUS: the job is STATUS with the script's last line as its progress.
progress_is() {
    curl -sfS "$server/v1/jobs/$1" >"$dir/pr.json" || return 1
    # Polled every 50 ms: Python (the exact check) only once grep sees the status and the percent.
    grep -q "\"status\": *\"$2\"" "$dir/pr.json" && grep -q '"percent": *60' "$dir/pr.json" || return 1
    python3 -c '
import json, sys
j = json.load(sys.stdin)
p = j.get("progress") or {}
ok = (j["status"] == sys.argv[1] and p.get("percent") == 60
      and p.get("message") == "step 3 of 5" and p.get("data") == {"n": 3} and p.get("at"))
sys.exit(0 if ok else 1)' "$2" <"$dir/pr.json"
}

run() { # DB WORKER-STORE-ARGS...
    local db=$1; shift
    rm -f "$dir/go"
    sw_server "$db"
    local wargs=("$@")
    [ "${wargs[0]}" = --server ] && wargs=(--server "$server")
    "$JOBD" worker "${wargs[@]}" --config "$dir/worker.ini" --id progress-worker \
        2>"$dir/worker.log" &
    wpid=$!
    local id
    id=$(curl -sfS -H 'Content-Type: application/json' -d '{"type":"slow"}' "$server/v1/jobs" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    sw_wait_for 60 "the handler's progress on a running job ($*)" progress_is "$id" running
    # jobd job show on a terminal prints it under the status
    script -qec "$JOBD job show $id --server $server" /dev/null >"$dir/show.txt" 2>&1 ||
        fail "jobd job show failed: $(cat "$dir/show.txt")"
    grep -Eq '^progress +60% step 3 of 5' "$dir/show.txt" ||
        fail "jobd job show does not print the progress: $(cat "$dir/show.txt")"
    touch "$dir/go"
    sw_wait_for 60 "the job to succeed with its progress ($*)" progress_is "$id" succeeded
    # a new job starts with none
    local id2
    id2=$(curl -sfS -H 'Content-Type: application/json' -d '{"type":"nope"}' "$server/v1/jobs" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    [ "$(curl -sfS "$server/v1/jobs/$id2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["progress"])')" = None ] ||
        fail "a job that never ran has a progress"
    sw_stop
    echo "ok: exec progress through fd 3 ($*)"
}

sw_each_store run
