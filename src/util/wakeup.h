/*
 * wakeup.h — an in-process "there may be new work" signal.
 *
 * The API service and an embedded worker share one process; on SQLite there
 * is no LISTEN/NOTIFY, so the API signals this after each committed enqueue
 * (and the scheduling plane after materializing) and the worker waits on it
 * instead of polling. Signals are sticky (a counter), so a signal sent while
 * nobody waits is not lost. Thread-safe.
 */
#ifndef JOBD_UTIL_WAKEUP_H
#define JOBD_UTIL_WAKEUP_H

#include <pthread.h>
#include <stdint.h>

struct wakeup {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    uint64_t seq;      /* bumped by every signal */
    uint64_t cancels;  /* bumped by wakeup_signal_cancel */
};

int wakeup_init(struct wakeup *w);
void wakeup_fini(struct wakeup *w);
/* Wakes every waiter. */
void wakeup_signal(struct wakeup *w);
/*
 * Wakes every waiter and says why: a cancel of a running job was requested
 * (docs/WORKER.md, Cancellation), so a worker holding it heartbeats now.
 */
void wakeup_signal_cancel(struct wakeup *w);
/* How many wakeup_signal_cancel calls there were: a waiter compares. */
uint64_t wakeup_cancels(struct wakeup *w);
/*
 * Waits until a signal newer than *seen arrives or timeout_ms passes.
 * Updates *seen to the latest sequence. Returns 1 if signalled, 0 on timeout.
 */
int wakeup_wait(struct wakeup *w, uint64_t *seen, int timeout_ms);

#endif
