#!/usr/bin/env bash
# test_docs.sh — the docs stand alone and keep up with the binary:
#  - every command of `jobd --help` has a `## \`jobd CMD\`` section in
#    docs/CLI.md, and every flag its `--help` prints is named in it;
#  - every `--help` text (and README.md and docs/ again, as scripts/lint-refs.py
#    checks them) points only at what a user of the repository has: never
#    at the spec files or the shared folder kept outside it ($pat below).
# Needs JOBD_BIN and JOBD_SRC (set by CTest).
set -uo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
SRC="${JOBD_SRC:?JOBD_SRC must point at the source tree}"
cli="$SRC/docs/CLI.md"
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

cmds=$("$JOBD" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$cmds" ] || fail "jobd --help lists no commands"
helps=$("$JOBD" --help)
for c in $cmds; do
    grep -q "^## \`jobd $c\`" "$cli" || fail "docs/CLI.md has no section '## \`jobd $c\`'"
    h=$("$JOBD" "$c" --help 2>&1) || fail "jobd $c --help exits non-zero"
    helps+=$'\n'"$h"
    # the command's own section: from its heading to the next one
    sec=$(awk -v h="## \`jobd $c\`" 'index($0, h) == 1 { on = 1; next } /^## / { on = 0 } on' "$cli")
    for flag in $(grep -oE '(^|[^a-z])--[a-z][a-z-]*|(^|[ [])-n [A-Z]' <<<"$h" | grep -oE -- '-(-[a-z][a-z-]*|n)' | sort -u); do
        grep -qF -- "$flag" <<<"$sec" || fail "jobd $c --help has $flag, its section in docs/CLI.md does not"
    done
done

pat='CONTRACT\.md|shared DESIGN|\.\./shared|/work/shar[e]d'
if grep -nE "$pat" "$SRC/README.md" "$SRC"/docs/*.md; then
    fail "README.md or docs/ point at files a user does not have (above)"
fi
if grep -nE "$pat" <<<"$helps"; then
    fail "a --help text points at files a user does not have (above)"
fi

# What a new user looks for first (README.md, docs/WORKER.md's opening).
readme="$SRC/README.md"
dups=$(grep -oE '^\| `docs/[A-Z]+\.md` \|' "$readme" | sort | uniq -d)
[ -z "$dups" ] || fail "README.md's table lists a file twice: $dups"
for d in "$SRC"/docs/*.md; do
    grep -qF "| \`docs/$(basename "$d")\` |" "$readme" || fail "README.md's table lacks docs/$(basename "$d")"
done
grep -q 'make run.*' "$readme" && grep -q 'reads JOBD_LISTEN .*JOBD_DB' "$readme" ||
    fail "README.md does not say that make run reads JOBD_LISTEN and JOBD_DB"
grep -q 'ctest --test-dir build-asan -R .*one test' "$readme" && grep -q '^TEST_FILTER=' "$readme" ||
    fail "README.md does not say how to run one test (ctest -R, a test binary with TEST_FILTER)"
head=$(sed -n '1,/^## /p' "$SRC/docs/WORKER.md")
for want in 'Payload on stdin' 'Result on stdout' 'Exit 65 = dead now' 'stderr = the error' \
            'The environment.*JOBD_JOB_ID'; do
    grep -q "^[0-9]\. \*\*$want" <<<"$head" || fail "docs/WORKER.md does not open with '$want'"
done

[ $fails -eq 0 ] && echo "ok docs: $(wc -w <<<"$cmds") commands, no pointers outside the repository"
exit $((fails > 0))
