/*
 * h_bulk.c — deleting jobs and bulk actions: DELETE /v1/jobs/{id} and
 * POST /v1/jobs/bulk {action, filter, limit}.
 *
 * A bulk action runs as a loop of store_bulk_batch calls of at most
 * STORE_BULK_BATCH jobs, each its own transaction on a connection borrowed
 * for that batch only, so one request never holds the store (and the
 * claims waiting on it) longer than one batch, whatever its limit. The loop
 * runs on its own thread, off the HTTP threads (see struct bulk_job).
 *
 * Each such thread costs a thread and a stream of batches, so at most
 * ctx->max_bulk run at once (--max-bulk; more are 429 with Retry-After), and
 * an action whose client has gone stops after the batch under way: nobody
 * is left to read how far it got (docs/API.md, POST /v1/jobs/bulk).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "api/jobwait.h"
#include "api/metrics.h"
#include "api/storepool.h"
#include "core/err.h"
#include "core/timefmt.h"
#include "store/operator.h"

#define BULK_DEFAULT_LIMIT 10000

static const char *const bulk_fields[] = {"action", "filter", "limit", NULL};
static const char *const filter_fields[] = {
    "status", "queue", "type", "schedule", "created_after", "created_before", "ids", "key", NULL};

void
h_job_delete(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct jobd_error err = {0};
    int rc = store_delete(st, c->id, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND)
        api_error(c->resp, 404, "not_found", "id", "no job with id %" PRId64, c->id);
    else if (rc == JOBD_E_STATE && strcmp(err.field, "depends_on") == 0)
        api_error(c->resp, 409, "has_waiting_dependents", "id", "%s", err.msg);
    else if (rc == JOBD_E_STATE)
        api_error(c->resp, 409, "job_running", "status",
                  "job %" PRId64 " is running: cancel it first", c->id);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else {
        jobwait_signal(c->ctx->jobwait); /* a wait for it is answered 404 */
        c->resp->status = 204;
    }
}

int
api_parse_created(const char *after, const char *before, struct job_filter *f,
                  struct jobd_error *err)
{
    int rc = JOBD_OK;
    if (after != NULL)
        rc = time_parse_rfc3339(after, &f->created_after_us, "created_after", err);
    if (rc == JOBD_OK && before != NULL)
        rc = time_parse_rfc3339(before, &f->created_before_us, "created_before", err);
    return rc;
}

/* The ids of the filter: an array of 1..JOB_BULK_MAX positive integers (malloc'd). */
static int
parse_ids(json_t *v, int64_t **ids, size_t *n, struct jobd_error *err)
{
    if (!json_is_array(v) || json_array_size(v) > JOB_BULK_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "filter.ids",
                              "ids must be an array of at most %d job ids", JOB_BULK_MAX);
    *n = json_array_size(v);
    *ids = malloc((*n ? *n : 1) * sizeof **ids);
    if (*ids == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < *n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e) || json_integer_value(e) < 1)
            return jobd_error_set(err, JOBD_E_INVALID, "filter.ids",
                                  "ids[%zu] must be a positive integer job id", i);
        (*ids)[i] = json_integer_value(e);
    }
    return JOBD_OK;
}

/* The names of the filter (status, queue, type, schedule, key), validated. */
static int
parse_names(json_t *flt, struct job_filter *f, struct jobd_error *err)
{
    const char *status = NULL;
    int rc = jobjson_get_str(flt, "status", "filter.", false, &status, err);
    if (rc == JOBD_OK && status != NULL) {
        enum job_status s;
        if (job_status_parse(status, &s) != JOBD_OK)
            return jobd_error_set(err, JOBD_E_INVALID, "filter.status",
                                  "status must be pending, running, succeeded, dead or "
                                  "cancelled");
        f->status = (int)s;
    }
    if (rc == JOBD_OK)
        rc = jobjson_get_str(flt, "queue", "filter.", false, &f->queue, err);
    if (rc == JOBD_OK && f->queue)
        rc = job_validate_queue(f->queue, "filter.queue", err);
    if (rc == JOBD_OK)
        rc = jobjson_get_str(flt, "type", "filter.", false, &f->type, err);
    if (rc == JOBD_OK && f->type)
        rc = job_validate_type(f->type, "filter.type", err);
    if (rc == JOBD_OK)
        rc = jobjson_get_str(flt, "schedule", "filter.", false, &f->schedule, err);
    if (rc == JOBD_OK && f->schedule)
        rc = job_validate_type(f->schedule, "filter.schedule", err);
    if (rc == JOBD_OK)
        rc = jobjson_get_str(flt, "key", "filter.", false, &f->key, err);
    return rc;
}

/*
 * How many fields of the filter are not null. A null field is absent
 * (docs/API.md, POST /v1/jobs/bulk): {"status": null} names nothing, and
 * must not pass for a filter that matches every job.
 */
static size_t
named_fields(json_t *flt)
{
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(flt, k, v) {
        (void)k;
        n += !json_is_null(v);
    }
    return n;
}

/* Reads {action, filter, limit} into r and *limit; r->ids is malloc'd (free it). */
static int
parse_bulk(json_t *o, struct bulk_req *r, int64_t *limit, struct jobd_error *err)
{
    static const char *const actions[] = {"retry", "cancel", "delete"};
    const char *action = NULL;
    int rc = jobjson_get_str(o, "action", NULL, true, &action, err);
    if (rc != JOBD_OK)
        return rc;
    size_t k = 0;
    while (k < 3 && strcmp(action, actions[k]) != 0)
        k++;
    if (k == 3)
        return jobd_error_set(err, JOBD_E_INVALID, "action",
                              "action must be retry, cancel or delete");
    r->action = (enum bulk_action)k;
    *limit = BULK_DEFAULT_LIMIT;
    if ((rc = jobjson_get_int(o, "limit", NULL, false, 1, JOB_BULK_MAX, limit, err)))
        return rc;
    json_t *flt = json_object_get(o, "filter");
    if (!json_is_object(flt) || named_fields(flt) == 0)
        return jobd_error_set(err, JOBD_E_INVALID, "filter",
                              "the filter must name at least one of status, queue, type, "
                              "schedule, created_after, created_before, ids");
    if ((rc = jobjson_check_fields(flt, filter_fields, "filter.", err)) != JOBD_OK)
        return rc;
    r->f.status = STORE_ANY;
    if ((rc = parse_names(flt, &r->f, err)) != JOBD_OK)
        return rc;
    const char *after = NULL, *before = NULL;
    if ((rc = jobjson_get_str(flt, "created_after", "filter.", false, &after, err)) ||
        (rc = jobjson_get_str(flt, "created_before", "filter.", false, &before, err)) ||
        (rc = api_parse_created(after, before, &r->f, err)))
        return rc;
    json_t *ids = json_object_get(flt, "ids");
    if (ids != NULL && !json_is_null(ids)) {
        int64_t *v = NULL;
        rc = parse_ids(ids, &v, &r->n_ids, err);
        r->ids = v;
    }
    return rc;
}

/*
 * Between two batches the action steps aside this long. SQLite serializes
 * writers, and a claimer waiting for the lock polls it every 0.1 to 2 ms
 * (sqlite/open.c, sq_busy): starting the next batch at once would win the
 * lock again and again, holding claims up for many batches, not one.
 */
#define BULK_PAUSE_NS (5 * 1000 * 1000)

/* Seconds a client refused for too many bulk actions is told to wait. */
#define BULK_RETRY_AFTER "5"

/* Whether the client that asked is still there (true when it cannot be told). */
typedef bool (*bulk_alive_fn)(void *arg);

/* Runs the action in batches until limit jobs matched or none are left, or
 * (alive given) the client goes: then JOBD_E_UNAVAILABLE "client gone". */
static int
run_bulk(struct api_ctx *ctx, const struct bulk_req *r, int64_t limit, struct bulk_counts *n,
         bulk_alive_fn alive, void *arg, struct jobd_error *err)
{
    int64_t cursor = 0;
    do {
        if (alive != NULL && !alive(arg))
            return jobd_error_set(err, JOBD_E_UNAVAILABLE, NULL,
                                  "the client went away: stopped after %lld matched",
                                  (long long)n->matched);
        struct store *st;
        int rc = store_pool_get(ctx->pool, &st, err);
        if (rc != JOBD_OK)
            return rc == JOBD_E_NOMEM ? rc : JOBD_E_UNAVAILABLE;
        int64_t left = limit - n->matched;
        int batch = left < STORE_BULK_BATCH ? (int)left : STORE_BULK_BATCH;
        rc = store_bulk_batch(st, r, batch, &cursor, n, err);
        store_pool_put(ctx->pool, st, rc);
        if (rc != JOBD_OK)
            return rc;
        if (cursor != 0 && n->matched < limit)
            nanosleep(&(struct timespec){0, BULK_PAUSE_NS}, NULL);
    } while (cursor != 0 && n->matched < limit);
    return JOBD_OK;
}

/*
 * A bulk request in flight. It runs on a thread of its own (api_deferred):
 * on an HTTP thread it would stall every other connection that thread
 * serves, claims included, for the whole action instead of one batch.
 */
struct bulk_job {
    struct api_deferred base;
    struct api_ctx *ctx;
    json_t *o; /* the body; r's strings point into it */
    struct bulk_req r;
    int64_t limit;
    struct bulk_counts n;
    int rc;
    struct jobd_error err;
    void (*resume)(void *arg);
    void *arg;
    bool placed; /* holds one of ctx->max_bulk places until freed */
};

static void *
bulk_thread(void *arg)
{
    struct bulk_job *b = arg;
    b->rc = run_bulk(b->ctx, &b->r, b->limit, &b->n, b->base.client_alive, b->arg, &b->err);
    b->resume(b->arg);
    return NULL;
}

static void
bulk_start(struct api_deferred *d, void (*resume)(void *arg), void *arg)
{
    struct bulk_job *b = (struct bulk_job *)d;
    b->resume = resume;
    b->arg = arg;
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &at, bulk_thread, b) != 0)
        bulk_thread(b); /* no thread to be had: run here rather than fail */
    pthread_attr_destroy(&at);
}

/* Answers with the counts (or how far a failed action got). */
static void
bulk_finish(struct api_deferred *d, struct api_response *out)
{
    struct bulk_job *b = (struct bulk_job *)d;
    const struct bulk_counts *n = &b->n;
    if (b->rc != JOBD_OK && n->matched == 0) {
        api_error_from(out, b->rc, &b->err);
        return;
    }
    api_metrics_ended(b->ctx->metrics, JOB_CANCELLED, (uint64_t)n->cancelled);
    if (b->r.action != BULK_RETRY && n->changed > 0)
        jobwait_signal(b->ctx->jobwait); /* ended or deleted: answer their waits */
    if (b->r.action == BULK_RETRY && n->changed > 0 && b->ctx->wake)
        wakeup_signal(b->ctx->wake);
    /* Running jobs had a cancel requested: an embedded worker holding one
     * stops it now (docs/WORKER.md, Cancellation). */
    if (b->r.action == BULK_CANCEL && n->changed > n->cancelled && b->ctx->wake)
        wakeup_signal_cancel(b->ctx->wake);
    if (b->rc != JOBD_OK) { /* some batches were done: say how far it got */
        api_error(out, b->rc == JOBD_E_UNAVAILABLE ? 503 : 500, "bulk_incomplete", NULL,
                  "stopped after %" PRId64 " matched and %" PRId64 " changed: %s", n->matched,
                  n->changed, b->err.msg);
        return;
    }
    api_json_take(out, 200,
                  jobjson_dump_take(json_pack("{s:I, s:I, s:I}", "matched", (json_int_t)n->matched,
                                              "changed", (json_int_t)n->changed, "skipped",
                                              (json_int_t)(n->matched - n->changed))));
}

/*
 * Takes one of ctx->max_bulk places for an action; false (after answering
 * 429 with Retry-After) when all are taken. bulk_free gives it back.
 */
static bool
take_place(struct api_call *c)
{
    int max = c->ctx->max_bulk;
    if (atomic_fetch_add(&c->ctx->bulk_running, 1) < max || max <= 0)
        return true;
    atomic_fetch_sub(&c->ctx->bulk_running, 1);
    api_error(c->resp, 429, "too_many_bulk", NULL,
              "%d bulk actions are running, the most this server runs at once (--max-bulk): "
              "try again in " BULK_RETRY_AFTER " s",
              max);
    if (c->resp->n_headers < API_MAX_HEADERS)
        c->resp->headers[c->resp->n_headers++] =
            (struct api_header){"Retry-After", BULK_RETRY_AFTER};
    return false;
}

static void
bulk_free(struct api_deferred *d)
{
    struct bulk_job *b = (struct bulk_job *)d;
    if (b->placed)
        atomic_fetch_sub(&b->ctx->bulk_running, 1);
    free((void *)b->r.ids);
    json_decref(b->o);
    free(b);
}

void
h_job_bulk(struct api_call *c)
{
    struct bulk_job *b = calloc(1, sizeof *b);
    if (b == NULL) {
        api_error_from(c->resp, JOBD_E_NOMEM, NULL);
        return;
    }
    b->base = (struct api_deferred){bulk_start, bulk_finish, bulk_free, NULL};
    b->ctx = c->ctx;
    if ((b->o = api_body_object(c, bulk_fields)) == NULL) {
        bulk_free(&b->base);
        return;
    }
    int rc = parse_bulk(b->o, &b->r, &b->limit, &b->err);
    if (rc != JOBD_OK) {
        if (rc == JOBD_E_INVALID && strcmp(b->err.field, "filter") == 0)
            api_error(c->resp, 400, "empty_filter", "filter", "%s", b->err.msg);
        else
            api_error_from(c->resp, rc, &b->err);
        bulk_free(&b->base);
        return;
    }
    /* Deleting in bulk destroys history a retry or cancel keeps: admin only. */
    if (b->r.action == BULK_DELETE && !api_require_role(c, API_ROLE_ADMIN, "bulk delete")) {
        bulk_free(&b->base);
        return;
    }
    if (c->ctx->defer_enqueue) {
        if (!(b->placed = take_place(c))) {
            bulk_free(&b->base);
            return;
        }
        c->resp->deferred = &b->base;
        return;
    }
    b->rc = run_bulk(c->ctx, &b->r, b->limit, &b->n, NULL, NULL, &b->err);
    bulk_finish(&b->base, c->resp);
    bulk_free(&b->base);
}
