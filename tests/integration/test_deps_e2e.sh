#!/usr/bin/env bash
# test_deps_e2e.sh — dependencies through the real binary (issue 29;
# docs/MODEL.md, Dependencies; docs/WORKER.md, Parents): `jobd submit
# --depends-on` makes a waiting job (`jobd jobs --status waiting` lists it),
# `jobd worker` runs the parent, and the child's exec handler reads its
# parents from the file $JOBD_PARENTS names (the parent's id, type, status
# and result), which is gone after the run. Through `jobd worker --db` on
# SQLite and on PostgreSQL (when JOBD_TEST_PG_URL is set, as under
# scripts/with-pg.sh) and through `jobd worker --server`. Start-up and
# clean-up: tests/lib/server_worker.sh.
set -euo pipefail
. "$(dirname "$0")/../lib/server_worker.sh"
sw_init deps

cat >"$dir/extract.sh" <<'SH'
#!/bin/sh
echo '{"rows":3}'
SH
cat >"$dir/load.sh" <<SH
#!/bin/sh
[ -n "\$JOBD_PARENTS" ] && [ -r "\$JOBD_PARENTS" ] || { echo "no JOBD_PARENTS" >&2; exit 1; }
echo "\$JOBD_PARENTS" >"$dir/path-\$JOBD_JOB_ID"
cp "\$JOBD_PARENTS" "$dir/parents-\$JOBD_JOB_ID.json"
echo '{"ok":true}'
SH
chmod 755 "$dir/extract.sh" "$dir/load.sh"
printf '[worker]\nconcurrency = 2\n\n[handler "extract"]\nexec = %s/extract.sh\n\n[handler "load"]\nexec = %s/load.sh\n' \
    "$dir" "$dir" >"$dir/worker.ini"

status_is() { # ID STATUS (polled: Python, the exact check, only once grep sees STATUS)
    curl -sfS "$server/v1/jobs/$1" >"$dir/st.json" && grep -q "\"status\": *\"$2\"" "$dir/st.json" &&
        [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' <"$dir/st.json")" = "$2" ]
}

run() { # DB WORKER-STORE-ARGS...
    local db=$1; shift
    sw_server "$db"
    local e l
    e=$("$JOBD" submit extract --server "$server" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    l=$("$JOBD" submit load --depends-on "$e" --on-parent-failure cancel --server "$server" 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["status"]=="waiting", j; print(j["id"])') ||
        fail "jobd submit --depends-on did not make a waiting job"
    "$JOBD" jobs --status waiting --server "$server" | grep -q "\"id\": *$l\b" ||
        fail "jobd jobs --status waiting does not list job $l"
    local wargs=("$@")
    [ "${wargs[0]}" = --server ] && wargs=(--server "$server")
    "$JOBD" worker "${wargs[@]}" --config "$dir/worker.ini" --id deps-worker 2>"$dir/worker.log" &
    wpid=$!
    sw_wait_for 60 "the child to succeed ($*)" status_is "$l" succeeded
    python3 - "$dir/parents-$l.json" "$e" <<'PY' || fail "JOBD_PARENTS held $(cat "$dir/parents-$l.json")"
import json, sys
p = json.load(open(sys.argv[1]))
assert isinstance(p, list) and len(p) == 1, p
q = p[0]
assert q["id"] == int(sys.argv[2]) and q["type"] == "extract", q
assert q["status"] == "succeeded" and q["result"] == {"rows": 3} and q["step"] is None, q
PY
    [ ! -e "$(cat "$dir/path-$l")" ] || fail "the JOBD_PARENTS file is still there after the run"
    sw_stop
    echo "ok: a child waits, runs after its parent and reads its parents ($*)"
}

sw_each_store run
