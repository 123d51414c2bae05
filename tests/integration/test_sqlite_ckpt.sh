#!/usr/bin/env bash
# test_sqlite_ckpt.sh — a SQLite worker's WAL checkpoints run on a thread of
# their own (src/store/sqlite/ckpt.h), not on the loop thread that claims:
# a checkpoint there made the job just claimed wait for it (the tail of the
# "job due now" lateness). A real `jobd worker` runs 400 jobs enqueued in
# one batch through `jobd server` (the server then writes nothing, so the
# worker's claims and completions fill the WAL past the checkpoint mark
# several times); its thread "jobd-ckpt" must have written (the pages a
# checkpoint copies into the database: /proc/PID/task/TID/io), and the WAL
# must stay bounded.
# Needs JOBD_BIN (set by CTest); Linux only (/proc, inotify). Start-up and
# clean-up: tests/lib/server_worker.sh.
set -euo pipefail

. "$(dirname "$0")/../lib/server_worker.sh"
sw_init sqckpt

db="sqlite:$dir/jobs.db"
printf '[worker]\nconcurrency = 8\n\n[handler "noop"]\nexec = /bin/true\ntimeout = 10s\n' \
    >"$dir/worker.ini"

sw_server "$db"

n=400
python3 -c "import json; print(json.dumps({'jobs': [{'type': 'noop'} for _ in range($n)]}))" \
    >"$dir/batch.json"
code=$(curl -s -o "$dir/batch.out" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$dir/batch.json" "$server/v1/jobs/batch")
[ "$code" = 201 ] || fail "batch enqueue answered $code: $(head -c 300 "$dir/batch.out")"

sw_worker "$db" --config "$dir/worker.ini"
left=$n
for _ in $(seq 900); do
    left=$(sqlite3 "$dir/jobs.db" \
        "SELECT count(*) FROM jobs WHERE status IN ('pending', 'running')" 2>/dev/null) || left=$n
    [ "$left" -eq 0 ] && break
    kill -0 "$wpid" 2>/dev/null || fail "the worker exited"
    sleep 0.1
done
[ "$left" -eq 0 ] || fail "$left of $n jobs not done after 90 s"

wal=$(stat -c %s "$dir/jobs.db-wal")
echo "WAL at $wal bytes after $n jobs"
tid=""
for t in /proc/"$wpid"/task/*; do
    [ "$(cat "$t/comm")" = jobd-ckpt ] && tid=${t##*/}
done
[ -n "$tid" ] ||
    fail "the worker has no jobd-ckpt thread: $(cat /proc/"$wpid"/task/*/comm | sort | uniq -c | tr '\n' ' ')"
wrote=$(awk '/^wchar:/ { print $2 }' "/proc/$wpid/task/$tid/io")
[ "$wrote" -gt 0 ] || fail "the jobd-ckpt thread wrote nothing: the checkpoints ran elsewhere"
echo "jobd-ckpt thread wrote $wrote bytes"
# The loop checkpoints inline (and so restarts the WAL) at the latest when it
# holds 4000 frames (src/store/sqlite/open.c): ~16.5 MB with 4 KiB pages.
[ "$wal" -lt $((18 * 1024 * 1024)) ] || fail "the WAL grew to $wal bytes: nothing restarted it"
echo "PASS"
