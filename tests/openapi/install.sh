#!/usr/bin/env bash
# install.sh — makes tests/openapi/node_modules match package-lock.json:
# Redocly CLI (make lint) and ajv (tests/integration/test_openapi.sh), from
# npm's registry, pinned by the lockfile. Runs `npm ci` only when the
# lockfile changed since the last install (a stamp in node_modules), under
# a lock so the lint and the test can both call it at once; install
# scripts are not run (none of these packages needs one).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for t in node npm; do
    command -v "$t" >/dev/null || {
        echo "openapi: $t is missing (scripts/deps.sh installs Debian's nodejs and npm)" >&2
        exit 1
    }
done
stamp="$here/node_modules/.jobd-lock.sha256"
want=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
exec 9>"$here/.install.lock"
flock 9
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && exit 0
echo "openapi: npm ci in tests/openapi (Redocly CLI, ajv; once per lockfile change)" >&2
(cd "$here" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) || {
    echo "openapi: npm ci failed (is https://registry.npmjs.org reachable?)" >&2
    exit 1
}
echo "$want" >"$stamp"
