/*
 * service.c — see service.h. The watchdog is pinged from the main thread's
 * signal wait (sigtimedwait), not from a thread of its own, so a main
 * thread that is stuck stops the pings and systemd restarts the service.
 */
#include "cli/service.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/errtext.h"
#include "util/log.h"
#include "util/sdnotify.h"

static void
notify(const char *state)
{
    if (sdnotify_send(state) < 0)
        log_at(LOGL_WARN, "service", "cannot notify the service manager ($NOTIFY_SOCKET)",
               LF_STR("error", errno_text(errno)));
}

void
service_block_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, set, NULL);
}

/* One signal from set, or 0 when timeout_ms (> 0) passed first. */
static int
wait_signal(const sigset_t *set, int64_t timeout_ms)
{
    if (timeout_ms <= 0) {
        int sig = 0;
        return sigwait(set, &sig) == 0 ? sig : 0;
    }
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000};
    int sig = sigtimedwait(set, NULL, &ts);
    return sig > 0 ? sig : 0; /* EAGAIN: timed out; EINTR: another signal */
}

int
service_run(const sigset_t *set, const char *status, const char *(*on_hup)(void *), void *arg)
{
    char ready[320];
    snprintf(ready, sizeof ready, "READY=1\nSTATUS=%s", status);
    notify(ready);
    int64_t ping_ms = sdnotify_watchdog_ms();
    for (;;) {
        int sig = wait_signal(set, ping_ms);
        if (sig == SIGTERM || sig == SIGINT) {
            notify("STOPPING=1\nSTATUS=stopping");
            return sig;
        }
        if (sig == SIGHUP) {
            notify("RELOADING=1\nSTATUS=reloading");
            const char *failed = on_hup != NULL ? on_hup(arg) : NULL;
            if (failed != NULL) {
                char msg[1024];
                /* One line: systemd shows STATUS= as is. */
                snprintf(msg, sizeof msg, "READY=1\nSTATUS=%.1000s", failed);
                for (char *c = msg + 8; *c != '\0'; c++)
                    if (*c == '\n')
                        *c = ' ';
                notify(msg);
            } else {
                notify(ready);
            }
        }
        if (ping_ms > 0)
            notify("WATCHDOG=1");
    }
}
