#!/usr/bin/env bash
# lintian-check.sh [--unfortified] DEB... — lintian -I over the packages
# scripts/mkdeb.sh made; prints every tag and exits 1 if any is left after
# two exceptions that are not the package's fault:
#   - spelling-error-in-binary for a "word" that is not text of the binary
#     (its .rodata): lintian reads strings out of machine code too, and a
#     run of opcode bytes such as "IiF" is no typo anyone can fix;
#   - with --unfortified (a sanitizer or unoptimised build, which cannot be
#     fortified: CMakeLists.txt, Hardening): hardening-no-fortify-functions.
# `make deb` and tests/integration/test_deb.sh run it.
set -euo pipefail
unfortified=false
if [ "${1:-}" = --unfortified ]; then
    unfortified=true
    shift
fi
[ $# -gt 0 ] || { echo "usage: lintian-check.sh [--unfortified] DEB..." >&2; exit 2; }
work=$(mktemp -d /tmp/jobd-lintian.XXXXXX)
trap 'rm -rf "$work"' EXIT
lintian -I --tag-display-limit 0 "$@" >"$work/out" 2>&1 || true
grep '^[EWI]: ' "$work/out" >"$work/tags" || true
left=0
while IFS= read -r line; do
    # "I: PKG: TAG ARGS [PATH]"
    tag=$(awk '{print $3}' <<<"$line")
    if [ "$tag" = hardening-no-fortify-functions ] && $unfortified; then
        continue
    fi
    if [ "$tag" = spelling-error-in-binary ]; then
        pkg=$(awk '{print $2}' <<<"$line" | tr -d :)
        word=$(awk '{print $4}' <<<"$line")
        path=$(sed -n 's/.*\[\(.*\)\]$/\1/p' <<<"$line")
        for deb in "$@"; do
            [ "$(dpkg-deb -f "$deb" Package)" = "$pkg" ] && dpkg-deb -x "$deb" "$work/$pkg"
        done
        if [ -f "$work/$pkg/$path" ] &&
            objcopy -O binary --only-section=.rodata "$work/$pkg/$path" "$work/rodata" 2>/dev/null &&
            ! strings -a "$work/rodata" | grep -qw -- "$word"; then
            continue
        fi
    fi
    echo "$line"
    left=$((left + 1))
done <"$work/tags"
[ "$left" -eq 0 ]
