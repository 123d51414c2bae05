/*
 * h_wait.c — `?wait=DUR` on GET /v1/jobs/{id} and POST /v1/jobs
 * (docs/API.md, Waiting for a result): the query parameter, the 429 when
 * --max-waits are parked, and the answer of a wait once it ends. The
 * waiting itself is api/jobwait.c's: a request parks there as an
 * api_deferred (its connection suspended), holding no thread and no store
 * connection, and is answered from the store's state when it is resumed —
 * read then, on the request's own thread, so the answer is the job as it
 * is when the wait ends, whatever woke it.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "api/jobwait.h"
#include "api/metrics.h"
#include "api/storepool.h"
#include "api/wait.h"
#include "core/duration.h"
#include "core/err.h"

#define WAIT_RETRY_AFTER "1"

bool
api_wait_query(struct api_call *c, int64_t *wait_ms)
{
    *wait_ms = 0;
    const char *v = api_query(c, "wait");
    if (v == NULL)
        return true;
    struct jobd_error err = {0};
    if (duration_parse_ms(v, wait_ms, "wait", &err) != JOBD_OK) {
        api_error(c->resp, 400, "invalid_query", "wait", "%s", err.msg);
        return false;
    }
    if (*wait_ms > JOBWAIT_MAX_MS) {
        api_error(c->resp, 400, "invalid_query", "wait", "wait must be at most 60s, not %s", v);
        return false;
    }
    return true;
}

bool
api_wait_can_park(const struct api_call *c)
{
    return c->ctx->jobwait != NULL && c->ctx->defer_enqueue;
}

bool
api_wait_reserve(struct api_call *c)
{
    if (jobwait_reserve(c->ctx->jobwait))
        return true;
    api_metrics_wait_refused(c->ctx->metrics);
    api_error(c->resp, 429, "too_many_waits", "wait",
              "this server has as many requests waiting for results as it may (--max-waits); "
              "retry later or without wait");
    if (c->resp->n_headers < API_MAX_HEADERS)
        c->resp->headers[c->resp->n_headers++] =
            (struct api_header){"Retry-After", WAIT_RETRY_AFTER};
    return false;
}

void
api_wait_park(struct api_ctx *ctx, struct jw_entry *e, int64_t id, int64_t deadline_mono_us,
              void (*resume)(void *arg), bool (*alive)(void *arg), void *arg)
{
    *e = (struct jw_entry){.job_id = id,
                           .deadline_mono_us = deadline_mono_us,
                           .resume = resume,
                           .alive = alive,
                           .arg = arg};
    jobwait_park(ctx->jobwait, e);
}

int
api_wait_read(struct api_ctx *ctx, int64_t id, struct job *out, struct jobd_error *err)
{
    struct store *st;
    int rc = store_pool_get(ctx->pool, &st, err);
    if (rc != JOBD_OK)
        return rc;
    rc = store_get(st, id, out, err);
    store_pool_put(ctx->pool, st, rc);
    return rc;
}

/* ---- GET /v1/jobs/{id}?wait= ---- */

struct get_wait {
    struct api_deferred base;
    struct api_ctx *ctx;
    int64_t id;
    int64_t deadline_mono_us;
    bool parked; /* the place taken is the thread's to give back */
    struct jw_entry e;
};

static void
get_wait_start(struct api_deferred *d, void (*resume)(void *arg), void *arg)
{
    struct get_wait *g = (struct get_wait *)d;
    g->parked = true;
    api_wait_park(g->ctx, &g->e, g->id, g->deadline_mono_us, resume, d->client_alive, arg);
}

/* Resumed: the job now, whatever it is (200), or what keeps it from being read. */
static void
get_wait_finish(struct api_deferred *d, struct api_response *out)
{
    struct get_wait *g = (struct get_wait *)d;
    struct api_call c = {.ctx = g->ctx, .resp = out, .id = g->id};
    struct job job = {0};
    struct jobd_error err = {0};
    int rc = api_wait_read(g->ctx, g->id, &job, &err);
    if (rc == JOBD_E_NOTFOUND)
        api_error(out, 404, "not_found", "id", "no job with id %" PRId64, g->id);
    else if (rc != JOBD_OK)
        api_error_from(out, rc, &err);
    else
        api_reply_job(&c, 200, &job);
    job_fini(&job);
}

static void
get_wait_free(struct api_deferred *d)
{
    struct get_wait *g = (struct get_wait *)d;
    if (!g->parked)
        jobwait_unreserve(g->ctx->jobwait);
    free(g);
}

bool
api_wait_get(struct api_call *c, const struct job *j, int64_t wait_ms)
{
    if (wait_ms <= 0 || job_status_terminal(j->status) || !api_wait_can_park(c))
        return false;
    struct get_wait *g = calloc(1, sizeof *g);
    if (g == NULL)
        return false; /* answered at once, as if the wait had ended */
    if (!api_wait_reserve(c)) {
        free(g);
        return true;
    }
    g->base = (struct api_deferred){get_wait_start, get_wait_finish, get_wait_free, NULL};
    g->ctx = c->ctx;
    g->id = j->id;
    g->deadline_mono_us = clock_mono_now_us() + wait_ms * 1000;
    c->resp->deferred = &g->base;
    return true;
}
