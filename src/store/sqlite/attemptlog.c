/*
 * sqlite/attemptlog.c — store/attemptlog.h on SQLite: the table
 * job_attempt_logs (migration 14), one row per attempt; a log is one
 * upsert, only for an attempt the job (in jobs or jobs_done) has had.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/attemptlog.h"
#include "store/sqlite/internal.h"

int
sq_op_attempt_logs_put(struct store *st, const struct attempt_log *v, size_t n, int *outcome,
                       struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    /* Relaxed, as a heartbeat: a log lost with the machine is a nicety lost. */
    int rc = sq_begin_relaxed(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    for (size_t i = 0; i < n; i++) {
        sqlite3_stmt *stmt;
        if ((rc = sq_prepare(s,
                             "INSERT INTO job_attempt_logs (job_id, attempt, text, at)"
                             " SELECT ?1, ?2, ?3, ?4 WHERE ?2 >= 1 AND EXISTS ("
                             "  SELECT 1 FROM jobs WHERE id = ?1 AND attempt >= ?2 UNION ALL"
                             "  SELECT 1 FROM jobs_done WHERE id = ?1 AND attempt >= ?2)"
                             " ON CONFLICT (job_id, attempt) DO UPDATE SET"
                             " text = excluded.text, at = excluded.at RETURNING job_id",
                             &stmt, err)) != JOBD_OK)
            goto fail;
        sqlite3_bind_int64(stmt, 1, v[i].id);
        sqlite3_bind_int(stmt, 2, v[i].attempt);
        sq_bind_text(stmt, 3, v[i].text);
        sqlite3_bind_int64(stmt, 4, now);
        if ((rc = sq_step_row(s, stmt, "keep an attempt's log", err)) < 0)
            goto fail;
        outcome[i] = rc == 1 ? JOBD_OK : JOBD_E_NOTFOUND;
        sq_reset(stmt);
    }
    return sq_commit(s, err);
fail:
    sq_rollback(s);
    return rc;
}

int
sq_op_attempt_log_get(struct store *st, int64_t id, int32_t attempt, char **text,
                      struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT text FROM job_attempt_logs WHERE job_id = ?1 AND attempt = ?2",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, attempt);
    if ((rc = sq_step_row(s, stmt, "read an attempt's log", err)) < 0)
        return rc;
    if (rc == 0) {
        sq_reset(stmt);
        return JOBD_E_NOTFOUND;
    }
    const char *t = (const char *)sqlite3_column_text(stmt, 0);
    *text = strdup(t != NULL ? t : "");
    sq_reset(stmt);
    return *text != NULL ? JOBD_OK : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
}

int
sq_op_attempt_log_sizes(struct store *st, int64_t id, struct attempt_log_size **out, size_t *n,
                        struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT attempt, length(CAST(text AS BLOB)) FROM job_attempt_logs"
                        " WHERE job_id = ?1 ORDER BY attempt",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    size_t cap = 0;
    while ((rc = sq_step_row(s, stmt, "list attempt logs", err)) == 1) {
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            struct attempt_log_size *v = realloc(*out, nc * sizeof *v);
            if (v == NULL) {
                sq_reset(stmt);
                return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            }
            *out = v;
            cap = nc;
        }
        (*out)[*n].attempt = sqlite3_column_int(stmt, 0);
        (*out)[(*n)++].bytes = sqlite3_column_int64(stmt, 1);
    }
    return rc < 0 ? rc : JOBD_OK;
}
