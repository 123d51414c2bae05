#!/usr/bin/env bash
# bench/workflow_submit.sh — the time of one POST /v1/workflows of a large
# DAG through a real `jobd server` (docs/BENCHMARKS.md, "Workflow submit"):
# one root, STEPS-12 steps that each depend on it, 10 fan-in steps that each
# depend on a tenth of those (at most 1,000 parents a step), and a last step
# that depends on the 10. curl times the request end to end (send, parse,
# store, answer); the best and the median of RUNS submits are printed, each
# on a database that holds the workflows before it.
#
#   bench/workflow_submit.sh JOBD DB_URL [STEPS] [RUNS]   (one JSON line on stdout)
#
# DB_URL is a postgres:// database (its jobd schema is dropped first) or a
# sqlite: path (created afresh). STEPS defaults to 10000, RUNS to 5.
# With a throwaway PostgreSQL:
#   scripts/with-pg.sh sh -c 'bench/workflow_submit.sh build/jobd "$JOBD_TEST_PG_URL"'
set -euo pipefail

JOBD=${1:?usage: workflow_submit.sh JOBD DB_URL [STEPS] [RUNS]}
URL=${2:?database URL}
N=${3:-10000}
RUNS=${4:-5}
[ "$N" -ge 13 ] || { echo "workflow_submit.sh: STEPS must be at least 13" >&2; exit 2; }
work=$(mktemp -d /tmp/jobd-wfbench.XXXXXX)
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

case "$URL" in
sqlite:*) rm -f "${URL#sqlite:}" "${URL#sqlite:}"-wal "${URL#sqlite:}"-shm ;;
postgres://* | postgresql://*) psql -q "$URL" -c "DROP SCHEMA IF EXISTS jobd CASCADE" >/dev/null 2>&1 ;;
*)
    echo "workflow_submit.sh: DB_URL must be sqlite:PATH or postgres://…" >&2
    exit 2
    ;;
esac

python3 - "$N" >"$work/wf.json" <<'EOF'
import json, sys
n = int(sys.argv[1])
mid = n - 12
steps = [{"ref": "root", "type": "extract"}]
steps += [{"ref": f"t{i}", "type": "transform", "payload": {"part": i}, "depends_on": ["root"]}
          for i in range(mid)]
per = -(-mid // 10)
steps += [{"ref": f"g{g}", "type": "merge",
           "depends_on": [f"t{i}" for i in range(g * per, min(mid, (g + 1) * per))]}
          for g in range(10)]
steps.append({"ref": "last", "type": "load", "depends_on": [f"g{g}" for g in range(10)],
              "on_parent_failure": "run"})
json.dump({"name": "bench", "steps": steps}, sys.stdout)
EOF

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$JOBD" server --db "$URL" --listen "127.0.0.1:$port" >"$work/server.log" 2>&1 &
spid=$!
for _ in $(seq 300); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done

times=()
for r in $(seq "$RUNS"); do
    out=$(curl -sS -o "$work/answer.json" -w '%{http_code} %{time_total}' \
        -H 'Content-Type: application/json' --data-binary "@$work/wf.json" \
        "http://127.0.0.1:$port/v1/workflows")
    code=${out%% *}
    if [ "$code" != 201 ]; then
        echo "workflow_submit.sh: run $r answered $code: $(head -c 300 "$work/answer.json")" >&2
        exit 1
    fi
    [ "$(jq '.jobs | length' "$work/answer.json")" = "$N" ] || { echo "workflow_submit.sh: not $N jobs" >&2; exit 1; }
    times+=("${out#* }")
done
printf '%s\n' "${times[@]}" | sort -n | awk -v n="$N" -v url="${URL%%:*}" '
    { t[NR] = $1 } END { printf "{\"route\":\"POST /v1/workflows\",\"steps\":%d,\"store\":\"%s\",\"runs\":%d,\"best_s\":%.3f,\"median_s\":%.3f}\n", n, url, NR, t[1], t[int((NR + 1) / 2)] }'
