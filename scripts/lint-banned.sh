#!/usr/bin/env bash
# lint-banned.sh — functions jobd does not call, the way curl bans them
# (its checksrc BANNEDFUNC): each has a safer form, and a call to it in new
# code is nearly always a mistake a reviewer would have to spot by eye.
# Every offence is printed as FILE:LINE: the call, why it is banned and
# what to use instead; exits 1 if there is any. docs/CHECKING.md, Banned
# functions.
#
# A line that must call one anyway says so on the line itself, with the
# reason: `/* lint-allow: NAME: why */`. Comment lines are not checked.
#
# Usage: scripts/lint-banned.sh [FILE...] (default: the C files in git under
# src/, include/ and examples/, the code that ships).
set -euo pipefail
cd "$(dirname "$0")/.."

# name|why|instead
BANNED=(
    "sprintf|no bound on the buffer|snprintf, and check its result"
    "vsprintf|no bound on the buffer|vsnprintf"
    "strcpy|no bound on the buffer|snprintf(dst, size, \"%s\", src) or memcpy with a length"
    "strncpy|leaves the buffer unterminated when the source is long|snprintf or memcpy with a length"
    "stpcpy|no bound on the buffer|memcpy with a length"
    "strcat|no bound on the buffer|snprintf at an offset, or a capbuf (util/capbuf.h)"
    "strncat|its bound is what is left, not the size: easy to get wrong|snprintf at an offset"
    "gets|no bound at all|fgets"
    "atoi|no error: \"x\" and \"0\" both read as 0, overflow is undefined|strtol with an end pointer, or core/num.h"
    "atol|no error: \"x\" and \"0\" both read as 0, overflow is undefined|strtol/strtoll with an end pointer, or core/num.h"
    "atoll|no error: \"x\" and \"0\" both read as 0, overflow is undefined|strtoll with an end pointer, or core/num.h"
    "atof|no error|strtod with an end pointer"
    "strtok|keeps hidden state: not thread-safe, not reentrant|strtok_r or strcspn"
    "strerror|may return a buffer another thread overwrites|errno_text (util/errtext.h)"
    "asctime|a static buffer, not thread-safe|core/timefmt.h"
    "ctime|a static buffer, not thread-safe|core/timefmt.h"
    "gmtime|a static buffer, not thread-safe|gmtime_r"
    "localtime|a static buffer, not thread-safe|localtime_r"
    "tmpnam|a race between the name and the file|mkstemp"
    "mktemp|a race between the name and the file|mkstemp"
    "rand|one hidden state for every thread, and poor|backoff_rand_splitmix (core/backoff.h) with a state per thread"
)

if [ $# -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(git ls-files 'src/*.[ch]' 'include/*.[ch]' 'examples/*.[ch]')
fi
[ ${#files[@]} -gt 0 ] || exit 0

# A call: the name as a whole word followed by "(", outside a comment line
# and not after "." or "->" (a member called like one is not the function).
printf '%s\n' "${BANNED[@]}" | awk -F'|' '
    FNR == NR { why[$1] = $2; instead[$1] = $3; next }
    {
        text = $0
        if (text ~ /^[ \t]*(\*([ \t]|\/|$)|\/\*|\/\/)/)
            next
        for (name in why) {
            if (text ~ ("(^|[^A-Za-z0-9_.>])" name "[ \t]*\\(") &&
                text !~ ("lint-allow: " name ":")) {
                printf "%s:%d: %s() is banned: %s; use %s\n", FILENAME, FNR, name,
                       why[name], instead[name]
                found = 1
            }
        }
    }
    END { exit found }
' - "${files[@]}"
