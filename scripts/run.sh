#!/usr/bin/env bash
# `make run`: the main job on the embedded SQLite default. Starts
# `jobd server` with the example worker configuration when the server is
# built; until then it creates the database and shows what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${JOBD_DB:-sqlite:jobd.db}
if build/jobd server --help >/dev/null 2>&1; then
    echo "jobd: API on http://127.0.0.1:8080, store $db"
    echo "      try: build/jobd submit hello --payload '{\"name\":\"world\"}' && build/jobd jobs"
    # The embedded worker needs the worker plane in this build and the example config.
    worker=()
    if [ -f examples/worker.ini ] && build/jobd worker --help >/dev/null 2>&1; then
        worker=(--worker-config examples/worker.ini)
    fi
    exec build/jobd server --db "$db" "${worker[@]}"
fi
build/jobd migrate --db "$db"
