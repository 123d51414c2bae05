#!/usr/bin/env bash
# lint-size.sh — the limits a reviewer would otherwise count by hand:
#   - no source file over 800 lines (src/, tests/, bench/, examples/);
#   - no function over 80 lines, from its name line to its closing brace
#     (definitions put the name at column 0, `name(` — docs/STYLE.md — so that
#     is what is matched);
#   - no backend named outside src/store: what differs between backends is
#     told by store_ops capability fields, never by comparing names
#     (strcmp with "pg"/"sqlite"/"postgres…" or with store_backend(); naming
#     the backend in a log line is fine).
# Prints one line per offence and exits 1 if any is not on the allow-list
# below. Usage: scripts/lint-size.sh [FILE...] (default: the C files in git).
set -euo pipefail
cd "$(dirname "$0")/.."

# Known offenders, each with the issue and the engineer that removes it; an
# entry matches an offence by its first two words. One that no longer
# offends is noted (not an error, so fixing one never breaks the build):
# delete it then, so the list only shrinks.
ALLOW=(
)

if [ $# -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(git ls-files 'src/*.[ch]' 'tests/*.[ch]' 'bench/*.[ch]' 'examples/*.[ch]')
fi

offences=$(
    for f in "${files[@]}"; do
        n=$(wc -l <"$f")
        [ "$n" -gt 800 ] && echo "file $f $n lines (max 800)"
        awk -v f="$f" '
            /^[A-Za-z_][A-Za-z0-9_]*\(/ && !/;[ \t]*$/ {
                name = $0; sub(/\(.*/, "", name)
                if (match($0, /^[A-Z_]+\([A-Za-z0-9_]*\)/)) name = substr($0, 1, RLENGTH)
                start = FNR; next
            }
            /^}/ && start {
                len = FNR - start + 1
                if (len > 80) printf "function %s:%s %d lines (max 80)\n", f, name, len
                start = 0
            }' "$f"
        case "$f" in
        src/store/*) ;;
        src/*)
            grep -nE 'str(n|case)?cmp\([^;]*(store_backend\(|"(pg|sqlite|postgres(ql)?)[:"])' "$f" |
                sed "s|^\([0-9]*\):.*|backend-name $f line \1|" || true
            ;;
        esac
    done
)

status=0
while IFS= read -r line; do
    [ -z "$line" ] && continue
    key=$(echo "$line" | awk '{print $1" "$2}')
    allowed=no
    for a in "${ALLOW[@]}"; do
        [ "$(echo "$a" | awk '{print $1" "$2}')" == "$key" ] && allowed=yes
    done
    if [ "$allowed" == yes ]; then
        echo "allowed: $line"
    else
        echo "$line"
        status=1
    fi
done <<<"$offences"
for a in "${ALLOW[@]}"; do
    key=$(echo "$a" | awk '{print $1" "$2}')
    if ! grep -qF "$key" <<<"$offences"; then
        echo "note: fixed, remove from the allow-list: $key"
    fi
done
exit $status
