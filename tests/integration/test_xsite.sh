#!/usr/bin/env bash
# test_xsite.sh — what a web page could make a browser send, refused by a
# real `jobd server` (src/api/xsite.h; docs/API.md, Conventions): a Host
# naming another server (DNS rebinding) is 403 host_not_allowed without
# tokens or with --allowed-hosts; a cross-site Origin or Sec-Fetch-Site is
# 403 cross_site_request; a body that is not application/json is 415, and
# nothing of it is written. What must keep working does: JSON with a
# charset, a bodyless cancel, the CLI, a link to the dashboard from another
# site, a proxy's name given with --allowed-hosts (flag, environment,
# config file), any name with tokens. Every API answer carries nosniff.
# The same through a browser: test_ui_xsite.sh.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-xsite.XXXXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$dir/log" 2>/dev/null || true; exit 1; }
unset JOBD_LISTEN JOBD_DB JOBD_TOKENS JOBD_ALLOWED_HOSTS JOBD_SERVER JOBD_TOKEN

# start ARG...: a server on a free port of 127.0.0.1; sets $url and $port.
start() {
    stop
    : >"$dir/log"
    "$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 "$@" 2>"$dir/log" &
    pid=$!
    url=""
    for _ in $(seq 100); do
        url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
        [ -n "$url" ] && break
        kill -0 "$pid" 2>/dev/null || { pid=""; fail "the server exited: $*"; }
        sleep 0.1
    done
    [ -n "$url" ] || fail "the server did not start: $*"
    port=${url##*:}
}
stop() {
    [ -n "$pid" ] || return 0
    kill -TERM "$pid"
    wait "$pid" || fail "the server did not exit 0"
    pid=""
}
# code ARG...: the HTTP status of curl ARG...; the body goes to $dir/body.
code() { curl -s -o "$dir/body" -w '%{http_code}' "$@"; }
# expect STATUS CODE WHAT ARG...: the answer is STATUS with error code CODE.
expect() {
    local got
    got=$(code "${@:4}")
    [ "$got" = "$1" ] || fail "$3: $got, not $1: $(cat "$dir/body")"
    [ "$2" = - ] || grep -q "\"code\":\"$2\"" "$dir/body" || fail "$3: not $2: $(cat "$dir/body")"
}
njobs() { curl -sf "$url/v1/jobs?limit=1000" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))'; }
J=(-H 'Content-Type: application/json')

start
# ---- DNS rebinding: a name that is not this server's ----
expect 403 host_not_allowed "Host evil.example" -H "Host: evil.example:$port" "$url/v1/jobs"
grep -q "evil.example:$port" "$dir/body" || fail "the refusal does not name the Host"
expect 403 host_not_allowed "Host evil.example, the dashboard" -H "Host: evil.example:$port" "$url/ui/"
expect 403 host_not_allowed "Host evil.example, a POST" -H "Host: evil.example:$port" "${J[@]}" \
    -d '{"type":"rebound"}' "$url/v1/jobs"
for h in "localhost:$port" "127.0.0.1:$port" "[::1]:$port" 127.0.0.1; do
    expect 200 - "Host $h" -H "Host: $h" "$url/v1/jobs"
done
# Raw: HTTP/1.1 without Host is a 400, HTTP/1.0 without it passes.
raw() {
    python3 - "$port" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode())
data = b""
while True:
    c = s.recv(65536)
    if not c:
        break
    data += c
print(data.decode(errors="replace"))
PY
}
out=$(raw 'GET /v1/jobs HTTP/1.1\r\nConnection: close\r\n\r\n')
grep -q '^HTTP/1.1 400' <<<"$out" && grep -q missing_host <<<"$out" ||
    fail "HTTP/1.1 without Host was not a 400 missing_host: $out"
out=$(raw 'GET /healthz HTTP/1.0\r\n\r\n')
grep -q '^HTTP/1.1 200' <<<"$out" || fail "HTTP/1.0 without Host was refused: $out"

# ---- bodies that are not JSON: 415, nothing written ----
expect 415 unsupported_media_type "text/plain" -H 'Content-Type: text/plain' \
    -d '{"type":"plain"}' "$url/v1/jobs"
grep -q "text/plain" "$dir/body" || fail "the 415 does not name the type"
expect 415 unsupported_media_type "a form (curl -d)" -d '{"type":"form"}' "$url/v1/jobs"
expect 415 unsupported_media_type "a multipart form" -F 'type=multi' "$url/v1/jobs"
expect 415 unsupported_media_type "no Content-Type" -H 'Content-Type:' \
    --data-binary '{"type":"bare"}' "$url/v1/jobs"
expect 415 unsupported_media_type "text/plain bulk delete" -H 'Content-Type: text/plain' \
    -d '{"action":"delete","filter":{"queue":"default"}}' "$url/v1/jobs/bulk"
expect 415 unsupported_media_type "text/plain without a body" -X POST \
    -H 'Content-Type: text/plain' "$url/v1/queues/default/pause"
# Refused from the headers: a body over the limit is not even read (not 413).
head -c $((2 * 1024 * 1024)) /dev/zero >"$dir/big"
expect 415 unsupported_media_type "a 2 MiB text/plain body" -H 'Content-Type: text/plain' \
    --data-binary "@$dir/big" "$url/v1/jobs"
[ "$(njobs)" = 0 ] || fail "a refused request wrote a job"
expect 201 - "JSON" "${J[@]}" -d '{"type":"kept"}' "$url/v1/jobs"
expect 201 - "JSON with a charset" -H 'Content-Type: application/json; charset=utf-8' \
    -d '{"type":"kept"}' "$url/v1/jobs"
expect 200 - "a bodyless cancel" -X POST "$url/v1/jobs/1/cancel"
expect 200 - "a bodyless pause" -X POST "$url/v1/queues/default/pause"
expect 200 - "a bodyless resume" -X POST "$url/v1/queues/default/resume"

# ---- cross-site: another origin's page, another site's request ----
expect 403 cross_site_request "Origin of another port" -H "Origin: http://127.0.0.1:1" "${J[@]}" \
    -d '{"type":"xsite"}' "$url/v1/jobs"
grep -q "http://127.0.0.1:1" "$dir/body" || fail "the refusal does not name the Origin"
expect 403 cross_site_request "Origin null, bodyless" -H "Origin: null" -X POST "$url/v1/jobs/2/cancel"
expect 403 cross_site_request "Sec-Fetch-Site: cross-site" -H "Sec-Fetch-Site: cross-site" \
    -X DELETE "$url/v1/jobs/2"
expect 403 cross_site_request "Sec-Fetch-Site: cross-site, a GET" -H "Sec-Fetch-Site: cross-site" \
    "$url/v1/jobs"
[ "$(njobs)" = 2 ] || fail "a cross-site request changed the jobs"
expect 201 - "the server's own Origin" -H "Origin: $url" -H 'Sec-Fetch-Site: same-origin' \
    "${J[@]}" -d '{"type":"kept"}' "$url/v1/jobs"
expect 200 - "a link to the dashboard from another site" -H 'Sec-Fetch-Site: cross-site' "$url/ui/"

# ---- nosniff on every answer ----
for p in /v1/jobs /v1/jobs/999 /healthz /metrics /nope /ui/; do
    curl -s -D "$dir/h" -o /dev/null "$url$p"
    grep -qix 'x-content-type-options: nosniff.' "$dir/h" || fail "$p lacks nosniff"
    [ "$(grep -ic '^x-content-type-options' "$dir/h")" = 1 ] || fail "$p has nosniff twice"
done

# ---- the clients send JSON ----
export JOBD_SERVER=$url
"$JOBD" submit cli.job --payload '{"a":1}' >"$dir/out" || fail "jobd submit"
"$JOBD" job cancel 3 >/dev/null || fail "jobd job cancel"
"$JOBD" jobs cancel --type cli.job >/dev/null || fail "jobd jobs cancel"
unset JOBD_SERVER

# ---- --allowed-hosts: a proxy's name (flag, environment, file); bad values ----
start --allowed-hosts "jobd.test, other.test:9"
expect 200 - "an allowed name, any port" -H "Host: JOBD.test:$port" "$url/v1/jobs"
expect 200 - "an allowed name:port" -H "Host: other.test:9" "$url/v1/jobs"
expect 403 host_not_allowed "an allowed name, another port" -H "Host: other.test:$port" "$url/v1/jobs"
expect 201 - "the proxy's Origin" -H "Origin: https://jobd.test" "${J[@]}" -d '{"type":"p"}' \
    "$url/v1/jobs"
grep -q "answering Host names: IP addresses, localhost, jobd.test, other.test:9" "$dir/log" ||
    fail "the log does not say which names are answered"
JOBD_ALLOWED_HOSTS=env.test start
expect 200 - "\$JOBD_ALLOWED_HOSTS" -H "Host: env.test" "$url/v1/jobs"
printf '[server]\nallowed-hosts = file.test\n' >"$dir/server.ini"
start --config "$dir/server.ini"
expect 200 - "allowed-hosts in the file" -H "Host: file.test" "$url/v1/jobs"
expect 403 host_not_allowed "a name not in the file" -H "Host: env.test" "$url/v1/jobs"
stop
for bad in 'http://jobd.test' '*' 'a,,b' 'a:0' 'a/ui'; do
    set +e
    "$JOBD" server --db "sqlite:$dir/jobs.db" --allowed-hosts "$bad" 2>"$dir/err"; rc=$?
    set -e
    [ $rc = 2 ] && grep -q -- "--allowed-hosts must be" "$dir/err" ||
        fail "--allowed-hosts '$bad' was taken (rc $rc): $(cat "$dir/err")"
done

# ---- with tokens: any name (a rebinding page has no token), unless names are given ----
echo "xsite-admin-token-0123456789" >"$dir/tokens"
chmod 600 "$dir/tokens"
A=(-H 'Authorization: Bearer xsite-admin-token-0123456789')
start --tokens "$dir/tokens"
expect 401 unauthorized "tokens, another name, no token" -H "Host: jobd.example.org" "$url/v1/jobs"
expect 200 - "tokens, another name" "${A[@]}" -H "Host: jobd.example.org" "$url/v1/jobs"
expect 403 cross_site_request "tokens, a cross-site Origin" "${A[@]}" -H "Origin: http://evil.example" \
    "${J[@]}" -d '{"type":"t"}' "$url/v1/jobs"
expect 415 unsupported_media_type "tokens, text/plain" "${A[@]}" -H 'Content-Type: text/plain' \
    -d '{"type":"t"}' "$url/v1/jobs"
grep -q "answering any Host name" "$dir/log" || fail "the log does not say any name is answered"
start --tokens "$dir/tokens" --allowed-hosts jobd.example.org
expect 200 - "tokens and the allowed name" "${A[@]}" -H "Host: jobd.example.org" "$url/v1/jobs"
expect 403 host_not_allowed "tokens and another name" "${A[@]}" -H "Host: evil.example" "$url/v1/jobs"
stop
echo "ok: Host, Origin, Sec-Fetch-Site and Content-Type rules; --allowed-hosts; nosniff"
