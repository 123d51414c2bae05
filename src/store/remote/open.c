/*
 * remote/open.c — the worker protocol over HTTP (remote/internal.h), the third store backend.
 *
 * One HTTP connection per remote store (util/httpc.h, keep-alive), used
 * synchronously from the worker's loop thread, like a database connection.
 * Answers map onto store errors so the loop behaves exactly as with a
 * database: no answer or 503 -> JOBD_E_UNAVAILABLE (the loop reconnects
 * with backoff), 409 -> JOBD_E_STALE (fenced), 404 -> JOBD_E_NOTFOUND.
 * There is no NOTIFY over HTTP: an idle worker long-polls instead (the
 * claim carries wait_s, the server answers as soon as a job is claimable),
 * so a new job starts at once without a claim every 250 ms. The answer
 * says how long the server held the claim and how much lease it left, so
 * the wait is not counted against the lease (claim_req.lease_end_us).
 * A cancel is heard the same way: store_wait (the worker's listener
 * thread) keeps a GET /v1/cancels?wait= open on the jobs this process
 * holds, answered by the server as soon as one of them has a cancel
 * requested (docs/WORKER.md, Cancellation).
 */
#include "store/attemptlog.h"
#include "store/progress.h"
#include "store/remote/internal.h"

#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/job.h"
#include "core/json.h"
#include "util/clock.h"
#include "util/lazylib.h"

/* How long one request may take (a long poll: its wait on top). */
#define REMOTE_TIMEOUT_MS 30000L
/* The longest wait a claim asks for (the API's limit, wait_s 30). */
#define REMOTE_WAIT_MAX_MS 30000

static void
remote_close(struct store *st)
{
    struct remote_store *r = (struct remote_store *)st;
    remote_presence_stop(r->presence);
    remote_conn_fini(&r->conn);
    free(r);
}

static int
remote_migrate(struct store *st, struct jobd_error *err)
{
    (void)st;
    (void)err;
    return JOBD_OK; /* the server migrates its own store */
}

static int
remote_ping(struct store *st, struct jobd_error *err)
{
    return remote_conn_call(&((struct remote_store *)st)->conn, "/healthz", NULL, NULL, err);
}

static json_t *
str_array(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static char *
dup_str(json_t *o, const char *key, bool *oom)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return NULL;
    char *s = strdup(json_string_value(v));
    if (s == NULL)
        *oom = true;
    return s;
}

/*
 * When the leases of a claim answer surely end, on our monotonic clock: the
 * claim was sent at sent_us, the server held it held_ms and then left each
 * job lease_remaining_ms (docs/API.md, POST /v1/claim), so the soonest end
 * is sent_us + held_ms + the least lease_remaining_ms; only the request's
 * transit is counted against the lease. 0 from a server that does not say
 * (the worker then counts the whole lease from sent_us).
 */
static int64_t
lease_end(json_t *resp, int64_t sent_us)
{
    json_t *held = json_object_get(resp, "held_ms");
    json_t *jobs = json_object_get(resp, "jobs");
    if (!json_is_integer(held) || json_integer_value(held) < 0 || json_array_size(jobs) == 0)
        return 0;
    int64_t left_ms = INT64_MAX;
    size_t i;
    json_t *o;
    json_array_foreach(jobs, i, o) {
        json_t *v = json_object_get(o, "lease_remaining_ms");
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return 0;
        if (json_integer_value(v) < left_ms)
            left_ms = json_integer_value(v);
    }
    return sent_us + ((int64_t)json_integer_value(held) + left_ms) * 1000;
}

static int
remote_claim(struct store *st, const struct claim_req *req, struct job_list *out,
             struct jobd_error *err)
{
    json_t *body = json_pack("{s:s, s:o, s:i, s:I}", "worker_id", req->worker_id, "types",
                             str_array(req->types, req->n_types), "limit", req->limit, "lease_s",
                             (json_int_t)((req->lease_ms + 999) / 1000));
    if (body != NULL && req->queues != NULL)
        json_object_set_new(body, "queues", str_array(req->queues, req->n_queues));
    if (body == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    struct remote_store *r = (struct remote_store *)st;
    json_t *resp = NULL;
    int wait_ms = req->wait_ms < REMOTE_WAIT_MAX_MS ? req->wait_ms : REMOTE_WAIT_MAX_MS;
    if (wait_ms > 0) {
        /* A long poll: the server answers as soon as a job is claimable.
         * The transfer may take the whole wait, plus the usual margin.
         * Fractional seconds: rounded up to whole ones, a worker's short
         * wait became a second that ate its lease (docs/API.md, POST
         * /v1/claim). */
        json_object_set_new(body, "wait_s", json_real(wait_ms / 1000.0));
        httpc_timeout(&r->conn.http, (long)wait_ms + REMOTE_TIMEOUT_MS);
        if (req->interrupt != NULL || req->interrupt_also != NULL)
            httpc_interruptible(&r->conn.http, req->interrupt, req->interrupt_also);
    }
    int64_t sent_us = clock_mono_now_us();
    int rc = remote_conn_call(&r->conn, "/v1/claim", body, &resp, err);
    if (wait_ms > 0) {
        httpc_timeout(&r->conn.http, REMOTE_TIMEOUT_MS);
        httpc_interruptible(&r->conn.http, NULL, NULL);
    }
    if (rc != JOBD_OK)
        return rc;
    json_t *jobs = json_object_get(resp, "jobs");
    size_t i;
    json_t *o;
    bool oom = false;
    if (req->lease_end_us != NULL)
        *req->lease_end_us = lease_end(resp, sent_us);
    json_array_foreach(jobs, i, o) {
        struct job *j = job_list_push(out);
        if (j == NULL) {
            oom = true;
            break;
        }
        j->id = (int64_t)json_integer_value(json_object_get(o, "id"));
        j->attempt = (int32_t)json_integer_value(json_object_get(o, "attempt"));
        /* 0 from a server that does not send it: backoff then counts every attempt. */
        j->attempt_floor = (int32_t)json_integer_value(json_object_get(o, "attempt_floor"));
        remote_lease_put(r->conn.http.base, j->id, j->attempt,
                         json_string_value(json_object_get(o, "lease_token")));
        j->status = JOB_RUNNING;
        j->worker_id = strdup(req->worker_id);
        j->lease_expires_at_us = remote_time_of(o, "lease_expires_at");
        j->type = dup_str(o, "type", &oom);
        j->queue = dup_str(o, "queue", &oom);
        j->idempotency_key = dup_str(o, "idempotency_key", &oom);
        j->traceparent = dup_str(o, "traceparent", &oom);
        j->group = dup_str(o, "group", &oom);
        j->payload = json_print(json_object_get(o, "payload"), JSON_SORT_KEYS);
        /* docs/API.md, POST /v1/claim: the parents, for a job that has any */
        json_t *par = json_object_get(o, "parents");
        if (json_is_array(par) && (j->parents = json_print(par, JSON_SORT_KEYS)) == NULL)
            oom = true;
        json_t *t = json_object_get(o, "timeout_s");
        if (json_is_number(t))
            j->timeout_ms = (int64_t)(json_number_value(t) * 1000.0);
        if (j->type == NULL || j->queue == NULL || j->payload == NULL || j->worker_id == NULL)
            oom = true;
    }
    json_decref(resp);
    /* Jobs we could not take in will come back through their leases. */
    return oom ? jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory reading a claim") : JOBD_OK;
}

/*
 * Adds the attempt's lease token, if the claim gave one, to body (NULL-safe)
 * and POSTs it to path; an attempt that is over (reported, or refused as
 * stale) forgets its token when over is true or the answer is 409/404.
 */
static int
report(struct store *st, const char *path, int64_t id, int32_t attempt, json_t *body, bool over,
       json_t **resp, struct jobd_error *err)
{
    struct remote_store *r = (struct remote_store *)st;
    if (body == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    char tok[REMOTE_LEASE_TOKEN_MAX + 1];
    if (remote_lease_get(r->conn.http.base, id, attempt, tok))
        json_object_set_new(body, "lease_token", json_string(tok));
    int rc = remote_conn_call(&r->conn, path, body, resp, err);
    if ((rc == JOBD_OK && over) || rc == JOBD_E_STALE || rc == JOBD_E_NOTFOUND)
        remote_lease_drop(r->conn.http.base, id, attempt);
    return rc;
}

/* report() of a complete or fail, its answer's job into out (may be NULL). */
static int
report_job(struct store *st, const char *path, int64_t id, int32_t attempt, json_t *body,
           struct job *out, struct jobd_error *err)
{
    json_t *resp = NULL;
    int rc = report(st, path, id, attempt, body, true, out != NULL ? &resp : NULL, err);
    if (rc == JOBD_OK && out != NULL)
        rc = remote_job_of(resp, out, err);
    json_decref(resp);
    return rc;
}

static int
remote_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
                 int64_t *lease_expires_at_us, bool *cancel_requested, struct jobd_error *err)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%" PRId64 "/heartbeat", id);
    json_t *body = json_pack("{s:i, s:I}", "attempt", attempt, "lease_s",
                             (json_int_t)((lease_ms + 999) / 1000));
    json_t *resp = NULL;
    int rc = report(st, path, id, attempt, body, false, &resp, err);
    if (rc != JOBD_OK)
        return rc;
    *cancel_requested = json_is_true(json_object_get(resp, "cancel_requested"));
    *lease_expires_at_us = 0; /* the loop keeps its own heartbeat clock */
    json_decref(resp);
    return JOBD_OK;
}

/* docs/API.md, POST /v1/jobs/{id}/progress; the route extends the lease itself. */
static int
remote_progress(struct store *st, int64_t id, int32_t attempt, const struct progress_report *p,
                int64_t lease_ms, int64_t *lease_expires_at_us, bool *cancel_requested,
                struct jobd_error *err)
{
    (void)lease_ms;
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%" PRId64 "/progress", id);
    json_t *body = json_pack("{s:i}", "attempt", attempt);
    if (body != NULL && p->has_percent)
        json_object_set_new(body, "percent", json_real(p->percent));
    if (body != NULL && p->message != NULL)
        json_object_set_new(body, "message", json_string(p->message));
    if (body != NULL && p->data != NULL) {
        json_t *v = json_loads(p->data, JSON_DECODE_ANY, NULL);
        if (v != NULL)
            json_object_set_new(body, "data", v);
    }
    json_t *resp = NULL;
    int rc = report(st, path, id, attempt, body, false, &resp, err);
    if (rc != JOBD_OK)
        return rc;
    *cancel_requested = json_is_true(json_object_get(resp, "cancel_requested"));
    *lease_expires_at_us = 0; /* the loop keeps its own heartbeat clock */
    json_decref(resp);
    return JOBD_OK;
}

/*
 * docs/API.md, POST /v1/jobs/{id}/attempts/{attempt}/log: one request per
 * log, sent before the attempt's report (so still fenced by its lease
 * token); a refused one (the attempt's lease lost) is dropped. Not through
 * report(): a server without the route (404) must not make the worker
 * forget the token its report needs.
 */
static int
remote_attempt_logs_put(struct store *st, const struct attempt_log *v, size_t n, int *outcome,
                        struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char path[96];
        snprintf(path, sizeof path, "/v1/jobs/%" PRId64 "/attempts/%" PRId32 "/log", v[i].id,
                 v[i].attempt);
        json_t *body = json_pack("{s:s}", "text", v[i].text);
        if (body == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        char tok[REMOTE_LEASE_TOKEN_MAX + 1];
        if (remote_lease_get(((struct remote_store *)st)->conn.http.base, v[i].id, v[i].attempt,
                             tok))
            json_object_set_new(body, "lease_token", json_string(tok));
        json_t *resp = NULL;
        int rc = remote_conn_call(&((struct remote_store *)st)->conn, path, body, &resp, err);
        json_decref(resp);
        if (rc == JOBD_E_STALE || rc == JOBD_E_NOTFOUND)
            outcome[i] = JOBD_E_NOTFOUND;
        else if (rc != JOBD_OK)
            return rc;
    }
    return JOBD_OK;
}

static int
remote_complete(struct store *st, int64_t id, int32_t attempt, const char *result, struct job *out,
                struct jobd_error *err)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%" PRId64 "/complete", id);
    json_t *body = json_pack("{s:i}", "attempt", attempt);
    if (body != NULL && result != NULL) {
        /* A result that cannot be read back here (out of memory) must not
         * be reported as a success without it: no body, no report. */
        json_t *v = json_loads(result, JSON_DECODE_ANY, NULL);
        if (v == NULL || json_object_set_new(body, "result", v) != 0) {
            json_decref(body);
            body = NULL;
        }
    }
    return report_job(st, path, id, attempt, body, out, err);
}

static int
remote_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                      struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = remote_complete(st, c[i].id, c[i].attempt, c[i].result, NULL, err);
        if (rc == JOBD_E_STALE || rc == JOBD_E_NOTFOUND)
            outcome[i] = JOBD_E_STALE;
        else if (rc != JOBD_OK)
            return rc; /* the batch is retried; the ones done answer as replays then */
        else
            outcome[i] = JOBD_OK;
    }
    return JOBD_OK;
}

/*
 * POST /v1/jobs/{id}/fail. A delay < 0 (store_fail_backoff) sends no
 * retry_in_s: the server applies its own backoff policy, in the transaction
 * that writes the failure (docs/API.md), so bp is not used here.
 */
static int
remote_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
            int64_t retry_delay_ms, const struct backoff_policy *bp, struct job *out,
            struct jobd_error *err)
{
    (void)bp;
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%" PRId64 "/fail", id);
    json_t *body = json_pack("{s:i, s:s, s:b}", "attempt", attempt, "error",
                             error != NULL ? error : "failed", "retryable", retryable);
    if (body == NULL) /* error text that is not UTF-8 */
        body = json_pack("{s:i, s:s, s:b}", "attempt", attempt, "error",
                         "the handler's error text is not UTF-8", "retryable", retryable);
    if (body != NULL && retry_delay_ms >= 0 &&
        json_object_set_new(body, "retry_in_s", json_real((double)retry_delay_ms / 1000.0)) != 0) {
        json_decref(body);
        body = NULL;
    }
    return report_job(st, path, id, attempt, body, out, err);
}

/* POST /v1/jobs/{id}/release: 200 given back, 409 stale (a job that is not
 * running with that attempt any more). */
static int
remote_release(struct store *st, int64_t id, int32_t attempt, struct jobd_error *err)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%" PRId64 "/release", id);
    json_t *body = json_pack("{s:i}", "attempt", attempt);
    return report(st, path, id, attempt, body, true, NULL, err);
}

static int
remote_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                   struct jobd_error *err)
{
    (void)st;
    (void)req;
    (void)err;
    *run_at_us = 0; /* the API does not say; the poll finds future jobs */
    return JOBD_OK;
}

/* The most held jobs one cancel wait names (a worker's concurrency is less;
 * the rest hear of a cancel at their heartbeat). */
#define REMOTE_CANCEL_IDS 256
/* Napped between cancel waits when none can be made (no jobs held, an old server). */
#define REMOTE_CANCEL_NAP_MS 100

static void
nap_ms(int ms, int timeout_ms)
{
    int n = timeout_ms < ms ? timeout_ms : ms;
    if (n > 0)
        usleep((useconds_t)n * 1000);
}

/*
 * The listener's wait: a parked GET /v1/cancels on the jobs held here,
 * for timeout_ms at most (so a job claimed meanwhile is named by the next
 * one within that). STORE_WAKE_CANCEL when one of them has a cancel
 * requested (the loop heartbeats them all, and the answer stops it), 0
 * otherwise; an unreachable server is an error (the listener reconnects).
 */
static int
remote_wait(struct store *st, int timeout_ms, struct jobd_error *err)
{
    struct remote_store *r = (struct remote_store *)st;
    int64_t ids[REMOTE_CANCEL_IDS];
    size_t n = r->no_cancels ? 0 : remote_lease_held(r->conn.http.base, ids, REMOTE_CANCEL_IDS);
    if (n == 0) {
        nap_ms(REMOTE_CANCEL_NAP_MS, timeout_ms);
        return 0;
    }
    char path[64 + REMOTE_CANCEL_IDS * 21];
    size_t len = (size_t)snprintf(path, sizeof path,
                                  "/v1/cancels?wait=%dms&jobs=", timeout_ms > 0 ? timeout_ms : 1);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(path + len, sizeof path - len, "%s%" PRId64, i ? "," : "", ids[i]);
    json_t *resp = NULL;
    int rc = remote_conn_call(&r->conn, path, NULL, &resp, err);
    if (rc == JOBD_E_NOTFOUND || rc == JOBD_E_INVALID) {
        /* A server from before GET /v1/cancels: heartbeats carry the news. */
        r->no_cancels = true;
        return 0;
    }
    if (rc != JOBD_OK)
        return rc;
    json_t *jobs = json_object_get(resp, "jobs");
    bool any = json_is_array(jobs) && json_array_size(jobs) > 0;
    json_decref(resp);
    return any ? STORE_WAKE_CANCEL : 0;
}

static bool
remote_wait_ready(struct store *st)
{
    (void)st;
    return true; /* the listener's waits are the server's parked cancel requests */
}

static const struct store_ops remote_ops = {
    .name = "remote",
    /* No NOTIFY over HTTP: the poll finds new work. */
    .caps = {.claim_waits = true,
             .watched_poll_ms = 250,
             .blind_poll_ms = 250,
             .label = "the API server"},
    .close = remote_close,
    .migrate = remote_migrate,
    .ping = remote_ping,
    .claim = remote_claim,
    .heartbeat = remote_heartbeat,
    .complete = remote_complete,
    .complete_batch = remote_complete_batch,
    .fail = remote_fail,
    .release = remote_release,
    .next_run_at = remote_next_run_at,
    .wait = remote_wait,
    .wait_ready = remote_wait_ready,
    .oper = &remote_operator_ops,
    .progress = remote_progress,
    .attempt_logs_put = remote_attempt_logs_put,
};

int
remote_store_open(const char *url, struct store **out, struct jobd_error *err)
{
    *out = NULL;
    struct remote_store *r = calloc(1, sizeof *r);
    if (r == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    r->base.ops = &remote_ops;
    int rc = remote_conn_init(&r->conn, url, REMOTE_TIMEOUT_MS, err);
    if (rc != JOBD_OK) {
        free(r);
        return rc;
    }
    rc = remote_ping(&r->base, err);
    if (rc != JOBD_OK) {
        remote_close(&r->base);
        return rc == JOBD_E_UNAVAILABLE ? rc
                                        : jobd_error_set(err, JOBD_E_UNAVAILABLE, NULL,
                                                         "%s/healthz does not answer ok", url);
    }
    *out = &r->base;
    return JOBD_OK;
}
