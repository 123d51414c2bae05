#!/usr/bin/env bash
# Throwaway PostgreSQL 15 cluster for the benchmarks (a copy of bench/harness/pg.sh,
# so that jobd and the peers run on identically configured servers).
#
#   bench/pg.sh start    fresh cluster in $BENCH_PG_DIR (wiped first), prints its URL
#   bench/pg.sh stop     fast shutdown (data kept for inspection until the next start)
#   bench/pg.sh status   prints the URL if it runs, exits 1 otherwise
#   bench/pg.sh url      prints the URL
#   bench/pg.sh destroy  stop and remove the directory
#
# Listens on 127.0.0.1:55432 only (its Unix socket lives in the cluster
# directory), default durability (fsync=on, synchronous_commit=on,
# full_page_writes=on), shared_buffers=1GB, max_connections=200; every other
# setting is PostgreSQL's default so the numbers mean "stock PostgreSQL".
# The server runs as the unprivileged user $BENCH_PG_USER (default postgres).
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
DIR=${BENCH_PG_DIR:-/tmp/bench-pg}
PORT=${BENCH_PG_PORT:-55432}
RUNAS=${BENCH_PG_USER:-postgres}
DATA="$DIR/data"
URL="postgres://postgres@127.0.0.1:$PORT/postgres"

as_user() {
    if [ "$(id -un)" = "$RUNAS" ]; then "$@"; else runuser -u "$RUNAS" -- "$@"; fi
}

running() {
    [ -f "$DATA/postmaster.pid" ] && as_user "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

ensure_user() {
    if ! id "$RUNAS" >/dev/null 2>&1; then
        [ "$(id -u)" = 0 ] || { echo "pg.sh: user $RUNAS missing and not root" >&2; exit 1; }
        useradd --system --no-create-home --shell /usr/sbin/nologin "$RUNAS"
    fi
}

start() {
    if running; then echo "$URL"; return 0; fi
    ensure_user
    rm -rf "$DIR"
    mkdir -p "$DIR"
    chown "$RUNAS" "$DIR"
    chmod 700 "$DIR"
    as_user "$PGBIN/initdb" -D "$DATA" --username=postgres --auth=trust \
        --encoding=UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 \
        || { cat "$DIR/initdb.log" >&2; exit 1; }
    cat >>"$DATA/postgresql.conf" <<EOF

# --- bench/pg.sh ---
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
max_connections = 200
shared_buffers = 1GB
fsync = on
synchronous_commit = on
full_page_writes = on
logging_collector = off
log_min_messages = warning
EOF
    as_user "$PGBIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 60 start >/dev/null \
        || { tail -n 30 "$DIR/server.log" >&2; exit 1; }
    echo "$URL"
}

stop() {
    if running; then
        as_user "$PGBIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) running && echo "$URL" ;;
    url) echo "$URL" ;;
    destroy) stop; rm -rf "$DIR" ;;
    *) echo "usage: $0 start|stop|status|url|destroy" >&2; exit 2 ;;
esac
