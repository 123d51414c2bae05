#!/usr/bin/env bash
# test_install.sh — `make install` into a DESTDIR: every file lands where
# GNUInstallDirs says (twice: the build's prefix, and --prefix /usr, which
# puts configs under /etc), libjobd carries its soname, and examples/hello.c
# builds with `pkg-config --cflags --libs jobd` against the installed tree
# only (not the source tree) and runs: enqueue, work, complete.
set -euo pipefail
build=${JOBD_BUILD:?JOBD_BUILD is not set}
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-install.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. The configured prefix (/usr/local unless told otherwise).
DESTDIR="$dir/a" cmake --install "$build" >"$dir/install.log" 2>&1 ||
    { cat "$dir/install.log"; fail "cmake --install"; }
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
root="$dir/a$prefix"
for f in bin/jobd include/jobd.h share/man/man1/jobd.1 share/man/man5/jobd-server.ini.5 \
         share/man/man5/jobd-worker.ini.5 share/bash-completion/completions/jobd \
         lib/systemd/system/jobd-server.service lib/systemd/system/jobd-worker@.service \
         etc/jobd/server.ini etc/jobd/worker.ini etc/jobd/tokens share/doc/jobd/examples/hello.c; do
    [ -e "$root/$f" ] || fail "$prefix/$f was not installed"
done
[ "$(stat -c %a "$root/etc/jobd/tokens")" = 640 ] || fail "the tokens file is not 0640"
pc=$(find "$root" -name jobd.pc)
[ -n "$pc" ] || fail "jobd.pc was not installed"
libdir=$(dirname "$(dirname "$pc")")
real=$(readlink -f "$libdir/libjobd.so")
[[ $real == */libjobd.so.0.* ]] || fail "libjobd.so does not point to a versioned library: $real"
dyn=$(readelf -d "$real")  # captured: `readelf | grep -q` can die of SIGPIPE under pipefail
grep -q 'SONAME.*\[libjobd\.so\.0\]' <<<"$dyn" || fail "libjobd has no soname libjobd.so.0"
grep -q "ExecStart=$prefix/bin/jobd server --config $prefix/etc/jobd/server.ini" \
    "$root/lib/systemd/system/jobd-server.service" || fail "the server unit names other paths"
"$root/bin/jobd" --version | grep -q '^jobd [0-9]' || fail "the installed jobd does not run"

# 2. hello.c against the installed tree through pkg-config, from another folder.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs jobd) || fail "pkg-config does not know jobd"
[[ $flags != *"$src"* ]] || fail "pkg-config points into the source tree: $flags"
san=()
# A sanitizer build's libjobd needs the program linked with the same runtime.
grep -q 'libasan' <<<"$dyn" && san=(-fsanitize=address,undefined)
cp "$root/share/doc/jobd/examples/hello.c" "$dir/hello.c"
cd "$dir"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "${san[@]}" hello.c $flags -o hello ||
    fail "hello.c does not build with: $flags"
# ldd's output is captured first: with pipefail, `ldd | grep -q` fails
# whenever grep exits before ldd has written its last line (SIGPIPE).
deps=$(LD_LIBRARY_PATH="$libdir" ldd ./hello)
grep -q "$libdir/libjobd.so.0" <<<"$deps" ||
    { echo "$deps"; fail "hello does not load the installed libjobd"; }
LD_LIBRARY_PATH="$libdir" JOBD_DB= ./hello "sqlite:$dir/hello.db" >out 2>err ||
    { cat out err; fail "hello exited $?"; }
grep -q '^summary: enqueued 3, worked 3, failed 0, 3 of ours succeeded$' out ||
    { cat out; fail "unexpected summary"; }

# 3. --prefix /usr at install time: configs to /etc, units name /usr/bin/jobd.
DESTDIR="$dir/b" cmake --install "$build" --prefix /usr >"$dir/install2.log" 2>&1 ||
    { cat "$dir/install2.log"; fail "cmake --install --prefix /usr"; }
[ -f "$dir/b/etc/jobd/server.ini" ] || fail "--prefix /usr did not put server.ini in /etc/jobd"
[ -f "$dir/b/usr/share/zsh/vendor-completions/_jobd" ] || fail "no zsh completion for /usr"
grep -q 'ExecStart=/usr/bin/jobd worker --config /etc/jobd/%i.ini' \
    "$dir/b/usr/lib/systemd/system/jobd-worker@.service" || fail "the worker unit names other paths"
# An operator's edited config is never overwritten by a later install.
echo "; mine" >>"$dir/b/etc/jobd/server.ini"
DESTDIR="$dir/b" cmake --install "$build" --prefix /usr >/dev/null 2>&1
grep -q '; mine' "$dir/b/etc/jobd/server.ini" || fail "a reinstall overwrote /etc/jobd/server.ini"
echo "ok: make install, soname, pkg-config build of hello.c"
