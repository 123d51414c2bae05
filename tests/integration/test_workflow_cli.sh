#!/usr/bin/env bash
# test_workflow_cli.sh — workflows through the real binary (docs/CLI.md,
# `jobd workflow` and `jobd workflows`): `jobd workflow submit FILE|-`
# prints the id and each ref's job, says when an idempotency key replayed,
# and exits 2 with the server's one line naming the step it refused;
# `jobd workflow show` is the API's JSON when piped and on a terminal a
# tree (roots first, children under their parents, a step of two parents
# drawn once and then named "shown above"; colour unless NO_COLOR, ASCII
# outside a UTF-8 locale), and `jobd job show` of a step names both; `jobd workflows` lists them (JSON lines piped, a
# table on a terminal, --status, --name, --limit with the "more:" line
# that gets the next page); `jobd workflow cancel|retry|delete`. A diamond
# a -> b, c -> d runs on a real worker: a succeeds, b holds until told,
# c fails for good, so d waits, then is cancelled. On SQLite and PostgreSQL
# (JOBD_TEST_PG_URL, as under scripts/with-pg.sh), the worker on the store
# and over HTTP. Start-up and clean-up: tests/lib/server_worker.sh; needs
# curl, python3 and script(1).
set -euo pipefail
. "$(dirname "$0")/../lib/server_worker.sh"
sw_init wfcli
unset JOBD_TOKEN JOBD_SERVER

cat >"$dir/hold.sh" <<SH
#!/bin/sh
cat >/dev/null
while [ ! -e "$dir/go" ]; do sleep 0.05; done
echo '{"held":true}'
SH
printf '#!/bin/sh\ncat >/dev/null\necho "no upstream" >&2\nexit 65\n' >"$dir/fail.sh"
chmod 755 "$dir/hold.sh" "$dir/fail.sh"
cat >"$dir/worker.ini" <<INI
[worker]
concurrency = 4
heartbeat = 1s

[handler "wf.ok"]
exec = /bin/cat

[handler "wf.hold"]
exec = $dir/hold.sh

[handler "wf.fail"]
exec = $dir/fail.sh
INI

# run ARGS...: jobd with stdout in $dir/o, stderr in $dir/e; sets $rc.
run() { rc=0; "$JOBD" "$@" --server "$server" >"$dir/o" 2>"$dir/e" || rc=$?; }
# tty ARGS...: jobd on a pseudo-terminal (stdout, CRs removed, in $dir/t).
tty() { script -qec "$(printf '%q ' "$JOBD" "$@" --server "$server")" /dev/null | tr -d '\r' >"$dir/t"; }
py() { python3 -c "import json,sys; d=json.load(open('$dir/o')); $1"; }
wf_status() { # ID REF STATUS: the step's status is STATUS
    curl -sfS "$server/v1/workflows/$1" >"$dir/wfs" || return 1
    # Polled every 50 ms: Python (the exact check) only once grep sees STATUS.
    grep -q "\"status\": *\"$3\"" "$dir/wfs" || return 1
    python3 -c "import json,sys; s={x['ref']:x['status'] for x in json.load(sys.stdin)['steps']}; sys.exit(s.get('$2')!='$3')" <"$dir/wfs"
}

diamond() { # KEY: the diamond's JSON, named and keyed KEY
    cat <<JSON
{"name": "$1", "idempotency_key": "$1",
 "steps": [{"ref": "a", "type": "wf.ok", "payload": {"n": 1}},
           {"ref": "b", "type": "wf.hold", "depends_on": ["a"]},
           {"ref": "c", "type": "wf.fail", "depends_on": ["a"]},
           {"ref": "d", "type": "wf.ok", "depends_on": ["b", "c"]}]}
JSON
}

check_submit() {
    diamond "$key" >"$dir/diamond.json"
    run workflow submit "$dir/diamond.json"
    [ $rc -eq 0 ] && [ ! -s "$dir/e" ] || fail "workflow submit: rc=$rc $(cat "$dir/e")"
    wf=$(py 'print(d["id"])')
    py 'assert sorted(d["jobs"]) == ["a","b","c","d"], d' || fail "the ref->job map: $(cat "$dir/o")"
    jb=$(py 'print(d["jobs"]["b"])') jd=$(py 'print(d["jobs"]["d"])')
    cp "$dir/o" "$dir/first"
    run workflow submit - <"$dir/diamond.json"
    [ $rc -eq 0 ] && cmp -s "$dir/o" "$dir/first" || fail "the replay from stdin: $(cat "$dir/o")"
    grep -q "^jobd workflow submit: workflow $wf already exists for idempotency key $key (replayed)" "$dir/e" ||
        fail "the replay is not said on stderr: $(cat "$dir/e")"
    printf '{"name":"x","steps":[{"ref":"a","type":"t"},{"ref":"b","type":"t","depends_on":["zz"]}]}' \
        >"$dir/bad.json"
    run workflow submit "$dir/bad.json"
    [ $rc -eq 2 ] && [ ! -s "$dir/o" ] && [ "$(wc -l <"$dir/e")" -eq 1 ] &&
        grep -q "^jobd workflow submit: steps\[1\].depends_on: .*zz.*(HTTP 400)" "$dir/e" ||
        fail "an unknown ref: rc=$rc $(cat "$dir/e")"
    echo '{"name": ' >"$dir/bad.json"
    run workflow submit "$dir/bad.json"
    [ $rc -eq 2 ] && grep -q "^jobd workflow submit: .*bad.json is not valid JSON.*line" "$dir/e" ||
        fail "a file that is not JSON: rc=$rc $(cat "$dir/e")"
    run workflow submit "$dir/none.json"
    [ $rc -eq 2 ] && grep -q "^jobd workflow submit: cannot read" "$dir/e" || fail "a missing file: rc=$rc"
}

check_show() {
    run workflow show "$wf"
    curl -sfS "$server/v1/workflows/$wf" >"$dir/api"
    [ $rc -eq 0 ] && cmp -s <(tr -d '\n' <"$dir/o") <(tr -d '\n' <"$dir/api") ||
        fail "workflow show piped is not the API's JSON: $(cat "$dir/o")"
    NO_COLOR=1 LANG=C.UTF-8 LC_ALL= LC_CTYPE= tty workflow show "$wf"
    local ja jc
    ja=$(python3 -c "import json; print(json.load(open('$dir/first'))['jobs']['a'])")
    jc=$(python3 -c "import json; print(json.load(open('$dir/first'))['jobs']['c'])")
    cat >"$dir/want" <<TXT

a  succeeded  job $ja  wf.ok
├─ b  running  job $jb  wf.hold
│  └─ d  waiting  job $jd  wf.ok
└─ c  dead  job $jc  wf.fail
   └─ d  (job $jd, shown above)
TXT
    sed -n '/^$/,$p' "$dir/t" | diff "$dir/want" - || fail "the tree (above: want, got)"
    grep -q "^workflow  $wf  $key$" "$dir/t" && grep -q '^status    running$' "$dir/t" &&
        grep -q '^steps     4: 1 waiting, 1 running, 1 succeeded, 1 dead$' "$dir/t" ||
        fail "the header: $(head -6 "$dir/t")"
    tty job show "$jb"
    grep -Eq "^workflow +$wf$" "$dir/t" && grep -Eq '^step +b$' "$dir/t" ||
        fail "job show of a step names its workflow and step: $(cat "$dir/t")"
    NO_COLOR= TERM=xterm LANG=C LC_ALL= LC_CTYPE= tty workflow show "$wf"
    grep -q $'^|- \e\\[1mb\e\\[0m  \e\\[34mrunning\e\\[0m' "$dir/t" &&
        grep -q $'^   `- \e\\[1md\e\\[0m  (job' "$dir/t" && grep -q $'\e\\[31mdead' "$dir/t" ||
        fail "colour and ASCII lines: $(cat -v "$dir/t")"
}

check_list() {
    local i more
    for i in 1 2 3; do # newer, running (no worker has type wf.none); POST: curl costs less than an ASan jobd
        printf '{"name":"other-%s","steps":[{"ref":"x","type":"wf.none"}]}' "$key" |
            curl -sfS -o /dev/null -H 'Content-Type: application/json' --data-binary @- "$server/v1/workflows"
    done
    # (The PostgreSQL database is the same for its two runs: only what this
    # run made is counted, and it is the newest.)
    run workflows -n 4
    [ $rc -eq 0 ] && [ "$(wc -l <"$dir/o")" -eq 4 ] || fail "workflows piped: $(cat "$dir/o")"
    head -3 "$dir/o" | python3 -c "import json,sys; assert all(json.loads(l)['name']=='other-$key' and 'counts' in json.loads(l) for l in sys.stdin)" ||
        fail "the newest first: $(cat "$dir/o")"
    tail -1 "$dir/o" | grep -q "\"id\": *$wf," || fail "the oldest last: $(tail -1 "$dir/o")"
    run workflows --name "$key"
    [ "$(wc -l <"$dir/o")" -eq 1 ] && grep -q "\"id\": *$wf," "$dir/o" || fail "--name: $(cat "$dir/o")"
    run workflows -n 2
    more=$(sed -n 's/^more: jobd workflows --limit 2 --after \([0-9]*\)$/\1/p' "$dir/e")
    [ "$(wc -l <"$dir/o")" -eq 2 ] && [ -n "$more" ] || fail "-n 2: $(cat "$dir/o" "$dir/e")"
    run workflows -n 2 --after "$more"
    [ "$(wc -l <"$dir/o")" -eq 2 ] && tail -1 "$dir/o" | grep -q "\"id\": *$wf," ||
        fail "the next page: $(cat "$dir/o" "$dir/e")"
    run workflows --name "$key" -n 1
    [ "$(wc -l <"$dir/o")" -eq 1 ] && [ ! -s "$dir/e" ] || fail "an exact last page gives no more: line: $(cat "$dir/e")"
    run workflows --status bogus
    [ $rc -eq 2 ] && grep -q '^jobd workflows: ' "$dir/e" || fail "--status bogus: rc=$rc"
    tty workflows --name "$key"
    grep -Eq '^ID +NAME +STATUS +STEPS +CREATED_AT +COUNTS$' "$dir/t" &&
        grep -Eq "^ *$wf +$key +running +4 +20[0-9-]+T.* 1 waiting, 1 running, 1 succeeded, 1 dead$" "$dir/t" ||
        fail "the table: $(cat "$dir/t")"
}

# After b is let go: d is cancelled (c is dead), the workflow failed; the
# status filter finds it behind three newer running ones, a page of one.
check_failed() {
    touch "$dir/go"
    sw_wait_for 30 "d to be cancelled" wf_status "$wf" d cancelled
    run workflows --status failed -n 1
    [ "$(wc -l <"$dir/o")" -eq 1 ] && grep -q "\"id\": *$wf," "$dir/o" && grep -q '"failed"' "$dir/o" ||
        fail "--status failed: $(cat "$dir/o" "$dir/e")"
    NO_COLOR=1 LANG=C.UTF-8 tty workflow show "$wf"
    grep -q '^status    failed$' "$dir/t" && grep -q "^│  └─ d  cancelled  job $jd" "$dir/t" ||
        fail "the failed workflow: $(cat "$dir/t")"
}

check_actions() {
    rm -f "$dir/go"
    printf '{"name":"held","steps":[{"ref":"h","type":"wf.hold"},{"ref":"k","type":"wf.ok","depends_on":["h"]}]}' \
        >"$dir/held.json"
    run workflow submit "$dir/held.json"
    local w2
    w2=$(py 'print(d["id"])')
    sw_wait_for 30 "h to run" wf_status "$w2" h running
    run workflow delete "$w2"
    [ $rc -eq 1 ] && grep -q '^jobd workflow delete: .*(HTTP 409)' "$dir/e" || fail "delete of a running workflow: rc=$rc $(cat "$dir/e")"
    run workflow cancel "$w2"
    [ $rc -eq 0 ] && py "assert d['id'] == $w2 and len(d['steps']) == 2, d" ||
        fail "workflow cancel prints the workflow: rc=$rc $(cat "$dir/o" "$dir/e")"
    sw_wait_for 30 "k to be cancelled" wf_status "$w2" k cancelled
    sw_wait_for 30 "h to be cancelled" wf_status "$w2" h cancelled
    touch "$dir/go"
    run workflow retry "$w2"
    [ $rc -eq 0 ] && py "assert d['id'] == $w2 and d['status'] == 'running', d" ||
        fail "workflow retry prints the workflow: rc=$rc $(cat "$dir/o" "$dir/e")"
    sw_wait_for 30 "k to succeed after the retry" wf_status "$w2" k succeeded
    run workflow delete "$w2"
    [ $rc -eq 0 ] && [ ! -s "$dir/o" ] || fail "workflow delete: rc=$rc $(cat "$dir/e")"
    run workflow show "$w2"
    [ $rc -eq 1 ] && grep -q '^jobd workflow show: .*(HTTP 404)' "$dir/e" || fail "show after delete: rc=$rc"
    run workflow retry 999999
    [ $rc -eq 1 ] && grep -q '^jobd workflow retry: .*(HTTP 404)' "$dir/e" || fail "retry of no workflow: rc=$rc"
}

each() { # DB WORKER-STORE-ARGS...
    local db=$1
    shift
    rm -f "$dir/go"
    sw_server "$db"
    local wargs=("$@")
    [ "${wargs[0]}" = --server ] && wargs=(--server "$server")
    key="diamond-$RANDOM"
    check_submit
    "$JOBD" worker "${wargs[@]}" --config "$dir/worker.ini" 2>"$dir/worker.log" &
    wpid=$!
    sw_wait_for 30 "c to be dead" wf_status "$wf" c dead
    sw_wait_for 30 "b to run" wf_status "$wf" b running
    check_show
    check_list
    check_failed
    check_actions
    sw_stop
    echo "ok: workflow submit, show (tree), workflows, cancel, retry, delete ($db $*)"
}

server=http://127.0.0.1:1
run workflow show 1
[ $rc -eq 3 ] && grep -q '^jobd workflow show: ' "$dir/e" || fail "no server: rc=$rc, not 3"
run workflow frob 1
[ $rc -eq 2 ] && grep -q "^jobd workflow: unknown action 'frob'" "$dir/e" || fail "an unknown action: rc=$rc"
run workflow show x
[ $rc -eq 2 ] || fail "a bad ID: rc=$rc"
sw_each_store each
