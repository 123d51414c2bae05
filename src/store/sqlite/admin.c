/*
 * sqlite/admin.c — operator actions on SQLite: cancel, retry, queue
 * pause, queue stats and pruning of finished jobs.
 *
 * Cancel and retry are one transaction each; when the guarded statement
 * matches nothing, the job is read inside the same transaction to say why.
 * Split from sqlite/jobs.c by concern; conventions in
 * sqlite/internal.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/sqlite/internal.h"

/* JOBD_E_STATE if job id exists (in either table), else JOBD_E_NOTFOUND. */
static int
not_allowed(struct sqlite_store *s, int64_t id, enum job_action action, struct jobd_error *err)
{
    struct job j = {0};
    int rc = sq_load_job(s, id, &j, err);
    if (rc != JOBD_OK)
        return rc;
    rc = job_error_refused(err, action, id, j.status);
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
    struct sq_finish f = {
        .from = JOB_PENDING, .attempt = SQ_ANY_ATTEMPT, .to = JOB_CANCELLED, .now_us = sq_now(s)};
    rc = sq_finish_job(s, id, &f, err);
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
            /* Waiting (sqlite/deps.c), or not allowed. */
            rc = sq_deps_cancel_waiting(s, id, f.now_us, err);
            if (rc == 0)
                rc = not_allowed(s, id, JOB_ACTION_CANCEL, err);
            goto done;
        }
    }
done:
    return sq_end_with_job(s, rc, id, out, err);
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
        "  idempotency_key, schedule, scheduled_for, NULL, NULL, timeout_ms, 0, "
        "  last_error, NULL, created_at, NULL, NULL, attempt, traceparent, grp "
        "FROM jobs_done WHERE id = ?1 AND status IN ('dead', 'cancelled')";
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s, back, &stmt, err)) != JOBD_OK)
        goto done;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int64(stmt, 2, sq_now(s));
    if ((rc = sq_step_done(s, stmt, "retry job", err)) != JOBD_OK)
        goto done;
    if (sqlite3_changes(s->db) == 0) {
        rc = not_allowed(s, id, JOB_ACTION_RETRY, err);
        goto done;
    }
    if ((rc = sq_prepare(s, "DELETE FROM jobs_done WHERE id = ?1", &stmt, err)) != JOBD_OK)
        goto done;
    sqlite3_bind_int64(stmt, 1, id);
    if ((rc = sq_step_done(s, stmt, "retry job", err)) != JOBD_OK)
        goto done;
done:
    return sq_end_with_job(s, rc, id, out, err);
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
     * One statement, so the counts are one consistent snapshot. They come
     * from job_counts, which triggers keep exact (migration 4), so the cost
     * is one row per (queue, status) whatever the backlog. The oldest
     * pending age is how long the longest-waiting due job is past its
     * run_at (jobs scheduled for later are not late, so they do not count):
     * one seek of jobs_next_queue per queue.
     */
    static const char sql[] =
        "SELECT name, paused, NULL, 0, NULL FROM queues "
        "UNION ALL SELECT c.queue, 0, c.status, c.n, "
        "  CASE WHEN c.status = 'pending' THEN (SELECT min(j.run_at) FROM jobs j"
        "    WHERE j.queue = c.queue AND j.status = 'pending') END "
        "  FROM job_counts c WHERE c.n > 0";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
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
        if (js == JOB_PENDING && sqlite3_column_type(stmt, 4) != SQLITE_NULL &&
            sqlite3_column_int64(stmt, 4) <= now) {
            q->any_due = true;
            q->oldest_pending_age_s = (double)(now - sqlite3_column_int64(stmt, 4)) / 1e6;
        }
    }
    sq_reset(stmt);
    if (rc >= 0)
        rc = sq_qlimits_fill(s, v, cnt, err);
    if (rc != JOBD_OK) {
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
     * The same ordered selection thrice in one write transaction picks the
     * same rows: first their idempotency keys and attempt history go, then
     * the jobs.
     */
#define PRUNE_PICK                                                                                 \
    "(SELECT id FROM jobs_done WHERE finished_at < ?1" SQ_WF_SETTLED(                              \
        "jobs_done") " ORDER BY finished_at, id LIMIT ?2)"
    static const char *const first[] = {
        "DELETE FROM job_keys WHERE job_id IN " PRUNE_PICK,
        "DELETE FROM job_attempts WHERE job_id IN " PRUNE_PICK,
        "DELETE FROM job_progress WHERE job_id IN " PRUNE_PICK,
        "DELETE FROM job_attempt_logs WHERE job_id IN " PRUNE_PICK,
        /* the edges to its parents (sqlite/deps.c): a finished child needs none */
        "DELETE FROM job_deps WHERE child IN " PRUNE_PICK,
        "DELETE FROM workflow_steps WHERE job_id IN " PRUNE_PICK,
        "DELETE FROM enqueue_keys WHERE job_id IN " PRUNE_PICK, /* sqlite/enqkeys.c */
    };
    sqlite3_stmt *stmt;
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        if ((rc = sq_prepare(s, first[i], &stmt, err)) != JOBD_OK)
            goto fail;
        sqlite3_bind_int64(stmt, 1, finished_before_us);
        sqlite3_bind_int(stmt, 2, limit);
        if ((rc = sq_step_done(s, stmt, "prune keys and history", err)) != JOBD_OK)
            goto fail;
    }
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
    /* whole workflows (sqlite/prune.c), at the same cutoff whatever their outcome */
    if (count < limit)
        rc = sq_prune_workflows(s, finished_before_us, finished_before_us, limit - count, deleted,
                                err);
    return rc;
fail:
    sq_rollback(s);
    return rc;
}
