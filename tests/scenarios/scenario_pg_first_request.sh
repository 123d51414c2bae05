#!/usr/bin/env bash
# scenario_pg_first_request.sh — the first requests after PostgreSQL comes
# back succeed. Injected: `pg_ctl restart -m fast` of a private cluster
# while the server idles with pooled connections. Those connections were
# closed by the old server; the store must notice that before sending on
# them (or resend a read once on a fresh one), so no request after the
# restart is answered 503: not /healthz, not a read, not an enqueue. While
# it is down, the 503 does not tell the client the database's address.
# Short and soak: 3 restarts.
source "$(dirname "$0")/lib.sh"
scen_init pg_first_request
pg_private_start
start_server

code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
enqueue() { code -H 'Content-Type: application/json' -d '{"type":"scen"}' "$SERVER_URL/v1/jobs"; }
# Warm the pool: a few requests at once, so more than one connection idles.
warm=()
for _ in 1 2 3 4; do enqueue >/dev/null & warm+=($!); done
wait "${warm[@]}"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$WORK/body")
for r in 1 2 3; do
    pg_ctl_priv -w -t 60 -m fast restart >"$WORK/pg_ctl.log" 2>&1 || fail "pg_ctl restart failed"
    log "restart $r: PostgreSQL is back"
    got="$(code "$SERVER_URL/healthz") $(code "$SERVER_URL/v1/jobs/$id") $(enqueue)"
    got="$got $(code "$SERVER_URL/v1/jobs?limit=5") $(enqueue) $(code "$SERVER_URL/healthz")"
    [ "$got" = "200 200 201 200 201 200" ] ||
        fail "restart $r: the first requests got '$got', want '200 200 201 200 201 200': $(head -c 300 "$WORK/body")"
    # Then four at once, so that every idle pooled connection is borrowed.
    par=()
    for k in 1 2 3 4; do
        curl -s -o /dev/null -w '%{http_code}\n' "$SERVER_URL/v1/jobs/$id" >"$WORK/par.$k" &
        par+=($!)
    done
    wait "${par[@]}"
    par=$(cat "$WORK"/par.* | tr '\n' ' ')
    [ "$par" = "200 200 200 200 " ] || fail "restart $r: four reads at once got '$par'"
done
log "after each of 3 restarts the first ten requests succeeded"

# While PostgreSQL is down, clients get a generic 503; where it failed
# (host and port) is for the server log only.
pg_ctl_priv -w -t 60 -m fast stop >"$WORK/pg_ctl.log" 2>&1 || fail "pg_ctl stop failed"
got=$(enqueue)
[ "$got" = 503 ] || fail "with PostgreSQL stopped an enqueue got $got, want 503"
grep -q store_unavailable "$WORK/body" || fail "503 without store_unavailable: $(cat "$WORK/body")"
grep -q -e "127.0.0.1" -e "$PRIV_PG_PORT" "$WORK/body" &&
    fail "the 503 tells the client where PostgreSQL is: $(cat "$WORK/body")"
grep -q "warn api: store unavailable.*$PRIV_PG_PORT" "$WORK/server.log" ||
    fail "the server log lacks the detail of the 503"
pg_private_start_again >/dev/null 2>&1 || fail "PostgreSQL did not start again"
got=$(enqueue)
[ "$got" = 201 ] || fail "after PostgreSQL came back the first enqueue got $got"
log "ok: the first requests after 3 restarts succeeded; a 503 keeps the address in the server log"
