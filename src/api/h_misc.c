/*
 * h_misc.c — queues (list, pause, resume), /healthz and /metrics. Queue
 * objects and the jobd_queue_jobs gauges both come from store_queue_stats,
 * so they always agree with each other and with the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "api/metrics.h"
#include "api/storepool.h"
#include "core/err.h"
#include "store/groups.h"
#include "store/operator.h"

void
h_queue_list(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct queue_stat *qs = NULL;
    size_t n = 0;
    struct jobd_error err = {0};
    int rc = store_queue_stats(st, &qs, &n, &err);
    json_t *arr = json_array();
    json_t *o = arr ? json_pack("{s:o}", "queues", arr) : NULL;
    for (size_t i = 0; rc == JOBD_OK && o && i < n; i++)
        if (json_array_append_new(arr, jobjson_queue(&qs[i])) != 0) {
            json_decref(o);
            o = NULL;
        }
    if (rc == JOBD_OK && o != NULL)
        rc = api_queues_add_unhandled(st, arr, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        json_decref(o);
        free(qs);
        return;
    }
    api_json_take(c->resp, 200, jobjson_dump_take(o));
    free(qs);
}

bool
api_queue_name_ok(struct api_call *c)
{
    struct jobd_error err = {0};
    if (c->name_too_long)
        jobd_error_set(&err, JOBD_E_INVALID, "name", "name is longer than %d characters",
                       JOB_QUEUE_MAX);
    else if (job_validate_queue(c->name, "name", &err) == JOBD_OK)
        return true;
    api_error(c->resp, 400, "invalid_field", "name", "%s", err.msg);
    return false;
}

void
api_reply_queue(struct api_call *c, const struct queue_stat *qs, size_t n, bool paused)
{
    struct queue_stat q = {0};
    memcpy(q.name, c->name, strnlen(c->name, JOB_QUEUE_MAX)); /* validated: <= 64 */
    q.paused = paused;
    for (size_t i = 0; i < n; i++)
        if (strcmp(qs[i].name, c->name) == 0)
            q = qs[i];
    api_json_take(c->resp, 200, jobjson_dump_take(jobjson_queue(&q)));
}

static void
queue_set_paused(struct api_call *c, bool paused)
{
    struct jobd_error err = {0};
    if (!api_queue_name_ok(c))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct queue_stat *qs = NULL;
    size_t n = 0;
    int rc = store_queue_pause(st, c->name, paused, &err);
    if (rc == JOBD_OK)
        rc = store_queue_stats(st, &qs, &n, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        free(qs);
        return;
    }
    /* Its jobs are claimable now: parked claims and the embedded worker look again. */
    if (!paused && c->ctx->wake)
        wakeup_signal(c->ctx->wake);
    /* A resumed queue without jobs may not be listed any more: answer zeros. */
    api_reply_queue(c, qs, n, paused);
    free(qs);
}

void
h_queue_pause(struct api_call *c)
{
    queue_set_paused(c, true);
}

void
h_queue_resume(struct api_call *c)
{
    queue_set_paused(c, false);
}

static void
text(struct api_call *c, int status, const char *content_type, char *body)
{
    free(c->resp->body);
    c->resp->status = status;
    c->resp->content_type = content_type;
    c->resp->body = body;
    c->resp->body_len = body ? strlen(body) : 0;
    if (body == NULL)
        api_error(c->resp, 500, "internal", NULL, "out of memory");
}

void
h_healthz(struct api_call *c)
{
    struct store *st = NULL;
    struct jobd_error err = {0};
    int rc = store_pool_get(c->ctx->pool, &st, &err);
    if (rc == JOBD_OK) {
        rc = store_ping(st, &err);
        store_pool_put(c->ctx->pool, st, rc == JOBD_OK ? rc : JOBD_E_UNAVAILABLE);
    }
    if (rc == JOBD_OK)
        text(c, 200, "text/plain; charset=utf-8", strdup("ok\n"));
    else
        text(c, 503, "text/plain; charset=utf-8", strdup("store unavailable\n"));
}

/* The store's workers by state, for jobd_workers; false if it cannot say. */
static bool
count_workers(struct store *st, struct metrics_workers *w)
{
    struct worker_list l = {0};
    struct jobd_error err = {0};
    if (store_worker_list(st, &l, &err) != JOBD_OK) /* at most --max-workers rows */
        return false;
    for (size_t i = 0; i < l.n; i++) {
        int64_t *k = l.v[i].gone ? &w->gone : l.v[i].draining ? &w->draining : &w->active;
        (*k)++;
    }
    worker_list_fini(&l);
    return true;
}

void
h_metrics(struct api_call *c)
{
    struct store *st = NULL;
    struct jobd_error err = {0};
    struct queue_stat *qs = NULL;
    size_t n = 0;
    struct metrics_workers w = {0};
    bool have_workers = false;
    struct queue_group_count *groups = NULL;
    size_t n_groups = 0;
    int rc = store_pool_get(c->ctx->pool, &st, &err);
    if (rc == JOBD_OK) {
        rc = store_queue_stats(st, &qs, &n, &err);
        if (rc == JOBD_OK)
            have_workers = count_workers(st, &w);
        struct jobd_error gerr = {0}; /* left out if the store cannot say */
        if (rc == JOBD_OK && store_queue_group_counts(st, &groups, &n_groups, &gerr) != JOBD_OK)
            n_groups = 0;
        store_pool_put(c->ctx->pool, st, rc);
    }
    if (rc != JOBD_OK) {
        /* The counters are still worth scraping while the store is away. */
        free(qs);
        qs = NULL;
        n = 0;
    }
    text(c, 200, "text/plain; version=0.0.4; charset=utf-8",
         api_metrics_groups(api_metrics_render(c->ctx->metrics, qs, n, have_workers ? &w : NULL),
                            groups, n_groups));
    queue_group_counts_free(groups, n_groups);
    free(qs);
}
