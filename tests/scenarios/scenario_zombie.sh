#!/usr/bin/env bash
# scenario_zombie.sh — a worker frozen past its lease comes back.
# Injected: SIGSTOP of worker z (a remote worker, `--server`, so its reports
# go through the API, where fencing is counted) while its handler runs; the
# handler ends but z cannot report; its 6s lease runs out and the reaper
# hands the job on; worker w2 finishes it (a later attempt). Then SIGCONT:
# z sends its late report for its attempt, the server refuses it (409
# stale_attempt), the job keeps w2's result, and jobd_reports_fenced_total
# counts it. The attempt z runs is whichever starts on z, not assumed to be
# the first: a claim z gave back unstarted (the lease's end too close) has
# spent one, and every attempt waits on a gate file (handler.sh) that the
# scenario opens only once z is frozen, so the one z runs is still running
# when it is frozen however slow the machine (a fixed 3 s run before: time
# spent waiting, not checking). The lease is 6 s with a heartbeat every
# second: with
# 2 s (the worker stops a run 750 ms before its lease ends when no heartbeat
# was answered) a loaded machine delayed one heartbeat answer by 0.8 s and
# z stopped its own run before the freeze, so there was no zombie to fence.
# Short: 1 round; soak: 10.
source "$(dirname "$0")/lib.sh"
scen_init zombie
pg_newdb
rounds=1; [ "$SOAK" = 1 ] && rounds=10

start_server
write_worker_ini "$WORK/worker.ini" 6s 1s 1 "poll_interval = 200ms"

for r in $(seq 1 "$rounds"); do
    z=z-$r w2=w2-$r
    # The job first, then the worker; its run lasts until the gate opens.
    gate="$WORK/gate-$r"
    id=$("$JOBD_BIN" submit scen --payload "{\"gate\":\"$gate\"}" --server "$SERVER_URL" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    echo "$id" >>"$WORK/expect"
    start_worker "$z" "$WORK/worker.ini" --server "$SERVER_URL"
    started() { compgen -G "$WORK/pids/$id.*" >/dev/null; }
    wait_until 30 "job $id to start on $z" started
    kill -STOP "${WPID[$z]}"
    za=$(compgen -G "$WORK/pids/$id.*" | head -n 1); za=${za##*.}
    log "round $r: froze worker $z (SIGSTOP) while it runs job $id attempt $za"
    touch "$gate" # z's handler ends now, z cannot report it; w2's run goes through
    wait_until 30 "the frozen worker's handler to end" test ! -e "$WORK/pids/$id.$za"

    start_worker "$w2" "$WORK/worker.ini"
    wait_job_succeeded 60 "$id" "job $id to succeed on $w2"
    a2=$(job_field "$id" attempt)
    [ "$a2" -gt "$za" ] || fail "job $id succeeded with attempt $a2, want a later one than $z's $za"
    [ "$(job_field "$id" worker_id)" = "$w2" ] || fail "job $id is held by $(job_field "$id" worker_id), want $w2"
    stop_pid "${WPID[$w2]}"

    fenced0=$(metric jobd_reports_fenced_total)
    kill -CONT "${WPID[$z]}"
    log "round $r: job $id succeeded on $w2 with attempt $a2; thawed $z (fenced so far: $fenced0)"
    fenced_more() { [ "$(metric jobd_reports_fenced_total)" -gt "$fenced0" ]; }
    wait_until 30 "the zombie's late report to be fenced" fenced_more
    fenced=$(metric jobd_reports_fenced_total)
    stop_pid "${WPID[$z]}"
    result=$(job_field "$id" result)
    log "round $r: jobd_reports_fenced_total $fenced0 -> $fenced; job $id result $result, status $(job_field "$id" status)"
    job_is "$id" status succeeded || fail "job $id is no longer succeeded after the late report"
    job_is "$id" attempt "$a2" || fail "job $id attempt changed after the late report"
    case $result in
        *"\"worker\": \"$w2\""*) ;;
        *) fail "job $id's result is not $w2's: $result" ;;
    esac
done

fenced=$(metric jobd_reports_fenced_total)
[ "$fenced" -ge "$rounds" ] || fail "jobd_reports_fenced_total is $fenced, want at least $rounds"
pg_dump_jobs "$WORK/jobs.json"
check_history --expect "$WORK/expect" || fail "the history checker found violations"
log "ok: $rounds zombie(s) fenced; jobd_reports_fenced_total $fenced"
