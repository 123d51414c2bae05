/*
 * client.c — libjobd's client section: the public jobd_* functions over the
 * store interface (store/store.h).
 *
 * The library adds only what the store does not know: payloads and results
 * are canonicalised here (core/json) so byte-for-byte idempotency holds
 * whatever the caller's formatting, and jobd_fail computes the full-jitter
 * delay (core/backoff) with a per-client random state. A client is one
 * store connection and, like it, belongs to one thread at a time.
 */
#include "lib/lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/rules.h"
#include "store/pg/txn.h"

#define BATCH_MAX JOB_BATCH_MAX /* jobs per jobd_enqueue_batch, as POST /v1/jobs/batch */

struct jobd_client {
    struct store *st;
    int64_t backoff_base_ms; /* 0 = default */
    int64_t backoff_cap_ms;  /* 0 = default */
};

struct jobd_job_batch {
    size_t n;
    struct jobd_job *v;
};

struct store *
lib_client_store(jobd_client *client)
{
    return client->st;
}

int
jobd_client_open(const char *url, jobd_client **out, struct jobd_error *err)
{
    if (out == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "out", "out must not be NULL");
    *out = NULL;
    jobd_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    int rc = store_open(url, &c->st, err);
    if (rc == JOBD_OK)
        rc = store_migrate(c->st, err);
    if (rc != JOBD_OK) {
        store_close(c->st);
        free(c);
        return rc;
    }
    *out = c;
    return JOBD_OK;
}

void
jobd_client_close(jobd_client *client)
{
    if (client == NULL)
        return;
    store_close(client->st);
    free(client);
}

void
jobd_client_set_backoff(jobd_client *client, int64_t base_ms, int64_t cap_ms)
{
    client->backoff_base_ms = base_ms > 0 ? base_ms : 0;
    client->backoff_cap_ms = cap_ms > 0 ? cap_ms : 0;
}

int
lib_spec_from_opts(const struct jobd_job_opts *opts, const char *field_prefix,
                   struct job_spec *spec, char **payload_out, struct jobd_error *err)
{
    const char *pre = field_prefix != NULL ? field_prefix : "";
    char field[96];
    *payload_out = NULL;
    memset(spec, 0, sizeof *spec);
    if (opts == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "opts", "the job options must not be NULL");
    if (opts->timeout_ms < 0) {
        snprintf(field, sizeof field, "%stimeout_ms", pre);
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s must not be negative", field);
    }
    if (opts->run_at_us < 0) {
        snprintf(field, sizeof field, "%srun_at_us", pre);
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s must not be negative", field);
    }
    snprintf(field, sizeof field, "%spayload", pre);
    const char *payload = opts->payload != NULL ? opts->payload : "{}";
    int rc = json_canonical(payload, strlen(payload), JOB_PAYLOAD_MAX, payload_out, field, err);
    if (rc != JOBD_OK)
        return rc;
    spec->type = opts->type;
    spec->payload = *payload_out;
    spec->queue = opts->queue;
    spec->priority = opts->priority;
    spec->run_at_us = opts->run_at_us;
    spec->max_attempts = opts->max_attempts;
    spec->idempotency_key = opts->idempotency_key;
    spec->timeout_ms = opts->timeout_ms;
    spec->traceparent = opts->traceparent;
    if (opts->n_depends_on > 0 && opts->depends_on == NULL) {
        snprintf(field, sizeof field, "%sdepends_on", pre);
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s is NULL with n_depends_on %zu", field,
                              opts->n_depends_on);
    }
    spec->depends_on = opts->depends_on;
    spec->n_depends_on = opts->n_depends_on;
    spec->run_on_parent_failure = opts->run_on_parent_failure;
    spec->group = opts->group;
    spec->debounce = (struct job_window){.key = opts->debounce_key, .for_ms = opts->debounce_ms};
    spec->unique = (struct job_window){.key = opts->unique_key, .for_ms = opts->unique_ms};
    return job_spec_validate(spec, field_prefix, err);
}

int
jobd_enqueue(jobd_client *client, const struct jobd_job_opts *opts, int64_t *id_out,
             struct jobd_error *err)
{
    struct job_spec spec;
    char *payload = NULL;
    int rc = lib_spec_from_opts(opts, NULL, &spec, &payload, err);
    if (rc == JOBD_OK) {
        struct job j = {0};
        rc = store_enqueue(client->st, &spec, &j, NULL, err);
        if (rc == JOBD_OK && id_out != NULL)
            *id_out = j.id;
        job_fini(&j);
    }
    free(payload);
    return rc;
}

int
jobd_enqueue_batch(jobd_client *client, const struct jobd_job_opts *opts, size_t n,
                   int64_t *ids_out, struct jobd_error *err)
{
    if (n == 0)
        return JOBD_OK;
    if (n > BATCH_MAX)
        return jobd_error_set(err, JOBD_E_TOOBIG, "jobs",
                              "a batch holds at most %d jobs, "
                              "not %zu",
                              BATCH_MAX, n);
    if (opts == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "jobs", "opts must not be NULL");
    struct job_spec *specs = calloc(n, sizeof *specs);
    char **payloads = calloc(n, sizeof *payloads);
    struct job *jobs = calloc(n, sizeof *jobs);
    int rc = JOBD_OK;
    if (specs == NULL || payloads == NULL || jobs == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; rc == JOBD_OK && i < n; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "jobs[%zu].", i);
        rc = lib_spec_from_opts(&opts[i], prefix, &specs[i], &payloads[i], err);
    }
    if (rc == JOBD_OK)
        rc = store_enqueue_batch(client->st, specs, n, jobs, NULL, err);
    for (size_t i = 0; jobs != NULL && i < n; i++) {
        if (rc == JOBD_OK && ids_out != NULL)
            ids_out[i] = jobs[i].id;
        job_fini(&jobs[i]);
    }
    for (size_t i = 0; payloads != NULL && i < n; i++)
        free(payloads[i]);
    free(jobs);
    free(payloads);
    free(specs);
    return rc;
}

int
jobd_enqueue_pg(struct pg_conn *conn, const struct jobd_job_opts *opts, int64_t *id_out,
                struct jobd_error *err)
{
    if (opts != NULL && opts->timeout_ms != 0)
        return jobd_error_set(err, JOBD_E_INVALID, "timeout_ms",
                              "timeout_ms is not supported "
                              "by jobd_enqueue_pg (jobd.enqueue has no timeout); leave it 0");
    struct job_spec spec;
    char *payload = NULL;
    int rc = lib_spec_from_opts(opts, NULL, &spec, &payload, err);
    if (rc == JOBD_OK)
        rc = pg_txn_enqueue(conn, &spec, id_out, err);
    free(payload);
    return rc;
}

int
jobd_get_status(jobd_client *client, int64_t id, const char **status_out, int32_t *attempt_out,
                struct jobd_error *err)
{
    struct job j = {0};
    int rc = store_get(client->st, id, &j, err);
    if (rc == JOBD_OK) {
        if (status_out != NULL)
            *status_out = job_status_name(j.status);
        if (attempt_out != NULL)
            *attempt_out = j.attempt;
    }
    job_fini(&j);
    return rc;
}

/* ---- claimed jobs ---- */

int64_t
jobd_job_id(const jobd_job *job)
{
    return job->job.id;
}

int32_t
jobd_job_attempt(const jobd_job *job)
{
    return job->job.attempt;
}

const char *
jobd_job_type(const jobd_job *job)
{
    return job->job.type != NULL ? job->job.type : "";
}

const char *
jobd_job_queue(const jobd_job *job)
{
    return job->job.queue != NULL ? job->job.queue : JOB_DEFAULT_QUEUE;
}

const char *
jobd_job_payload(const jobd_job *job)
{
    return job->job.payload != NULL ? job->job.payload : "{}";
}

const char *
jobd_job_idempotency_key(const jobd_job *job)
{
    return job->job.idempotency_key;
}

int64_t
jobd_job_timeout_ms(const jobd_job *job)
{
    return job->job.timeout_ms;
}

int64_t
jobd_job_lease_expires_at_us(const jobd_job *job)
{
    return job->job.lease_expires_at_us;
}

int64_t
jobd_job_scheduled_for_us(const jobd_job *job)
{
    return job->job.scheduled_for_us;
}

size_t
jobd_job_batch_count(const jobd_job_batch *batch)
{
    return batch != NULL ? batch->n : 0;
}

const jobd_job *
jobd_job_batch_get(const jobd_job_batch *batch, size_t i)
{
    return batch != NULL && i < batch->n ? &batch->v[i] : NULL;
}

void
jobd_job_batch_free(jobd_job_batch *batch)
{
    if (batch == NULL)
        return;
    for (size_t i = 0; i < batch->n; i++)
        job_fini(&batch->v[i].job);
    free(batch->v);
    free(batch);
}

int
jobd_claim(jobd_client *client, const struct jobd_claim_opts *opts, jobd_job_batch **out,
           struct jobd_error *err)
{
    if (out == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "out", "out must not be NULL");
    *out = NULL;
    if (opts == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "opts", "opts must not be NULL");
    if (opts->lease_ms < 0)
        return jobd_error_set(err, JOBD_E_INVALID, "lease_ms", "lease_ms must not be negative");
    struct claim_req req = {
        .worker_id = opts->worker_id,
        .queues = opts->n_queues > 0 ? opts->queues : NULL,
        .n_queues = opts->queues != NULL ? opts->n_queues : 0,
        .types = opts->n_types > 0 ? opts->types : NULL,
        .n_types = opts->types != NULL ? opts->n_types : 0,
        .limit = opts->limit == 0 ? 1 : opts->limit,
        .lease_ms = opts->lease_ms,
    };
    struct job_list l = {0};
    int rc = store_claim(client->st, &req, &l, err);
    if (rc != JOBD_OK) {
        job_list_fini(&l);
        return rc;
    }
    jobd_job_batch *b = calloc(1, sizeof *b);
    if (b != NULL && l.n > 0)
        b->v = calloc(l.n, sizeof *b->v);
    if (b == NULL || (l.n > 0 && b->v == NULL)) {
        /* The jobs are claimed but we cannot hand them over: their leases
         * expire and the reaper makes them claimable again. */
        free(b);
        job_list_fini(&l);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; i < l.n; i++)
        job_move(&b->v[i].job, &l.v[i]);
    b->n = l.n;
    job_list_fini(&l);
    *out = b;
    return JOBD_OK;
}

int
jobd_heartbeat(jobd_client *client, int64_t id, int32_t attempt, int64_t lease_ms,
               bool *cancel_requested, struct jobd_error *err)
{
    int64_t expires = 0;
    bool cancel = false;
    int rc = store_heartbeat(client->st, id, attempt, lease_ms, &expires, &cancel, err);
    if (rc == JOBD_OK && cancel_requested != NULL)
        *cancel_requested = cancel;
    return rc;
}

int
jobd_complete(jobd_client *client, int64_t id, int32_t attempt, const char *result,
              struct jobd_error *err)
{
    char *canon = NULL;
    if (result != NULL) {
        int rc = json_canonical(result, strlen(result), JOB_RESULT_MAX, &canon, "result", err);
        if (rc != JOBD_OK)
            return rc;
    }
    int rc = store_complete(client->st, id, attempt, canon, NULL, err);
    free(canon);
    return rc;
}

int
jobd_fail(jobd_client *client, int64_t id, int32_t attempt, const char *error, bool retryable,
          const char **status_out, struct jobd_error *err)
{
    /* The reaper's rule (core/rules.h) with the client's policy, the job's
     * attempt floor read in the transaction that writes the failure. */
    struct backoff_policy bp = {client->backoff_base_ms, client->backoff_cap_ms};
    struct job j = {0};
    int rc = store_fail_backoff(client->st, id, attempt, error, retryable, &bp, &j, err);
    if (rc == JOBD_OK && status_out != NULL)
        *status_out = job_status_name(j.status);
    job_fini(&j);
    return rc;
}
