#!/usr/bin/env bash
# build.sh — installs the pinned devDependencies with `npm ci` when
# node_modules does not match package-lock.json, then compiles src/ into
# dist/ with tsc. scripts/test.sh and bench/clients.sh (`make bench`) call
# it; under one lock, since the sqlite and pg test runs may start together.
# tsc runs when what it reads changed since its last success (a hash of
# src/, tsconfig.json and the lockfile, kept in node_modules, not in the
# packed dist/) or dist/ lacks a file it makes: the second test run of a
# `make test` (sqlite, then pg) reuses the first one's dist/.
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
built="$here/node_modules/.jobd-dist.sha256"
have=$(cd "$here" && find src -type f -name '*.ts' | LC_ALL=C sort |
    xargs sha256sum tsconfig.json package-lock.json | sha256sum | cut -d' ' -f1)
if [ -f "$built" ] && [ "$(cat "$built")" = "$have" ] &&
    [ -f "$here/dist/index.js" ] && [ -f "$here/dist/index.d.ts" ]; then
    for f in "$here"/src/*.ts; do
        b=$(basename "$f" .ts)
        [ -f "$here/dist/$b.js" ] && [ -f "$here/dist/$b.d.ts" ] || { have=stale; break; }
    done
fi
if [ ! -f "$built" ] || [ "$(cat "$built")" != "$have" ]; then
    rm -f "$built"
    (cd "$here" && node node_modules/typescript/bin/tsc -p tsconfig.json) || {
        echo "tsc: src/ does not compile" >&2
        exit 1
    }
    echo "$have" >"$built"
fi
