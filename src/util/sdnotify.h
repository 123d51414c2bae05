/*
 * sdnotify.h — the systemd service notification protocol (sd_notify(3)),
 * written here instead of linking libsystemd: one datagram of
 * "KEY=VALUE\n..." to the unix socket named by $NOTIFY_SOCKET (a leading
 * '@' names an abstract socket). jobd server and jobd worker send READY=1
 * once serving, RELOADING=1 / READY=1 around a SIGHUP reload, STOPPING=1
 * when a stop begins, and WATCHDOG=1 every half $WATCHDOG_USEC. Outside
 * systemd ($NOTIFY_SOCKET unset) every call is a no-op. Thread-safe.
 */
#ifndef JOBD_UTIL_SDNOTIFY_H
#define JOBD_UTIL_SDNOTIFY_H

#include <stdint.h>

/*
 * Sends state (e.g. "READY=1", "STOPPING=1\nSTATUS=draining"; borrowed) to
 * $NOTIFY_SOCKET. Returns 1 sent, 0 no socket configured, -1 the socket is
 * unusable (errno set; a service manager that went away is not our failure,
 * so callers log it and go on).
 */
int sdnotify_send(const char *state);

/*
 * The watchdog ping interval in milliseconds: half of $WATCHDOG_USEC when it
 * is set and $WATCHDOG_PID (if set) is this process; 0 if no watchdog is due.
 */
int64_t sdnotify_watchdog_ms(void);

#endif
