#!/usr/bin/env bash
# test_man.sh — the man pages say what --help says: every command listed by
# `jobd --help` is in jobd(1), and so is every option any `jobd CMD --help`
# prints; every option of `jobd server` is also a key in jobd-server.ini(5)
# (but --config and --check-config, which only a command line gives).
# The pages are the ones the build made from docs/man/*.scd (scdoc), read
# as text with their roff font escapes removed. The completion scripts are
# held to the same list of commands and options, and jobd-worker.ini(5) to
# every key the worker's config parser knows (src/worker/config.c).
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
build=${JOBD_BUILD:?JOBD_BUILD is not set}
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-man.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
text() { sed -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/\\(em/--/g' "$1"; }
for m in jobd.1 jobd-server.ini.5 jobd-worker.ini.5; do
    [ -s "$build/man/$m" ] || fail "the build did not make man/$m"
done
text "$build/man/jobd.1" >"$dir/jobd.1.txt"
text "$build/man/jobd-server.ini.5" >"$dir/server.5.txt"
bash_c="$src/packaging/completion/jobd.bash"
zsh_c="$src/packaging/completion/_jobd"

commands=$("$JOBD" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$commands" ] || fail "jobd --help lists no command"
missing=0
for c in $commands; do
    grep -Eq "^$c( |$)" "$dir/jobd.1.txt" || { echo "jobd(1) lacks the command $c"; missing=1; }
    grep -q "\\b$c\\b" "$bash_c" || { echo "bash completion lacks the command $c"; missing=1; }
    grep -q "'$c:" "$zsh_c" || { echo "zsh completion lacks the command $c"; missing=1; }
    "$JOBD" "$c" --help >"$dir/help" 2>&1 || fail "jobd $c --help failed"
    opts=$(grep -oE '(^|[][ |,(])--?[a-z][a-z0-9-]*' "$dir/help" | sed 's/^[][ |,(]//' |
           grep -vx -e -h -e --help | sort -u)
    for o in $opts; do
        grep -q -- "$o\\b" "$dir/jobd.1.txt" || { echo "jobd(1) lacks $c $o"; missing=1; }
        grep -q -- "$o\\b" "$bash_c" || { echo "bash completion lacks $c $o"; missing=1; }
        grep -q -- "'$o\\[" "$zsh_c" || { echo "zsh completion lacks $c $o"; missing=1; }
        if [ "$c" = server ] && [ "$o" != --config ] && [ "$o" != --check-config ]; then
            grep -Eq "^${o#--} = " "$dir/server.5.txt" ||
                { echo "jobd-server.ini(5) lacks the key ${o#--}"; missing=1; }
        fi
    done
done
text "$build/man/jobd-worker.ini.5" >"$dir/worker.5.txt"
wkeys=$(sed -n '/static const char \*const keys\[\] = {/,/};/p' "$src/src/worker/config.c" |
        grep -o '"[a-z_]*"' | tr -d '"')
[ -n "$wkeys" ] || fail "found no worker config keys in src/worker/config.c"
for k in $wkeys; do
    grep -Eq "(^|, )$k = " "$dir/worker.5.txt" || { echo "jobd-worker.ini(5) lacks the key $k"; missing=1; }
done
[ $missing -eq 0 ] || fail "the man pages or completion miss what --help shows (above)"
echo "ok: jobd(1), jobd-server.ini(5) and completion cover every command and option"
