#!/usr/bin/env bash
# test_lint_banned.sh — scripts/lint-banned.sh (run by `make lint`) catches
# banned calls and only them: on tests/fixtures/lint/banned.c it reports
# each line marked BANNED, as FILE:LINE with the name, and nothing else
# (members, longer names, comments and a lint-allow line are not calls),
# and fails; on clean.c it passes silently; and src/ as it is passes.
# docs/CHECKING.md, Banned functions.
set -uo pipefail
SRC="${JOBD_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}"
fx="$SRC/tests/fixtures/lint"
fails=0

out=$("$SRC/scripts/lint-banned.sh" "$fx/banned.c" 2>&1); rc=$?
want=$(grep -n 'BANNED' "$fx/banned.c" | sed -E 's/^([0-9]+):.*BANNED ([a-z]+).*/\1 \2/')
got=$(sed -nE 's#^.*/banned\.c:([0-9]+): ([a-z]+)\(\) is banned: .+; use .+$#\1 \2#p' <<<"$out")
if [ $rc -ne 1 ] || [ "$got" != "$want" ] || [ "$(wc -l <<<"$out")" -ne "$(wc -l <<<"$want")" ]; then
    echo "FAIL banned.c: want exit 1 and exactly these (line name):"; echo "$want"
    echo "got exit $rc:"; echo "$out"
    fails=$((fails + 1))
fi

out=$("$SRC/scripts/lint-banned.sh" "$fx/clean.c" 2>&1); rc=$?
if [ $rc -ne 0 ] || [ -n "$out" ]; then
    echo "FAIL clean.c: want exit 0 and no output, got $rc:"; echo "$out"
    fails=$((fails + 1))
fi

out=$(cd "$SRC" && scripts/lint-banned.sh 2>&1); rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL src/ calls banned functions:"; echo "$out"
    fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "3 passed, 0 failed"
exit $fails
