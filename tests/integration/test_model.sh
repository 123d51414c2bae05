#!/usr/bin/env bash
# Model-checks the claim/lease/fencing protocol (model/lease.pml) with spin,
# then checks that the model has teeth: each mutant below removes one guard
# the C code relies on, and spin must find the resulting violation.
set -euo pipefail
src=${JOBD_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v spin >/dev/null || { echo "spin is not installed (scripts/deps.sh installs it)"; exit 1; }
work=$(mktemp -d /tmp/jobd-model.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

# verify FILE: prints spin's verdict line, returns the error count.
verify() {
    spin -a "$1" >/dev/null
    gcc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c
    ./pan -m100000 > out.txt 2>&1 || true
    grep -E "states, stored|assertion violated|errors:" out.txt | sed 's/^/    /'
    sed -n 's/.*errors: \([0-9]*\).*/\1/p' out.txt | head -n 1
}

fail=0
cp "$src/model/lease.pml" model.pml
echo "model: the protocol as built"
verify model.pml > verdict.txt
sed '$d' verdict.txt
errs=$(tail -n 1 verdict.txt)
if [ "$errs" != "0" ]; then echo "FAIL: spin found $errs violation(s) in the model"; fail=1; fi
grep -q "Search not completed" out.txt && { echo "FAIL: search incomplete (depth limit)"; fail=1; }

mutant() {
    local name=$1 from=$2 to=$3
    sed "s/$from/$to/" model.pml > mutant.pml
    if cmp -s model.pml mutant.pml; then echo "FAIL: mutant '$name' did not apply"; fail=1; return; fi
    echo "mutant: $name"
    local e
    e=$(verify mutant.pml | tail -n 1)
    if [ "$e" = "0" ]; then echo "FAIL: spin did not catch mutant '$name'"; fail=1; else echo "    caught"; fi
}
mutant "report without the attempt fence" ':: status == RUNNING \&\& attempt == a ->' ':: status == RUNNING ->'
mutant "reaper without the running guard" ':: atomic { status == RUNNING \&\& !lease_live ->' ':: atomic { !lease_live \&\& status != PENDING ->'
mutant "claim of a job that is not pending" 'status == PENDING \&\& !holding\[me\] ->' '!holding[me] ->'
mutant "retry that lowers attempt" 'status = PENDING; attempt_floor = attempt;' 'status = PENDING; attempt = 0;'

if [ $fail -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
