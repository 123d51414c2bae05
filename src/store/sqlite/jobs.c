/*
 * sqlite/jobs.c — the moves every SQLite job operation shares: a job
 * into jobs_done (sq_finish_job), the end of a one-job transaction
 * (sq_end_with_job). The operations themselves
 * live by concern in sqlite/enqueue.c, sqlite/read.c,
 * sqlite/report.c and sqlite/admin.c.
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

#include "core/err.h"
#include "core/rules.h"
#include "store/sqlite/internal.h"

int
sq_finish_job(struct sqlite_store *s, int64_t id, const struct sq_finish *f, struct jobd_error *err)
{
    static const char ins[] =
        "INSERT INTO jobs_done (" SQ_JOB_COLS ", lease_token_hash) "
        "SELECT id, queue, type, payload, ?3, priority, run_at, attempt, max_attempts, "
        "  idempotency_key, schedule, scheduled_for, worker_id, NULL, timeout_ms, "
        "  cancel_requested, CASE WHEN ?5 THEN ?6 ELSE last_error END, "
        "  CASE WHEN ?7 THEN ?8 ELSE result END, created_at, started_at, ?4, attempt_floor, "
        "  traceparent, grp, lease_token_hash "
        "FROM jobs WHERE id = ?1 AND status = ?2 AND (?9 IS NULL OR attempt = ?9) "
        "RETURNING queue";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, ins, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sq_bind_text(stmt, 2, job_status_name(f->from));
    sq_bind_text(stmt, 3, job_status_name(f->to));
    sqlite3_bind_int64(stmt, 4, f->now_us);
    sqlite3_bind_int(stmt, 5, f->error == SQ_SET);
    sq_bind_text(stmt, 6, f->error_text);
    sqlite3_bind_int(stmt, 7, f->result == SQ_SET);
    sq_bind_text(stmt, 8, f->result_text);
    if (f->attempt != SQ_ANY_ATTEMPT)
        sqlite3_bind_int(stmt, 9, f->attempt);
    if ((rc = sq_step_row(s, stmt, "finish job", err)) <= 0)
        return rc;
    if (f->to == JOB_SUCCEEDED || f->to == JOB_DEAD) /* store/stats.h */
        sq_stats_count(s, (const char *)sqlite3_column_text(stmt, 0),
                       f->to == JOB_SUCCEEDED ? STATS_SUCCEEDED : STATS_DEAD, f->now_us);
    sq_reset(stmt);
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
int
sq_end_with_job(struct sqlite_store *s, int rc, int64_t id, struct job *out, struct jobd_error *err)
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
