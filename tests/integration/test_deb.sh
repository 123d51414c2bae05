#!/usr/bin/env bash
# test_deb.sh — the Debian package: scripts/mkdeb.sh (what `make deb` runs)
# packs this build into jobd_VERSION_ARCH.deb with the units, man pages,
# completion, the Prometheus rules and Grafana dashboard
# (/usr/share/jobd/monitoring/), /etc/jobd/* as conffiles, a postinst that creates the jobd
# system user; lintian reports no error; and the unpacked tree works on its
# own: its server (with its own server.ini, pointed at a scratch store and a
# free port) and its worker (its own worker.ini) run a submitted job to
# success. Installing it (dpkg -i) would change this machine, so the
# maintainer scripts are checked by reading them, not run.
set -euo pipefail
build=${JOBD_BUILD:?JOBD_BUILD is not set}
src=${JOBD_SRC:?JOBD_SRC is not set}
dir=$(mktemp -d /tmp/jobd-debtest.XXXXXX)
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

deb=$("$src/scripts/mkdeb.sh" "$build" "$dir") || fail "mkdeb.sh"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ "$(basename "$deb")" = "jobd_${version}_$(dpkg --print-architecture).deb" ] ||
    fail "the package is named $(basename "$deb")"

dpkg-deb --contents "$deb" >"$dir/contents"
for f in ./usr/bin/jobd ./usr/lib/systemd/system/jobd-server.service \
         ./usr/lib/systemd/system/jobd-worker@.service ./usr/share/man/man1/jobd.1.gz \
         ./usr/share/man/man5/jobd-server.ini.5.gz ./usr/share/bash-completion/completions/jobd \
         ./usr/share/zsh/vendor-completions/_jobd ./usr/include/jobd.h \
         ./usr/share/doc/jobd/copyright ./etc/jobd/server.ini \
         ./usr/share/jobd/monitoring/jobd-alerts.yml ./usr/share/jobd/monitoring/jobd-grafana.json; do
    grep -q " $f\$" "$dir/contents" || fail "the package lacks $f"
done
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

lintian --fail-on error --no-tag-display-limit "$deb" >"$dir/lintian.out" 2>&1 ||
    { cat "$dir/lintian.out"; fail "lintian reports errors"; }
! grep -q '^E:' "$dir/lintian.out" || { cat "$dir/lintian.out"; fail "lintian reports errors"; }

# The unpacked tree, on its own.
root="$dir/root"
dpkg-deb -x "$deb" "$root"
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
for _ in $(seq 100); do
    "$jobd" job show "$id" --server "$url" >"$dir/job.json" </dev/null
    grep -q '"status":"succeeded"' "$dir/job.json" && break
    sleep 0.1
done
grep -q '"status":"succeeded"' "$dir/job.json" || fail "job $id did not succeed: $(cat "$dir/job.json")"
grep -q '"result":{"from":"the package"}' "$dir/job.json" ||
    fail "job $id has another result: $(cat "$dir/job.json")"
echo "ok: $(basename "$deb"): contents, conffiles, lintian clean of errors, round trip from the unpacked tree"
