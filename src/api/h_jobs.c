/*
 * h_jobs.c — the job routes for clients: create (through the group
 * committer), batch create, read, list with a cursor, cancel, retry. Each
 * validates everything before touching the store, so a bad request writes
 * nothing, and answers with the job object of docs/API.md, "The job object".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/commit.h"
#include "api/handlers.h"
#include "api/metrics.h"
#include "api/wait.h"
#include "core/err.h"
#include "store/progress.h"

static const char *const batch_fields[] = {"jobs", NULL};

static void
enqueue_error(struct api_call *c, int rc, const struct jobd_error *err)
{
    if (rc == JOBD_E_CONFLICT)
        api_error(c->resp, 409, "idempotency_conflict",
                  err->field[0] ? err->field : "idempotency_key", "%s",
                  err->msg[0] ? err->msg : "the idempotency key was used for a different request");
    else
        api_error_from(c->resp, rc, err);
}

/*
 * The header of an enqueue that made no job (docs/API.md, POST /v1/jobs): a
 * debounce that replaced its pending job says `Debounced: true`; a replay
 * of an idempotency key or a job inside its unique window says
 * `Idempotent-Replayed: true`.
 */
static void
mark_replayed(struct api_response *r, const struct job_spec *spec, bool replayed)
{
    if (!replayed)
        return;
    if (spec->debounce.key == NULL)
        r->replayed = true;
    else if (r->n_headers < API_MAX_HEADERS)
        r->headers[r->n_headers++] = (struct api_header){"Debounced", "true"};
}

/*
 * POST /v1/jobs through the committer without holding the HTTP thread: the
 * parsed request (its json, spec and owned strings) lives here until the
 * commit is done, then finish answers exactly as the waiting path does.
 */
struct create_deferred {
    struct api_deferred base;
    struct api_ctx *ctx;
    json_t *o;
    struct job_spec spec;
    struct spec_owned owned;
    struct job job;
    struct commit_item it;
    /* ?wait= (docs/API.md, Waiting for a result): a place was taken
     * (reserved) before the enqueue; once committed, the job is parked
     * until it ends or deadline_mono_us passes (parked: the place is the
     * waits thread's to give back). */
    int64_t wait_ms;
    int64_t deadline_mono_us;
    bool reserved, parked;
    void (*resume)(void *arg);
    void *resume_arg;
    struct jw_entry e;
};

/* The committer is done (its thread): answer now, or wait for the job to end. */
static void
create_committed(void *arg)
{
    struct create_deferred *cd = arg;
    if (cd->it.rc == JOBD_OK && !job_status_terminal(cd->job.status)) {
        cd->parked = true;
        api_wait_park(cd->ctx, &cd->e, cd->job.id, cd->deadline_mono_us, cd->resume,
                      cd->base.client_alive, cd->resume_arg);
        return;
    }
    cd->resume(cd->resume_arg);
}

static void
create_start(struct api_deferred *d, void (*resume)(void *arg), void *arg)
{
    struct create_deferred *cd = (struct create_deferred *)d;
    cd->it = (struct commit_item){
        .spec = &cd->spec, .out = &cd->job, .done_fn = resume, .done_arg = arg};
    if (cd->reserved) {
        cd->resume = resume;
        cd->resume_arg = arg;
        cd->it.done_fn = create_committed;
        cd->it.done_arg = cd;
    }
    committer_submit(cd->ctx->committer, &cd->it);
}

/*
 * The answer of an enqueue that waited: the job as it is now, 201 when it
 * is terminal (200 for a replay, with Idempotent-Replayed as always), else
 * 202. If it cannot be read now, 202 with the job as it was enqueued: it
 * was written, so no error may say otherwise.
 */
static void
create_waited(struct create_deferred *cd, struct api_call *c)
{
    struct job now = {0};
    struct jobd_error err = {0};
    const struct job *j = &cd->job;
    if (api_wait_read(cd->ctx, cd->job.id, &now, &err) == JOBD_OK)
        j = &now;
    int status = !job_status_terminal(j->status) ? 202 : cd->it.replayed ? 200 : 201;
    api_reply_job(c, status, j);
    job_fini(&now);
}

static void
create_finish(struct api_deferred *d, struct api_response *out)
{
    struct create_deferred *cd = (struct create_deferred *)d;
    struct api_call c = {.ctx = cd->ctx, .resp = out};
    if (cd->it.rc != JOBD_OK) {
        enqueue_error(&c, cd->it.rc, &cd->it.err);
        return;
    }
    if (!cd->it.replayed)
        api_metrics_enqueued(cd->ctx->metrics, 1);
    mark_replayed(out, &cd->spec, cd->it.replayed);
    if (cd->parked)
        create_waited(cd, &c);
    else
        api_reply_job(&c, cd->it.replayed ? 200 : 201, &cd->job);
}

static void
create_free(struct api_deferred *d)
{
    struct create_deferred *cd = (struct create_deferred *)d;
    if (cd->reserved && !cd->parked)
        jobwait_unreserve(cd->ctx->jobwait);
    job_fini(&cd->job);
    jobjson_spec_fini(&cd->owned);
    json_decref(cd->o);
    free(cd);
}

void
h_job_create(struct api_call *c)
{
    int64_t wait_ms;
    if (!api_wait_query(c, &wait_ms))
        return;
    json_t *o = api_body_object(c, jobjson_job_fields);
    if (o == NULL)
        return;
    struct job_spec spec;
    struct spec_owned owned = {0};
    struct jobd_error err = {0};
    struct job job = {0};
    bool replayed = false;
    int rc = jobjson_spec(o, NULL, c->req->idempotency_key, c->req->traceparent, api_now_us(c),
                          &spec, &owned, &err);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        goto out;
    }
    if (c->ctx->committer != NULL && c->ctx->defer_enqueue) {
        struct create_deferred *cd = calloc(1, sizeof *cd);
        if (cd == NULL) {
            api_error_from(c->resp, JOBD_E_NOMEM, NULL);
            goto out;
        }
        cd->base = (struct api_deferred){create_start, create_finish, create_free, NULL};
        cd->ctx = c->ctx;
        cd->o = o; /* the spec's strings point into o and owned */
        cd->spec = spec;
        cd->owned = owned;
        if (wait_ms > 0 && api_wait_can_park(c)) {
            /* The place first: refused (429), nothing is written. */
            if (!api_wait_reserve(c)) {
                create_free(&cd->base);
                return;
            }
            cd->reserved = true;
            cd->wait_ms = wait_ms;
            cd->deadline_mono_us = clock_mono_now_us() + wait_ms * 1000;
        }
        c->resp->deferred = &cd->base;
        return;
    }
    if (c->ctx->committer != NULL) {
        rc = committer_enqueue(c->ctx->committer, &spec, &job, &replayed, &err);
    } else {
        struct store *st;
        if (!api_store_get(c, &st))
            goto out;
        rc = store_enqueue(st, &spec, &job, &replayed, &err);
        api_store_put(c, st, rc);
        if (rc == JOBD_OK && !replayed && c->ctx->wake)
            wakeup_signal(c->ctx->wake);
    }
    if (rc != JOBD_OK) {
        enqueue_error(c, rc, &err);
        goto out;
    }
    if (!replayed)
        api_metrics_enqueued(c->ctx->metrics, 1);
    mark_replayed(c->resp, &spec, replayed);
    /* No parking here (no deferred answers): a wait ends at once. */
    api_reply_job(c,
                  wait_ms > 0 && !job_status_terminal(job.status) ? 202
                  : replayed                                      ? 200
                                                                  : 201,
                  &job);
out:
    job_fini(&job);
    jobjson_spec_fini(&owned);
    json_decref(o);
}

/* Parses every item of a batch into specs/owned (n entries). */
static int
batch_specs(struct api_call *c, json_t *arr, struct job_spec *specs, struct spec_owned *owned,
            struct jobd_error *err, bool *unknown)
{
    int64_t now = api_now_us(c);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        char prefix[40];
        snprintf(prefix, sizeof prefix, "jobs[%zu].", i);
        json_t *item = json_array_get(arr, i);
        if (!json_is_object(item))
            return jobd_error_set(err, JOBD_E_INVALID, prefix, "jobs[%zu] must be an object", i);
        int rc = jobjson_check_fields(item, jobjson_job_fields, prefix, err);
        if (rc != JOBD_OK) {
            *unknown = true;
            return rc;
        }
        rc = jobjson_spec(item, prefix, NULL, NULL, now, &specs[i], &owned[i], err);
        if (rc != JOBD_OK)
            return rc;
    }
    return JOBD_OK;
}

void
h_job_batch(struct api_call *c)
{
    json_t *o = api_body_object(c, batch_fields);
    if (o == NULL)
        return;
    json_t *arr = json_object_get(o, "jobs");
    struct job_spec *specs = NULL;
    struct spec_owned *owned = NULL;
    struct job *jobs = NULL;
    bool *replayed = NULL;
    size_t n = json_array_size(arr);
    struct jobd_error err = {0};
    if (!json_is_array(arr)) {
        api_error(c->resp, 400, "invalid_field", "jobs", "jobs must be an array of job objects");
        goto out;
    }
    if (n > API_BATCH_JOBS_MAX) {
        api_error(c->resp, 413, "too_large", "jobs", "a batch holds at most %d jobs, not %zu",
                  API_BATCH_JOBS_MAX, n);
        goto out;
    }
    specs = calloc(n + 1, sizeof *specs);
    owned = calloc(n + 1, sizeof *owned);
    jobs = calloc(n + 1, sizeof *jobs);
    replayed = calloc(n + 1, sizeof *replayed);
    if (!specs || !owned || !jobs || !replayed) {
        api_error(c->resp, 500, "internal", NULL, "out of memory");
        goto out;
    }
    bool unknown = false;
    int rc = batch_specs(c, arr, specs, owned, &err, &unknown);
    if (rc != JOBD_OK) {
        if (unknown)
            api_error(c->resp, 400, "unknown_field", err.field, "%s", err.msg);
        else
            api_error_from(c->resp, rc, &err);
        goto out;
    }
    struct store *st;
    if (!api_store_get(c, &st))
        goto out;
    rc = store_enqueue_batch(st, specs, n, jobs, replayed, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        enqueue_error(c, rc, &err);
        goto out;
    }
    size_t fresh = 0;
    for (size_t i = 0; i < n; i++)
        fresh += !replayed[i];
    api_metrics_enqueued(c->ctx->metrics, fresh);
    if (fresh && c->ctx->wake)
        wakeup_signal(c->ctx->wake);
    json_t *list = json_array();
    json_t *res = list ? json_pack("{s:o}", "jobs", list) : NULL;
    for (size_t i = 0; res && i < n; i++)
        if (json_array_append_new(list, jobjson_job(&jobs[i])) != 0) {
            json_decref(res);
            res = NULL;
        }
    api_json_take(c->resp, 201, jobjson_dump_take(res));
out:
    for (size_t i = 0; i < n && jobs; i++)
        job_fini(&jobs[i]);
    for (size_t i = 0; i < n && owned; i++)
        jobjson_spec_fini(&owned[i]);
    free(specs);
    free(owned);
    free(jobs);
    free(replayed);
    json_decref(o);
}

void
h_job_get(struct api_call *c)
{
    int64_t wait_ms;
    if (!api_wait_query(c, &wait_ms))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct job job = {0};
    struct jobd_error err = {0};
    int rc = store_get(st, c->id, &job, &err);
    if (rc == JOBD_OK)
        rc = store_progress_attach(st, &job, 1, &err); /* docs/API.md, The job object */
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND)
        api_error(c->resp, 404, "not_found", "id", "no job with id %" PRId64, c->id);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else if (!api_wait_get(c, &job, wait_ms))
        api_reply_job(c, 200, &job);
    job_fini(&job);
}

static const char *const list_params[] = {
    "status",         "queue", "type", "schedule", "limit", "after", "created_after",
    "created_before", "key",   "due",  "q",        "scan",  "group", NULL};

/* Reads q and scan (docs/API.md, Search) into f, after its due; false after
 * answering 400. */
static bool
search_filter(struct api_call *c, struct job_filter *f)
{
    const char *v;
    if ((v = api_query(c, "q")) != NULL && *v) {
        if (strlen(v) > JOB_SEARCH_TEXT_MAX) {
            api_error(c->resp, 400, "invalid_query", "q", "q must be at most %d bytes",
                      JOB_SEARCH_TEXT_MAX);
            return false;
        }
        f->search = v;
    }
    if ((v = api_query(c, "scan")) != NULL && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (f->search == NULL) {
            api_error(c->resp, 400, "invalid_query", "scan", "scan applies only to a search (q)");
            return false;
        }
        if (*end != '\0' || n < 1 || n > JOB_SEARCH_SCAN_MAX) {
            api_error(c->resp, 400, "invalid_query", "scan",
                      "scan must be an integer between 1 and %d", JOB_SEARCH_SCAN_MAX);
            return false;
        }
        f->scan = (int)n;
    }
    if (f->search != NULL && f->due != JOB_DUE_ANY) {
        api_error(c->resp, 400, "invalid_query", "due", "due cannot be combined with a search (q)");
        return false;
    }
    return true;
}


/* Reads due=true|false (docs/API.md, Jobs: pending jobs due now, or
 * scheduled for later) into f, after its status; false after answering 400. */
static bool
list_due(struct api_call *c, struct job_filter *f)
{
    const char *v = api_query(c, "due");
    if (v == NULL || *v == '\0')
        return true;
    bool now = strcmp(v, "true") == 0;
    if (!now && strcmp(v, "false") != 0) {
        api_error(c->resp, 400, "invalid_query", "due", "due must be true or false");
        return false;
    }
    if (f->status != STORE_ANY && f->status != JOB_PENDING) {
        api_error(c->resp, 400, "invalid_query", "due",
                  "due lists pending jobs only: it cannot be combined with status=%s",
                  job_status_name((enum job_status)f->status));
        return false;
    }
    f->due = now ? JOB_DUE_NOW : JOB_DUE_LATER;
    return true;
}

/* Whether every parameter of the query is one of list_params; false after answering 400. */
static bool
list_known(struct api_call *c)
{
    for (size_t i = 0; i < c->req->n_query; i++) {
        bool ok = false;
        for (size_t k = 0; list_params[k] && !ok; k++)
            ok = strcmp(c->req->query[i].key, list_params[k]) == 0;
        if (!ok) {
            api_error(c->resp, 400, "invalid_query", c->req->query[i].key,
                      "unknown query parameter '%.100s'", c->req->query[i].key);
            return false;
        }
    }
    return true;
}

/* Reads the query of GET /v1/jobs into f; false after answering 400. */
static bool
list_filter(struct api_call *c, struct job_filter *f)
{
    struct jobd_error err = {0};
    if (!list_known(c))
        return false;
    f->status = STORE_ANY;
    const char *v;
    if ((v = api_query(c, "status")) != NULL && *v) {
        enum job_status s;
        if (job_status_parse(v, &s) != JOBD_OK) {
            api_error(c->resp, 400, "invalid_query", "status",
                      "status must be pending, running, succeeded, dead or cancelled");
            return false;
        }
        f->status = (int)s;
    }
    if ((v = api_query(c, "queue")) != NULL && *v) {
        if (job_validate_queue(v, "queue", &err) != JOBD_OK)
            goto bad;
        f->queue = v;
    }
    if ((v = api_query(c, "type")) != NULL && *v) {
        if (job_validate_type(v, "type", &err) != JOBD_OK)
            goto bad;
        f->type = v;
    }
    if ((v = api_query(c, "schedule")) != NULL && *v) {
        if (job_validate_type(v, "schedule", &err) != JOBD_OK)
            goto bad;
        f->schedule = v;
    }
    if (api_parse_created(api_query(c, "created_after"), api_query(c, "created_before"), f, &err) !=
        JOBD_OK)
        goto bad;
    if ((v = api_query(c, "key")) != NULL && *v) {
        if (job_validate_key(v, "key", &err) != JOBD_OK)
            goto bad;
        f->key = v;
    }
    if ((v = api_query(c, "group")) != NULL && *v) {
        if (job_validate_group(v, "group", &err) != JOBD_OK)
            goto bad;
        f->group = v;
    }
    if (!list_due(c, f))
        return false;
    f->limit = JOB_PAGE_DEFAULT;
    if ((v = api_query(c, "limit")) != NULL && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end != '\0' || n < 1 || n > JOB_PAGE_MAX) {
            api_error(c->resp, 400, "invalid_query", "limit",
                      "limit must be an integer between 1 and %d", JOB_PAGE_MAX);
            return false;
        }
        f->limit = (int)n;
    }
    if (!search_filter(c, f))
        return false;
    if ((v = api_query(c, "after")) != NULL && *v) {
        char *end;
        long long n = strtoll(v, &end, 10);
        if (*end != '\0' || n < 1 || v[0] == '-' || v[0] == '+') {
            api_error(c->resp, 400, "invalid_query", "after",
                      "after must be a cursor from a previous page's \"next\"");
            return false;
        }
        f->before_id = n;
    }
    return true;
bad:
    api_error(c->resp, 400, "invalid_query", err.field, "%s", err.msg);
    return false;
}

void
h_job_list(struct api_call *c)
{
    struct job_filter f = {0};
    if (!list_filter(c, &f))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct job_list l = {0};
    struct jobd_error err = {0};
    int64_t next = 0;
    bool partial = false;
    int rc = f.search != NULL ? store_search(st, &f, &l, &next, &partial, &err)
                              : store_list(st, &f, &l, &next, &err);
    if (rc == JOBD_OK)
        rc = store_progress_attach(st, l.v, l.n, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        job_list_fini(&l);
        return;
    }
    json_t *arr = json_array();
    char cursor[24];
    snprintf(cursor, sizeof cursor, "%" PRId64, next);
    json_t *o =
        arr ? json_pack("{s:o, s:o}", "jobs", arr, "next", next ? json_string(cursor) : json_null())
            : NULL;
    /* docs/API.md, Search: whether the scan budget ran out first. */
    if (o != NULL && f.search != NULL &&
        json_object_set_new(o, "partial", json_boolean(partial)) != 0) {
        json_decref(o);
        o = NULL;
    }
    for (size_t i = 0; o && i < l.n; i++)
        if (json_array_append_new(arr, jobjson_job(&l.v[i])) != 0) {
            json_decref(o);
            o = NULL;
        }
    api_json_take(c->resp, 200, jobjson_dump_take(o));
    job_list_fini(&l);
}

void
h_job_cancel(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct job job = {0};
    struct jobd_error err = {0};
    int rc = store_cancel(st, c->id, &job, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND) {
        api_error(c->resp, 404, "not_found", "id", "no job with id %" PRId64, c->id);
    } else if (rc == JOBD_E_STATE) {
        api_error(c->resp, 409, "invalid_state", "status",
                  "job %" PRId64 " is already finished and cannot be cancelled", c->id);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else if (job.status == JOB_RUNNING) {
        /* An embedded worker holding it stops it now; workers elsewhere hear
         * of it from the store (docs/WORKER.md, Cancellation). */
        if (c->ctx->wake)
            wakeup_signal_cancel(c->ctx->wake);
        api_reply_job(c, 202, &job);
    } else {
        api_metrics_finished(c->ctx->metrics, OUTCOME_CANCELLED);
        jobwait_signal(c->ctx->jobwait);
        api_reply_job(c, 200, &job);
    }
    job_fini(&job);
}

void
h_job_retry(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct job job = {0};
    struct jobd_error err = {0};
    int rc = store_retry(st, c->id, &job, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND) {
        api_error(c->resp, 404, "not_found", "id", "no job with id %" PRId64, c->id);
    } else if (rc == JOBD_E_STATE) {
        api_error(c->resp, 409, "invalid_state", "status",
                  "only dead or cancelled jobs can be retried; job %" PRId64 " is not", c->id);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else {
        if (c->ctx->wake)
            wakeup_signal(c->ctx->wake);
        api_reply_job(c, 200, &job);
    }
    job_fini(&job);
}
