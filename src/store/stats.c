/*
 * stats.c — the backend-independent half of store/stats.h: arguments are
 * checked and series laid out (aligned points, zeros where nothing
 * happened) once here, so a backend only sums its bucket rows.
 */
#include "store/stats.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator.h"
#include "store/stats_int.h"

/* The operator vtable of st if it keeps statistics, else NULL. */
static const struct store_operator_ops *
stats_ops(const struct store *st)
{
    const struct store_operator_ops *o = st->ops->oper;
    return o != NULL && o->stats_series != NULL ? o : NULL;
}

static int
no_stats(const struct store *st, struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "the %s store keeps no statistics",
                          st->ops->name);
}

/* Floor division for times that may be negative (a manual clock before 1970). */
static int64_t
floor_to(int64_t t, int64_t step)
{
    int64_t q = t / step;
    if (t % step != 0 && t < 0)
        q--;
    return q * step;
}

static int64_t
floor_s(int64_t us)
{
    return floor_to(us, 1000000) / 1000000;
}

int
store_stats_series(struct store *st, int64_t since_s, int64_t step_s, const char *queue,
                   struct stats_series *out, struct jobd_error *err)
{
    const struct store_operator_ops *o = stats_ops(st);
    if (o == NULL)
        return no_stats(st, err);
    if (since_s < 1 || since_s > STATS_KEEP_S)
        return jobd_error_set(err, JOBD_E_INVALID, "since", "since must be 1s to 7d");
    if (step_s < STATS_BUCKET_S || step_s % STATS_BUCKET_S != 0)
        return jobd_error_set(err, JOBD_E_INVALID, "step",
                              "step must be a whole multiple of 10s (10s, 1m, 5m, 1h, ...)");
    if (step_s > since_s)
        return jobd_error_set(err, JOBD_E_INVALID, "step", "step must not be longer than since");
    int rc = queue != NULL ? job_validate_queue(queue, "queue", err) : JOBD_OK;
    int64_t now_us = 0;
    if (rc == JOBD_OK)
        rc = store_now(st, &now_us, err);
    if (rc != JOBD_OK)
        return rc;
    size_t n = (size_t)((since_s + step_s - 1) / step_s);
    int64_t end = floor_to(floor_s(now_us), step_s) + step_s;
    int64_t from = end - (int64_t)n * step_s;
    struct stats_point *p = calloc(n, sizeof *p);
    if (p == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        p[i].t_s = from + (int64_t)i * step_s;
    rc = o->stats_series(st, from, step_s, n, queue, p, err);
    if (rc != JOBD_OK) {
        free(p);
        return rc;
    }
    out->step_s = step_s;
    out->points = p;
    out->n = n;
    return JOBD_OK;
}

int
store_stats_throughput(struct store *st, int64_t window_s, struct stats_queue **out, size_t *n,
                       struct jobd_error *err)
{
    *out = NULL;
    *n = 0;
    const struct store_operator_ops *o = stats_ops(st);
    if (o == NULL)
        return no_stats(st, err);
    int64_t now_us = 0;
    int rc = store_now(st, &now_us, err);
    if (rc != JOBD_OK)
        return rc;
    /* the buckets that start after now - window: the current one and those before it */
    int64_t from = floor_to(floor_s(now_us), STATS_BUCKET_S) - window_s + STATS_BUCKET_S;
    return o->stats_throughput(st, from, out, n, err);
}

int
store_stats_prune(struct store *st, int64_t before_s, int *deleted, struct jobd_error *err)
{
    *deleted = 0;
    const struct store_operator_ops *o = stats_ops(st);
    if (o == NULL)
        return no_stats(st, err);
    return o->stats_prune(st, before_s, deleted, err);
}

static int
cmp_queue_name(const void *key, const void *elem)
{
    return strcmp(key, ((const struct stats_queue *)elem)->name);
}

int
store_stats_fill_queues(struct store *st, struct queue_stat *qs, size_t n, struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++)
        memset(&qs[i].throughput_1m, 0, sizeof qs[i].throughput_1m);
    if (stats_ops(st) == NULL || n == 0)
        return JOBD_OK;
    struct stats_queue *tq = NULL;
    size_t tn = 0;
    int rc = store_stats_throughput(st, STATS_THROUGHPUT_S, &tq, &tn, err);
    for (size_t i = 0; rc == JOBD_OK && tn > 0 && i < n; i++) {
        const struct stats_queue *q = bsearch(qs[i].name, tq, tn, sizeof *tq, cmp_queue_name);
        if (q == NULL)
            continue;
        qs[i].throughput_1m.succeeded = q->n[STATS_SUCCEEDED];
        qs[i].throughput_1m.failed = q->n[STATS_FAILED];
        qs[i].throughput_1m.dead = q->n[STATS_DEAD];
    }
    free(tq);
    return rc;
}

/* Here, not in store.c, so that store.c and stats.c do not call each other. */
int
store_queue_stats(struct store *st, struct queue_stat **out, size_t *n, struct jobd_error *err)
{
    *out = NULL;
    *n = 0;
    if (st->ops->queue_stats == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "db", "the %s store cannot queue_stats",
                              st->ops->name); /* as store.c's missing_op says it */
    int rc = st->ops->queue_stats(st, out, n, err);
    if (rc == JOBD_OK && (rc = store_stats_fill_queues(st, *out, *n, err)) != JOBD_OK) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
