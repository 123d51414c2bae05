/*
 * wakeup.c — see wakeup.h. A sequence counter under a mutex, so a signal
 * that arrives between a waiter's checks is never missed.
 */
#include "util/wakeup.h"

#include <errno.h>
#include <time.h>

#include "util/clock.h"

int
wakeup_init(struct wakeup *w)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&w->cv, &attr);
    pthread_condattr_destroy(&attr);
    if (rc != 0)
        return -1;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        pthread_cond_destroy(&w->cv);
        return -1;
    }
    w->seq = 0;
    w->cancels = 0;
    return 0;
}

void
wakeup_fini(struct wakeup *w)
{
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

void
wakeup_signal(struct wakeup *w)
{
    pthread_mutex_lock(&w->mu);
    w->seq++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void
wakeup_signal_cancel(struct wakeup *w)
{
    pthread_mutex_lock(&w->mu);
    w->seq++;
    w->cancels++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

uint64_t
wakeup_cancels(struct wakeup *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t n = w->cancels;
    pthread_mutex_unlock(&w->mu);
    return n;
}

int
wakeup_wait(struct wakeup *w, uint64_t *seen, int timeout_ms)
{
    struct timespec deadline = clock_deadline_in(CLOCK_MONOTONIC, (int64_t)timeout_ms * 1000);
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (w->seq == *seen && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cv, &w->mu, &deadline);
    int signalled = w->seq != *seen;
    *seen = w->seq;
    pthread_mutex_unlock(&w->mu);
    return signalled;
}
