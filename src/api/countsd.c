/*
 * countsd.c — see countsd.h. One thread, one pass a period: borrow a
 * connection, store_counts_refresh with a max age of the period (so the
 * pass of another server that recounted just now makes this one a cheap
 * read), give the connection back, sleep. The period grows with the
 * recount's duration so that the background work stays a bounded share of
 * the database. A failing store is logged once per streak and retried at
 * the next period: the requests keep answering from the last counts.
 */
#include "api/countsd.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "core/err.h"
#include "store/operator.h"
#include "util/clock.h"
#include "util/log.h"

struct countsd {
    pthread_t thread;
    struct store_pool *pool;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC; signalled by stop */
    bool stop;         /* guarded by mu */
};

/* Sleeps ms or until stop; true if stopping. */
static bool
nap(struct countsd *c, int64_t ms)
{
    struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, ms * 1000);
    pthread_mutex_lock(&c->mu);
    while (!c->stop && pthread_cond_timedwait(&c->cv, &c->mu, &ts) != ETIMEDOUT) {
    }
    bool stop = c->stop;
    pthread_mutex_unlock(&c->mu);
    return stop;
}

/* One pass; returns the next period in ms, or -1 if the store keeps no cache. */
static int64_t
pass(struct countsd *c, int64_t period_ms, int *last_rc)
{
    struct store *st = NULL;
    struct jobd_error err = {0};
    bool recounted = false;
    int rc = store_pool_get(c->pool, &st, &err);
    if (rc == JOBD_OK && !store_counts_cached(st)) {
        store_pool_put(c->pool, st, rc);
        return -1;
    }
    int64_t t0 = clock_mono_now_us();
    if (rc == JOBD_OK) {
        rc = store_counts_refresh(st, period_ms, &recounted, &err);
        store_pool_put(c->pool, st, rc);
    }
    int64_t took_ms = (clock_mono_now_us() - t0) / 1000;
    if (rc != JOBD_OK && rc != *last_rc)
        log_at(LOGL_WARN, "counts", "cannot refresh the queue counts; answering the last ones",
               LF_STR("error", err.msg));
    else if (rc == JOBD_OK && *last_rc != JOBD_OK)
        log_at(LOGL_INFO, "counts", "queue counts refreshed again");
    *last_rc = rc;
    if (!recounted)
        return period_ms;
    int64_t next = took_ms * COUNTSD_SPREAD;
    return next > COUNTSD_MIN_MS ? next : COUNTSD_MIN_MS;
}

static void *
countsd_main(void *arg)
{
    struct countsd *c = arg;
    int64_t period_ms = COUNTSD_MIN_MS;
    int last_rc = JOBD_OK;
    for (;;) {
        period_ms = pass(c, period_ms, &last_rc);
        if (period_ms < 0 || nap(c, period_ms))
            return NULL;
    }
}

int
countsd_start(struct store_pool *pool, struct countsd **out, struct jobd_error *err)
{
    *out = NULL;
    struct countsd *c = calloc(1, sizeof *c);
    if (c == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    c->pool = pool;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&c->thread, NULL, countsd_main, c) != 0) {
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        free(c);
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the counts thread");
    }
    *out = c;
    return JOBD_OK;
}

void
countsd_stop(struct countsd *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
