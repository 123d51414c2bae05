#!/usr/bin/env bash
# test_units.sh — the systemd units as installed: `systemd-analyze verify`
# is clean for jobd-server.service and an instance of jobd-worker@.service
# (their ExecStart binary, man pages and directives all resolve), they are
# Type=notify with the hardening the docs promise (and `systemd-analyze
# security --offline` rates them 1.5 and 1.8 of 10, both at most 2.0); the
# worker cannot see the tokens file, server.ini or the server's state
# directory and holds only CAP_SETUID/CAP_SETGID, and verify does catch a
# broken unit (so a clean run means something). Running them needs systemd
# as PID 1, which CI does not have: the protocol they rely on is tested by
# test_sdnotify.sh.
set -euo pipefail
build=${JOBD_BUILD:?JOBD_BUILD is not set}
dir=$(mktemp -d "${TMPDIR:-/tmp}/jobd-units.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; cat "$dir/verify.out" 2>/dev/null || true; exit 1; }
command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing (scripts/deps.sh installs systemd)"

# Installed under $dir/usr, so ExecStart names a binary that exists.
cmake --install "$build" --prefix "$dir/usr" >"$dir/install.log" 2>&1 ||
    { cat "$dir/install.log"; fail "cmake --install"; }
units="$dir/usr/lib/systemd/system"
cp "$units/jobd-worker@.service" "$dir/jobd-worker@mail.service"
export MANPATH="$dir/usr/share/man"
systemd-analyze verify "$units/jobd-server.service" "$dir/jobd-worker@mail.service" \
    >"$dir/verify.out" 2>&1 || fail "systemd-analyze verify"
[ ! -s "$dir/verify.out" ] || fail "systemd-analyze verify printed warnings"

for u in "$units/jobd-server.service" "$units/jobd-worker@.service"; do
    for key in Type=notify User=jobd ProtectSystem=strict \
               NoNewPrivileges=true PrivateTmp=true WatchdogSec= \
               'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6'; do
        grep -q "^$key" "$u" || fail "$(basename "$u") lacks $key"
    done
done
grep -q '^StateDirectory=jobd' "$units/jobd-server.service" || fail "the server has no StateDirectory"
grep -q '^ExecReload=/bin/kill -HUP \$MAINPID' "$units/jobd-server.service" ||
    fail "the server unit has no ExecReload sending SIGHUP"
# The check comes first: a bad file fails `systemctl reload` before the signal.
[ "$(grep '^ExecReload=' "$units/jobd-server.service" | head -1)" = \
  "ExecReload=$dir/usr/bin/jobd server --check-config --config $dir/usr/etc/jobd/server.ini" ] ||
    fail "the server unit does not run --check-config before SIGHUP"
"$dir/usr/bin/jobd" server --check-config --config "$dir/usr/etc/jobd/server.ini" >/dev/null ||
    fail "the packaged server.ini does not pass --check-config"
# The worker: handlers (as jobd or a `user =`) cannot read the tokens or the
# server's store, see other users' processes, make setuid files or rename the
# host; CAP_SETUID/CAP_SETGID only for `user =` (test_worker_user.sh).
w="$units/jobd-worker@.service"
for key in "InaccessiblePaths=-/var/lib/jobd -$dir/usr/etc/jobd/tokens -$dir/usr/etc/jobd/server.ini" \
           ProtectProc=invisible RestrictSUIDSGID=true ProtectHostname=true \
           SystemCallFilter=@system-service 'AmbientCapabilities=CAP_SETUID CAP_SETGID' \
           'CapabilityBoundingSet=CAP_SETUID CAP_SETGID' Environment=JOBD_SERVER=; do
    grep -q "^$key" "$w" || fail "jobd-worker@.service lacks $key"
done
! grep -q '^StateDirectory=' "$w" || fail "the worker unit still owns the server's state directory"
grep -q "^ExecStart=$dir/usr/bin/jobd worker --config $dir/usr/etc/jobd/%i.ini$" \
    "$units/jobd-worker@.service" || fail "the worker template does not take its config from %i"

# systemd's own measure of what a unit still allows (0 best, 10 worst): a
# hardening key dropped by mistake raises it past these bounds.
systemd-analyze security --offline=true --threshold=20 "$units/jobd-server.service" \
    >"$dir/security.out" 2>&1 || { cat "$dir/security.out"; fail "jobd-server exposure above 2.0"; }
systemd-analyze security --offline=true --threshold=20 "$dir/jobd-worker@mail.service" \
    >"$dir/security.out" 2>&1 || { cat "$dir/security.out"; fail "jobd-worker exposure above 2.0"; }

# The control: a bad value is a warning (exit 0) that verify prints, and a
# missing binary an error; the clean run above allows neither.
sed 's/^ProtectSystem=strict/ProtectSystem=sometimes/' "$units/jobd-server.service" \
    >"$dir/jobd-server.service"
systemd-analyze verify "$dir/jobd-server.service" >"$dir/bad.out" 2>&1 || true
grep -q "sometimes" "$dir/bad.out" || fail "systemd-analyze verify did not notice a bad ProtectSystem="
sed "s|^ExecStart=$dir/usr/bin/jobd|ExecStart=$dir/none|" "$units/jobd-server.service" \
    >"$dir/jobd-server.service"
if systemd-analyze verify "$dir/jobd-server.service" >"$dir/bad.out" 2>&1; then
    fail "systemd-analyze verify did not notice a missing ExecStart binary"
fi
echo "ok: systemd-analyze verify clean for both units"
