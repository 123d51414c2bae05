/*
 * store_sqlite_jobs.c — the job and queue operations of the SQLite backend.
 *
 * Each operation that writes is one BEGIN IMMEDIATE transaction: SQLite has
 * one writer at a time, so inside it the guarded statements (status and
 * attempt in the WHERE clause) see exactly the row they change. A job that
 * ends moves from "jobs" to "jobs_done" in the same transaction (INSERT …
 * SELECT with the final values, then DELETE), so "jobs" holds only pending
 * and running rows and its CHECK constraint never sees a terminal status.
 * A manual retry moves the row back with attempt_floor = attempt, which
 * gives it max_attempts fresh attempts while attempt keeps growing.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/err.h"
#include "store/store_sqlite_int.h"

/* Largest number of queue + type names one claim may filter on. */
#define SQ_FILTER_NAMES_MAX 1000

/* ------------------------------------------------------------------ */
/* small pieces                                                        */

/* Full jitter (CONTRACT §1): random(0, min(cap, base * 2^attempt)). */
static int64_t
sq_backoff_ms(struct sqlite_store *s, int32_t attempt, const struct backoff_policy *bp)
{
    return backoff_delay_ms(attempt, bp != NULL ? bp->base_ms : 0, bp != NULL ? bp->cap_ms : 0,
                            backoff_rand_splitmix, &s->rng);
}

static const char *
status_text(enum job_status st)
{
    return job_status_name(st);
}

/*
 * Appends " AND queue IN (?a,…) AND type IN (?b,…)" for the claim filters,
 * numbering parameters from first. Returns a malloc'd string or NULL.
 */
static char *
filter_sql(const char *head, const char *tail, const struct claim_req *req, int first)
{
    size_t cap = strlen(head) + strlen(tail) + 64 + 10 * (req->n_queues + req->n_types);
    char *sql = malloc(cap);
    if (sql == NULL)
        return NULL;
    size_t n = (size_t)snprintf(sql, cap, "%s", head);
    int p = first;
    if (req->queues != NULL && req->n_queues > 0) {
        n += (size_t)snprintf(sql + n, cap - n, " AND queue IN (");
        for (size_t i = 0; i < req->n_queues; i++)
            n += (size_t)snprintf(sql + n, cap - n, "%s?%d", i ? "," : "", p++);
        n += (size_t)snprintf(sql + n, cap - n, ")");
    }
    if (req->types != NULL && req->n_types > 0) {
        n += (size_t)snprintf(sql + n, cap - n, " AND type IN (");
        for (size_t i = 0; i < req->n_types; i++)
            n += (size_t)snprintf(sql + n, cap - n, "%s?%d", i ? "," : "", p++);
        n += (size_t)snprintf(sql + n, cap - n, ")");
    }
    snprintf(sql + n, cap - n, "%s", tail);
    return sql;
}

/* Binds the names filter_sql numbered from first. */
static void
bind_filter(sqlite3_stmt *stmt, const struct claim_req *req, int first)
{
    int p = first;
    if (req->queues != NULL)
        for (size_t i = 0; i < req->n_queues; i++)
            sq_bind_text(stmt, p++, req->queues[i]);
    if (req->types != NULL)
        for (size_t i = 0; i < req->n_types; i++)
            sq_bind_text(stmt, p++, req->types[i]);
}

static int
check_filter(const struct claim_req *req, struct jobd_error *err)
{
    size_t nq = req->queues ? req->n_queues : 0, nt = req->types ? req->n_types : 0;
    if (nq + nt > SQ_FILTER_NAMES_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "types",
                              "a claim may name at most %d queues and types together",
                              SQ_FILTER_NAMES_MAX);
    for (size_t i = 0; i < nq; i++)
        if (req->queues[i] == NULL)
            return jobd_error_set(err, JOBD_E_INVALID, "queues", "queue name %zu is null", i);
    for (size_t i = 0; i < nt; i++)
        if (req->types[i] == NULL)
            return jobd_error_set(err, JOBD_E_INVALID, "types", "type name %zu is null", i);
    return JOBD_OK;
}

/*
 * Moves job id from jobs to jobs_done with status to_status and finished_at
 * = now, if it is in status from_status (and has attempt, unless attempt <
 * 0). set_error/set_result replace last_error/result. Returns 1 if moved, 0
 * if the guard matched nothing, or an error. Runs inside a transaction.
 */
static int
finish_job(struct sqlite_store *s, int64_t id, const char *from_status, int32_t attempt,
           enum job_status to_status, int64_t now, bool set_error, const char *error,
           bool set_result, const char *result, struct jobd_error *err)
{
    static const char ins[] =
        "INSERT INTO jobs_done (" SQ_JOB_COLS ") "
        "SELECT id, queue, type, payload, ?3, priority, run_at, attempt, max_attempts, "
        "  idempotency_key, schedule, scheduled_for, worker_id, NULL, timeout_ms, "
        "  cancel_requested, CASE WHEN ?5 THEN ?6 ELSE last_error END, "
        "  CASE WHEN ?7 THEN ?8 ELSE result END, created_at, started_at, ?4, attempt_floor "
        "FROM jobs WHERE id = ?1 AND status = ?2 AND (?9 IS NULL OR attempt = ?9)";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, ins, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sq_bind_text(stmt, 2, from_status);
    sq_bind_text(stmt, 3, status_text(to_status));
    sqlite3_bind_int64(stmt, 4, now);
    sqlite3_bind_int(stmt, 5, set_error);
    sq_bind_text(stmt, 6, error);
    sqlite3_bind_int(stmt, 7, set_result);
    sq_bind_text(stmt, 8, result);
    if (attempt >= 0)
        sqlite3_bind_int(stmt, 9, attempt);
    if ((rc = sq_step_done(s, stmt, "finish job", err)) != JOBD_OK)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return 0;
    if ((rc = sq_prepare(s, "DELETE FROM jobs WHERE id = ?1", &stmt, err)) != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    if ((rc = sq_step_done(s, stmt, "finish job", err)) != JOBD_OK)
        return rc;
    return 1;
}

/* Fills *out (if not NULL) with job id, inside the current transaction. */
static int
load_out(struct sqlite_store *s, int64_t id, struct job *out, struct jobd_error *err)
{
    if (out == NULL)
        return JOBD_OK;
    return sq_load_job(s, id, out, err);
}

/*
 * Ends the transaction of an operation on one job: rc < 0 (an error) rolls
 * back and is returned; otherwise the job is loaded into *out (if not NULL;
 * the caller's to job_fini on JOBD_OK) and the transaction committed.
 */
static int
end_with_job(struct sqlite_store *s, int rc, int64_t id, struct job *out,
             struct jobd_error *err)
{
    if (rc >= 0 && (rc = load_out(s, id, out, err)) == JOBD_OK) {
        rc = sq_commit(s, err);
        if (rc != JOBD_OK && out != NULL)
            job_fini(out);
        return rc;
    }
    sq_rollback(s);
    return rc;
}

static int
stale(int64_t id, int32_t attempt, struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_STALE, "attempt",
                          "attempt %d of job %lld is not running (stale report)", (int)attempt,
                          (long long)id);
}

/* ------------------------------------------------------------------ */
/* enqueue                                                             */

/*
 * Looks up spec's idempotency key inside the open transaction. Returns 0 if
 * the key is free, 1 if it belongs to the same request (then *out, if not
 * NULL, is that job), or an error (JOBD_E_CONFLICT naming field).
 */
static int
lookup_key(struct sqlite_store *s, const struct job_spec *spec, const char *queue,
           const char *payload, const char *field, struct job *out, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT job_id FROM job_keys WHERE idempotency_key = ?1", &stmt,
                        err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, spec->idempotency_key);
    if ((rc = sq_step_row(s, stmt, "look up idempotency key", err)) <= 0)
        return rc;
    int64_t existing = sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    struct job j = {0};
    rc = sq_load_job(s, existing, &j, err);
    if (rc == JOBD_E_NOTFOUND) {
        /* Its job was deleted outside jobd: the key is free again. */
        rc = sq_prepare(s, "DELETE FROM job_keys WHERE idempotency_key = ?1", &stmt, err);
        if (rc != JOBD_OK)
            return rc;
        sq_bind_text(stmt, 1, spec->idempotency_key);
        return sq_step_done(s, stmt, "free idempotency key", err);
    }
    if (rc != JOBD_OK)
        return rc;
    bool same = strcmp(j.type, spec->type) == 0 && strcmp(j.queue, queue) == 0 &&
                strcmp(j.payload, payload) == 0;
    if (!same) {
        job_fini(&j);
        return jobd_error_set(err, JOBD_E_CONFLICT, field,
                              "idempotency key '%s' was already used by job %lld with a "
                              "different type, queue or payload",
                              spec->idempotency_key, (long long)existing);
    }
    if (out != NULL) {
        job_fini(out);
        job_move(out, &j);
    }
    job_fini(&j);
    return 1;
}

/*
 * Enqueues one job inside the open transaction. field_prefix ("jobs[3].")
 * names the item in errors. On a replay *out is the existing job.
 */
static int
enqueue_one(struct sqlite_store *s, const struct job_spec *spec, int64_t now,
            const char *field_prefix, struct job *out, bool *replayed, struct jobd_error *err)
{
    const char *queue = spec->queue ? spec->queue : JOB_DEFAULT_QUEUE;
    const char *payload = spec->payload ? spec->payload : "{}";
    sqlite3_stmt *stmt;
    int rc;
    if (spec->idempotency_key != NULL) {
        char field[96];
        snprintf(field, sizeof field, "%sidempotency_key", field_prefix ? field_prefix : "");
        rc = lookup_key(s, spec, queue, payload, field, out, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            if (replayed != NULL)
                *replayed = true;
            return JOBD_OK;
        }
    }

    /* No RETURNING: it buffers rows in an ephemeral table per execution. */
    static const char ins[] =
        "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts, "
        "  idempotency_key, schedule, scheduled_for, timeout_ms, created_at) "
        "VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
    if ((rc = sq_prepare(s, ins, &stmt, err)) != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, queue);
    sq_bind_text(stmt, 2, spec->type);
    sq_bind_text(stmt, 3, payload);
    sqlite3_bind_int(stmt, 4, spec->priority);
    sqlite3_bind_int64(stmt, 5, spec->run_at_us > 0 ? spec->run_at_us : now);
    sqlite3_bind_int(stmt, 6, spec->max_attempts > 0 ? spec->max_attempts
                                                    : JOB_DEFAULT_MAX_ATTEMPTS);
    sq_bind_text(stmt, 7, spec->idempotency_key);
    sq_bind_text(stmt, 8, spec->schedule);
    sq_bind_opt(stmt, 9, spec->scheduled_for_us);
    sq_bind_opt(stmt, 10, spec->timeout_ms);
    sqlite3_bind_int64(stmt, 11, now);
    if ((rc = sq_step_done(s, stmt, "insert job", err)) != JOBD_OK)
        return rc;
    int64_t id = sqlite3_last_insert_rowid(s->db);
    if (out != NULL && (rc = sq_load_job(s, id, out, err)) != JOBD_OK)
        return rc;

    if (spec->idempotency_key != NULL) {
        rc = sq_prepare(s, "INSERT INTO job_keys (idempotency_key, job_id) VALUES (?1, ?2)",
                        &stmt, err);
        if (rc != JOBD_OK)
            return rc;
        sq_bind_text(stmt, 1, spec->idempotency_key);
        sqlite3_bind_int64(stmt, 2, id);
        if ((rc = sq_step_done(s, stmt, "insert idempotency key", err)) != JOBD_OK)
            return rc;
    }
    return JOBD_OK;
}

int
sq_op_enqueue(struct store *st, const struct job_spec *spec, struct job *out, bool *replayed,
              struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = enqueue_one(s, spec, sq_now(s), NULL, out, replayed, err);
    if (rc != JOBD_OK) {
        sq_rollback(s);
        return rc;
    }
    rc = sq_commit(s, err);
    if (rc != JOBD_OK)
        job_fini(out);
    return rc;
}

int
sq_op_enqueue_batch(struct store *st, const struct job_spec *specs, size_t n, struct job *out,
                    bool *replayed, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    size_t i;
    for (i = 0; i < n; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "jobs[%zu].", i);
        rc = enqueue_one(s, &specs[i], now, prefix, out ? &out[i] : NULL,
                         replayed ? &replayed[i] : NULL, err);
        if (rc != JOBD_OK)
            break;
    }
    if (rc == JOBD_OK)
        rc = sq_commit(s, err);
    else
        sq_rollback(s);
    if (rc != JOBD_OK) {
        /* Nothing was written: hand back nothing either. */
        for (size_t k = 0; out != NULL && k < n; k++)
            job_fini(&out[k]);
        for (size_t k = 0; replayed != NULL && k < n; k++)
            replayed[k] = false;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

int
sq_op_get(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return sq_load_job(sq_of(st), id, out, err);
}

int
sq_op_list(struct store *st, const struct job_filter *f, struct job_list *out,
           int64_t *next_cursor, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    /* One ordered merge of two rowid scans, newest first. */
#define LIST_WHERE                                                                     \
    " WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR queue = ?2)"                \
    " AND (?3 IS NULL OR type = ?3) AND (?4 IS NULL OR schedule = ?4) AND id < ?5"
    static const char sql[] =
        "SELECT " SQ_JOB_COLS " FROM jobs" LIST_WHERE
        " UNION ALL SELECT " SQ_JOB_COLS " FROM jobs_done" LIST_WHERE
        " ORDER BY id DESC LIMIT ?6";
#undef LIST_WHERE
    int limit = f->limit > 0 ? f->limit : 100;
    if (f->status != STORE_ANY && (f->status < 0 || f->status >= JOB_STATUS_COUNT))
        return jobd_error_set(err, JOBD_E_INVALID, "status", "unknown status %d", f->status);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    if (f->status != STORE_ANY)
        sq_bind_text(stmt, 1, status_text((enum job_status)f->status));
    sq_bind_text(stmt, 2, f->queue);
    sq_bind_text(stmt, 3, f->type);
    sq_bind_text(stmt, 4, f->schedule);
    sqlite3_bind_int64(stmt, 5, f->before_id > 0 ? f->before_id : INT64_MAX);
    sqlite3_bind_int(stmt, 6, limit + 1);
    int got = 0;
    *next_cursor = 0;
    while ((rc = sq_step_row(s, stmt, "list jobs", err)) == 1) {
        if (got == limit) {
            *next_cursor = out->v[out->n - 1].id;
            break;
        }
        struct job *j = job_list_push(out);
        if (j == NULL || sq_row_job(stmt, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            sq_reset(stmt);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory listing jobs");
        }
        got++;
    }
    sq_reset(stmt);
    return rc < 0 ? rc : JOBD_OK;
}

/* ------------------------------------------------------------------ */
/* the worker protocol                                                 */

static int
claim_order(const void *a, const void *b)
{
    const struct job *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->run_at_us != y->run_at_us)
        return x->run_at_us < y->run_at_us ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* 1 if a job req could claim is due at now, 0 if none, or an error. */
static int
any_due(struct sqlite_store *s, const struct claim_req *req, int64_t now,
        struct jobd_error *err)
{
    char *sql = filter_sql("SELECT 1 FROM jobs WHERE status = 'pending' AND run_at <= ?1 "
                           "AND queue NOT IN (SELECT name FROM queues WHERE paused = 1)",
                           " LIMIT 1", req, 2);
    if (sql == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    free(sql);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, now);
    bind_filter(stmt, req, 2);
    rc = sq_step_row(s, stmt, "look for due jobs", err);
    sq_reset(stmt);
    return rc;
}

int
sq_op_claim(struct store *st, const struct claim_req *req, struct job_list *out,
            struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = check_filter(req, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    /*
     * Idle workers poll often; a read (which never waits for the writer in
     * WAL mode) spares them the write lock when nothing is due. A job that
     * becomes due right after this check is claimed at the next poll.
     */
    if ((rc = any_due(s, req, now, err)) <= 0)
        return rc;
    /*
     * The statement picks the due jobs in claim order through the partial
     * index and flips them to running in one step; RETURNING does not keep
     * that order, so the result is sorted afterwards by the same key.
     */
    if ((rc = sq_begin_relaxed(s, err)) != JOBD_OK)
        return rc;
    now = sq_now(s);
    int64_t lease_ms = req->lease_ms > 0 ? req->lease_ms : JOB_DEFAULT_LEASE_MS;
    char *sql = filter_sql(
        "UPDATE jobs SET status = 'running', attempt = attempt + 1, worker_id = ?2, "
        "  lease_expires_at = ?3, started_at = ?1 "
        "WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' AND run_at <= ?1 "
        "  AND queue NOT IN (SELECT name FROM queues WHERE paused = 1)",
        " ORDER BY priority DESC, run_at, id LIMIT ?4) RETURNING " SQ_JOB_COLS, req, 5);
    sqlite3_stmt *stmt;
    if (sql == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    else
        rc = sq_prepare(s, sql, &stmt, err);
    free(sql);
    if (rc != JOBD_OK) {
        sq_rollback(s);
        return rc;
    }
    sqlite3_bind_int64(stmt, 1, now);
    sq_bind_text(stmt, 2, req->worker_id);
    sqlite3_bind_int64(stmt, 3, now + lease_ms * 1000);
    sqlite3_bind_int(stmt, 4, req->limit);
    bind_filter(stmt, req, 5);
    size_t first = out->n;
    while ((rc = sq_step_row(s, stmt, "claim", err)) == 1) {
        struct job *j = job_list_push(out);
        if (j == NULL || sq_row_job(stmt, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory claiming jobs");
            break;
        }
    }
    sq_reset(stmt);
    if (rc == 0)
        rc = sq_commit(s, err);
    else
        sq_rollback(s);
    if (rc != JOBD_OK) {
        /* Rolled back: none of them is claimed. */
        while (out->n > first)
            job_fini(&out->v[--out->n]);
        return rc;
    }
    if (out->n > first)
        qsort(out->v + first, out->n - first, sizeof *out->v, claim_order);
    return JOBD_OK;
}

int
sq_op_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
                int64_t *lease_expires_at_us, bool *cancel_requested, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin_relaxed(s, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s,
                         "UPDATE jobs SET lease_expires_at = ?1 "
                         "WHERE id = ?2 AND status = 'running' AND attempt = ?3 "
                         "RETURNING lease_expires_at, cancel_requested",
                         &stmt, err)) != JOBD_OK)
        goto fail;
    sqlite3_bind_int64(stmt, 1, sq_now(s) + lease_ms * 1000);
    sqlite3_bind_int64(stmt, 2, id);
    sqlite3_bind_int(stmt, 3, attempt);
    if ((rc = sq_step_row(s, stmt, "heartbeat", err)) < 0)
        goto fail;
    if (rc == 0) {
        rc = stale(id, attempt, err);
        goto fail;
    }
    if (lease_expires_at_us != NULL)
        *lease_expires_at_us = sqlite3_column_int64(stmt, 0);
    if (cancel_requested != NULL)
        *cancel_requested = sqlite3_column_int(stmt, 1) != 0;
    sq_reset(stmt);
    return sq_commit(s, err);
fail:
    sq_rollback(s);
    return rc;
}

int
sq_op_complete(struct store *st, int64_t id, int32_t attempt, const char *result,
               struct job *out, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = finish_job(s, id, "running", attempt, JOB_SUCCEEDED, sq_now(s), false, NULL, true,
                    result, err);
    if (rc == 0)
        rc = stale(id, attempt, err);
    return end_with_job(s, rc, id, out, err);
}

int
sq_op_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                     struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    for (size_t i = 0; i < n; i++) {
        rc = finish_job(s, c[i].id, "running", c[i].attempt, JOB_SUCCEEDED, now, false, NULL,
                        true, c[i].result, err);
        if (rc < 0) {
            sq_rollback(s);
            return rc;
        }
        outcome[i] = rc == 1 ? JOBD_OK : JOBD_E_STALE;
    }
    return sq_commit(s, err);
}

/*
 * Ends a failed attempt inside the open transaction (CONTRACT §1): cancelled
 * if a cancel was requested, else pending at now + delay_ms while retryable
 * and attempts are left (attempt - attempt_floor < max_attempts), else dead.
 * Returns 1 if it applied, 0 if the attempt is stale, or an error.
 */
static int
fail_attempt(struct sqlite_store *s, int64_t id, int32_t attempt, const char *error,
             bool retryable, int64_t delay_ms, int64_t now, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT attempt - attempt_floor < max_attempts, cancel_requested "
                        "FROM jobs WHERE id = ?1 AND status = 'running' AND attempt = ?2",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, attempt);
    if ((rc = sq_step_row(s, stmt, "read attempt", err)) <= 0)
        return rc;
    bool attempts_left = sqlite3_column_int(stmt, 0) != 0;
    bool cancel = sqlite3_column_int(stmt, 1) != 0;
    sq_reset(stmt);

    /* last_error keeps the tail: that is where a stack trace ends. */
    if (error != NULL) {
        size_t len = strlen(error);
        if (len > JOB_ERROR_MAX)
            error += len - JOB_ERROR_MAX;
    }
    if (cancel)
        return finish_job(s, id, "running", attempt, JOB_CANCELLED, now, true, error, false,
                          NULL, err);
    if (!retryable || !attempts_left)
        return finish_job(s, id, "running", attempt, JOB_DEAD, now, true, error, false, NULL,
                          err);
    if ((rc = sq_prepare(s,
                         "UPDATE jobs SET status = 'pending', run_at = ?1, last_error = ?2, "
                         "  lease_expires_at = NULL "
                         "WHERE id = ?3 AND status = 'running' AND attempt = ?4",
                         &stmt, err)) != JOBD_OK)
        return rc;
    int64_t delay_us = delay_ms > INT64_MAX / 2000 ? INT64_MAX / 2 : delay_ms * 1000;
    sqlite3_bind_int64(stmt, 1, now + delay_us);
    sq_bind_text(stmt, 2, error);
    sqlite3_bind_int64(stmt, 3, id);
    sqlite3_bind_int(stmt, 4, attempt);
    if ((rc = sq_step_done(s, stmt, "retry later", err)) != JOBD_OK)
        return rc;
    return sqlite3_changes(s->db) == 1;
}

int
sq_op_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
           int64_t retry_delay_ms, struct job *out, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = fail_attempt(s, id, attempt, error, retryable, retry_delay_ms, sq_now(s), err);
    if (rc == 0)
        rc = stale(id, attempt, err);
    return end_with_job(s, rc, id, out, err);
}

int
sq_op_reap(struct store *st, int limit, const struct backoff_policy *bp, int *reaped,
           struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    if (limit <= 0)
        return JOBD_OK;
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s,
                         "SELECT id, attempt FROM jobs "
                         "WHERE status = 'running' AND lease_expires_at < ?1 "
                         "ORDER BY lease_expires_at LIMIT ?2",
                         &stmt, err)) != JOBD_OK)
        goto fail;
    sqlite3_bind_int64(stmt, 1, now);
    sqlite3_bind_int(stmt, 2, limit);
    /* Collect first: the rows change under the scan otherwise. */
    size_t n = 0, cap = 0;
    struct {
        int64_t id;
        int32_t attempt;
    } *v = NULL;
    while ((rc = sq_step_row(s, stmt, "find expired leases", err)) == 1) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            void *nv = realloc(v, ncap * sizeof *v);
            if (nv == NULL) {
                sq_reset(stmt);
                free(v);
                rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
                goto fail;
            }
            v = nv;
            cap = ncap;
        }
        v[n].id = sqlite3_column_int64(stmt, 0);
        v[n].attempt = sqlite3_column_int(stmt, 1);
        n++;
    }
    sq_reset(stmt);
    if (rc < 0) {
        free(v);
        goto fail;
    }
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t delay = sq_backoff_ms(s, v[i].attempt, bp);
        rc = fail_attempt(s, v[i].id, v[i].attempt, "lease expired", true, delay, now, err);
        if (rc < 0) {
            free(v);
            goto fail;
        }
        count += rc;
    }
    free(v);
    if ((rc = sq_commit(s, err)) != JOBD_OK)
        return rc;
    *reaped = count;
    return JOBD_OK;
fail:
    sq_rollback(s);
    return rc;
}

/* ------------------------------------------------------------------ */
/* operator actions                                                    */

/* JOBD_E_STATE if job id exists (in either table), else JOBD_E_NOTFOUND. */
static int
not_allowed(struct sqlite_store *s, int64_t id, const char *what, struct jobd_error *err)
{
    struct job j = {0};
    int rc = sq_load_job(s, id, &j, err);
    if (rc != JOBD_OK)
        return rc;
    rc = jobd_error_set(err, JOBD_E_STATE, "status", "cannot %s job %lld: it is %s", what,
                        (long long)id, job_status_name(j.status));
    job_fini(&j);
    return rc;
}

int
sq_op_cancel(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = finish_job(s, id, "pending", -1, JOB_CANCELLED, sq_now(s), false, NULL, false, NULL,
                    err);
    if (rc < 0)
        goto done;
    if (rc == 0) {
        /* Running: the worker learns it at its next heartbeat. */
        sqlite3_stmt *stmt;
        if ((rc = sq_prepare(s,
                             "UPDATE jobs SET cancel_requested = 1 "
                             "WHERE id = ?1 AND status = 'running'",
                             &stmt, err)) != JOBD_OK)
            goto done;
        sqlite3_bind_int64(stmt, 1, id);
        if ((rc = sq_step_done(s, stmt, "request cancel", err)) != JOBD_OK)
            goto done;
        if (sqlite3_changes(s->db) == 0) {
            rc = not_allowed(s, id, "cancel", err);
            goto done;
        }
    }
done:
    return end_with_job(s, rc, id, out, err);
}

int
sq_op_retry(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    /* attempt_floor = attempt: max_attempts fresh attempts, attempt untouched. */
    static const char back[] =
        "INSERT INTO jobs (" SQ_JOB_COLS ") "
        "SELECT id, queue, type, payload, 'pending', priority, ?2, attempt, max_attempts, "
        "  idempotency_key, schedule, scheduled_for, worker_id, NULL, timeout_ms, 0, "
        "  last_error, NULL, created_at, started_at, NULL, attempt "
        "FROM jobs_done WHERE id = ?1 AND status IN ('dead', 'cancelled')";
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s, back, &stmt, err)) != JOBD_OK)
        goto done;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int64(stmt, 2, sq_now(s));
    if ((rc = sq_step_done(s, stmt, "retry job", err)) != JOBD_OK)
        goto done;
    if (sqlite3_changes(s->db) == 0) {
        rc = not_allowed(s, id, "retry", err);
        goto done;
    }
    if ((rc = sq_prepare(s, "DELETE FROM jobs_done WHERE id = ?1", &stmt, err)) != JOBD_OK)
        goto done;
    sqlite3_bind_int64(stmt, 1, id);
    if ((rc = sq_step_done(s, stmt, "retry job", err)) != JOBD_OK)
        goto done;
done:
    return end_with_job(s, rc, id, out, err);
}

int
sq_op_queue_pause(struct store *st, const char *queue, bool paused, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s,
                         "INSERT INTO queues (name, paused) VALUES (?1, ?2) "
                         "ON CONFLICT (name) DO UPDATE SET paused = excluded.paused",
                         &stmt, err)) != JOBD_OK)
        goto fail;
    sq_bind_text(stmt, 1, queue);
    sqlite3_bind_int(stmt, 2, paused);
    if ((rc = sq_step_done(s, stmt, "pause queue", err)) != JOBD_OK)
        goto fail;
    return sq_commit(s, err);
fail:
    sq_rollback(s);
    return rc;
}

/* Finds or appends the stat for name in the (name-sorted) array. */
static struct queue_stat *
stat_for(struct queue_stat **v, size_t *n, size_t *cap, const char *name)
{
    size_t lo = 0, hi = *n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp((*v)[mid].name, name);
        if (c == 0)
            return &(*v)[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        struct queue_stat *nv = realloc(*v, ncap * sizeof *nv);
        if (nv == NULL)
            return NULL;
        *v = nv;
        *cap = ncap;
    }
    memmove(&(*v)[lo + 1], &(*v)[lo], (*n - lo) * sizeof **v);
    (*n)++;
    struct queue_stat *q = &(*v)[lo];
    memset(q, 0, sizeof *q);
    snprintf(q->name, sizeof q->name, "%s", name);
    return q;
}

int
sq_op_queue_stats(struct store *st, struct queue_stat **out, size_t *n, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    /*
     * One statement, so the counts are one consistent snapshot. The oldest
     * pending age is how long the longest-waiting due job is past its run_at
     * (jobs scheduled for later are not late, so they do not count).
     */
    static const char sql[] =
        "SELECT name, paused, NULL, 0, NULL FROM queues "
        "UNION ALL SELECT queue, 0, status, count(*), "
        "  min(CASE WHEN status = 'pending' AND run_at <= ?1 THEN run_at END) "
        "  FROM jobs GROUP BY queue, status "
        "UNION ALL SELECT queue, 0, status, count(*), NULL FROM jobs_done "
        "  GROUP BY queue, status";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    sqlite3_bind_int64(stmt, 1, now);
    struct queue_stat *v = NULL;
    size_t cnt = 0, cap = 0;
    while ((rc = sq_step_row(s, stmt, "queue stats", err)) == 1) {
        const char *name = (const char *)sqlite3_column_text(stmt, 0);
        struct queue_stat *q = stat_for(&v, &cnt, &cap, name ? name : "");
        if (q == NULL) {
            sq_reset(stmt);
            free(v);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
        if (sqlite3_column_type(stmt, 2) == SQLITE_NULL) {
            q->paused = sqlite3_column_int(stmt, 1) != 0;
            continue;
        }
        enum job_status js;
        if (job_status_parse((const char *)sqlite3_column_text(stmt, 2), &js) != JOBD_OK)
            continue;
        q->count[js] += sqlite3_column_int64(stmt, 3);
        if (js == JOB_PENDING && sqlite3_column_type(stmt, 4) != SQLITE_NULL)
            q->oldest_pending_age_s = (double)(now - sqlite3_column_int64(stmt, 4)) / 1e6;
    }
    sq_reset(stmt);
    if (rc < 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n = cnt;
    return JOBD_OK;
}

int
sq_op_prune(struct store *st, int64_t finished_before_us, int limit, int *deleted,
            struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    if (limit <= 0)
        return JOBD_OK;
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    /*
     * The same ordered selection twice in one write transaction picks the
     * same rows: first their idempotency keys go, then the jobs.
     */
#define PRUNE_PICK                                                                     \
    "(SELECT id FROM jobs_done WHERE finished_at < ?1 ORDER BY finished_at, id LIMIT ?2)"
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s, "DELETE FROM job_keys WHERE job_id IN " PRUNE_PICK, &stmt, err)) !=
        JOBD_OK)
        goto fail;
    sqlite3_bind_int64(stmt, 1, finished_before_us);
    sqlite3_bind_int(stmt, 2, limit);
    if ((rc = sq_step_done(s, stmt, "prune keys", err)) != JOBD_OK)
        goto fail;
    if ((rc = sq_prepare(s, "DELETE FROM jobs_done WHERE id IN " PRUNE_PICK, &stmt, err)) !=
        JOBD_OK)
        goto fail;
#undef PRUNE_PICK
    sqlite3_bind_int64(stmt, 1, finished_before_us);
    sqlite3_bind_int(stmt, 2, limit);
    if ((rc = sq_step_done(s, stmt, "prune jobs", err)) != JOBD_OK)
        goto fail;
    int count = sqlite3_changes(s->db);
    if ((rc = sq_commit(s, err)) != JOBD_OK)
        return rc;
    *deleted = count;
    return JOBD_OK;
fail:
    sq_rollback(s);
    return rc;
}

int
sq_op_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                  struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = check_filter(req, err);
    if (rc != JOBD_OK)
        return rc;
    /* ORDER BY … LIMIT 1 rather than min(): stops at the first match of jobs_next_run. */
    char *sql = filter_sql("SELECT run_at FROM jobs WHERE status = 'pending' "
                           "AND queue NOT IN (SELECT name FROM queues WHERE paused = 1)",
                           " ORDER BY run_at LIMIT 1", req, 1);
    if (sql == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    sqlite3_stmt *stmt;
    rc = sq_prepare(s, sql, &stmt, err);
    free(sql);
    if (rc != JOBD_OK)
        return rc;
    bind_filter(stmt, req, 1);
    if ((rc = sq_step_row(s, stmt, "next run_at", err)) < 0)
        return rc;
    *run_at_us = rc == 1 ? sqlite3_column_int64(stmt, 0) : 0;
    sq_reset(stmt);
    return JOBD_OK;
}
