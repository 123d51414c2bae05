/*
 * storepool.c — see storepool.h. A LIFO stack of idle connections: the
 * most recently used (warmest) connection is handed out first. `open`
 * counts every connection the pool made and has not closed, borrowed or
 * idle; it is what the limit bounds, so a slot is taken before a connect
 * (under the mutex) and given back if the connect fails.
 */
#include "api/storepool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "util/clock.h"

struct store_pool {
    pthread_mutex_t mu;
    pthread_cond_t back; /* a connection came back or was closed */
    char *url;
    char *notify_url;
    size_t open, max; /* max 0: no bound */
    int64_t wait_ms;
    const struct jobd_clock *clock;
    struct store **idle;
    size_t n, cap;
};

int
store_pool_new(const char *url, const struct jobd_clock *clock, struct store_pool **out,
               struct jobd_error *err)
{
    *out = NULL;
    struct store_pool *p = calloc(1, sizeof *p);
    if (p == NULL || (p->url = strdup(url)) == NULL) {
        free(p);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->back, &ca);
    pthread_condattr_destroy(&ca);
    p->clock = clock;
    *out = p;
    return JOBD_OK;
}

void
store_pool_free(struct store_pool *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++)
        store_close(p->idle[i]);
    free(p->idle);
    free(p->url);
    free(p->notify_url);
    pthread_cond_destroy(&p->back);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void
store_pool_limit(struct store_pool *p, size_t max, int64_t wait_ms)
{
    pthread_mutex_lock(&p->mu);
    p->max = max;
    p->wait_ms = wait_ms;
    pthread_mutex_unlock(&p->mu);
}

size_t
store_pool_open_count(struct store_pool *p)
{
    pthread_mutex_lock(&p->mu);
    size_t n = p->open;
    pthread_mutex_unlock(&p->mu);
    return n;
}

int
store_pool_set_notify_url(struct store_pool *p, const char *url, struct jobd_error *err)
{
    char *u = url ? strdup(url) : NULL;
    if (url != NULL && u == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    free(p->notify_url);
    p->notify_url = u;
    return JOBD_OK;
}

const char *
store_pool_notify_url(const struct store_pool *p)
{
    return p->notify_url;
}

/* One fewer open connection (closed, or never made): wakes a waiter. Locked. */
static void
release_slot(struct store_pool *p)
{
    p->open--;
    pthread_cond_signal(&p->back);
}

/*
 * Under the mutex: takes an idle connection (*out) or a slot to open one
 * (*out NULL, JOBD_OK), waiting while the limit is reached; JOBD_E_UNAVAILABLE
 * when the wait ran out.
 */
static int
take_locked(struct store_pool *p, struct store **out, struct jobd_error *err)
{
    struct timespec until = clock_deadline_in(CLOCK_MONOTONIC, (int64_t)p->wait_ms * 1000);
    for (;;) {
        if (p->n > 0) {
            *out = p->idle[--p->n];
            return JOBD_OK;
        }
        if (p->max == 0 || p->open < p->max) {
            p->open++;
            return JOBD_OK;
        }
        if (pthread_cond_timedwait(&p->back, &p->mu, &until) == ETIMEDOUT && p->n == 0 &&
            p->open >= p->max)
            return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db",
                                  "all %zu database connections of this server are in use "
                                  "(--db-connections)",
                                  p->max);
    }
}

int
store_pool_get(struct store_pool *p, struct store **out, struct jobd_error *err)
{
    *out = NULL;
    pthread_mutex_lock(&p->mu);
    int rc = take_locked(p, out, err);
    pthread_mutex_unlock(&p->mu);
    if (rc != JOBD_OK || *out != NULL)
        return rc;
    rc = store_open(p->url, out, err);
    if (rc != JOBD_OK) {
        *out = NULL;
        pthread_mutex_lock(&p->mu);
        release_slot(p);
        pthread_mutex_unlock(&p->mu);
        return rc == JOBD_E_NOMEM ? rc : JOBD_E_UNAVAILABLE;
    }
    if (p->clock != NULL)
        store_set_clock(*out, p->clock);
    return JOBD_OK;
}

void
store_pool_put(struct store_pool *p, struct store *st, int last_rc)
{
    if (st == NULL)
        return;
    if (last_rc == JOBD_E_UNAVAILABLE || last_rc == JOBD_E_COMMIT_UNKNOWN) {
        store_close(st);
        pthread_mutex_lock(&p->mu);
        release_slot(p);
        pthread_mutex_unlock(&p->mu);
        return;
    }
    pthread_mutex_lock(&p->mu);
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        struct store **v = realloc(p->idle, cap * sizeof *v);
        if (v == NULL) {
            release_slot(p);
            pthread_mutex_unlock(&p->mu);
            store_close(st);
            return;
        }
        p->idle = v;
        p->cap = cap;
    }
    p->idle[p->n++] = st;
    pthread_cond_signal(&p->back);
    pthread_mutex_unlock(&p->mu);
}

const char *
store_pool_url(const struct store_pool *p)
{
    return p->url;
}
