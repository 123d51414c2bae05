#!/usr/bin/env bash
# `make run`: builds build/jobd (with --build; quiet: it says that it builds,
# how long the build took, and shows the build's output only if it fails),
# then starts the jobd server with the example worker on the embedded SQLite
# default. Says where the API (and the dashboard, where this build has one)
# answers and which database it uses, then the server's own log follows.
# JOBD_DB and JOBD_LISTEN choose another store or address; CMAKE, JOBS and
# JOBD_RUN_BUILD (default build) the build's tool, parallelism and folder.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${JOBD_RUN_BUILD:-build}
if [ "${1:-}" = --build ]; then
    cmake=${CMAKE:-cmake}
    echo "make run: building $build/jobd (RelWithDebInfo; the output goes to $build/make-run.log)"
    t0=$(date +%s%N)
    "$cmake" -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJOBD_TESTS=OFF >/dev/null
    "$cmake" --build "$build" -j "${JOBS:-2}" >"$build/make-run.log" 2>&1 ||
        { cat "$build/make-run.log"; echo "make run: the build failed" >&2; exit 1; }
    ms=$((($(date +%s%N) - t0) / 1000000))
    printf 'make run: built in %d.%01ds\n' $((ms / 1000)) $((ms % 1000 / 100))
fi
db=${JOBD_DB:-sqlite:jobd.db}
listen=${JOBD_LISTEN:-127.0.0.1:8080}
case "$db" in
postgres://* | postgresql://*) where=$(sed 's|://\([^:@/]*\):[^@/]*@|://\1:***@|' <<<"$db") ;;
sqlite:*) where=$(realpath -m "${db#sqlite:}") ;;
*) where=$(realpath -m "$db") ;;
esac
echo "API:       http://$listen/v1/   (try: $build/jobd submit hello --payload '{\"name\":\"world\"}')"
if [ -d ui ]; then
    echo "dashboard: http://$listen/ui/"
fi
echo "database:  $where"
worker=()
[ -f examples/worker.ini ] && worker=(--worker-config examples/worker.ini)
exec "$build/jobd" server --db "$db" --listen "$listen" "${worker[@]}"
