#!/usr/bin/env bash
# test_deb.sh — the Debian packages: scripts/mkdeb.sh (what `make deb` runs)
# packs this build into jobd, libjobd0 and libjobd-dev (split as Debian splits
# a program from its library) with the units, man pages, completion, docs,
# the Prometheus rules and Grafana dashboard (/usr/share/jobd/monitoring/),
# /etc/jobd/* as conffiles, a postinst that creates the jobd system user;
# lintian -I reports nothing (a sanitizer or unoptimised build cannot be
# fortified: that one tag is allowed there); and the unpacked trees work on
# their own: the server (its own server.ini, pointed at a scratch store and a
# free port) and the worker (its own worker.ini) run a submitted job; the
# example worker in /usr/share/doc/jobd/examples runs its hello and
# fail.sometimes handlers; hello.c builds against libjobd-dev with pkg-config.
# Installing them (dpkg -i) would change this machine, so the maintainer
# scripts are checked by reading them, not run.
set -euo pipefail
build=${JOBD_BUILD:?JOBD_BUILD is not set}
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-debtest.XXXXXX")
spid="" wpid=""
cleanup() {
    for p in $wpid $spid; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    tail -5 "$dir/server.log" "$dir/worker.log" 2>/dev/null || true
    exit 1
}
unset JOBD_DB JOBD_SERVER JOBD_TOKEN JOBD_LISTEN

"$src/scripts/mkdeb.sh" "$build" "$dir" >"$dir/debs" || fail "mkdeb.sh"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
printf '%s\n' "$dir/jobd_${version}_$arch.deb" "$dir/libjobd0_${version}_$arch.deb" \
    "$dir/libjobd-dev_${version}_$arch.deb" | diff - "$dir/debs" || fail "mkdeb.sh made other packages"
deb="$dir/jobd_${version}_$arch.deb" libdeb="$dir/libjobd0_${version}_$arch.deb"
devdeb="$dir/libjobd-dev_${version}_$arch.deb"

dpkg-deb --contents "$deb" >"$dir/contents"
doc=./usr/share/doc/jobd
for f in ./usr/bin/jobd ./usr/lib/systemd/system/jobd-server.service \
         ./usr/lib/systemd/system/jobd-worker@.service ./usr/share/man/man1/jobd.1.gz \
         ./usr/share/man/man5/jobd-server.ini.5.gz ./usr/share/bash-completion/completions/jobd \
         ./usr/share/zsh/vendor-completions/_jobd ./usr/share/doc/jobd/copyright \
         "$doc/README.md.gz" "$doc/WORKER.md.gz" \
         ./usr/share/doc/jobd/openapi.yaml.gz ./usr/share/doc/jobd/examples/worker.ini \
         ./usr/share/doc/jobd/examples/handlers/hello.sh ./etc/jobd/server.ini \
         ./usr/share/jobd/monitoring/jobd-alerts.yml ./usr/share/jobd/monitoring/jobd-grafana.json; do
    grep -q " $f\$" "$dir/contents" || fail "jobd lacks $f"
done
grep -q '^-rwxr-xr-x .* ./usr/share/doc/jobd/examples/handlers/fail-sometimes.sh$' "$dir/contents" ||
    fail "the example handlers are not executable"
! grep -q 'libjobd\|include/' "$dir/contents" || fail "jobd holds libjobd's files"
dpkg-deb --contents "$libdeb" >"$dir/lib.contents"
dpkg-deb --contents "$devdeb" >"$dir/dev.contents"
for f in "./usr/lib/$ma/libjobd.so.$version" "./usr/lib/$ma/libjobd.so.0 -> libjobd.so.$version" \
         ./usr/share/doc/libjobd0/copyright; do
    grep -q " $f\$" "$dir/lib.contents" || fail "libjobd0 lacks $f"
done
for f in ./usr/include/jobd.h "./usr/lib/$ma/libjobd.so -> libjobd.so.0" \
         "./usr/lib/$ma/pkgconfig/jobd.pc" ./usr/share/doc/libjobd-dev/examples/hello.c; do
    grep -q " $f\$" "$dir/dev.contents" || fail "libjobd-dev lacks $f"
done
dpkg-deb --ctrl-tarfile "$libdeb" | tar -xO ./shlibs ./symbols >"$dir/lib.ctrl"
grep -q "^libjobd 0 libjobd0 (>= $version)\$" "$dir/lib.ctrl" || fail "libjobd0's shlibs: $(cat "$dir/lib.ctrl")"
grep -q '^ jobd_client_open@Base ' "$dir/lib.ctrl" || fail "libjobd0's symbols lack jobd_client_open"
dpkg-deb -f "$devdeb" Depends | grep -qx "libjobd0 (= $version)" || fail "libjobd-dev's Depends"
grep -q ' root/root .* ./usr/bin/jobd$' "$dir/contents" || fail "files are not owned by root"
dpkg-deb --ctrl-tarfile "$deb" | tar -x -C "$dir" ./conffiles ./postinst ./control
printf '/etc/jobd/server.ini\n/etc/jobd/tokens\n/etc/jobd/worker.ini\n' | diff - "$dir/conffiles" ||
    fail "conffiles differ"
grep -q 'adduser --system --group --home /var/lib/jobd' "$dir/postinst" ||
    fail "postinst does not create the jobd system user"
grep -q 'adduser --system --group --home /nonexistent --no-create-home' "$dir/postinst" &&
    grep -q 'jobd-run >/dev/null' "$dir/postinst" ||
    fail "postinst does not create the jobd-run user for user = handlers"
grep -q '^Depends: adduser, .*libc6' "$dir/control" || fail "Depends was not computed"
# Loaded on first use, not linked: still declared (scripts/mkdeb.sh, jobd_lazydeps).
for pkg in libpq5 libcurl4 libmicrohttpd12 libsqlite3-0; do
    grep -q "^Depends: .*\b$pkg\b" "$dir/control" || fail "Depends lacks $pkg: $(grep ^Depends "$dir/control")"
done

# Everything lintian reports at -I and above (scripts/lintian-check.sh: but
# fortification where the build cannot have it, CMakeLists.txt, Hardening).
unfortified=()
grep -q '^JOBD_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" ||
    ! grep -q '^CMAKE_BUILD_TYPE:STRING=\(Release\|RelWithDebInfo\|MinSizeRel\)$' "$build/CMakeCache.txt" &&
    unfortified=(--unfortified)
"$src/scripts/lintian-check.sh" "${unfortified[@]}" "$deb" "$libdeb" "$devdeb" >"$dir/lintian.out" ||
    { cat "$dir/lintian.out"; fail "lintian -I reports tags"; }

# The unpacked tree, on its own.
root="$dir/root"
for d in "$deb" "$libdeb" "$devdeb"; do dpkg-deb -x "$d" "$root"; done
jobd="$root/usr/bin/jobd"
sed -e "s|^db = .*|db = sqlite:$dir/jobs.db|" -e 's|^listen = .*|listen = 127.0.0.1:0|' \
    "$root/etc/jobd/server.ini" >"$dir/server.ini"
: >"$dir/server.log"
"$jobd" server --config "$dir/server.ini" 2>"$dir/server.log" &
spid=$!
url=""
for _ in $(seq 100); do
    url=$(sed -n 's|.* listening on \(http://.*\)$|\1|p' "$dir/server.log")
    [ -n "$url" ] && break
    kill -0 "$spid" 2>/dev/null || fail "the packaged server exited"
    sleep 0.1
done
[ -n "$url" ] || fail "the packaged server did not start"
"$jobd" worker --db "sqlite:$dir/jobs.db" --config "$root/etc/jobd/worker.ini" 2>"$dir/worker.log" &
wpid=$!
id=$("$jobd" submit echo --payload '{"from":"the package"}' --server "$url" |
     sed -n 's/^{"id":\([0-9]*\).*/\1/p')
[ -n "$id" ] || fail "submit printed no job id"
# Polled with curl (an ASan jobd per poll costs ~0.07 s of CPU); then shown
# by the packaged CLI.
for _ in $(seq 600); do
    curl -sf "$url/v1/jobs/$id" | grep -q '"status":"succeeded"' && break
    sleep 0.05
done
"$jobd" job show "$id" --server "$url" >"$dir/job.json" </dev/null
grep -q '"status":"succeeded"' "$dir/job.json" || fail "job $id did not succeed: $(cat "$dir/job.json")"
grep -q '"result":{"from":"the package"}' "$dir/job.json" ||
    fail "job $id has another result: $(cat "$dir/job.json")"

# The example worker, as installed: its handlers beside it (exec = handlers/…).
ex="$root/usr/share/doc/jobd/examples"
"$jobd" worker --db "sqlite:$dir/jobs.db" --config "$ex/worker.ini" 2>"$dir/example.log" &
wpid="$wpid $!"
wait_done() { # wait_done ID: the job's JSON once it has finished (jobd job show), in $dir/job.json
    for _ in $(seq 600); do
        if curl -sf "$url/v1/jobs/$1" | grep -q '"status":"\(succeeded\|dead\|cancelled\)"'; then
            "$jobd" job show "$1" --server "$url" >"$dir/job.json" </dev/null
            return 0
        fi
        sleep 0.05
    done
    "$jobd" job show "$1" --server "$url" >"$dir/job.json" </dev/null
    fail "job $1 did not finish: $(cat "$dir/job.json"; tail -5 "$dir/example.log")"
}
id=$("$jobd" submit hello --payload '{"name":"deb"}' --server "$url" |
     sed -n 's/^{"id":\([0-9]*\).*/\1/p')
wait_done "$id"
grep -q '"status":"succeeded"' "$dir/job.json" && grep -q '"greeting":"hello, deb"' "$dir/job.json" ||
    fail "the example hello job: $(cat "$dir/job.json")"
id=$("$jobd" submit fail.sometimes --server "$url" | sed -n 's/^{"id":\([0-9]*\).*/\1/p')
wait_done "$id"
grep -q '"status":"succeeded"' "$dir/job.json" && grep -q '"result":{.*"attempts":2' "$dir/job.json" ||
    fail "the example fail.sometimes job: $(cat "$dir/job.json")"

# hello.c against libjobd-dev and libjobd0 alone, through their jobd.pc.
export PKG_CONFIG_PATH="$root/usr/lib/$ma/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
flags=$(pkg-config --cflags --libs jobd) || fail "pkg-config finds no jobd in libjobd-dev"
san=()
grep -q '^JOBD_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" && san=(-fsanitize=address,undefined)
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "${san[@]}" "$root/usr/share/doc/libjobd-dev/examples/hello.c" \
    $flags -o "$dir/hello" || fail "hello.c does not build with: $flags"
LD_LIBRARY_PATH="$root/usr/lib/$ma" JOBD_DB= "$dir/hello" "sqlite:$dir/hello.db" >"$dir/hello.out" 2>&1 ||
    { cat "$dir/hello.out"; fail "hello exited $?"; }
grep -q '^summary: enqueued 3, worked 3, failed 0, 3 of ours succeeded$' "$dir/hello.out" ||
    { cat "$dir/hello.out"; fail "unexpected summary from hello"; }
echo "ok: jobd, libjobd0, libjobd-dev: contents, conffiles, lintian -I clean, round trip, example worker, hello.c"
