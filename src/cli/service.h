/*
 * service.h — how `jobd server` and `jobd worker` live as long-running
 * services: they block SIGTERM, SIGINT and SIGHUP in every thread, tell the
 * service manager they are ready (sd_notify), then wait here for a signal
 * in the main thread, pinging the systemd watchdog while they wait.
 */
#ifndef JOBD_CLI_SERVICE_H
#define JOBD_CLI_SERVICE_H

#include <signal.h>

/* Fills *set with SIGTERM, SIGINT and SIGHUP and blocks them in this thread
 * (call before starting any thread, so every thread inherits the mask). */
void service_block_signals(sigset_t *set);

/*
 * Sends READY=1 (with STATUS=status, borrowed), then waits for SIGTERM or
 * SIGINT and returns it, having sent STOPPING=1. Meanwhile it sends
 * WATCHDOG=1 every half $WATCHDOG_USEC, and on SIGHUP sends RELOADING=1,
 * calls on_hup(arg) (may be NULL: nothing to reload) and sends READY=1 with
 * STATUS=status again, or with what on_hup returned when it failed (a
 * one-line text, borrowed until the next call): a failed reload stays
 * visible in `systemctl status` until one succeeds.
 */
int service_run(const sigset_t *set, const char *status, const char *(*on_hup)(void *), void *arg);

#endif
