/*
 * sqlite/progress.c — store/progress.h on SQLite: the table job_progress
 * (migration 12), one row per job, written in the transaction of the
 * fenced lease extension; read one primary-key probe per job.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/progress.h"
#include "store/sqlite/internal.h"

int
sq_op_progress(struct store *st, int64_t id, int32_t attempt, const struct progress_report *p,
               int64_t lease_ms, int64_t *lease_expires_at_us, bool *cancel_requested,
               struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    /* Relaxed, as a heartbeat: a progress lost with the machine is lost
     * with the attempt it describes. */
    int rc = sq_begin_relaxed(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s,
                         "UPDATE jobs SET lease_expires_at = max(lease_expires_at, ?1) "
                         "WHERE id = ?2 AND status = 'running' AND attempt = ?3 "
                         "RETURNING lease_expires_at, cancel_requested",
                         &stmt, err)) != JOBD_OK)
        goto fail;
    sqlite3_bind_int64(stmt, 1, now + lease_ms * 1000);
    sqlite3_bind_int64(stmt, 2, id);
    sqlite3_bind_int(stmt, 3, attempt);
    if ((rc = sq_step_row(s, stmt, "progress", err)) < 0)
        goto fail;
    if (rc == 0) {
        rc = job_error_stale(err, id, attempt);
        goto fail;
    }
    *lease_expires_at_us = sqlite3_column_int64(stmt, 0);
    *cancel_requested = sqlite3_column_int(stmt, 1) != 0;
    sq_reset(stmt);
    if ((rc = sq_prepare(s,
                         "INSERT INTO job_progress (job_id, attempt, percent, message, data, at)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (job_id) DO UPDATE SET"
                         " attempt = excluded.attempt, percent = excluded.percent,"
                         " message = excluded.message, data = excluded.data, at = excluded.at",
                         &stmt, err)) != JOBD_OK)
        goto fail;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, attempt);
    if (p->has_percent)
        sqlite3_bind_double(stmt, 3, p->percent);
    sq_bind_text(stmt, 4, p->message);
    sq_bind_text(stmt, 5, p->data);
    sqlite3_bind_int64(stmt, 6, now);
    if ((rc = sq_step_done(s, stmt, "keep progress", err)) != JOBD_OK)
        goto fail;
    return sq_commit(s, err);
fail:
    sq_rollback(s);
    return rc;
}

/* A copy of column col (NULL stays NULL); false on out-of-memory. */
static bool
col_dup(sqlite3_stmt *stmt, int col, char **out)
{
    const char *t = (const char *)sqlite3_column_text(stmt, col);
    *out = t != NULL ? strdup(t) : NULL;
    return t == NULL || *out != NULL;
}

int
sq_op_progress_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    for (size_t i = 0; i < n; i++) {
        if (v[i].attempt <= 0)
            continue; /* never claimed: nothing reported */
        sqlite3_stmt *stmt;
        int rc = sq_prepare(s,
                            "SELECT percent, message, data, at FROM job_progress"
                            " WHERE job_id = ?1 AND attempt = ?2",
                            &stmt, err);
        if (rc != JOBD_OK)
            return rc;
        sqlite3_bind_int64(stmt, 1, v[i].id);
        sqlite3_bind_int(stmt, 2, v[i].attempt);
        if ((rc = sq_step_row(s, stmt, "read progress", err)) < 0)
            return rc;
        if (rc == 1) {
            struct job_progress *p = calloc(1, sizeof *p);
            bool ok = p != NULL;
            if (ok) {
                p->attempt = v[i].attempt;
                p->has_percent = sqlite3_column_type(stmt, 0) != SQLITE_NULL;
                p->percent = sqlite3_column_double(stmt, 0);
                p->at_us = sqlite3_column_int64(stmt, 3);
                ok = col_dup(stmt, 1, &p->message) && col_dup(stmt, 2, &p->data);
            }
            v[i].progress = p;
            if (!ok) {
                sq_reset(stmt);
                return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            }
        }
        sq_reset(stmt);
    }
    return JOBD_OK;
}
