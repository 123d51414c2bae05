/*
 * h_worker.c — the remote-worker routes: claim (with long poll), heartbeat,
 * complete, fail, release; and giving back the jobs of a claim answer that
 * could not be delivered. Reports carry the attempt they belong to; the store
 * refuses a report whose attempt is not the live one (fencing) and the API
 * answers 409 stale_attempt and counts it in jobd_reports_fenced_total.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/claimpresence.h"
#include "api/handlers.h"
#include "api/jobwait.h"
#include "api/longpoll.h"
#include "api/metrics.h"
#include "core/err.h"
#include "core/json.h"
#include "core/rules.h"
#include "store/operator.h"
#include "store/progress.h"
#include "util/log.h"
#include "util/sha256.h"

static const char *const claim_fields[] = {"worker_id", "queues", "types", "limit",
                                           "lease_s",   "wait_s", NULL};
static const char *const heartbeat_fields[] = {"attempt", "lease_token", "lease_s", NULL};
static const char *const complete_fields[] = {"attempt", "lease_token", "result", NULL};
static const char *const release_fields[] = {"attempt", "lease_token", NULL};
static const char *const progress_fields[] = {"attempt", "lease_token", "percent",
                                              "message", "data",        NULL};
static const char *const fail_fields[] = {"attempt",   "lease_token", "error",
                                          "retryable", "retry_in_s",  NULL};

#define LEASE_MAX_S (24 * 3600.0)
/* The default of --max-lease. */
#define LEASE_CAP_DEFAULT_MS (3600 * 1000LL)

/* A claim's or heartbeat's lease, cut to the server's --max-lease
 * (docs/API.md, Remote workers); 0 (absent) is the default lease. */
static int64_t
capped_lease(const struct api_ctx *ctx, int64_t lease_ms)
{
    int64_t cap = ctx->max_lease_ms > 0 ? ctx->max_lease_ms : LEASE_CAP_DEFAULT_MS;
    if (lease_ms <= 0)
        lease_ms = JOB_DEFAULT_LEASE_MS;
    return lease_ms < cap ? lease_ms : cap;
}

/* Checks every name of a claim's queues/types list. */
static int
check_names(const char *const *v, size_t n, const char *key, bool queue, struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char f[48];
        snprintf(f, sizeof f, "%s[%zu]", key, i);
        int rc = queue ? job_validate_queue(v[i], f, err) : job_validate_type(v[i], f, err);
        if (rc != JOBD_OK)
            return rc;
    }
    return JOBD_OK;
}

/* True when the caller's token may claim and report in queue (docs/API.md, Remote workers). */
static bool
queue_allowed(const struct api_call *c, const char *queue)
{
    if (c->queues == NULL)
        return true;
    for (size_t i = 0; i < c->n_queues; i++)
        if (strcmp(c->queues[i], queue) == 0)
            return true;
    return false;
}

/* A queue-limited token's claim: only its queues (all of them when the
 * claim names none); 403 for a claim naming another. */
static bool
claim_queues_allowed(struct api_call *c, struct claim_req *req)
{
    if (c->queues == NULL)
        return true;
    if (req->queues == NULL) {
        req->queues = c->queues;
        req->n_queues = c->n_queues;
        return true;
    }
    for (size_t i = 0; i < req->n_queues; i++)
        if (!queue_allowed(c, req->queues[i])) {
            api_error(c->resp, 403, "forbidden", "queues",
                      "this token may claim only in its queues; '%.64s' is not one",
                      req->queues[i]);
            return false;
        }
    return true;
}

/* Reads a claim body into req (strings borrowed from o; arrays malloc'd). */
static int
claim_parse(json_t *o, struct claim_req *req, const char ***queues, const char ***types,
            int64_t *wait_ms, struct jobd_error *err)
{
    int64_t limit = 1;
    int rc;
    if ((rc = jobjson_get_str(o, "worker_id", NULL, true, &req->worker_id, err)) ||
        (rc = jobjson_get_int(o, "limit", NULL, false, 1, JOB_PAGE_MAX, &limit, err)) ||
        (rc = jobjson_get_seconds_ms(o, "lease_s", NULL, LEASE_MAX_S, &req->lease_ms, err)) ||
        (rc = jobjson_get_seconds_ms(o, "wait_s", NULL, LONGPOLL_MAX_WAIT_S, wait_ms, err)) ||
        (rc = jobjson_get_str_array(o, "queues", NULL, false, queues, &req->n_queues, err)) ||
        (rc = jobjson_get_str_array(o, "types", NULL, true, types, &req->n_types, err)))
        return rc;
    size_t wl = strlen(req->worker_id);
    if (wl == 0 || wl > JOB_WORKER_ID_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "worker_id",
                              "worker_id must be 1 to %d characters", JOB_WORKER_ID_MAX);
    if (req->n_types == 0)
        return jobd_error_set(err, JOBD_E_INVALID, "types",
                              "types must name at least one job type");
    if (json_object_get(o, "lease_s") && !json_is_null(json_object_get(o, "lease_s")) &&
        req->lease_ms < 1000)
        return jobd_error_set(err, JOBD_E_INVALID, "lease_s", "lease_s must be at least 1");
    if ((rc = check_names(*types, req->n_types, "types", false, err)) ||
        (rc = check_names(*queues, req->n_queues, "queues", true, err)))
        return rc;
    req->limit = (int)limit;
    req->types = *types;
    req->queues = *queues; /* NULL (absent) = every queue */
    return JOBD_OK;
}

void
h_claim(struct api_call *c)
{
    int64_t arrived_us = clock_mono_now_us(); /* longpoll.h, claim_clock */
    json_t *o = api_body_object(c, claim_fields);
    if (o == NULL)
        return;
    struct claim_req req = {0};
    const char **queues = NULL, **types = NULL;
    int64_t wait_ms = 0;
    struct jobd_error err = {0};
    struct job_list l = {0};
    int rc = claim_parse(o, &req, &queues, &types, &wait_ms, &err);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        goto out;
    }
    req.lease_ms = capped_lease(c->ctx, req.lease_ms);
    if (!claim_queues_allowed(c, &req))
        goto out;
    struct store *st;
    if (!api_store_get(c, &st))
        goto out;
    struct claim_clock clk = {
        .arrived_us = arrived_us,
        .claimed_us = clock_mono_now_us(),
        .lease_ms = req.lease_ms > 0 ? req.lease_ms : JOB_DEFAULT_LEASE_MS,
    };
    rc = store_claim(st, &req, &l, &err);
    if (rc == JOBD_OK)
        claim_presence_note(c->ctx->presence, st, &req, c->ctx->max_workers, clk.claimed_us);
    lease_token *tokens = NULL;
    if (rc == JOBD_OK && (rc = api_lease_tokens(st, &l, &tokens, &err)) != JOBD_OK)
        job_list_fini(&l); /* given back */
    clk.tokens = tokens;
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else if (l.n > 0 || wait_ms == 0) {
        api_json_take(c->resp, 200, longpoll_claim_body(&l, &clk, c->ctx->metrics));
        free(tokens);
        (void)api_response_note_claimed(c->resp, &l); /* no note: a lease runs out instead */
    } else {
        c->resp->wait = lp_waiter_new(&req, (int)wait_ms, arrived_us);
        if (c->resp->wait == NULL)
            api_error(c->resp, 500, "internal", NULL, "out of memory");
        else if (c->ctx->longpoll == NULL)
            lp_waiter_finish_empty(c->resp->wait);
        c->resp->status = 200;
    }
out:
    job_list_fini(&l);
    free(queues);
    free(types);
    json_decref(o);
}

/*
 * A stale report: 409 stale_attempt, or 404 when the job does not exist at
 * all (the store answers both as stale; telling them apart costs one read,
 * only on this error path).
 */
static void
stale(struct api_call *c, struct store *st, int64_t attempt)
{
    struct job job = {0};
    struct jobd_error err = {0};
    int rc = st ? store_get(st, c->id, &job, &err) : JOBD_E_UNAVAILABLE;
    if (rc == JOBD_E_NOTFOUND) {
        api_error(c->resp, 404, "not_found", "id", "no job with id %" PRId64, c->id);
    } else {
        api_metrics_fenced(c->ctx->metrics, 1);
        if (rc == JOBD_OK)
            api_error(c->resp, 409, "stale_attempt", "attempt",
                      "attempt %" PRId64 " of job %" PRId64 " is not the live one (job is %s, "
                      "attempt %d)",
                      attempt, c->id, job_status_name(job.status), job.attempt);
        else
            api_error(c->resp, 409, "stale_attempt", "attempt",
                      "attempt %" PRId64 " of job %" PRId64 " is not the live one", attempt, c->id);
    }
    job_fini(&job);
}

/*
 * The report's lease_token (docs/API.md, Remote workers), copied out of o
 * into tok ("" when absent or not a string of the right length).
 */
static void
lease_token_of(json_t *o, lease_token tok)
{
    json_t *v = json_object_get(o, "lease_token");
    tok[0] = '\0';
    if (json_is_string(v) && json_string_length(v) == LEASE_TOKEN_LEN)
        memcpy(tok, json_string_value(v), LEASE_TOKEN_LEN + 1);
}

/*
 * When the report of kind for attempt, carrying tok, repeats the one that
 * already ended that attempt (docs/API.md, Repeated reports): answers 200
 * with the job as it is now and `Idempotent-Replayed: true` (or 403 for a
 * token not of the job's queue) and returns true. Else answers nothing and
 * returns false: the caller answers its 409. A worker that lost the answer
 * to its report (a network error) sends it again and learns that it landed.
 */
static bool
replayed(struct api_call *c, struct store *st, int64_t attempt, const lease_token tok,
         enum lease_report kind)
{
    if (tok[0] == '\0')
        return false;
    char hash[SHA256_HEX_LEN + 1];
    sha256_hex(tok, hash);
    char *queue = NULL;
    struct jobd_error err = {0};
    if (store_lease_replayed(st, c->id, (int32_t)attempt, kind, hash, &queue, &err) != JOBD_OK)
        return false;
    bool allowed = queue_allowed(c, queue);
    free(queue);
    struct job job = {0};
    if (!allowed)
        api_error(c->resp, 403, "forbidden", NULL,
                  "this token may report only in its queues; job %" PRId64 " is not in them",
                  c->id);
    else if (store_get(st, c->id, &job, &err) != JOBD_OK)
        return false;
    else {
        c->resp->replayed = true;
        api_reply_job(c, 200, &job);
    }
    job_fini(&job);
    return true;
}

/*
 * True when tok is the lease token of attempt of job c->id. Otherwise the
 * report changes nothing: 409 stale_attempt (or 404), or the store's error,
 * is answered here; or, for a complete or fail (replay not NULL) that
 * repeats the one that ended the attempt, its replayed answer.
 */
static bool
lease_ok(struct api_call *c, struct store *st, int64_t attempt, const lease_token tok,
         const enum lease_report *replay)
{
    char hash[SHA256_HEX_LEN + 1] = "";
    if (tok[0] != '\0')
        sha256_hex(tok, hash);
    char *queue = NULL;
    struct jobd_error err = {0};
    int rc = store_lease_check(st, c->id, (int32_t)attempt, hash, &queue, &err);
    bool allowed = rc != JOBD_OK || queue_allowed(c, queue);
    if (!allowed)
        api_error(c->resp, 403, "forbidden", NULL,
                  "this token may report only in its queues; job %" PRId64 " is in '%.64s'", c->id,
                  queue);
    free(queue);
    if (!allowed)
        return false;
    struct job job = {0};
    if (rc == JOBD_E_STALE && replay != NULL && replayed(c, st, attempt, tok, *replay))
        return false;
    if (rc == JOBD_E_STALE && store_get(st, c->id, &job, &err) == JOBD_OK &&
        job.status == JOB_RUNNING && job.attempt == attempt) {
        api_metrics_fenced(c->ctx->metrics, 1);
        api_error(c->resp, 409, "stale_attempt", "lease_token",
                  tok[0] == '\0' ? "lease_token is required: the one the claim of attempt %d "
                                   "of job %" PRId64 " answered"
                                 : "lease_token is not the one the claim of attempt %d of job "
                                   "%" PRId64 " answered",
                  job.attempt, c->id);
    } else if (rc == JOBD_E_STALE) {
        stale(c, st, attempt);
    } else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    job_fini(&job);
    return rc == JOBD_OK;
}

void
h_heartbeat(struct api_call *c)
{
    json_t *o = api_body_object(c, heartbeat_fields);
    if (o == NULL)
        return;
    int64_t attempt = 0, lease_ms = 0;
    struct jobd_error err = {0};
    int rc;
    if ((rc = jobjson_get_int(o, "attempt", NULL, true, 1, INT32_MAX, &attempt, &err)) ||
        (rc = jobjson_get_seconds_ms(o, "lease_s", NULL, LEASE_MAX_S, &lease_ms, &err))) {
        api_error_from(c->resp, rc, &err);
        json_decref(o);
        return;
    }
    lease_token tok;
    lease_token_of(o, tok);
    json_decref(o);
    lease_ms = capped_lease(c->ctx, lease_ms);
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    if (!lease_ok(c, st, attempt, tok, NULL)) {
        api_store_put(c, st, JOBD_OK);
        return;
    }
    int64_t expires = 0;
    bool cancel = false;
    rc = store_heartbeat(st, c->id, (int32_t)attempt, lease_ms, &expires, &cancel, &err);
    if (rc == JOBD_E_STALE)
        stale(c, st, attempt);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else
        api_json_take(
            c->resp, 200,
            jobjson_dump_take(json_pack("{s:o, s:b}", "lease_expires_at", jobjson_time(expires),
                                        "cancel_requested", cancel)));
    api_store_put(c, st, rc);
}

/*
 * A progress report's fields (docs/API.md, The job object) into p; the message is
 * borrowed from o, the data canonical JSON in *data (malloc'd, the caller's).
 */
static int
progress_parse(json_t *o, struct progress_report *p, char **data, struct jobd_error *err)
{
    *data = NULL;
    json_t *v = json_object_get(o, "percent");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_number(v))
            return jobd_error_set(err, JOBD_E_INVALID, "percent",
                                  "percent must be a number from 0 to 100");
        p->has_percent = true;
        p->percent = json_number_value(v);
    }
    int rc = jobjson_get_str(o, "message", NULL, false, &p->message, err);
    if (rc != JOBD_OK)
        return rc;
    v = json_object_get(o, "data");
    if (v != NULL && !json_is_null(v) &&
        (rc = json_value_canonical(v, JOB_PROGRESS_DATA_MAX, data, "data", err)) != JOBD_OK)
        return rc;
    p->data = *data;
    return JOBD_OK;
}

void
h_progress(struct api_call *c)
{
    json_t *o = api_body_object(c, progress_fields);
    if (o == NULL)
        return;
    int64_t attempt = 0;
    struct progress_report p = {0};
    char *data = NULL;
    struct jobd_error err = {0};
    int rc = jobjson_get_int(o, "attempt", NULL, true, 1, INT32_MAX, &attempt, &err);
    if (rc == JOBD_OK)
        rc = progress_parse(o, &p, &data, &err);
    if (rc == JOBD_OK && p.has_percent && !(p.percent >= 0 && p.percent <= 100))
        rc = jobd_error_set(&err, JOBD_E_INVALID, "percent", "percent must be from 0 to 100");
    if (rc == JOBD_OK && p.message != NULL && strlen(p.message) > JOB_PROGRESS_MESSAGE_MAX)
        rc = jobd_error_set(&err, JOBD_E_INVALID, "message", "message must be at most %d bytes",
                            JOB_PROGRESS_MESSAGE_MAX);
    struct store *st = NULL;
    if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else if (api_store_get(c, &st)) {
        lease_token tok;
        lease_token_of(o, tok);
        int64_t expires = 0;
        bool cancel = false;
        /* The lease is extended as a heartbeat's with no lease_s: the default. */
        if (!lease_ok(c, st, attempt, tok, NULL))
            rc = JOBD_OK;
        else if ((rc = store_progress(st, c->id, (int32_t)attempt, &p, capped_lease(c->ctx, 0),
                                      &expires, &cancel, &err)) == JOBD_E_STALE)
            stale(c, st, attempt);
        else if (rc != JOBD_OK)
            api_error_from(c->resp, rc, &err);
        else
            api_json_take(
                c->resp, 200,
                jobjson_dump_take(json_pack("{s:o, s:b}", "lease_expires_at", jobjson_time(expires),
                                            "cancel_requested", cancel)));
        api_store_put(c, st, rc);
    }
    free(data);
    json_decref(o); /* the message is borrowed from o until here */
}

void
h_complete(struct api_call *c)
{
    json_t *o = api_body_object(c, complete_fields);
    if (o == NULL)
        return;
    int64_t attempt = 0;
    struct jobd_error err = {0};
    char *result = NULL;
    struct job job = {0};
    int rc = jobjson_get_int(o, "attempt", NULL, true, 1, INT32_MAX, &attempt, &err);
    json_t *r = json_object_get(o, "result");
    if (rc == JOBD_OK && r != NULL && !json_is_null(r)) {
        rc = json_value_canonical(r, JOB_RESULT_MAX, &result, "result", &err);
    }
    lease_token tok;
    lease_token_of(o, tok);
    json_decref(o);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        free(result);
        return;
    }
    struct store *st;
    if (!api_store_get(c, &st)) {
        free(result);
        return;
    }
    static const enum lease_report kind = LEASE_REPORT_COMPLETE;
    if (!lease_ok(c, st, attempt, tok, &kind)) {
        api_store_put(c, st, JOBD_OK);
        free(result);
        return;
    }
    rc = store_complete(st, c->id, (int32_t)attempt, result, &job, &err);
    if (rc == JOBD_E_STALE) { /* also a repeat whose token is still the job's (PostgreSQL) */
        if (!replayed(c, st, attempt, tok, kind))
            stale(c, st, attempt);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else {
        api_metrics_reported(c->ctx->metrics, &job);
        jobwait_signal(c->ctx->jobwait);
        api_reply_job(c, 200, &job);
    }
    api_store_put(c, st, rc);
    job_fini(&job);
    free(result);
}

void
h_fail(struct api_call *c)
{
    json_t *o = api_body_object(c, fail_fields);
    if (o == NULL)
        return;
    int64_t attempt = 0, retry_in_ms = -1;
    const char *error = NULL;
    bool retryable = true;
    struct jobd_error err = {0};
    struct job job = {0};
    int rc;
    if ((rc = jobjson_get_int(o, "attempt", NULL, true, 1, INT32_MAX, &attempt, &err)) ||
        (rc = jobjson_get_str(o, "error", NULL, true, &error, &err)) ||
        (rc = jobjson_get_bool(o, "retryable", NULL, &retryable, &err)) ||
        (rc = jobjson_get_seconds_ms(o, "retry_in_s", NULL, 366.0 * 86400, &retry_in_ms, &err))) {
        api_error_from(c->resp, rc, &err);
        json_decref(o);
        return;
    }
    struct store *st;
    if (!api_store_get(c, &st)) {
        json_decref(o);
        return;
    }
    lease_token tok;
    lease_token_of(o, tok);
    static const enum lease_report kind = LEASE_REPORT_FAIL;
    if (!lease_ok(c, st, attempt, tok, &kind)) {
        api_store_put(c, st, JOBD_OK);
        json_decref(o);
        return;
    }
    /* A failure that names no delay: the reaper's policy (--backoff-base,
     * --backoff-cap) over the attempts since the job's last manual retry,
     * read in the store's transaction (store_fail_backoff). */
    struct backoff_policy bp = {c->ctx->backoff_base_ms, c->ctx->backoff_cap_ms};
    if (retry_in_ms < 0)
        rc = store_fail_backoff(st, c->id, (int32_t)attempt, error, retryable, &bp, &job, &err);
    else
        rc = store_fail(st, c->id, (int32_t)attempt, error, retryable, retry_in_ms, &job, &err);
    json_decref(o); /* error is borrowed from o until here */
    if (rc == JOBD_E_STALE) {
        if (!replayed(c, st, attempt, tok, kind))
            stale(c, st, attempt);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else {
        api_metrics_reported(c->ctx->metrics, &job);
        if (job.status == JOB_PENDING && c->ctx->wake)
            wakeup_signal(c->ctx->wake);
        if (job_status_terminal(job.status))
            jobwait_signal(c->ctx->jobwait);
        if (job.status == JOB_DEAD) /* docs/LOGGING.md, Access log */
            log_at(LOGL_INFO, "server", "job dead", LF_INT("job", job.id),
                   LF_INT("attempt", attempt), LF_STR("type", job.type), LF_STR("queue", job.queue),
                   LF_STR("error", job.last_error), LF_TRACE(job.traceparent));
        api_reply_job(c, 200, &job);
    }
    api_store_put(c, st, rc);
    job_fini(&job);
}

void
h_release(struct api_call *c)
{
    json_t *o = api_body_object(c, release_fields);
    if (o == NULL)
        return;
    int64_t attempt = 0;
    struct jobd_error err = {0};
    int rc = jobjson_get_int(o, "attempt", NULL, true, 1, INT32_MAX, &attempt, &err);
    lease_token tok;
    lease_token_of(o, tok);
    json_decref(o);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        return;
    }
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    if (!lease_ok(c, st, attempt, tok, NULL)) {
        api_store_put(c, st, JOBD_OK);
        return;
    }
    struct job job = {0};
    rc = store_release(st, c->id, (int32_t)attempt, &err);
    if (rc == JOBD_OK)
        rc = store_get(st, c->id, &job, &err);
    if (rc == JOBD_E_STALE) {
        stale(c, st, attempt);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else {
        if (c->ctx->wake)
            wakeup_signal(c->ctx->wake); /* claimable again at once */
        if (job_status_terminal(job.status))
            jobwait_signal(c->ctx->jobwait); /* released with a cancel requested */
        api_reply_job(c, 200, &job);
    }
    api_store_put(c, st, rc);
    job_fini(&job);
}

void
api_release_claimed(struct api_ctx *ctx, struct api_response *r)
{
    if (r->n_claimed == 0)
        return;
    struct jobd_error err = {0};
    struct store *st = NULL;
    int rc = store_pool_get(ctx->pool, &st, &err);
    for (size_t i = 0; rc == JOBD_OK && i < r->n_claimed; i++) {
        rc = store_release(st, r->claimed[i].id, r->claimed[i].attempt, &err);
        if (rc == JOBD_E_STALE)
            rc = JOBD_OK; /* reported or reaped meanwhile: nothing to give back */
    }
    if (st != NULL)
        store_pool_put(ctx->pool, st, rc);
    if (rc == JOBD_OK && ctx->wake != NULL)
        wakeup_signal(ctx->wake);
    /* On failure the leases run out and the reaper hands the jobs on. */
    free(r->claimed);
    r->claimed = NULL;
    r->n_claimed = 0;
}

bool
api_report_fenced(struct api_call *c, struct store *st, int64_t attempt, json_t *o)
{
    lease_token tok;
    lease_token_of(o, tok);
    return lease_ok(c, st, attempt, tok, NULL);
}
