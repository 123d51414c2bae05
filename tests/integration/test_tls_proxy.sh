#!/usr/bin/env bash
# test_tls_proxy.sh — packaging/nginx/jobd.conf, the TLS reverse proxy of
# docs/OPERATIONS.md, as written (only its ports and certificate paths
# substituted): nginx terminates TLS with a throwaway self-signed
# certificate and forwards to `jobd server --tokens`. Through it: /healthz,
# 401 without a token, a submit with one, a 2 MiB batch (past nginx's
# default body limit), and a long-poll claim held 2 s. Plain HTTP to the
# TLS port is refused.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-tls.XXXXXX")
chmod 755 "$dir"
spid="" npid=""
cleanup() {
    for p in $npid $spid; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$dir/server.log" "$dir/nginx.err" 2>/dev/null || true; exit 1; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || fail "nginx is missing (scripts/deps.sh installs nginx-light)"
unset JOBD_DB JOBD_SERVER JOBD_TOKEN JOBD_LISTEN

token=tttttttttttttttttttttttt
echo "$token" >"$dir/tokens"
: >"$dir/server.log"
"$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 --tokens "$dir/tokens" \
    2>"$dir/server.log" &
spid=$!
port=""
for _ in $(seq 100); do
    port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
    [ -n "$port" ] && break
    kill -0 "$spid" 2>/dev/null || fail "the server exited"; sleep 0.1
done
[ -n "$port" ] || fail "the server did not start"

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null ||
    fail "openssl could not make a certificate"
tls=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -e "s|server 127.0.0.1:8080;|server 127.0.0.1:$port;|" \
    -e "s|listen 443 ssl http2;|listen 127.0.0.1:$tls ssl http2;|" \
    -e "s|/etc/ssl/certs/jobd.example.org.pem|$dir/cert.pem|" \
    -e "s|/etc/ssl/private/jobd.example.org.key|$dir/key.pem|" \
    "$src/packaging/nginx/jobd.conf" >"$dir/site.conf"
grep -q "127.0.0.1:$tls ssl" "$dir/site.conf" && grep -q "$dir/cert.pem" "$dir/site.conf" ||
    fail "the example's listen or certificate lines changed; update this test's substitutions"
cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/nginx.err;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    include $dir/site.conf;
}
CONF
"$nginx" -t -p "$dir" -c "$dir/nginx.conf" 2>"$dir/nginx.t" || { cat "$dir/nginx.t"; fail "nginx -t"; }
"$nginx" -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' 2>>"$dir/nginx.err" &
npid=$!
base="https://127.0.0.1:$tls"
tcurl() { curl -s --cacert "$dir/cert.pem" "$@"; }
for _ in $(seq 50); do tcurl -o /dev/null "$base/healthz" && break; sleep 0.1; done

[ "$(tcurl "$base/healthz")" = ok ] || fail "GET /healthz through TLS"
[ "$(tcurl -o /dev/null -w '%{http_code}' "$base/v1/queues")" = 401 ] || fail "no token was not 401"
auth=(-H "Authorization: Bearer $token" -H 'Content-Type: application/json')
[ "$(tcurl -o "$dir/job" -w '%{http_code}' "${auth[@]}" -d '{"type":"echo"}' "$base/v1/jobs")" = 201 ] ||
    fail "submit through TLS: $(cat "$dir/job")"
python3 -c 'import json; print(json.dumps({"jobs":[{"type":"echo","payload":{"pad":"x"*20000}} for _ in range(100)]}))' \
    >"$dir/batch.json"
[ "$(stat -c %s "$dir/batch.json")" -gt 2000000 ] || fail "the batch is not over 2 MB"
[ "$(tcurl -o /dev/null -w '%{http_code}' "${auth[@]}" --data-binary "@$dir/batch.json" "$base/v1/jobs/batch")" = 201 ] ||
    fail "a 2 MB batch did not pass the proxy"
start=$(date +%s%N)
code=$(tcurl -o /dev/null -w '%{http_code}' "${auth[@]}" \
       -d '{"worker_id":"t","types":["nothing"],"limit":1,"wait_s":2}' "$base/v1/claim")
ms=$((($(date +%s%N) - start) / 1000000))
[ "$code" = 200 ] && [ $ms -ge 1900 ] || fail "long-poll claim through the proxy: $code after $ms ms"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$tls/healthz")" = 400 ] ||
    fail "plain HTTP to the TLS port was not refused"
echo "ok: nginx TLS proxy example: healthz, tokens, submit, 2 MB batch, long poll"
