#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL 15 cluster: initdb in a fresh
# temporary folder, owned by a non-root user, listening on a free loopback
# port. The cluster's URL is exported as JOBD_TEST_PG_URL (and its bin dir as
# JOBD_TEST_PG_BIN, its data dir as JOBD_TEST_PG_DATA, so scenario tests can
# restart it). The cluster is stopped and removed when the command ends,
# fails, or is interrupted. deadlock_timeout is 100 ms, not 1 s: the
# conformance case of crossed completion batches provokes deadlocks on
# purpose, and each costs its detection time.
#
#   scripts/with-pg.sh ctest --test-dir build-asan
set -euo pipefail

pgbin=${JOBD_PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$pgbin/initdb" ] || { echo "with-pg: no PostgreSQL 15 server in $pgbin (scripts/deps.sh installs it)" >&2; exit 3; }

runas=()
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "with-pg: no 'postgres' user to run the cluster as" >&2; exit 3; }
    runas=(runuser -u postgres --)
fi

dir=$(mktemp -d /tmp/jobd-pg.XXXXXX)
chmod 755 "$dir"
[ ${#runas[@]} -gt 0 ] && chown postgres "$dir"

cleanup() {
    "${runas[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"${runas[@]}" "$pgbin/initdb" -D "$dir/data" -U jobd --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 3; }

started=
for _ in 1 2 3 4 5 6 7 8 9 10; do
    port=$(( 20000 + RANDOM % 30000 ))
    if "${runas[@]}" "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c shared_buffers=256MB -c fsync=on -c deadlock_timeout=100ms" \
        start >/dev/null 2>&1; then
        started=1; break
    fi
done
[ -n "$started" ] || { echo "with-pg: PostgreSQL did not start:" >&2; tail -n 20 "$dir/pg.log" >&2; exit 3; }

export JOBD_TEST_PG_URL="postgresql://jobd@127.0.0.1:$port/postgres"
export JOBD_TEST_PG_BIN="$pgbin" JOBD_TEST_PG_DATA="$dir/data" JOBD_TEST_PG_PORT="$port"
export JOBD_TEST_PG_CTL="${runas[*]:+${runas[*]} }$pgbin/pg_ctl -D $dir/data -l $dir/pg.log"
echo "with-pg: throwaway PostgreSQL at $JOBD_TEST_PG_URL" >&2
set +e
"$@"
rc=$?
exit $rc
