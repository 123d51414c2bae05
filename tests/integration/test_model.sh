#!/usr/bin/env bash
# Model-checks two protocols with spin (docs/CHECKING.md, Model checking):
# the claim/lease/fencing protocol (model/lease.pml) and dependencies, with
# the release of a waiting child inside its last parent's end
# (model/deps.pml). Then checks that each model has teeth: each mutant
# below removes one guard the C code relies on, or moves the release out of
# the parent's transition, and spin must find the resulting violation.
set -euo pipefail
src=${JOBD_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v spin >/dev/null || { echo "spin is not installed (scripts/deps.sh installs it)"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/jobd-model.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# verify FILE [SPIN FLAGS...]: prints spin's verdict lines, and as its last
# line the error count. $opt: gcc's optimisation; a full search wants -O2,
# a mutant found in a few thousand states is quicker at -O0 (compiling
# pan.c at -O2 costs 2-3 s). $hash: pan's hash table, default 2^24 slots
# (128 MiB, zeroed: ~0.5 s of CPU a run); a mutant's search, a few
# thousand states before its violation, takes 2^20 (8 MiB). Only the
# speed depends on it: stored states are compared whole (no bitstate), and
# a fuller table chains.
opt=-O2 hash=
verify() {
    local f=$1; shift
    spin "$@" -a "$f" >/dev/null
    gcc $opt -w -DSAFETY -DCOLLAPSE -o pan pan.c
    ./pan -m100000 $hash > out.txt 2>&1 || true
    grep -E "states, stored|assertion violated|errors:" out.txt | sed 's/^/    /'
    sed -n 's/.*errors: \([0-9]*\).*/\1/p' out.txt | head -n 1
}

fail=0
# model FILE: the protocol as built must verify, with a complete search.
model() {
    cp "$src/model/$1" model.pml
    echo "model: $1, the protocol as built"
    verify model.pml > verdict.txt
    sed '$d' verdict.txt
    local errs
    errs=$(tail -n 1 verdict.txt)
    if [ "$errs" != "0" ]; then echo "FAIL: spin found $errs violation(s) in $1"; fail=1; fi
    if grep -q "Search not completed" out.txt; then echo "FAIL: search of $1 incomplete (depth limit)"; fail=1; fi
}

# caught NAME WANT: after a verify, spin must have found a violation, and
# if WANT is given, the violated assertion's text must contain it.
caught() {
    local name=$1 want=${2:-} e
    e=$(tail -n 1 verdict.txt)
    if [ "$e" = "0" ]; then echo "FAIL: spin did not catch mutant '$name'"; fail=1; return; fi
    if [ -n "$want" ] && ! grep "assertion violated" out.txt | grep -qF -- "$want"; then
        echo "FAIL: mutant '$name' broke another property than the one expected ($want)"; fail=1; return
    fi
    echo "    caught"
}

# mutant NAME FROM TO [WANT]: model.pml with FROM replaced by TO (sed).
mutant() {
    local name=$1 from=$2 to=$3 want=${4:-}
    sed "s/$from/$to/" model.pml > mutant.pml
    if cmp -s model.pml mutant.pml; then echo "FAIL: mutant '$name' did not apply"; fail=1; return; fi
    echo "mutant: $name"
    opt=-O0 hash=-w20 verify mutant.pml > verdict.txt
    caught "$name" "$want"
}

# variant NAME WANT SPIN FLAGS...: model.pml compiled with flags (-D...).
variant() {
    local name=$1 want=$2; shift 2
    echo "variant: $name ($*)"
    opt=-O0 hash=-w20 verify model.pml "$@" > verdict.txt
    grep "assertion violated" verdict.txt || true
    caught "$name" "$want"
}

model lease.pml
mutant "report without the attempt fence" ':: status == RUNNING \&\& attempt == a ->' ':: status == RUNNING ->'
mutant "reaper without the running guard" ':: atomic { status == RUNNING \&\& !lease_live ->' ':: atomic { !lease_live \&\& status != PENDING ->'
mutant "claim of a job that is not pending" 'status == PENDING \&\& !holding\[me\] ->' '!holding[me] ->'
mutant "retry that lowers attempt" 'status = PENDING; attempt_floor = attempt;' 'status = PENDING; attempt = 0;'

# The child's claim asserts "early" (its text has j!=2); the end state
# asserts "stuck" (every job terminal).
early='(j!=2)'
stuck='&&(((status[2]==3)'
model deps.pml
mutant "release when any parent ends, not the last" \
    ':: status\[C\] == WAITING \&\& parents_ended ->' ':: status[C] == WAITING ->' "$early"
mutant "release of a child that no longer waits (a second release)" \
    ':: status\[C\] == WAITING \&\& parents_ended ->' ':: parents_ended ->' '(releases<=1)'
mutant "no release when a parent dies (only on success)" \
    ':: else -> status\[j\] = DEAD; RELEASE_NOW(j)' ':: else -> status[j] = DEAD' "$stuck"
mutant "no release when a parent is cancelled" \
    'status\[x\] = CANCELLED; ops++; RELEASE_NOW(x) }' 'status[x] = CANCELLED; ops++ }' "$stuck"
variant "release as a later step that a crash can skip" "$stuck" -DRELEASE_LATER
variant "the same, no operator: a worker killed before the release" "$stuck" -DRELEASE_LATER -DMAX_OPS=0

if [ $fail -eq 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
