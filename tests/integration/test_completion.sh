#!/usr/bin/env bash
# test_completion.sh — the bash completion at work (sourced, with
# COMP_WORDS set as bash sets them): commands (and `help CMD`), options, fixed values, and
# queue and schedule names asked of a running server. The zsh script is
# checked for syntax here (and for coverage of --help in test_man.sh).
set -euo pipefail
JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-compl.XXXXXX")
spid=""
cleanup() {
    [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset JOBD_SERVER JOBD_TOKEN
# The completion gives the server 1 s by default; an ASan build on a loaded
# machine can take longer to start, which is not what is tested here.
export JOBD_COMPLETION_TIMEOUT=20

# shellcheck source=/dev/null
source "$src/packaging/completion/jobd.bash"
complete_line() { # words of the line; the last is the one being completed
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    _jobd
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}
[ "$(complete_line "$JOBD" s)" = "schedule server submit " ] || fail "commands: $(complete_line "$JOBD" s)"
[ "$(complete_line "$JOBD" he)" = "help " ] || fail "help: $(complete_line "$JOBD" he)"
[ "$(complete_line "$JOBD" help worke)" = "worker workers " ] || fail "help CMD: $(complete_line "$JOBD" help worke)"
[ "$(complete_line "$JOBD" workflow s)" = "show submit " ] || fail "workflow actions: $(complete_line "$JOBD" workflow s)"
[ "$(complete_line "$JOBD" workflows --status f)" = "failed " ] || fail "workflow statuses"
[ "$(complete_line "$JOBD" jobs retry --dr)" = "--dry-run " ] || fail "jobs retry --dry-run"
[ "$(complete_line "$JOBD" server --re)" = "--reap-interval --request-timeout --retention --retention-allow-short --retention-dead --retention-succeeded " ] || fail "server options"
[ "$(complete_line "$JOBD" jobs --status d)" = "dead " ] || fail "status values"
[ "$(complete_line "$JOBD" schedule add n '* * * * *' t --catchup s)" = "skip " ] || fail "catchup values"
[ "$(complete_line "$JOBD" schedule p)" = "pause " ] || fail "schedule actions"

# Names from a running server.
: >"$dir/log"
"$JOBD" server --db "sqlite:$dir/jobs.db" --listen 127.0.0.1:0 2>"$dir/log" &
spid=$!
for _ in $(seq 100); do
    grep -q 'listening on' "$dir/log" && break
    kill -0 "$spid" 2>/dev/null || fail "the server exited"; sleep 0.1
done
url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/log")
"$JOBD" submit echo --queue mail --server "$url" >/dev/null
"$JOBD" submit echo --queue maintenance --server "$url" >/dev/null
"$JOBD" schedule add nightly '0 3 * * *' echo --server "$url" >/dev/null
[ "$(complete_line "$JOBD" jobs --server "$url" --queue ma)" = "mail maintenance " ] ||
    fail "queue names: '$(complete_line "$JOBD" jobs --server "$url" --queue ma)'"
[ "$(JOBD_SERVER=$url complete_line "$JOBD" schedule pause n)" = "nightly " ] ||
    fail "schedule names from \$JOBD_SERVER"
# No server: no names.
[ "$(complete_line "$JOBD" jobs --server http://127.0.0.1:1 --queue m)" = " " ] ||
    fail "names from a server that is not there"
# A server that never answers: no names, and no wait past the 1 s default
# (the bound is generous for a loaded machine; a hang would take 60 s).
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True); time.sleep(60)' >"$dir/mute" &
mpid=$!
for _ in $(seq 100); do [ -s "$dir/mute" ] && break; sleep 0.1; done
start=$(date +%s%N)
[ "$(JOBD_COMPLETION_TIMEOUT=1 complete_line "$JOBD" jobs --server "http://127.0.0.1:$(cat "$dir/mute")" --queue m)" = " " ] ||
    fail "names from a server that never answers"
elapsed=$((($(date +%s%N) - start) / 1000000))
kill "$mpid" 2>/dev/null || true
[ "$elapsed" -lt 10000 ] || fail "completion waited ${elapsed} ms for a server that never answers"

command -v zsh >/dev/null || fail "zsh is missing (scripts/deps.sh installs it)"
zsh -n "$src/packaging/completion/_jobd" || fail "_jobd is not valid zsh"
echo "ok: bash completion of commands, options, queue and schedule names; zsh syntax"
