/*
 * sqlite/attempts.c — the attempt history of store/operator.h on SQLite.
 *
 * The attempt history is read in one statement (one snapshot): the rows of
 * job_attempts (attempts that ended other than in success) and the job's
 * current attempt taken from its row while it runs or after it succeeded.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"

int
sq_op_attempts(struct store *st, int64_t id, struct attempt_list *out, struct jobd_error *err)
{
#define CURRENT(table)                                                                             \
    " SELECT attempt, worker_id, started_at, finished_at,"                                         \
    "   CASE WHEN status = 'running' THEN 'running' ELSE 'succeeded' END, NULL"                    \
    " FROM " table " j WHERE id = ?1 AND attempt > 0"                                              \
    "   AND status IN ('running', 'succeeded') AND NOT EXISTS ("                                   \
    "     SELECT 1 FROM job_attempts a WHERE a.job_id = ?1 AND a.attempt = j.attempt)"
    static const char sql[] =
        "SELECT attempt, worker_id, started_at, finished_at, outcome, error"
        " FROM job_attempts WHERE job_id = ?1"
        " UNION ALL" CURRENT("jobs") " UNION ALL" CURRENT("jobs_done") " ORDER BY 1";
#undef CURRENT
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    int oom = 0;
    while (!oom && (rc = sq_step_row(s, stmt, "read attempts", err)) == 1) {
        struct job_attempt *a = attempt_list_push(out);
        if (a == NULL) {
            oom = 1;
            break;
        }
        a->attempt = sqlite3_column_int(stmt, 0);
        a->worker_id = sq_col_strdup(stmt, 1, &oom);
        a->started_at_us = sqlite3_column_int64(stmt, 2);
        a->finished_at_us = sqlite3_column_int64(stmt, 3);
        if (attempt_outcome_parse((const char *)sqlite3_column_text(stmt, 4), &a->outcome) !=
            JOBD_OK)
            a->outcome = ATT_FAILED;
        a->error = sq_col_strdup(stmt, 5, &oom);
    }
    sq_reset(stmt);
    if (oom)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory reading attempts");
    if (rc < 0)
        return rc;
    if (out->n > 0)
        return JOBD_OK;
    struct job j = {0};
    rc = sq_load_job(s, id, &j, err); /* JOBD_E_NOTFOUND for no such job */
    job_fini(&j);
    return rc;
}

int
sq_history_add(struct sqlite_store *s, int64_t id, int32_t attempt, const char *outcome,
               const char *error, int64_t now, struct jobd_error *err)
{
    static const char sql[] =
        "INSERT OR IGNORE INTO job_attempts (job_id, attempt, worker_id, started_at,"
        "                                    finished_at, outcome, error, lease_token_hash) "
        "SELECT id, attempt, worker_id, started_at, ?3, ?4, ?5, lease_token_hash FROM jobs"
        " WHERE id = ?1 AND attempt = ?2";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, attempt);
    sqlite3_bind_int64(stmt, 3, now);
    sq_bind_text(stmt, 4, outcome);
    sq_bind_text(stmt, 5, error);
    return sq_step_done(s, stmt, "record attempt", err);
}
