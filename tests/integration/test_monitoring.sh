#!/usr/bin/env bash
# test_monitoring.sh — packaging/monitoring/: the Prometheus alert rules
# pass `promtool check rules` and their own `promtool test rules` cases
# (each alert fires on the series it is about, and only then); every metric
# the rules and the Grafana dashboard query is one a running `jobd server`
# exports on /metrics (so a renamed metric breaks this test, not the
# operator's alerts); the dashboard is valid JSON. And the metrics a
# dashboard needs, from the real server: jobd_queue_oldest_due_age_seconds
# by queue (0 for a queue whose only job is due later), jobd_workers by
# state, and the lateness and duration histograms by queue.
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
src=${JOBD_SRC:?JOBD_SRC is not set}
mon="$src/packaging/monitoring"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-mon.XXXXXX")
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v promtool >/dev/null || fail "promtool is missing (scripts/deps.sh installs prometheus)"

promtool check rules "$mon/jobd-alerts.yml" || fail "promtool check rules"
(cd "$mon" && promtool test rules jobd-alerts.test.yml) || fail "promtool test rules"
python3 -m json.tool "$mon/jobd-grafana.json" >/dev/null || fail "the dashboard is not JSON"

: >"$dir/log"
"$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 2>"$dir/log" &
spid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
    [ -n "$url" ] && break
    kill -0 "$spid" 2>/dev/null || fail "the server exited"; sleep 0.1
done
"$JOBD" submit echo --server "$url" >/dev/null
"$JOBD" submit echo --queue later --in 1h --server "$url" >/dev/null
post() { curl -sf -H 'Content-Type: application/json' -d "$2" "$url$1"; }
post /v1/workers '{"id":"w1","types":["echo"],"heartbeat_ms":60000}' >/dev/null || fail "announce w1"
post /v1/workers '{"id":"w2","types":["echo"],"heartbeat_ms":60000}' >/dev/null || fail "announce w2"
post /v1/workers/w2/presence '{"draining":true}' >/dev/null || fail "w2 draining"
sleep 1.1 # the job in queue default is due for a second at least
claim=$(post /v1/claim '{"worker_id":"w1","types":["echo"]}') || fail "claim"
id=$(sed -n 's/.*"id":\([0-9]*\).*/\1/p' <<<"$claim")
tok=$(sed -n 's/.*"lease_token":"\([0-9a-f]*\)".*/\1/p' <<<"$claim")
post "/v1/jobs/$id/complete" "{\"attempt\":1,\"lease_token\":\"$tok\"}" >/dev/null || fail "complete $id"
"$JOBD" submit echo --server "$url" >/dev/null
sleep 1.1
curl -sf "$url/metrics" >"$dir/metrics" || fail "GET /metrics"
has() { grep -Eq "$1" "$dir/metrics" || fail "/metrics lacks $1: $(grep -E "${1%%[\{ ]*}" "$dir/metrics" | head -5)"; }
has '^jobd_queue_oldest_due_age_seconds\{queue="default"\} [1-9][0-9]*\.[0-9]{3}$'
has '^jobd_queue_oldest_due_age_seconds\{queue="later"\} 0\.000$'
has '^jobd_workers\{state="active"\} 1$'
has '^jobd_workers\{state="draining"\} 1$'
has '^jobd_workers\{state="gone"\} 0$'
has '^jobd_job_lateness_seconds_count\{queue="default"\} 1$'
has '^jobd_job_lateness_seconds_bucket\{queue="default",le="\+Inf"\} 1$'
has '^jobd_job_duration_seconds_count\{queue="default"\} 1$'
has '^jobd_job_duration_seconds_count\{queue="\*"\} 0$'

exported=$(sed -n 's/^\(jobd_[a-z_]*\).*/\1/p' "$dir/metrics" | sort -u)
used=$(cat "$mon/jobd-alerts.yml" "$mon/jobd-grafana.json" | grep -oE '\bjobd_[a-z_]+' | sort -u)
[ -n "$used" ] || fail "the rules and the dashboard use no jobd metric"
for m in $used; do
    grep -qx "$m" <<<"$exported" || fail "$m is used by the rules or the dashboard but not exported"
done
echo "ok: alert rules checked and unit-tested, $(wc -w <<<"$used") metrics all exported"
