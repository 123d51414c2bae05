#!/usr/bin/env bash
# lint.sh — `make lint`: the checks a reviewer should not have to do by eye,
# the way curl runs checksrc in CI. Each is worth its noise:
#
#  1. format: every C file of src, tests, include, examples and bench is as
#     clang-format writes it (.clang-format). The tree was formatted whole
#     once (a commit of its own, nothing else in it: git blame
#     --ignore-rev skips it), so there is no older style left to spare.
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

status=0
step() { printf '== %s\n' "$1"; }

step "format (the whole tree; fix with: clang-format -i FILE)"
mapfile -t cfiles < <(git ls-files 'src/*.[ch]' 'tests/*.[ch]' 'include/*.h' 'examples/*.c' 'bench/*.[ch]')
if ! out=$(clang-format --dry-run --Werror "${cfiles[@]}" 2>&1); then
    grep -o '^[^ ]*:[0-9]*:[0-9]*' <<<"$out" | sort -t: -k1,1 -u | head -40
    echo "format: run clang-format -i on the files above"
    status=1
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
