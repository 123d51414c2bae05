#!/usr/bin/env bash
# handler.sh — the exec handler every scenario's workers run (type "scen").
#
# It records each run it makes as one line of the history file that
# check_history.py reads:
#
#     JOB_ID ATTEMPT WORKER START_NS END_NS
#
# appended with a single write(2) on an O_APPEND descriptor (bash's >> and
# one printf of a short line), so lines of concurrent runs never interleave.
# The line is written when the run ends, just before the exit that the
# worker reports: a run whose line is missing was killed before it ended.
# Each start is also appended to HISTORY.starts (JOB ATTEMPT WORKER START_NS).
#
# Environment: JOBD_JOB_ID and JOBD_ATTEMPT from the worker (docs/WORKER.md);
# SCEN_HISTORY (the history file), SCEN_WORKER (a name for the worker
# process, set by lib.sh when it starts the worker) and SCEN_PIDS (a folder:
# while it runs, the handler leaves its pid in JOB.ATTEMPT there, so a
# scenario can see that a job has started and can kill it).
#
# Payload: {"sleep_ms": N} makes the run last N ms; with "sleep_attempt": A
# only attempt A sleeps. {"gate": "FILE"} (an absolute path without quotes
# or backslashes) makes the run wait, after its sleep, until FILE exists:
# a scenario opens the gate once its fault is in place, so the run ends when
# the scenario needs it to, however slow the machine. The result (stdout) is
# {"worker": W, "attempt": A}: the store then says whose run it accepted.
# {"fail_attempts": N}: attempts 1..N fail, retryable (exit 1, after the
# history line: a failed run is a run that ended, never the accepted one).
# Pure bash apart from sleep(1), because a fork costs 10-25 ms here.
LC_ALL=C
start=$EPOCHREALTIME
id=${JOBD_JOB_ID:?JOBD_JOB_ID is not set}
attempt=${JOBD_ATTEMPT:?JOBD_ATTEMPT is not set}
worker=${SCEN_WORKER:-unknown}
pidfile=
if [ -n "${SCEN_PIDS:-}" ]; then
    pidfile="$SCEN_PIDS/$id.$attempt"
    printf '%s\n' "$$" >"$pidfile"
fi

# Starts go to HISTORY.starts as they happen, so a run killed before its
# end is still seen to have begun.
printf '%s %s %s %s000\n' "$id" "$attempt" "$worker" "${start/./}" >>"${SCEN_HISTORY:?SCEN_HISTORY is not set}.starts"

payload=
IFS= read -r -d '' payload || true
ms=0
[[ $payload =~ \"sleep_ms\":[[:space:]]*([0-9]+) ]] && ms=${BASH_REMATCH[1]}
# {"sleep_attempt": N}: sleep only in attempt N (the one a scenario disturbs).
[[ $payload =~ \"sleep_attempt\":[[:space:]]*([0-9]+) ]] && [ "${BASH_REMATCH[1]}" != "$attempt" ] && ms=0
if [ "$ms" -gt 0 ]; then
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
fi
if [[ $payload =~ \"gate\":[[:space:]]*\"([^\"\\]+)\" ]]; then
    while [ ! -e "${BASH_REMATCH[1]}" ]; do sleep 0.05; done
fi

end=$EPOCHREALTIME
# EPOCHREALTIME is "seconds.microseconds": drop the point, add three zeros.
printf '%s %s %s %s000 %s000\n' "$id" "$attempt" "$worker" "${start/./}" "${end/./}" \
    >>"${SCEN_HISTORY:?SCEN_HISTORY is not set}"
[ -n "$pidfile" ] && rm -f "$pidfile"
if [[ $payload =~ \"fail_attempts\":[[:space:]]*([0-9]+) ]] && [ "$attempt" -le "${BASH_REMATCH[1]}" ]; then
    echo "transient failure of attempt $attempt (fail_attempts ${BASH_REMATCH[1]})" >&2
    exit 1
fi
printf '{"worker":"%s","attempt":%s}\n' "$worker" "$attempt"
