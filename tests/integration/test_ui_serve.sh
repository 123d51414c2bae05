#!/usr/bin/env bash
# test_ui_serve.sh — the dashboard's files as `jobd server` serves them at
# /ui/, with tokens configured: no token needed for the page (its API calls
# need one); every /ui/ answer carries the Content-Security-Policy (no
# inline code, no framing) and nosniff; gzip when accepted, identical bytes
# once decompressed; 304 on a matching ETag; /ui redirects to /ui/; an
# unknown file is 404 and a POST 405; GET /v1/whoami tells the role; and
# the whole first load (every file the page can load) is at most 150 KB
# compressed.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-uiserve.XXXXXX")
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

printf 'ui-admin-token-0123456789 admin\nui-read-token-0123456789 read\n' >"$dir/tokens"
chmod 600 "$dir/tokens"
"$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 --tokens "$dir/tokens" \
    2>"$dir/log" &
spid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
    [ -n "$url" ] && break
    kill -0 "$spid" 2>/dev/null || fail "the server exited: $(cat "$dir/log")"
    sleep 0.1
done
[ -n "$url" ] || fail "the server did not say where it listens"

# status HEADERS-FILE BODY-FILE URL [curl args]: prints the status code.
fetch() {
    local h=$1 b=$2 u=$3
    shift 3
    curl -s -D "$h" -o "$b" -w '%{http_code}' "$@" "$u"
}
# hdr HEADERS-FILE NAME: the values of header NAME (any case; CR dropped; one
# a line) in $REPLY, with bash's builtins only: the loop below runs it for
# every file, where a sed and a tr a look cost more than the requests.
hdr() {
    local line out=""
    while IFS= read -r line; do
        line=${line%$'\r'}
        if [[ ${line,,} == "${2,,}:"* ]]; then
            line=${line#*:}
            out+=${out:+$'\n'}${line#"${line%%[! ]*}"}
        fi
    done <"$1"
    REPLY=$out
}
# header HEADERS-FILE NAME: prints them.
header() {
    hdr "$@"
    if [ -n "$REPLY" ]; then printf '%s\n' "$REPLY"; fi
}

code=$(fetch "$dir/h" "$dir/b" "$url/ui/")
[ "$code" = 200 ] || fail "GET /ui/ without a token: $code, want 200"
grep -q '<script type="module" src="js/main.js">' "$dir/b" || fail "/ui/ is not the dashboard"
csp=$(header "$dir/h" Content-Security-Policy)
case "$csp" in
"default-src 'self'; frame-ancestors 'none'"*) ;;
*) fail "Content-Security-Policy is '$csp'" ;;
esac
grep -q "unsafe-inline\|unsafe-eval" <<<"$csp" && fail "the CSP allows inline code: $csp"
[ "$(header "$dir/h" X-Content-Type-Options)" = nosniff ] || fail "no X-Content-Type-Options: nosniff"
header "$dir/h" Set-Cookie | grep -q . && fail "/ui/ sets a cookie"
grep -qi '<script>\|<style\| style=\| on[a-z]*=' "$dir/b" && fail "index.html has inline script or style"

# Every embedded file: the same bytes gzip-compressed when accepted; the
# compressed sizes add up to the first load (the page may load every one).
total=0
n=0
for f in $(cd "$src/ui" && find . -type f \( -name '*.html' -o -name '*.js' -o -name '*.css' \
    -o -name '*.svg' \) | sed 's|^\./||' | sort); do
    code=$(fetch "$dir/h" "$dir/raw" "$url/ui/$f")
    [ "$code" = 200 ] || fail "GET /ui/$f: $code"
    cmp -s "$dir/raw" "$src/ui/$f" || fail "/ui/$f differs from ui/$f"
    hdr "$dir/h" X-Content-Type-Options
    [ "$REPLY" = nosniff ] || fail "/ui/$f lacks nosniff"
    hdr "$dir/h" Content-Security-Policy
    [[ $REPLY == *"default-src 'self'"* ]] || fail "/ui/$f lacks the CSP"
    hdr "$dir/h" Content-Type
    case "$f" in
    *.js) [[ $'\n'$REPLY == *$'\n'text/javascript* ]] || fail "/ui/$f type" ;;
    *.css) [[ $'\n'$REPLY == *$'\n'text/css* ]] || fail "/ui/$f type" ;;
    esac
    code=$(fetch "$dir/h" "$dir/gz" "$url/ui/$f" -H 'Accept-Encoding: gzip')
    [ "$code" = 200 ] || fail "GET /ui/$f (gzip): $code"
    hdr "$dir/h" Content-Encoding
    [ "$REPLY" = gzip ] || fail "/ui/$f not gzip-encoded when accepted"
    gunzip -c "$dir/gz" | cmp -s - "$src/ui/$f" || fail "/ui/$f gzip does not decompress to the file"
    total=$((total + $(stat -c %s "$dir/gz")))
    n=$((n + 1))
done
[ "$n" -ge 5 ] || fail "only $n files embedded"
[ "$total" -le 153600 ] || fail "the first load is $total bytes compressed, over 150 KB"

# gzip;q=0 is a refusal.
fetch "$dir/h" "$dir/b" "$url/ui/app.css" -H 'Accept-Encoding: gzip;q=0, identity' >/dev/null
header "$dir/h" Content-Encoding | grep -q gzip && fail "gzip;q=0 still got gzip"

# Revalidation.
fetch "$dir/h" "$dir/b" "$url/ui/app.css" >/dev/null
etag=$(header "$dir/h" ETag)
[ -n "$etag" ] || fail "no ETag"
code=$(fetch "$dir/h" "$dir/b" "$url/ui/app.css" -H "If-None-Match: $etag")
[ "$code" = 304 ] || fail "If-None-Match with the ETag: $code, want 304"

code=$(fetch "$dir/h" "$dir/b" "$url/ui")
[ "$code" = 308 ] && [ "$(header "$dir/h" Location)" = /ui/ ] || fail "/ui: $code, want 308 to /ui/"
code=$(fetch "$dir/h" "$dir/b" "$url/ui/nope.js")
[ "$code" = 404 ] || fail "/ui/nope.js: $code, want 404"
header "$dir/h" Content-Security-Policy | grep -q "default-src 'self'" || fail "the 404 lacks the CSP"
code=$(fetch "$dir/h" "$dir/b" "$url/ui/" -X POST)
[ "$code" = 405 ] || fail "POST /ui/: $code, want 405"
code=$(fetch "$dir/h" "$dir/b" "$url/ui/../v1/queues" --path-as-is)
[ "$code" = 401 ] || [ "$code" = 404 ] || fail "/ui/../v1/queues: $code"

# The API still needs the token; whoami tells the role without one.
code=$(fetch "$dir/h" "$dir/b" "$url/v1/queues")
[ "$code" = 401 ] || fail "GET /v1/queues without a token: $code, want 401"
code=$(fetch "$dir/h" "$dir/b" "$url/v1/whoami")
[ "$code" = 200 ] && grep -q '"role": *"none"' "$dir/b" && grep -q '"tokens": *true' "$dir/b" ||
    fail "whoami without a token: $code $(cat "$dir/b")"
fetch "$dir/h" "$dir/b" "$url/v1/whoami" -H 'Authorization: Bearer ui-read-token-0123456789' >/dev/null
grep -q '"role": *"read"' "$dir/b" || fail "whoami with the read token: $(cat "$dir/b")"
fetch "$dir/h" "$dir/b" "$url/v1/whoami" -H 'Authorization: Bearer not-a-token-at-all-000' >/dev/null
grep -q '"role": *"none"' "$dir/b" && grep -q '"token_sent": *true' "$dir/b" ||
    fail "whoami with a bad token: $(cat "$dir/b")"
# The next firings of a schedule, by the server's cron and zone rules.
A='Authorization: Bearer ui-admin-token-0123456789'
code=$(fetch "$dir/h" "$dir/b" "$url/v1/schedules" -H "$A" -H 'Content-Type: application/json' \
    -d '{"name":"paris","cron":"30 3 * * *","timezone":"Europe/Paris","type":"echo"}')
[ "$code" = 201 ] || fail "POST /v1/schedules: $code $(cat "$dir/b")"
code=$(fetch "$dir/h" "$dir/b" "$url/v1/schedules/paris/next?count=3" -H "$A")
[ "$code" = 200 ] || fail "GET next: $code $(cat "$dir/b")"
python3 - "$dir/b" <<'PY' || fail "next firings: $(cat "$dir/b")"
import json, sys, datetime
d = json.load(open(sys.argv[1]))
assert d["timezone"] == "Europe/Paris" and len(d["next"]) == 3, d
ts = [datetime.datetime.fromisoformat(t.replace("Z", "+00:00")) for t in d["next"]]
now = datetime.datetime.now(datetime.timezone.utc)
assert all(t.minute == 30 and t.hour in (1, 2) for t in ts), ts   # 03:30 CET/CEST
assert now < ts[0] < ts[1] < ts[2] and (ts[2] - ts[0]).days == 2, ts
PY
for q in "count=0" "count=101" "count=x" "n=3"; do
    code=$(fetch "$dir/h" "$dir/b" "$url/v1/schedules/paris/next?$q" -H "$A")
    [ "$code" = 400 ] && grep -q invalid_query "$dir/b" || fail "next?$q: $code, want 400"
done
code=$(fetch "$dir/h" "$dir/b" "$url/v1/schedules/nope/next" -H "$A")
[ "$code" = 404 ] || fail "next of no such schedule: $code, want 404"
# A bad name is refused as by GET /v1/schedules/{name}: the same 400, word for word.
long=$(printf 'n%.0s' $(seq 1 300))
for name in "$long" "bad%20name"; do
    code=$(fetch "$dir/h" "$dir/b" "$url/v1/schedules/$name/next" -H "$A")
    code2=$(fetch "$dir/h" "$dir/b2" "$url/v1/schedules/$name" -H "$A")
    [ "$code" = 400 ] && [ "$code2" = 400 ] && cmp -s "$dir/b" "$dir/b2" ||
        fail "next of a bad name: $code $(cat "$dir/b"), want GET's $code2 $(cat "$dir/b2")"
done
echo "ok: /ui/ served with CSP and nosniff, $n files, first load $total bytes compressed"
