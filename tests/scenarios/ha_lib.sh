# ha_lib.sh — helpers for the high-availability scenarios (sourced after
# lib.sh, not run): a Patroni cluster of two PostgreSQL 15 nodes in
# synchronous mode with one etcd, all on loopback ports picked at random,
# and a PgBouncer in transaction pooling mode. Everything is started under
# $WORK and stopped by ha_cleanup, which scen_cleanup's trap runs through
# SCEN_EXTRA_CLEANUP (also on failure).
#
# Patroni runs as the postgres user when the tests run as root (PostgreSQL
# refuses root); etcd does not care. Patroni 3.0 (Debian 12) talks to
# etcd 3.4 through its v3 JSON gateway (`etcd3:`), so etcd needs no
# --enable-v2.

HA_PIDS=()          # etcd, patroni and pgbouncer pids
HA_NODES=(pg1 pg2)
declare -A HA_PG_PORT=() HA_API_PORT=() HA_PATRONI_PID=()

ha_cleanup() {
    local p
    # Patroni first (it would restart PostgreSQL), then the postmasters it
    # left, then etcd and PgBouncer.
    for p in "${HA_PATRONI_PID[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    local n
    for n in "${HA_NODES[@]}"; do
        [ -f "$WORK/$n/postmaster.pid" ] || continue
        p=$(head -n 1 "$WORK/$n/postmaster.pid" 2>/dev/null || true)
        [ -n "$p" ] && grep -qs postgres "/proc/$p/cmdline" && kill -KILL "$p" 2>/dev/null || true
    done
    for p in "${HA_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
}
SCEN_EXTRA_CLEANUP=ha_cleanup

ha_need() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null || skip "$c is not installed (scripts/deps.sh installs it)"
    done
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || skip "running as root and there is no postgres user"
        # setpriv execs (runuser forks and stays the parent): $! is then the
        # service itself, which the EXIT trap can kill.
        HA_RUNAS=(setpriv --reuid=postgres --regid=postgres --init-groups)
        chown postgres "$WORK"
    else
        HA_RUNAS=()
    fi
}

# ha_etcd_start: one etcd member on two free loopback ports; sets HA_ETCD.
ha_etcd_start() {
    local cport pport
    cport=$(free_port) pport=$(free_port)
    HA_ETCD=127.0.0.1:$cport
    etcd --name e1 --data-dir "$WORK/etcd" \
        --listen-client-urls "http://$HA_ETCD" --advertise-client-urls "http://$HA_ETCD" \
        --listen-peer-urls "http://127.0.0.1:$pport" \
        --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
        --initial-cluster "e1=http://127.0.0.1:$pport" >"$WORK/etcd.log" 2>&1 &
    HA_PIDS+=($!)
    wait_until 30 "etcd to answer" curl -sf "http://$HA_ETCD/health"
    log "etcd pid ${HA_PIDS[-1]} at $HA_ETCD"
}

# ha_patroni_conf NODE: writes $WORK/NODE.yml. HA_MAX_CONN sets
# max_connections (default 100).
ha_patroni_conf() {
    local n=$1
    HA_PG_PORT[$n]=$(free_port)
    HA_API_PORT[$n]=$(free_port)
    mkdir -p "$WORK/sock-$n"
    cat >"$WORK/$n.yml" <<EOF
scope: jobd-ha
name: $n
log:
  level: INFO
restapi:
  listen: 127.0.0.1:${HA_API_PORT[$n]}
  connect_address: 127.0.0.1:${HA_API_PORT[$n]}
etcd3:
  hosts: $HA_ETCD
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    primary_start_timeout: 0
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: ${HA_MAX_CONN:-100}
        synchronous_commit: 'on'
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        shared_buffers: 32MB
        fsync: 'on'
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth: trust
  pg_hba:
    - local all all trust
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${HA_PG_PORT[$n]}
  connect_address: 127.0.0.1:${HA_PG_PORT[$n]}
  data_dir: $WORK/$n
  bin_dir: ${JOBD_TEST_PG_BIN:-/usr/lib/postgresql/15/bin}
  pgpass: $WORK/pgpass-$n
  authentication:
    superuser:
      username: jobd
      password: jobd
    replication:
      username: replicator
      password: replicator
    rewind:
      username: jobd
      password: jobd
  parameters:
    unix_socket_directories: $WORK/sock-$n
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
EOF
    [ ${#HA_RUNAS[@]} -gt 0 ] && chown postgres "$WORK/$n.yml" "$WORK/sock-$n"
    return 0
}

# ha_patroni_start NODE: starts (or restarts) Patroni for NODE.
ha_patroni_start() {
    local n=$1
    "${HA_RUNAS[@]}" patroni "$WORK/$n.yml" >>"$WORK/patroni-$n.log" 2>&1 &
    HA_PATRONI_PID[$n]=$!
    log "patroni $n pid $! (PostgreSQL 127.0.0.1:${HA_PG_PORT[$n]}, REST 127.0.0.1:${HA_API_PORT[$n]})"
}

# ha_role NODE: "primary", "replica" or "down", from Patroni's REST API.
ha_role() {
    local code
    code=$(curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:${HA_API_PORT[$1]}/primary" || true)
    case $code in
    200) echo primary ;;
    503) echo replica ;;
    *) echo down ;;
    esac
}

ha_other() { [ "$1" = pg1 ] && echo pg2 || echo pg1; }

# ha_primary: the node that Patroni says is the primary (none: prints nothing).
ha_primary() {
    local n
    for n in "${HA_NODES[@]}"; do
        [ "$(ha_role "$n")" = primary ] && { echo "$n"; return 0; }
    done
    return 1
}

# ha_sync_ok: a primary, and the other node streaming as its synchronous
# standby, in PostgreSQL's view and in Patroni's (the /sync key in etcd: only
# a standby named there may be promoted; until then Patroni restarts a
# crashed primary in place instead of failing over).
ha_sync_ok() {
    local p
    p=$(ha_primary) || return 1
    curl -sf -o /dev/null -m 1 "http://127.0.0.1:${HA_API_PORT[$(ha_other "$p")]}/sync" || return 1
    [ "$(psql -qXAt "postgresql://jobd@127.0.0.1:${HA_PG_PORT[$p]}/postgres" \
        -c "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync' AND state = 'streaming'" \
        2>/dev/null)" = 1 ]
}

# ha_cluster_start: etcd, two Patroni nodes; waits for a primary with a
# synchronous standby. Sets HA_URL (the multi-host URL) and DB_URL (same).
ha_cluster_start() {
    ha_etcd_start
    local n
    for n in "${HA_NODES[@]}"; do ha_patroni_conf "$n"; done
    ha_patroni_start pg1
    wait_until 90 "pg1 to become the primary" ha_primary
    ha_patroni_start pg2
    wait_until 120 "pg2 to stream as a synchronous standby" ha_sync_ok
    HA_URL="postgres://jobd@127.0.0.1:${HA_PG_PORT[pg1]},127.0.0.1:${HA_PG_PORT[pg2]}/postgres?target_session_attrs=read-write"
    DB_URL=$HA_URL
    log "Patroni cluster up: primary $(ha_primary); $HA_URL"
}

# ha_ctl ARGS...: patronictl on this cluster.
ha_ctl() { patronictl -c "$WORK/pg1.yml" "$@"; }

# ha_primary_url: a single-host URL of the current primary.
ha_primary_url() {
    local p
    p=$(ha_primary) || return 1
    echo "postgresql://jobd@127.0.0.1:${HA_PG_PORT[$p]}/postgres"
}

# ha_pgbouncer_start PG_PORT [POOL_SIZE]: PgBouncer in transaction pooling
# mode in front of the PostgreSQL on 127.0.0.1:PG_PORT (every database,
# user jobd, trust), with an admin console for SHOW POOLS. PgBouncer refuses
# to run as root: it runs as postgres then. Sets HA_BOUNCER_PORT.
ha_pgbouncer_start() {
    local pg_port=$1 size=${2:-8}
    HA_BOUNCER_PORT=$(free_port)
    printf '"jobd" ""\n' >"$WORK/userlist.txt"
    cat >"$WORK/pgbouncer.ini" <<EOC
[databases]
* = host=127.0.0.1 port=$pg_port user=jobd

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $HA_BOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $WORK/userlist.txt
pool_mode = transaction
default_pool_size = $size
max_client_conn = 500
admin_users = jobd
ignore_startup_parameters = extra_float_digits
EOC
    [ ${#HA_RUNAS[@]} -gt 0 ] && chown postgres "$WORK/userlist.txt" "$WORK/pgbouncer.ini"
    "${HA_RUNAS[@]}" pgbouncer "$WORK/pgbouncer.ini" >"$WORK/pgbouncer.log" 2>&1 &
    HA_PIDS+=($!)
    wait_until 20 "PgBouncer to answer" psql -qXAt "postgresql://jobd@127.0.0.1:$HA_BOUNCER_PORT/pgbouncer" -c "SHOW VERSION"
    log "PgBouncer $(pgbouncer --version | head -n 1 | awk '{print $2}') pid ${HA_PIDS[-1]} at 127.0.0.1:$HA_BOUNCER_PORT (transaction pooling, pool size $size)"
}

# ha_bouncer_pool DB: "CLIENTS SERVERS" — PgBouncer's client connections
# (active + waiting) and server connections (active, idle, used, tested,
# login) for DB, from SHOW POOLS.
ha_bouncer_pool() {
    psql -qXA -F'|' "postgresql://jobd@127.0.0.1:$HA_BOUNCER_PORT/pgbouncer" -c "SHOW POOLS" |
        awk -F'|' -v db="$1" '
            NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
            $col["database"] == db {
                c = $col["cl_active"] + $col["cl_waiting"]
                s = $col["sv_active"] + $col["sv_idle"] + $col["sv_used"] + $col["sv_tested"] + $col["sv_login"]
                print c, s; found = 1 }
            END { if (!found) print 0, 0 }'
}

# ---- the failover scenarios ------------------------------------------------

now_ns() { date +%s%N; }

# ha_wait_role NODE ROLE LIMIT: polls Patroni every 100 ms; prints the
# instant (ns) it first saw NODE in ROLE.
ha_wait_role() {
    local n=$1 role=$2 deadline=$((SECONDS + $3))
    until [ "$(ha_role "$n")" = "$role" ]; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.1
    done
    now_ns
}

# ha_promoted_at NODE AFTER_NS: the instant (ns) NODE's PostgreSQL logged
# "database system is ready to accept connections" (read-write: the end of
# its promotion) after AFTER_NS, from the server log Patroni passes on; or
# nothing yet. More exact than polling Patroni's REST API, whose answer
# trails the promotion by a loop or more.
ha_promoted_at() {
    python3 - "$WORK/patroni-$1.log" "$2" <<'PY'
import calendar, re, sys, time
pat = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) UTC \[\d+\] LOG:  "
                 r"database system is ready to accept connections$")
after = int(sys.argv[2])
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    m = pat.match(line.rstrip("\n"))
    if m:
        ns = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) * 10**9 + int(m.group(2)) * 10**6
        if ns > after:
            print(ns)
            break
PY
}

# ha_first_claim_after NS: the instant (ns) of the first claim the store
# committed after NS (a job's started_at), or nothing yet (also while no
# primary answers).
ha_first_claim_after() {
    pg_sql "SELECT (extract(epoch FROM min(started_at)) * 1000000000)::bigint FROM jobd.all_jobs
            WHERE started_at > to_timestamp($1 / 1000000000.0)" 2>/dev/null || true
}

# ha_healthz_windows FROM_NS TO_NS: for each server in the client's events,
# how long its /healthz was not 200 between FROM_NS and TO_NS: "URL:MS ...".
ha_healthz_windows() {
    python3 - "$WORK/events" "$1" "$2" <<'PY'
import sys
path, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
state, down = {}, {}
for line in open(path, encoding="utf-8"):
    t, kind, url, st = line.split()
    if kind != "healthz":
        continue
    t, ok = int(t), st == "200"
    down.setdefault(url, 0)
    prev = state.get(url)
    if prev is not None and not prev[1]:
        a, b = max(prev[0], lo), min(t, hi)
        if b > a:
            down[url] += b - a
    state[url] = (t, ok)
for url, (t, ok) in state.items():
    if not ok and hi > max(t, lo):
        down[url] += hi - max(t, lo)
print(" ".join(f"{u.split(':')[-1]}:{d // 1000000}" for u, d in sorted(down.items())))
PY
}

# ha_failover_run MODE: the body of scenario_patroni_switchover (MODE
# switchover: `patronictl switchover`) and scenario_patroni_failover (MODE
# kill: kill -9 of the primary's postmaster). Two servers and three workers
# on the multi-host URL; the client enqueues through both servers all along.
# Per round: the event, the promotion (Patroni's REST API), the first claim
# committed after it (processing resumed), both /healthz back, the old
# primary back as the synchronous standby. Then every acknowledged job must
# succeed exactly once (history checker). Prints one SUMMARY line.
ha_failover_run() {
    local mode=$1 rounds=1 r
    [ "$SOAK" = 1 ] && rounds=3
    # About 75 s each on 2 busy cores (a cluster to bootstrap, a replica to
    # clone and rewind): too long for `make test`. HA_SHORT=1 runs the short
    # version by hand.
    [ "$SOAK" = 1 ] || [ "${HA_SHORT:-0}" = 1 ] ||
        skip "the Patroni scenarios run in make soak (SOAK=1), or with HA_SHORT=1"
    ha_need etcd patroni patronictl
    ha_cluster_start
    SERVER_LOG_NAME=server1 start_server; local s1=$SERVER_URL
    SERVER_LOG_NAME=server2 start_server; local s2=$SERVER_URL
    write_worker_ini "$WORK/worker.ini" 5s 1s 4 "poll_interval = 1s"
    for w in w1 w2 w3; do start_worker "$w" "$WORK/worker.ini"; done
    : >"$WORK/expect"; : >"$WORK/events"
    python3 "$SCEN_DIR/ha_client.py" --servers "$s1,$s2" --expect "$WORK/expect" \
        --events "$WORK/events" --stop "$WORK/client.stop" --interval-ms 200 \
        >"$WORK/client.out" 2>"$WORK/client.log" &
    local client=$!
    SCEN_PIDS_ALL+=("$client")
    succeeded_ge() { [ "$(pg_count "status = 'succeeded'")" -ge "$1" ]; }
    wait_until 60 "the first 100 jobs to succeed" succeeded_ge 100
    local figures="" worst=0
    for r in $(seq 1 "$rounds"); do
        local old new t_event t_promote t_resume done_before
        old=$(ha_primary) || fail "no primary before round $r"
        new=$(ha_other "$old")
        done_before=$(pg_count "status = 'succeeded'")
        t_event=$(now_ns)
        if [ "$mode" = switchover ]; then
            ha_ctl switchover --leader "$old" --candidate "$new" --force >>"$WORK/patronictl.log" 2>&1 ||
                fail "patronictl switchover failed: $(tail -n 3 "$WORK/patronictl.log")"
        else
            local pm
            pm=$(head -n 1 "$WORK/$old/postmaster.pid")
            kill -KILL "$pm" || fail "cannot kill the postmaster $pm of $old"
        fi
        log "round $r: $mode of $old ($done_before jobs succeeded so far)"
        ha_wait_role "$new" primary 90 >/dev/null || fail "$new was not promoted within 90s"
        # Patroni calls it the primary as it asks PostgreSQL to promote: the
        # log line comes a moment later.
        local deadline=$((SECONDS + 30))
        until t_promote=$(ha_promoted_at "$new" "$t_event") && [ -n "$t_promote" ]; do
            [ $SECONDS -lt $deadline ] || fail "$new is the primary, but its log does not say it was promoted"
            sleep 0.1
        done
        deadline=$((SECONDS + 90))
        t_resume=
        while [ -z "$t_resume" ]; do
            t_resume=$(ha_first_claim_after "$t_promote")
            [ $SECONDS -lt $deadline ] || fail "no job was claimed within 90s of $new's promotion"
            [ -n "$t_resume" ] || sleep 0.1
        done
        local promote_ms=$(((t_promote - t_event) / 1000000)) resume_ms=$(((t_resume - t_promote) / 1000000))
        [ $resume_ms -gt "$worst" ] && worst=$resume_ms
        healthy() { curl -sf "$s1/healthz" >/dev/null && curl -sf "$s2/healthz" >/dev/null; }
        wait_until 60 "both servers' /healthz after round $r" healthy
        local t_healthy; t_healthy=$(now_ns)
        local down; down=$(ha_healthz_windows "$t_event" "$t_healthy")
        log "round $r: $new promoted ${promote_ms}ms after the $mode; first claim ${resume_ms}ms after the promotion; /healthz down (ms by server port) $down"
        figures="$figures r$r:promote=${promote_ms}ms,resume=${resume_ms}ms,healthz_down=[$down]"
        wait_until 180 "$old to rejoin as the synchronous standby" ha_sync_ok
        [ "$(ha_role "$old")" = replica ] || fail "$old did not come back as a replica"
        succeeded_ge $((done_before + 200)) || wait_until 60 "200 more jobs to succeed" succeeded_ge $((done_before + 200))
    done
    touch "$WORK/client.stop"
    wait "$client" || true
    local acked; acked=$(wc -l <"$WORK/expect")
    log "client: $(cat "$WORK/client.out")"
    drained() { [ "$(pg_count "status IN ('pending', 'running')")" = 0 ] && succeeded_ge "$acked"; }
    wait_until $((SOAK == 1 ? 600 : 180)) "every acknowledged job to finish" drained
    for w in w1 w2 w3; do stop_pid "${WPID[$w]}"; done
    pg_dump_jobs "$WORK/jobs.json"
    # --allow-extra: an enqueue whose answer was lost in the failover (its
    # COMMIT reached the standby, its reply never reached the client) may
    # exist without being acknowledged; it must then succeed once as well.
    check_history --expect "$WORK/expect" --allow-extra >"$WORK/check.out" 2>&1 ||
        { cat "$WORK/check.out"; fail "the history checker found violations"; }
    cat "$WORK/check.out"
    [ "$worst" -lt 15000 ] || fail "processing resumed only ${worst}ms after a promotion (target: under 15 s)"
    [ -n "$(awk '$2 == "healthz" && $4 != "200"' "$WORK/events")" ] ||
        fail "/healthz never showed the outage"
    local superseded; superseded=$(sed -n 's/.*runs [0-9]* recorded, \([0-9]*\) superseded.*/\1/p' "$WORK/check.out")
    local lease_stops; lease_stops=$(cat "$WORK"/worker-w*.log | grep -c "the lease ran out" || true)
    local extra; extra=$(sed -n 's/.*in the store (\([0-9]*\) beyond the expected).*/\1/p' "$WORK/check.out")
    echo "SUMMARY $SCEN_NAME: event=$mode rounds=$rounds $(cat "$WORK/client.out")" \
        "unacknowledged_but_committed=${extra:-?} superseded_runs=${superseded:-?} runs_stopped_at_lease_end=$lease_stops worst_resume_ms=$worst$figures checker=clean"
}
