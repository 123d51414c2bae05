/*
 * storepool.c — see storepool.h. A LIFO stack of idle connections: the
 * most recently used (warmest) connection is handed out first.
 */
#include "api/storepool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

struct store_pool {
    pthread_mutex_t mu;
    char *url;
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
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int
store_pool_get(struct store_pool *p, struct store **out, struct jobd_error *err)
{
    pthread_mutex_lock(&p->mu);
    if (p->n > 0) {
        *out = p->idle[--p->n];
        pthread_mutex_unlock(&p->mu);
        return JOBD_OK;
    }
    pthread_mutex_unlock(&p->mu);
    int rc = store_open(p->url, out, err);
    if (rc != JOBD_OK)
        return rc == JOBD_E_NOMEM ? rc : JOBD_E_UNAVAILABLE;
    if (p->clock != NULL)
        store_set_clock(*out, p->clock);
    return JOBD_OK;
}

void
store_pool_put(struct store_pool *p, struct store *st, int last_rc)
{
    if (st == NULL)
        return;
    if (last_rc == JOBD_E_UNAVAILABLE) {
        store_close(st);
        return;
    }
    pthread_mutex_lock(&p->mu);
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        struct store **v = realloc(p->idle, cap * sizeof *v);
        if (v == NULL) {
            pthread_mutex_unlock(&p->mu);
            store_close(st);
            return;
        }
        p->idle = v;
        p->cap = cap;
    }
    p->idle[p->n++] = st;
    pthread_mutex_unlock(&p->mu);
}

const char *
store_pool_url(const struct store_pool *p)
{
    return p->url;
}
