/*
 * flusher.c — see flusher.h. Two completers: `inbox` (under mu, filled by
 * the loop) and `out` (the thread's own, being written). The thread moves
 * the inbox into out and writes out without holding the lock, so the loop
 * never waits for a store round trip.
 */
#include "worker/flusher.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/backoff.h"
#include "core/err.h"
#include "util/clock.h"
#include "util/errtext.h"
#include "util/log.h"

#include "worker/worker.h"


struct flusher {
    char *url;
    flusher_open_fn open;
    struct wakeup *notify;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* CLOCK_MONOTONIC */
    struct completer inbox; /* under mu */
    bool quit;              /* under mu */
    atomic_size_t pending;
    _Atomic uint64_t written, stale, batches;
    struct store *st;     /* thread only */
    struct completer out; /* thread only */
};

/* Appends every item of from to to and empties from. False on OOM (nothing moved). */
static bool
move_all(struct completer *to, struct completer *from)
{
    if (from->n == 0)
        return true;
    if (to->n == 0) { /* the common case: swap the arrays, no copy */
        struct completion *v = to->v;
        size_t cap = to->cap;
        to->v = from->v;
        to->cap = from->cap;
        to->n = from->n;
        from->v = v;
        from->cap = cap;
        from->n = 0;
        return true;
    }
    if (to->n + from->n > to->cap) {
        size_t ncap = (to->n + from->n) * 2;
        struct completion *v = realloc(to->v, ncap * sizeof *v);
        if (v == NULL)
            return false;
        to->v = v;
        to->cap = ncap;
    }
    memcpy(to->v + to->n, from->v, from->n * sizeof *from->v);
    to->n += from->n;
    from->n = 0;
    return true;
}

static void *
flusher_main(void *arg)
{
    struct flusher *f = arg;
    /* The worker loop's reset rule: a connection that writes once and then
     * fails keeps backing off; one that lasted starts over. */
    struct backoff_conn bo;
    backoff_conn_init(&bo, WORKER_RECONNECT_MIN_MS, WORKER_RECONNECT_MAX_MS,
                      WORKER_RECONNECT_HEALTHY_MS);
    int64_t backoff_ms = 0;
    bool retry_wait = false;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        if (retry_wait && !f->quit) {
            struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, backoff_ms * 1000);
            while (!f->quit && pthread_cond_timedwait(&f->cv, &f->mu, &ts) != ETIMEDOUT)
                ;
        }
        while (!f->quit && f->inbox.n == 0 && f->out.n == 0)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->quit) {
            pthread_mutex_unlock(&f->mu);
            return NULL;
        }
        bool moved = move_all(&f->out, &f->inbox);
        pthread_mutex_unlock(&f->mu);
        (void)moved; /* on OOM the inbox waits for the next turn */

        struct jobd_error err = {0};
        retry_wait = false;
        if (f->st == NULL) {
            if (f->open(f->url, &f->st, &err) != JOBD_OK) {
                f->st = NULL;
                retry_wait = true;
                backoff_ms = backoff_conn_failed(&bo, clock_mono_now_us() / 1000);
                continue;
            }
            backoff_conn_opened(&bo, clock_mono_now_us() / 1000);
        }
        uint64_t w0 = f->out.written, s0 = f->out.stale, b0 = f->out.batches;
        uint64_t r0 = f->out.refused;
        int rc = completer_flush(&f->out, f->st, &err);
        uint64_t dw = f->out.written - w0, ds = f->out.stale - s0;
        atomic_fetch_add(&f->written, dw);
        atomic_fetch_add(&f->stale, ds);
        atomic_fetch_add(&f->batches, f->out.batches - b0);
        atomic_fetch_sub(&f->pending, (size_t)(dw + ds + (f->out.refused - r0)));
        if (rc != JOBD_OK) {
            log_at(LOGL_WARN, "flusher", "store error writing completions; reconnecting",
                   LF_STR("error", err.msg[0] ? err.msg : jobd_strerror(rc)));
            store_close(f->st);
            f->st = NULL;
            retry_wait = true;
            backoff_ms = backoff_conn_failed(&bo, clock_mono_now_us() / 1000);
        }
        if (f->notify != NULL)
            wakeup_signal(f->notify);
    }
}

int
flusher_start(const char *url, flusher_open_fn open, struct wakeup *notify, struct flusher **out,
              struct jobd_error *err)
{
    *out = NULL;
    struct flusher *f = calloc(1, sizeof *f);
    if (f == NULL || (f->url = strdup(url)) == NULL) {
        free(f);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    f->open = open;
    f->notify = notify;
    completer_init(&f->inbox);
    completer_init(&f->out);
    atomic_init(&f->pending, 0);
    pthread_mutex_init(&f->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->cv, &ca);
    pthread_condattr_destroy(&ca);
    int rc = open(url, &f->st, err);
    if (rc == JOBD_OK) {
        int prc = pthread_create(&f->thread, NULL, flusher_main, f);
        if (prc != 0)
            rc = jobd_error_set(err, JOBD_E_IO, NULL, "cannot start a thread: %s", errno_text(prc));
    }
    if (rc != JOBD_OK) {
        store_close(f->st);
        pthread_cond_destroy(&f->cv);
        pthread_mutex_destroy(&f->mu);
        free(f->url);
        free(f);
        return rc;
    }
    *out = f;
    return JOBD_OK;
}

bool
flusher_push(struct flusher *f, struct completer *from)
{
    size_t n = from->n;
    if (n == 0)
        return true;
    pthread_mutex_lock(&f->mu);
    bool wake = f->inbox.n == 0; /* otherwise a signal is already on its way */
    bool ok = move_all(&f->inbox, from);
    if (ok) {
        atomic_fetch_add(&f->pending, n);
        if (wake)
            pthread_cond_signal(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
    return ok;
}

size_t
flusher_pending(struct flusher *f)
{
    return atomic_load(&f->pending);
}

void
flusher_take_counts(struct flusher *f, uint64_t *written, uint64_t *stale, uint64_t *batches)
{
    *written += atomic_exchange(&f->written, 0);
    *stale += atomic_exchange(&f->stale, 0);
    *batches += atomic_exchange(&f->batches, 0);
}

void
flusher_stop(struct flusher *f)
{
    if (f == NULL)
        return;
    pthread_mutex_lock(&f->mu);
    f->quit = true;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    store_close(f->st);
    completer_fini(&f->inbox);
    completer_fini(&f->out);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f->url);
    free(f);
}
