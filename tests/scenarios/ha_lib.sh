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
        HA_RUNAS=(runuser -u postgres --)
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

# ha_primary: the node that Patroni says is the primary (none: prints nothing).
ha_primary() {
    local n
    for n in "${HA_NODES[@]}"; do
        [ "$(ha_role "$n")" = primary ] && { echo "$n"; return 0; }
    done
    return 1
}

# ha_sync_ok: a primary, and the other node streaming as its synchronous standby.
ha_sync_ok() {
    local p
    p=$(ha_primary) || return 1
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
