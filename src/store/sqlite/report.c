/*
 * sqlite/report.c — a worker's reports on SQLite: heartbeat,
 * complete, complete_batch, fail, and the reaper.
 *
 * Each is one BEGIN IMMEDIATE transaction whose statements carry the fence
 * `status = 'running' AND attempt = ?`; a report that matches nothing is
 * stale and changes nothing. An attempt that ends takes its lease token's
 * hash with it (its history row; the job row's is cleared when the job goes
 * back to pending, so a claim on the store itself has none, as on
 * PostgreSQL). Split from sqlite/jobs.c by concern;
 * conventions in sqlite/internal.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backoff.h"
#include "core/err.h"
#include "core/rules.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"


/*
 * Full jitter (docs/MODEL.md, "Backoff") over the attempts counted:
 * job_retry_delay_ms.
 */
static int64_t
sq_backoff_ms(struct sqlite_store *s, int32_t attempt, int32_t floor,
              const struct backoff_policy *bp)
{
    return job_retry_delay_ms(attempt, floor, bp != NULL ? bp->base_ms : 0,
                              bp != NULL ? bp->cap_ms : 0, backoff_rand_splitmix, &s->rng);
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
        rc = job_error_stale(err, id, attempt);
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
sq_op_complete(struct store *st, int64_t id, int32_t attempt, const char *result, struct job *out,
               struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct sq_finish f = {.from = JOB_RUNNING,
                          .attempt = attempt,
                          .to = JOB_SUCCEEDED,
                          .now_us = sq_now(s),
                          .result = SQ_SET,
                          .result_text = result};
    rc = sq_finish_job(s, id, &f, err);
    if (rc == 0)
        rc = job_error_stale(err, id, attempt);
    return sq_end_with_job(s, rc, id, out, err);
}

/* A batch naming one job twice: its reports apply in order, one at a time. */
static bool
has_duplicate(const struct completion *c, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t k = 0; k < i; k++)
            if (c[k].id == c[i].id)
                return true;
    return false;
}

/* Appends text to b[at..cap) as a JSON string; cap leaves 6 bytes a byte of text and 2. */
static size_t
put_json_string(char *b, size_t cap, size_t at, const char *text)
{
    b[at++] = '"';
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            b[at++] = '\\';
            b[at++] = (char)*p;
        } else if (*p < 0x20) {
            at += (size_t)snprintf(b + at, cap - at, "\\u%04x", *p);
        } else {
            b[at++] = (char)*p;
        }
    }
    b[at++] = '"';
    return at;
}

/* The batch as one JSON array of [id, attempt, result or null]; NULL when out of memory.
 * The caller frees it. */
static char *
batch_json(const struct completion *c, size_t n)
{
    size_t cap = 3;
    for (size_t i = 0; i < n; i++)
        cap += 48 + (c[i].result != NULL ? 6 * strlen(c[i].result) + 2 : 4);
    char *b = malloc(cap);
    if (b == NULL)
        return NULL;
    size_t at = 0;
    b[at++] = '[';
    for (size_t i = 0; i < n; i++) {
        at += (size_t)snprintf(b + at, cap - at, "%s[%lld,%d,", i ? "," : "", (long long)c[i].id,
                               (int)c[i].attempt);
        if (c[i].result != NULL)
            at = put_json_string(b, cap, at, c[i].result);
        else
            at += (size_t)snprintf(b + at, cap - at, "null");
        b[at++] = ']';
    }
    b[at++] = ']';
    b[at] = '\0';
    return b;
}

/* Inside the open transaction: each report alone, in order (sq_finish_job). */
static int
complete_each(struct sqlite_store *s, const struct completion *c, size_t n, int *outcome,
              int64_t now, struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        struct sq_finish f = {.from = JOB_RUNNING,
                              .attempt = c[i].attempt,
                              .to = JOB_SUCCEEDED,
                              .now_us = now,
                              .result = SQ_SET,
                              .result_text = c[i].result};
        int rc = sq_finish_job(s, c[i].id, &f, err);
        if (rc < 0)
            return rc;
        outcome[i] = rc == 1 ? JOBD_OK : JOBD_E_STALE;
    }
    return JOBD_OK;
}

/* Inside the open transaction: the batch (no id twice) as arr (batch_json) in two
 * statements; done has room for n ids. */
static int
complete_set(struct sqlite_store *s, const struct completion *c, size_t n, int *outcome,
             int64_t now, const char *arr, int64_t *done, struct jobd_error *err)
{
    static const char ins[] =
        "INSERT INTO jobs_done (" SQ_JOB_COLS ", lease_token_hash) "
        "SELECT j.id, j.queue, j.type, j.payload, 'succeeded', j.priority, j.run_at, j.attempt, "
        "  j.max_attempts, j.idempotency_key, j.schedule, j.scheduled_for, j.worker_id, NULL, "
        "  j.timeout_ms, j.cancel_requested, j.last_error, json_extract(b.value, '$[2]'), "
        "  j.created_at, j.started_at, ?2, j.attempt_floor, j.traceparent, j.grp, "
        "  j.lease_token_hash "
        "FROM json_each(?1) b JOIN jobs j ON j.id = json_extract(b.value, '$[0]') "
        "WHERE j.status = 'running' AND j.attempt = json_extract(b.value, '$[1]') "
        "RETURNING id, queue, type, attempt";
    static const char del[] = "DELETE FROM jobs WHERE id IN (SELECT value FROM json_each(?1))";
    for (size_t i = 0; i < n; i++)
        outcome[i] = JOBD_E_STALE;
    size_t nd = 0;
    sqlite3_stmt *stmt;
    bool told = false; /* the successes' events are this batch's to write */
    struct sq_tell t = {0};
    int rc = sq_events_hold(s, &told, err);
    if (rc != JOBD_OK || (rc = sq_prepare(s, ins, &stmt, err)) != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, arr);
    sqlite3_bind_int64(stmt, 2, now);
    while ((rc = sq_step_row(s, stmt, "finish jobs", err)) == 1) {
        int64_t id = sqlite3_column_int64(stmt, 0);
        sq_stats_count(s, (const char *)sqlite3_column_text(stmt, 1), STATS_SUCCEEDED,
                       now); /* store/stats.h */
        if (told)
            sq_tell_add(&t, id, sqlite3_column_int(stmt, 3),
                        (const char *)sqlite3_column_text(stmt, 1),
                        (const char *)sqlite3_column_text(stmt, 2));
        for (size_t i = 0; i < n; i++)
            if (c[i].id == id)
                outcome[i] = JOBD_OK;
        if (nd < n)
            done[nd++] = id;
    }
    sq_reset(stmt);
    if (rc < 0 || nd == 0) {
        sq_tell_fini(&t);
        return rc < 0 ? rc : told ? sq_events_tell(s, true, &t, err) : JOBD_OK;
    }
    char *ids = sq_ids_json(done, nd);
    if (ids == NULL) {
        sq_tell_fini(&t);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    if ((rc = sq_prepare(s, del, &stmt, err)) == JOBD_OK) {
        sq_bind_text(stmt, 1, ids);
        rc = sq_step_done(s, stmt, "finish jobs", err);
    }
    free(ids);
    if (rc == JOBD_OK && told)
        return sq_events_tell(s, true, &t, err);
    sq_tell_fini(&t);
    return rc;
}

/*
 * The whole batch in two statements, not two a job (docs/DESIGN.md,
 * Events): every statement in a transaction keeps a journal of the pages
 * it changes, so that it can be undone alone; one a job copied each
 * index page of jobs_done and jobs (and, while the event log records,
 * of events) once a job, and once one statement's journal passed 64 KiB
 * SQLite spilled it to a temporary file for the rest of the transaction
 * (a write() a page). Set-wise, a page is copied once a batch. A batch
 * naming a job twice goes one report at a time, in order, as before.
 */
int
sq_op_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                     struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    bool each = has_duplicate(c, n);
    char *arr = each ? NULL : batch_json(c, n);
    int64_t *done = each ? NULL : malloc((n ? n : 1) * sizeof *done);
    int rc = !each && (arr == NULL || done == NULL)
                 ? jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory")
                 : sq_begin(s, err);
    if (rc == JOBD_OK) {
        int64_t now = sq_now(s);
        rc = each ? complete_each(s, c, n, outcome, now, err)
                  : complete_set(s, c, n, outcome, now, arr, done, err);
        if (rc == JOBD_OK)
            rc = sq_commit(s, err);
        else
            sq_rollback(s);
    }
    free(arr);
    free(done);
    return rc;
}

/*
 * Ends a failed attempt inside the open transaction (docs/MODEL.md,
 * "Transitions"): cancelled if a cancel was requested, else pending at now +
 * delay while retryable and attempts are left (job_has_attempts_left,
 * core/rules.h), else dead. The delay is delay->ms, or when that is < 0 the
 * backoff of delay->bp over the attempts counted, from the row read here. The attempt gets its history row
 * (store/operator.h): its outcome follows the job's fate, or is "reaped" when
 * the reaper ended it. Returns 1 if it applied (*fate, may be NULL, is the
 * job's new status), 0 if the attempt is stale, or an error.
 */
/* How an attempt failed: the worker's report says whether to retry; a reap always may. */
enum fail_kind { FAIL_RETRYABLE, FAIL_PERMANENT, FAIL_REAPED };
/* The delay of a retried attempt: ms, or when < 0 the backoff of bp (NULL: the defaults). */
struct fail_delay {
    int64_t ms;
    const struct backoff_policy *bp;
};

static int
fail_attempt(struct sqlite_store *s, int64_t id, int32_t attempt, const char *error,
             enum fail_kind kind, struct fail_delay delay, int64_t now, enum job_status *fate,
             struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT attempt_floor, max_attempts, cancel_requested, queue "
                        "FROM jobs WHERE id = ?1 AND status = 'running' AND attempt = ?2",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, attempt);
    if ((rc = sq_step_row(s, stmt, "read attempt", err)) <= 0)
        return rc;
    int32_t floor = sqlite3_column_int(stmt, 0);
    bool attempts_left = job_has_attempts_left(attempt, floor, sqlite3_column_int(stmt, 1));
    bool cancel = sqlite3_column_int(stmt, 2) != 0;
    char queue[JOB_QUEUE_MAX + 1];
    snprintf(queue, sizeof queue, "%s", (const char *)sqlite3_column_text(stmt, 3));
    sq_reset(stmt);

    error = job_error_tail(error);
    bool dead = kind == FAIL_PERMANENT || !attempts_left;
    const char *outcome = kind == FAIL_REAPED ? "reaped"
                          : cancel            ? "cancelled"
                          : dead              ? "dead"
                                              : "failed";
    if ((rc = sq_history_add(s, id, attempt, outcome, error, now, err)) != JOBD_OK)
        return rc;
    if (fate != NULL)
        *fate = cancel ? JOB_CANCELLED : dead ? JOB_DEAD : JOB_PENDING;
    if (cancel || dead) {
        struct sq_finish f = {.from = JOB_RUNNING,
                              .attempt = attempt,
                              .to = cancel ? JOB_CANCELLED : JOB_DEAD,
                              .now_us = now,
                              .error = SQ_SET,
                              .error_text = error};
        return sq_finish_job(s, id, &f, err);
    }
    if ((rc = sq_prepare(s,
                         "UPDATE jobs SET status = 'pending', run_at = ?1, last_error = ?2, "
                         "  worker_id = NULL, lease_expires_at = NULL, lease_token_hash = NULL "
                         "WHERE id = ?3 AND status = 'running' AND attempt = ?4",
                         &stmt, err)) != JOBD_OK)
        return rc;
    int64_t delay_ms = delay.ms >= 0 ? delay.ms : sq_backoff_ms(s, attempt, floor, delay.bp);
    int64_t delay_us = delay_ms > INT64_MAX / 2000 ? INT64_MAX / 2 : delay_ms * 1000;
    sqlite3_bind_int64(stmt, 1, now + delay_us);
    sq_bind_text(stmt, 2, error);
    sqlite3_bind_int64(stmt, 3, id);
    sqlite3_bind_int(stmt, 4, attempt);
    if ((rc = sq_step_done(s, stmt, "retry later", err)) != JOBD_OK)
        return rc;
    if (sqlite3_changes(s->db) != 1)
        return 0;
    sq_stats_count(s, queue, STATS_FAILED, now); /* store/stats.h */
    return 1;
}

int
sq_op_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
           int64_t retry_delay_ms, const struct backoff_policy *bp, struct job *out,
           struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = fail_attempt(s, id, attempt, error, retryable ? FAIL_RETRYABLE : FAIL_PERMANENT,
                      (struct fail_delay){retry_delay_ms, bp}, sq_now(s), NULL, err);
    if (rc == 0)
        rc = job_error_stale(err, id, attempt);
    return sq_end_with_job(s, rc, id, out, err);
}

int
sq_op_fail_batch(struct store *st, const struct fail_report *f, size_t n, int *outcome,
                 enum job_status *status, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    for (size_t i = 0; i < n; i++) {
        rc = fail_attempt(s, f[i].id, f[i].attempt, f[i].error,
                          f[i].retryable ? FAIL_RETRYABLE : FAIL_PERMANENT,
                          (struct fail_delay){f[i].retry_delay_ms, NULL}, now,
                          status != NULL ? &status[i] : NULL, err);
        if (rc < 0) {
            sq_rollback(s);
            return rc;
        }
        outcome[i] = rc == 1 ? JOBD_OK : JOBD_E_STALE;
    }
    return sq_commit(s, err);
}

/* A row of the expired leases (id, attempt, floor, type, queue, worker_id,
 * traceparent) into *o. */
static void
reaped_from_row(sqlite3_stmt *stmt, struct reaped_job *o)
{
    o->id = sqlite3_column_int64(stmt, 0);
    o->attempt = sqlite3_column_int(stmt, 1);
    o->now = JOB_PENDING;
    snprintf(o->type, sizeof o->type, "%s", (const char *)sqlite3_column_text(stmt, 3));
    snprintf(o->queue, sizeof o->queue, "%s", (const char *)sqlite3_column_text(stmt, 4));
    const unsigned char *w = sqlite3_column_text(stmt, 5);
    snprintf(o->worker_id, sizeof o->worker_id, "%s", w != NULL ? (const char *)w : "");
    const unsigned char *tp = sqlite3_column_text(stmt, 6);
    snprintf(o->traceparent, sizeof o->traceparent, "%s", tp != NULL ? (const char *)tp : "");
}

int
sq_op_reap(struct store *st, int limit, const struct backoff_policy *bp, struct reaped_job *out,
           size_t room, int *reaped, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    if (limit <= 0)
        return JOBD_OK;
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(
             s,
             "SELECT id, attempt, attempt_floor, type, queue, worker_id, traceparent FROM jobs "
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
        if (out != NULL && n < room)
            reaped_from_row(stmt, &out[n]);
        n++;
    }
    sq_reset(stmt);
    if (rc < 0) {
        free(v);
        goto fail;
    }
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        enum job_status fate = JOB_PENDING;
        rc = fail_attempt(s, v[i].id, v[i].attempt, "lease expired", FAIL_REAPED,
                          (struct fail_delay){-1, bp}, now, &fate, err);
        if (rc < 0) {
            free(v);
            goto fail;
        }
        if (rc == 1 && out != NULL && i < room) { /* out[0..count) are the applied ones */
            out[count] = out[i];
            out[count].now = fate;
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


/*
 * Gives attempt back inside the open transaction: 1 if it applied, 0 if the
 * attempt is stale, or an error. A cancel requested meanwhile wins: the job
 * ends cancelled, as a failed attempt would.
 */
static int
release_attempt(struct sqlite_store *s, int64_t id, int32_t attempt, int64_t now,
                struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT cancel_requested FROM jobs "
                        "WHERE id = ?1 AND status = 'running' AND attempt = ?2",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, attempt);
    if ((rc = sq_step_row(s, stmt, "read attempt", err)) <= 0)
        return rc;
    bool cancel = sqlite3_column_int(stmt, 0) != 0;
    sq_reset(stmt);
    rc = sq_history_add(s, id, attempt, cancel ? "cancelled" : "released", NULL, now, err);
    if (rc != JOBD_OK)
        return rc;
    if (cancel) {
        struct sq_finish f = {
            .from = JOB_RUNNING, .attempt = attempt, .to = JOB_CANCELLED, .now_us = now};
        return sq_finish_job(s, id, &f, err);
    }
    if ((rc = sq_prepare(s,
                         "UPDATE jobs SET status = 'pending', run_at = ?1, "
                         "  attempt_floor = attempt_floor + 1, worker_id = NULL, "
                         "  lease_expires_at = NULL, lease_token_hash = NULL "
                         "WHERE id = ?2 AND status = 'running' AND attempt = ?3",
                         &stmt, err)) != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, now);
    sqlite3_bind_int64(stmt, 2, id);
    sqlite3_bind_int(stmt, 3, attempt);
    if ((rc = sq_step_done(s, stmt, "release", err)) != JOBD_OK)
        return rc;
    return sqlite3_changes(s->db) == 1;
}

int
sq_op_release(struct store *st, int64_t id, int32_t attempt, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = release_attempt(s, id, attempt, sq_now(s), err);
    if (rc == 0)
        rc = job_error_stale(err, id, attempt);
    return sq_end_with_job(s, rc, id, NULL, err);
}
