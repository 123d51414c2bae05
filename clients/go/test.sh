#!/usr/bin/env bash
# test.sh STORE — the Go client's suite (clients/go/tests.cmake runs it for
# ctest): `go vet`, then `go test` against a real `jobd server` ($JOBD_BIN)
# on STORE: "sqlite" (a temporary file) or "pg" (a database of its own in
# $JOBD_TEST_PG_URL's cluster; skipped with 77 when that is unset and
# JOBD_TEST_REQUIRE_PG is not 1). Go's caches live under the build
# directory ($JOBD_BUILD), never in $HOME, and nothing is downloaded.
set -euo pipefail
store=${1:?usage: test.sh sqlite|pg}
here=$(cd "$(dirname "$0")" && pwd)
build=${JOBD_BUILD:-$here/../../build}
command -v go >/dev/null || { echo "FAIL: no go (apt-get install golang-go; scripts/deps.sh)"; exit 1; }
export GOCACHE="$build/go/cache" GOPATH="$build/go/path" GOFLAGS=-mod=mod GOPROXY=off \
    GOTOOLCHAIN=local GONOSUMDB='*' GOSUMDB=off GO111MODULE=on
mkdir -p "$GOCACHE" "$GOPATH"
export JOBD_BIN="${JOBD_BIN:?JOBD_BIN must point at the jobd binary}"

pgdb=""
cleanup() {
    if [ -n "$pgdb" ]; then
        psql -qX "$JOBD_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $pgdb WITH (FORCE)" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
case "$store" in
sqlite) unset JOBD_GO_TEST_DB ;;
pg)
    if [ -z "${JOBD_TEST_PG_URL:-}" ]; then
        [ "${JOBD_TEST_REQUIRE_PG:-}" = 1 ] && { echo "FAIL: JOBD_TEST_REQUIRE_PG=1 but JOBD_TEST_PG_URL is unset"; exit 1; }
        echo "SKIPPED: JOBD_TEST_PG_URL is not set (run under scripts/with-pg.sh)"
        exit 77
    fi
    pgdb="clients_go_$$"
    psql -qX "$JOBD_TEST_PG_URL" -c "CREATE DATABASE $pgdb" >/dev/null
    export JOBD_GO_TEST_DB="${JOBD_TEST_PG_URL%/*}/$pgdb"
    ;;
*) echo "test.sh: unknown store '$store' (sqlite or pg)"; exit 2 ;;
esac
cd "$here"
go vet ./...
go test -count=1 -timeout 300s ./...
