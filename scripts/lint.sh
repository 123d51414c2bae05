#!/usr/bin/env bash
# lint.sh — `make lint`: the checks a reviewer should not have to do by eye,
# the way curl runs checksrc in CI. Each is worth its noise:
#
#  1. format: .clang-format describes the code as it is written. The code was
#     formatted by hand before it existed, so reformatting everything would
#     be churn that hides history; instead every line added or changed since
#     FORMAT_BASE (and any uncommitted change) must be as clang-format writes
#     it (git clang-format formats exactly those lines).
#  2. cppcheck, warnings and portability only (its style checks are noise
#     here): real bugs such as a use after free, a leak on a return path, a
#     wrong printf conversion.
#  3. scripts/lint-size.sh: files over 800 lines, functions over 80, backend
#     names outside src/store.
#  4. scripts/lint-refs.py: every document a comment or page cites is in
#     the repository (and every cited section is a heading of its page),
#     after its self-test shows that it catches a citation of a missing file.
#  4b. scripts/lint-banned.sh: calls of banned functions (sprintf, strcat,
#     atoi, strerror...), each printed as FILE:LINE with why and what to use
#     instead (docs/CHECKING.md, Banned functions).
#  5. docs/openapi.yaml against OpenAPI 3.1 and Redocly's recommended rules,
#     strict (redocly.yaml): a broken reference or an operation without
#     a summary is caught here, before the test drives the server with it.
#
# Exits 1 if any of them finds something; prints what and where.
set -uo pipefail
cd "$(dirname "$0")/.."

# The commit .clang-format was checked from: lines older than it are left as
# they are; lines newer must be formatted.
FORMAT_BASE=6f0afc7c9c97ddd52b4da184a414428fc1d25f34

status=0
step() { printf '== %s\n' "$1"; }

step "format (lines changed since ${FORMAT_BASE:0:12}; fix with: git clang-format --extensions c,h $FORMAT_BASE)"
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
    # A shallow clone has no history to tell changed lines from old ones.
    echo "format: not checked in a shallow clone (git fetch --unshallow to check)"
elif ! git cat-file -e "$FORMAT_BASE^{commit}" 2>/dev/null; then
    echo "FORMAT_BASE $FORMAT_BASE is not in this repository's history"
    status=1
else
    out=$(git clang-format --diff --extensions c,h "$FORMAT_BASE" -- src tests include \
          examples bench 2>&1)
    if grep -q '^diff --git\|^@@' <<<"$out"; then
        echo "$out"
        status=1
    fi
fi

step "cppcheck (warning, portability)"
# jansson's foreach macros come from a header cppcheck is not given (system
# headers are left out: slow, and not ours to check): cppcheck-jansson.cfg.
# commit.c: committer_enqueue links a stack item into the queue and waits
# until the committer thread has answered it before returning: not a bug.
cppcheck -q --std=c11 --enable=warning,portability --error-exitcode=1 -j2 \
    -I src -I include --suppress=missingIncludeSystem \
    --suppress=autoVariables:src/api/commit.c \
    -D__GNUC__ -U__cplusplus --library=scripts/cppcheck-jansson.cfg src || status=1

step "sizes and backend names (scripts/lint-size.sh)"
scripts/lint-size.sh || status=1

step "citations of files and sections (scripts/lint-refs.py)"
if ! selftest=$(scripts/lint-refs.py --self-test); then
    echo "$selftest"
    status=1
fi
scripts/lint-refs.py || status=1

step "banned functions (scripts/lint-banned.sh)"
scripts/lint-banned.sh || status=1

step "docs/openapi.yaml (Redocly CLI, redocly.yaml)"
if tests/openapi/install.sh; then
    # No telemetry or update check: lint results must not depend on the network.
    REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
        tests/openapi/node_modules/.bin/redocly lint --config redocly.yaml \
        --format stylish docs/openapi.yaml || status=1
else
    status=1
fi

[ $status -eq 0 ] && echo "lint: clean" || echo "lint: FAILED"
exit $status
