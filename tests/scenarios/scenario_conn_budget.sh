#!/usr/bin/env bash
# scenario_conn_budget.sh — every jobd process states and keeps to how many
# PostgreSQL connections it opens. A private cluster with max_connections =
# 30 serves 20 workers and one server: at their defaults (3 a worker, threads
# + 3 for the server) they would need 20 x 3 + 7 = 67 connections, and the
# workers past the 30th would fail to connect. Here each worker runs with
# --db-connections 1 (its loop alone, polling) and the server with
# --threads 8 --db-connections 7, while 16 HTTP clients hammer the server
# (twice its request connections). Sampled every 200 ms, pg_stat_activity
# must never show more than 20 worker and 7 server connections, no process
# may see "too many clients", and every job must succeed once (history
# checker). Short: 500 jobs; soak: 5,000.
source "$(dirname "$0")/lib.sh"
scen_init conn_budget
n=500; [ "$SOAK" = 1 ] && n=5000
workers=20 max_conn=30 server_budget=7
PG_MAX_CONN=$max_conn pg_private_start
base=$DB_URL
[ $((workers * 3 + 9 + 3)) -gt $max_conn ] || fail "max_connections $max_conn would not stop an unbounded design"

# application_name tells the server's connections from the workers'.
DB_URL="$base?application_name=jobd-server"
start_server --threads 8 --db-connections $server_budget
grep -q "at most $server_budget database connections" "$WORK/server.log" ||
    fail "the server does not state its connection budget: $(sed -n 2p "$WORK/server.log")"
DB_URL=$base
write_worker_ini "$WORK/worker.ini" 5s 1s 4 "poll_interval = 500ms"
submit_batch "$n" 0
t0=$SECONDS
for i in $(seq 1 $workers); do
    start_worker "w$i" "$WORK/worker.ini" --db "$base?application_name=jobd-worker" --db-connections 1
done

# 16 clients reading through the server, for as long as the jobs run (and
# for at least 3 requests each, on a machine too busy to answer quickly).
python3 - "$SERVER_URL" "$WORK/hammer.stop" >"$WORK/hammer.log" 2>&1 <<'EOF' &
import os, sys, threading, urllib.request, urllib.error
url, stop = sys.argv[1], sys.argv[2]
counts = {"ok": 0, "503": 0, "other": 0}
lock = threading.Lock()
def run():
    mine = 0
    while mine < 3 or not os.path.exists(stop):  # at least 3 answers each, however slow
        mine += 1
        try:
            with urllib.request.urlopen(url + "/v1/jobs?limit=50", timeout=30) as r:
                r.read(); k = "ok"
        except urllib.error.HTTPError as e:
            k = "503" if e.code == 503 else "other"
        except Exception:
            k = "other"
        with lock:
            counts[k] += 1
ts = [threading.Thread(target=run) for _ in range(16)]
for t in ts: t.start()
for t in ts: t.join()
print("requests ok=%d 503=%d other=%d" % (counts["ok"], counts["503"], counts["other"]))
EOF
hammer=$!
SCEN_PIDS_ALL+=("$hammer")

# sample: one query for both the connections and the jobs succeeded so far
# (sets done_).
max_w=0 max_s=0
sample() {
    local w s
    read -r w s done_ < <(pg_sql "SELECT count(*) FILTER (WHERE application_name = 'jobd-worker'),
                              count(*) FILTER (WHERE application_name = 'jobd-server'),
                              (SELECT count(*) FROM jobd.all_jobs WHERE status = 'succeeded')
                            FROM pg_stat_activity" | tr '|' ' ')
    [ "$w" -gt "$max_w" ] && max_w=$w
    [ "$s" -gt "$max_s" ] && max_s=$s
    return 0
}
deadline=$((SECONDS + (SOAK == 1 ? 1200 : 300)))
while :; do
    sample
    [ "$done_" -ge "$n" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || fail "the server died"
    [ $SECONDS -lt $deadline ] || fail "only $done_ of $n jobs succeeded in time"
    sleep 0.2
done
secs=$((SECONDS - t0))
touch "$WORK/hammer.stop"
wait "$hammer" || true
for i in $(seq 1 $workers); do stop_pid "${WPID[w$i]}"; done

log "peak connections: workers $max_w (budget $workers x 1), server $max_s (budget $server_budget); $(cat "$WORK/hammer.log")"
[ "$max_w" -le "$workers" ] || fail "the workers held $max_w connections, over their budget of $workers"
[ "$max_s" -le "$server_budget" ] || fail "the server held $max_s connections, over its budget of $server_budget"
[ "$max_w" -ge $((workers / 2)) ] || fail "only $max_w worker connections seen: the sampling saw nothing"
if grep -l "too many clients" "$WORK"/*.log; then fail "a process was refused a connection"; fi
grep -q "^requests ok=[1-9]" "$WORK/hammer.log" || fail "the HTTP clients got no answers: $(cat "$WORK/hammer.log")"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
echo "SUMMARY conn_budget: jobs=$n workers=$workers seconds=$secs max_connections=$max_conn" \
    "peak_worker_conns=$max_w/$workers peak_server_conns=$max_s/$server_budget" \
    "$(cat "$WORK/hammer.log") checker=clean"
log "ok: $workers workers and a server within $((workers + server_budget)) of $max_conn connections"
