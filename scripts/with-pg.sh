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
# Where: in memory (/dev/shm) when it is there, writable, lets programs run
# from it and has JOBD_TEST_SHM_MIN_MB (4096) free; else /tmp. The command
# gets TMPDIR set to a fresh folder beside the cluster, which the tests'
# temporary files and folders use (tests/test.h, mktemp): the code paths are
# the same, but an fsync of the cluster or of a test's SQLite file costs
# nothing in memory (store_conformance sqlite: half the time it takes on a
# disk). JOBD_TEST_TMP=DIR chooses the place (JOBD_TEST_TMP=/tmp: on disk).
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

# A place in memory if it can take the run: writable, not noexec (tests
# run scripts from their folders), and room to spare.
shm_usable() {
    local d=/dev/shm probe free_mb
    [ -d "$d" ] && [ -w "$d" ] || return 1
    free_mb=$(df -Pm "$d" 2>/dev/null | awk 'NR == 2 { print $4 }')
    [ -n "$free_mb" ] && [ "$free_mb" -ge "${JOBD_TEST_SHM_MIN_MB:-4096}" ] || return 1
    probe=$(mktemp "$d/jobd-probe.XXXXXX") || return 1
    printf '#!/bin/sh\nexit 0\n' >"$probe" && chmod 700 "$probe" && "$probe"
    local rc=$?
    rm -f "$probe"
    return $rc
}
base=${JOBD_TEST_TMP:-}
if [ -z "$base" ]; then
    base=/tmp
    shm_usable && base=/dev/shm
fi

dir=$(mktemp -d "$base/jobd-pg.XXXXXX")
chmod 755 "$dir"
[ ${#runas[@]} -gt 0 ] && chown postgres "$dir"
# The tests' TMPDIR: like /tmp, anyone may make files there (a test runs
# a worker's handler as another user), each keeps its own.
tmp=$(mktemp -d "$base/jobd-tmp.XXXXXX")
chmod 1777 "$tmp"

cleanup() {
    "${runas[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir" "$tmp"
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
export TMPDIR="$tmp"
# python3 through a version manager's shim (pyenv: a bash script that works
# out the version on every call) costs ~0.5 s of CPU a call, and the shell
# tests call python3 in their polling loops: the same interpreter, found
# once, goes first in PATH.
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ] &&
    [ "$(command -v python3)" != "$py" ]; then
    mkdir "$dir/bin"
    ln -s "$py" "$dir/bin/python3"
    export PATH="$dir/bin:$PATH"
fi
echo "with-pg: throwaway PostgreSQL at $JOBD_TEST_PG_URL, in $dir; TMPDIR=$tmp" >&2
set +e
"$@"
rc=$?
exit $rc
