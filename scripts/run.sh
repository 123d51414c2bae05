#!/usr/bin/env bash
# `make run`: jobd server with the example worker on the embedded SQLite
# default. Says where the API (and the dashboard, where this build has one)
# answers and which database it uses, then the server's own log follows.
# JOBD_DB and JOBD_LISTEN choose another store or address.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${JOBD_DB:-sqlite:jobd.db}
listen=${JOBD_LISTEN:-127.0.0.1:8080}
case "$db" in
postgres://* | postgresql://*) where=$(sed 's|://\([^:@/]*\):[^@/]*@|://\1:***@|' <<<"$db") ;;
sqlite:*) where=$(realpath -m "${db#sqlite:}") ;;
*) where=$(realpath -m "$db") ;;
esac
echo "API:       http://$listen/v1/   (try: build/jobd submit hello --payload '{\"name\":\"world\"}')"
if [ -d ui ]; then
    echo "dashboard: http://$listen/ui/"
fi
echo "database:  $where"
worker=()
[ -f examples/worker.ini ] && worker=(--worker-config examples/worker.ini)
exec build/jobd server --db "$db" --listen "$listen" "${worker[@]}"
