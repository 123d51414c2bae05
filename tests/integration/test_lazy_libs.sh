#!/usr/bin/env bash
# test_lazy_libs.sh — jobd loads libpq, libcurl, libmicrohttpd and SQLite
# only when a process needs them (src/util/lazylib.h), which is what keeps a
# worker's resident set small. Checked through /proc/PID/maps of real
# processes, so it holds under the sanitizers and on a loaded machine alike:
#   - a SQLite `jobd worker` with an exec handler, after running a job, maps
#     SQLite and none of the other three, nor OpenSSL or GnuTLS (libpq's and
#     libcurl's TLS);
#   - a worker with an http handler maps libcurl, not libpq or libmicrohttpd;
#   - `jobd server` maps libmicrohttpd;
#   - a PostgreSQL worker ($JOBD_TEST_PG_URL, under scripts/with-pg.sh) maps
#     libpq, not SQLite, libcurl or libmicrohttpd, and does not start
#     Kerberos (gssencmode=disable by default), unless the URL or
#     PGGSSENCMODE asks; neither it nor a libjobd program with C handlers
#     (examples/c_worker) maps SQLite or libm (which only SQLite needs);
#   - a library missing at run time is a clear error naming it (the
#     JOBD_TEST_LAZYLIB_MISSING seam of JOBD_TEST_HOOKS builds).
# Needs JOBD_BIN (set by CTest); Linux only (/proc).
set -euo pipefail

JOBD="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-lazylibs.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    for f in "$dir"/*.log; do echo "--- $f"; tail -20 "$f"; done
    exit 1
}
# maps PID: the file names a process has mapped, one a line.
maps() { awk 'NF >= 6 { print $6 }' "/proc/$1/maps" | sort -u; }
has() { maps "$1" | grep -q "/$2[.]so"; }
expect_mapped() { has "$1" "$2" || fail "$3 has not loaded $2"; }
expect_unmapped() { ! has "$1" "$2" || fail "$3 has loaded $2: $(maps "$1" | grep "/$2[.]so")"; }

# Neither jobd nor libjobd names SQLite (loaded on first use) or libm (not
# used: core/num.h) among the libraries it needs, sanitizers or not.
for elf in "$JOBD" "${JOBD_BUILD:-/nonexistent}/libjobd.so"; do
    [ -e "$elf" ] || continue
    needed=$(objdump -p "$elf" | awk '$1 == "NEEDED" { print $2 }')
    ! printf '%s\n' "$needed" | grep -Eq '^lib(m|sqlite3)[.]so' ||
        fail "$elf needs $(printf '%s\n' "$needed" | grep -E '^lib(m|sqlite3)[.]so' | tr '\n' ' ')"
done

db="sqlite:$dir/jobs.db"
cat >"$dir/stamp.sh" <<EOF
#!/bin/sh
touch "$dir/ran.\$JOBD_JOB_ID"
EOF
chmod +x "$dir/stamp.sh"
cat >"$dir/exec.ini" <<EOF
[worker]
concurrency = 4

[handler "stamp"]
exec = $dir/stamp.sh
timeout = 10s
EOF
cat >"$dir/http.ini" <<EOF
[worker]
concurrency = 4

[handler "hook"]
http = http://127.0.0.1:9/hook
timeout = 10s
EOF

: >"$dir/server.log"
"$JOBD" server --db "$db" --listen 127.0.0.1:0 --shutdown-grace 2s 2>"$dir/server.log" &
spid=$!
pids+=("$spid")
port=""
for _ in $(seq 100); do
    port=$(sed -n 's|.* listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$dir/server.log")
    [ -n "$port" ] && break
    kill -0 "$spid" 2>/dev/null || fail "the server exited"
    sleep 0.1
done
[ -n "$port" ] || fail "the server did not say where it listens"
expect_mapped "$spid" libmicrohttpd "jobd server"

"$JOBD" worker --db "$db" --config "$dir/exec.ini" 2>"$dir/worker.log" &
wpid=$!
pids+=("$wpid")
out=$("$JOBD" submit stamp --payload '{}' --server "http://127.0.0.1:$port") || fail "submit"
id=$(printf '%s' "$out" | sed -n 's/.*"id": *\([0-9]*\).*/\1/p' | head -n 1)
[ -n "$id" ] || fail "no job id in: $out"
for _ in $(seq 100); do
    [ -e "$dir/ran.$id" ] && break
    sleep 0.1
done
[ -e "$dir/ran.$id" ] || fail "the exec worker did not run job $id"
kill -0 "$wpid" 2>/dev/null || fail "the exec worker exited"
for lib in libpq libcurl libmicrohttpd libssl libcrypto libgnutls; do
    expect_unmapped "$wpid" "$lib" "a SQLite worker with exec handlers"
done
expect_mapped "$wpid" libsqlite3 "a SQLite worker"
echo "SQLite exec worker: none of libpq, libcurl, libmicrohttpd, OpenSSL, GnuTLS mapped" \
    "(VmRSS $(awk '/^VmRSS/ { print $2, $3 }' "/proc/$wpid/status"))"

"$JOBD" worker --db "$db" --config "$dir/http.ini" 2>"$dir/worker-http.log" &
hpid=$!
pids+=("$hpid")
for _ in $(seq 100); do
    has "$hpid" libcurl && break
    kill -0 "$hpid" 2>/dev/null || fail "the http worker exited"
    sleep 0.1
done
expect_mapped "$hpid" libcurl "a worker with an http handler"
expect_unmapped "$hpid" libpq "a SQLite worker with an http handler"
expect_unmapped "$hpid" libmicrohttpd "a worker"

if [ -n "${JOBD_TEST_PG_URL:-}" ]; then
    "$JOBD" migrate --db "$JOBD_TEST_PG_URL" >"$dir/migrate.log" 2>&1 || fail "migrate on PostgreSQL"
    KRB5_TRACE="$dir/krb5-worker.trace" "$JOBD" worker --db "$JOBD_TEST_PG_URL" \
        --config "$dir/exec.ini" 2>"$dir/worker-pg.log" &
    ppid=$!
    pids+=("$ppid")
    for _ in $(seq 100); do
        grep -q 'running' "$dir/worker-pg.log" && break
        kill -0 "$ppid" 2>/dev/null || fail "the PostgreSQL worker exited"
        sleep 0.1
    done
    expect_mapped "$ppid" libpq "a PostgreSQL worker"
    # gssencmode=disable unless the URL or the environment sets it
    # (src/store/pg/conn.c): Kerberos is not started at connect, so its trace
    # file (KRB5_TRACE, created when a Kerberos context is) never appears;
    # with gssencmode=prefer from the URL or PGGSSENCMODE it does.
    [ ! -e "$dir/krb5-worker.trace" ] ||
        fail "the PostgreSQL worker started Kerberos (gssencmode is not disabled)"
    KRB5_TRACE="$dir/krb5-url.trace" "$JOBD" migrate --db "$JOBD_TEST_PG_URL?gssencmode=prefer" \
        >>"$dir/migrate.log" 2>&1 || fail "migrate with gssencmode=prefer"
    [ -e "$dir/krb5-url.trace" ] || fail "gssencmode=prefer in the URL did not reach libpq"
    KRB5_TRACE="$dir/krb5-env.trace" PGGSSENCMODE=prefer "$JOBD" migrate --db "$JOBD_TEST_PG_URL" \
        >>"$dir/migrate.log" 2>&1 || fail "migrate with PGGSSENCMODE=prefer"
    [ -e "$dir/krb5-env.trace" ] || fail "PGGSSENCMODE=prefer was overridden"
    echo "PostgreSQL: Kerberos not started by default; gssencmode from the URL or PGGSSENCMODE kept"
    expect_unmapped "$ppid" libcurl "a PostgreSQL worker with exec handlers"
    expect_unmapped "$ppid" libmicrohttpd "a worker"
    expect_unmapped "$ppid" libsqlite3 "a PostgreSQL worker"
    # libm: only SQLite needs it (core/num.h); a sanitizer runtime (libasan) links it itself.
    has "$ppid" libasan || expect_unmapped "$ppid" libm "a PostgreSQL worker"
    # libjobd (the C worker of the benchmarks is such a program) likewise.
    cw="${JOBD_BUILD:-/nonexistent}/examples/c_worker"
    if [ -x "$cw" ]; then
        "$cw" "$JOBD_TEST_PG_URL" 2>"$dir/c-worker-pg.log" &
        cpid=$!
        pids+=("$cpid")
        for _ in $(seq 100); do
            has "$cpid" libpq && break
            kill -0 "$cpid" 2>/dev/null || fail "examples/c_worker exited on PostgreSQL"
            sleep 0.1
        done
        expect_mapped "$cpid" libpq "examples/c_worker on PostgreSQL"
        expect_unmapped "$cpid" libsqlite3 "examples/c_worker on PostgreSQL"
        has "$cpid" libasan || expect_unmapped "$cpid" libm "examples/c_worker on PostgreSQL"
        echo "libjobd C worker on PostgreSQL: neither SQLite nor libm mapped" \
            "(VmRSS $(awk '/^VmRSS/ { print $2, $3 }' "/proc/$cpid/status"))"
    else
        echo "no $cw: the libjobd C worker is not checked"
    fi
else
    echo "no JOBD_TEST_PG_URL: the PostgreSQL worker is not checked (run under scripts/with-pg.sh)"
fi

# A library missing at run time: a clear error naming it, exit 3 (store unreachable).
set +e
JOBD_TEST_LAZYLIB_MISSING=libpq.so.5 "$JOBD" worker --db postgres://jobd@127.0.0.1:1/x \
    --config "$dir/exec.ini" 2>"$dir/missing.log"
rc=$?
set -e
if grep -q '^JOBD_TEST_HOOKS:BOOL=ON' "${JOBD_BUILD:-/nonexistent}/CMakeCache.txt" 2>/dev/null; then
    grep -q 'cannot load libpq.so.5 (needed for PostgreSQL stores' "$dir/missing.log" ||
        fail "the missing libpq is not named: $(cat "$dir/missing.log")"
    [ "$rc" -eq 3 ] || fail "a missing libpq exited $rc, not 3"
    echo "missing libpq: $(grep 'cannot load' "$dir/missing.log")"
    set +e
    JOBD_TEST_LAZYLIB_MISSING=libsqlite3.so.0 "$JOBD" worker --db "sqlite:$dir/other.db" \
        --config "$dir/exec.ini" 2>"$dir/missing-sqlite.log"
    rc=$?
    set -e
    grep -q 'cannot load libsqlite3.so.0 (needed for SQLite stores' "$dir/missing-sqlite.log" ||
        fail "the missing SQLite is not named: $(cat "$dir/missing-sqlite.log")"
    [ "$rc" -eq 3 ] || fail "a missing SQLite exited $rc, not 3"
    echo "missing SQLite: $(grep 'cannot load' "$dir/missing-sqlite.log")"
else
    echo "this jobd was built without JOBD_TEST_HOOKS: the missing-library seam is not checked"
fi
echo "PASS"
