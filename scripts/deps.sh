#!/usr/bin/env bash
# Installs the Debian packages jobd needs to build, test and run, if any are
# missing. As root it runs apt-get; otherwise it prints the exact command and
# fails, so a developer is never surprised by a sudo prompt.
set -euo pipefail

pkgs=(build-essential cmake pkg-config git
      libpq-dev libsqlite3-dev libmicrohttpd-dev libjansson-dev
      libcurl4-openssl-dev libicu-dev libinih-dev
      postgresql-15 postgresql-client-15 tzdata
      clang libclang-rt-14-dev spin iproute2 procps curl python3
      scdoc zsh systemd man-db lintian adduser prometheus nginx-light openssl sqlite3
      clang-format cppcheck
      chromium  # the dashboard's browser suite (tests/ui/; Node.js and npm come with the machine)
      nodejs  # Redocly CLI and ajv for docs/openapi.yaml (tests/openapi/)
      patroni etcd-server pgbouncer  # the HA scenarios (docs/OPERATIONS.md)
      golang-go python3-build python3-setuptools python3-venv mypy)  # the client libraries (clients/)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm: Debian's package, unless a node from elsewhere (NodeSource) brings its
# own npm, which Debian's would conflict with.
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "jobd needs these Debian packages: ${missing[*]}" >&2
    echo "run as root:  apt-get update && $cmd" >&2
    exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# The Debian packages' own services (PostgreSQL, etcd, PgBouncer) are never
# used: the tests start their own. Keep them from starting.
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
