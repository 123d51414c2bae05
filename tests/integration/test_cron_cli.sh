#!/usr/bin/env bash
# test_cron_cli.sh — `jobd cron next` as scripts use it (docs/CLI.md, "jobd cron"):
# exactly COUNT RFC 3339 lines on stdout and nothing else, exit 1 with a
# one-line error naming the field for a bad expression or zone, exit 2 for
# usage errors. Needs JOBD_BIN (set by CTest).
set -u
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
fails=0
pass=0

check() { # name, expected, actual
    if [ "$2" == "$3" ]; then
        pass=$((pass + 1))
    else
        fails=$((fails + 1))
        printf 'FAIL %s\n  want: %s\n  got:  %s\n' "$1" "$2" "$3"
    fi
}

out=$("$JOBD" cron next '*/15 * * * *' --from 2026-12-02T14:03:17.120Z -n 3 2>"${TMPDIR:-/tmp}"/cron_cli_err.$$)
check "three lines" $'2026-12-02T14:15:00.000Z\n2026-12-02T14:30:00.000Z\n2026-12-02T14:45:00.000Z' "$out"
check "no stderr" "" "$(cat "${TMPDIR:-/tmp}"/cron_cli_err.$$)"

out=$("$JOBD" cron next '0 9 * * MON-FRI' --tz Europe/Berlin --from 2026-12-04T09:00:00+01:00)
check "default count is 5" 5 "$(printf '%s\n' "$out" | wc -l | tr -d ' ')"
check "offset in --from, zone in --tz" "2026-12-07T09:00:00+01:00" "$(printf '%s\n' "$out" | head -1)"

out=$("$JOBD" cron next 30 2 '*' '*' '*' --tz America/New_York --from 2026-03-07T12:00:00Z -n 1)
check "expression from several args; DST gap" "2026-03-08T03:00:00-04:00" "$out"

out=$("$JOBD" cron next '@yearly' --from=2026-06-01T00:00:00Z -n 1)
check "macro and --from=" "2027-01-01T00:00:00.000Z" "$out"

now_line=$("$JOBD" cron next '* * * * *' -n 1)
case "$now_line" in
    [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:00.000Z) check "default from is now" ok ok ;;
    *) check "default from is now" "a timestamp" "$now_line" ;;
esac

"$JOBD" cron next '0 0 32 * *' >"${TMPDIR:-/tmp}"/cron_cli_out.$$ 2>"${TMPDIR:-/tmp}"/cron_cli_err.$$
check "bad expression exits 2 (an invalid argument)" 2 $?
check "bad expression prints nothing" "" "$(cat "${TMPDIR:-/tmp}"/cron_cli_out.$$)"
check "one-line error naming the field" "jobd cron next: day-of-month: 32 is out of range 1-31" \
    "$(cat "${TMPDIR:-/tmp}"/cron_cli_err.$$)"

"$JOBD" cron next '0 0 * * *' --tz Mars/Olympus >/dev/null 2>"${TMPDIR:-/tmp}"/cron_cli_err.$$
check "unknown zone exits 2 (an invalid argument)" 2 $?
check "unknown zone names timezone" 1 "$(grep -c 'timezone' "${TMPDIR:-/tmp}"/cron_cli_err.$$)"

"$JOBD" cron next >/dev/null 2>&1; check "missing EXPR exits 2" 2 $?
"$JOBD" cron next '* * * * *' -n 0 >/dev/null 2>&1; check "-n 0 exits 2" 2 $?
"$JOBD" cron next '* * * * *' -n >/dev/null 2>&1; check "-n without value exits 2" 2 $?
"$JOBD" cron next '* * * * *' --from yesterday >/dev/null 2>&1; check "bad --from exits 2" 2 $?
"$JOBD" cron next '* * * * *' --bogus >/dev/null 2>&1; check "unknown option exits 2" 2 $?
"$JOBD" cron frobnicate >/dev/null 2>&1; check "unknown subcommand exits 2" 2 $?
"$JOBD" cron next --help | grep -q 'usage: jobd cron next'; check "--help" 0 $?
"$JOBD" --help | grep -q 'cron'; check "listed in jobd --help" 0 $?

rm -f "${TMPDIR:-/tmp}"/cron_cli_out.$$ "${TMPDIR:-/tmp}"/cron_cli_err.$$
echo "$pass passed, $fails failed"
[ "$fails" -eq 0 ]
