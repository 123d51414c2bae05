#!/usr/bin/env bash
# build.sh — installs the pinned devDependencies with `npm ci` when
# node_modules does not match package-lock.json, then compiles src/ into
# dist/ with tsc. scripts/test.sh and bench/clients.sh (`make bench`) call
# it; under one lock, since the sqlite and pg test runs may start together.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
exec 9>"$here/.install.lock"
flock 9
stamp="$here/node_modules/.jobd-lock.sha256"
want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "clients/node: npm ci (openapi-typescript, typescript; once per lockfile change)" >&2
    (cd "$here" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) || {
        echo "npm ci in clients/node failed (is https://registry.npmjs.org reachable?)" >&2
        exit 1
    }
    echo "$want" >"$stamp"
fi
(cd "$here" && node node_modules/typescript/bin/tsc -p tsconfig.json) || {
    echo "tsc: src/ does not compile" >&2
    exit 1
}
