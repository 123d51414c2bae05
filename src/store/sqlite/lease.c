/*
 * sqlite/lease.c — the lease tokens of store/operator.h on SQLite: the
 * hash in jobs.lease_token_hash (migration 11), kept by a finished attempt
 * (migration 12) in its jobs_done row (succeeded) or history row (failed).
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"

int
sq_op_lease_set(struct store *st, const struct lease_token_ref *v, size_t n, struct jobd_error *err)
{
    static const char sql[] = "UPDATE jobs SET lease_token_hash = ?3"
                              " WHERE id = ?1 AND attempt = ?2 AND status = 'running'";
    struct sqlite_store *s = sq_of(st);
    /* Relaxed, as the claim it follows: a machine that loses it loses the
     * claim's answer with it, and an attempt whose token is lost runs out
     * its lease and is reaped. */
    int rc = sq_begin_relaxed(s, err);
    for (size_t i = 0; rc == JOBD_OK && i < n; i++) {
        sqlite3_stmt *stmt;
        if ((rc = sq_prepare(s, sql, &stmt, err)) != JOBD_OK)
            break;
        sqlite3_bind_int64(stmt, 1, v[i].id);
        sqlite3_bind_int(stmt, 2, v[i].attempt);
        sq_bind_text(stmt, 3, v[i].hash);
        rc = sq_step_done(s, stmt, "keep a lease token", err);
    }
    if (rc == JOBD_OK)
        return sq_commit(s, err);
    sq_rollback(s);
    return rc;
}

int
sq_op_lease_check(struct store *st, int64_t id, int32_t attempt, const char *hash, char **queue,
                  struct jobd_error *err)
{
    static const char sql[] = "SELECT queue FROM jobs"
                              " WHERE id = ?1 AND attempt = ?2 AND lease_token_hash = ?3";
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, attempt);
    sq_bind_text(stmt, 3, hash);
    rc = sq_step_row(s, stmt, "check a lease token", err);
    if (rc == 1) {
        *queue = strdup((const char *)sqlite3_column_text(stmt, 0));
        rc = *queue != NULL ? JOBD_OK : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    } else if (rc == 0) {
        rc = jobd_error_set(err, JOBD_E_STALE, "lease_token", "not this attempt's lease token");
    }
    sq_reset(stmt);
    return rc;
}

int
sq_op_lease_replayed(struct store *st, int64_t id, int32_t attempt, enum lease_report kind,
                     const char *hash, char **queue, struct jobd_error *err)
{
    /* A succeeded job is in jobs_done (it never leaves it); a failed
     * attempt's history row stays while its job moves on. */
    static const char complete_sql[] = "SELECT queue FROM jobs_done"
                                       " WHERE id = ?1 AND attempt = ?2 AND status = 'succeeded'"
                                       "   AND lease_token_hash = ?3";
    static const char fail_sql[] =
        "SELECT queue FROM jobs WHERE id = ?1"
        "   AND EXISTS (SELECT 1 FROM job_attempts a WHERE a.job_id = ?1 AND a.attempt = ?2"
        "     AND a.outcome IN ('failed', 'dead', 'cancelled') AND a.lease_token_hash = ?3)"
        " UNION ALL SELECT queue FROM jobs_done WHERE id = ?1"
        "   AND EXISTS (SELECT 1 FROM job_attempts a WHERE a.job_id = ?1 AND a.attempt = ?2"
        "     AND a.outcome IN ('failed', 'dead', 'cancelled') AND a.lease_token_hash = ?3)";
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, kind == LEASE_REPORT_COMPLETE ? complete_sql : fail_sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int(stmt, 2, attempt);
    sq_bind_text(stmt, 3, hash);
    rc = sq_step_row(s, stmt, "check a repeated report", err);
    if (rc == 1) {
        *queue = strdup((const char *)sqlite3_column_text(stmt, 0));
        rc = *queue != NULL ? JOBD_OK : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    } else if (rc == 0) {
        rc = jobd_error_set(err, JOBD_E_STALE, "lease_token", "not a repeated report");
    }
    sq_reset(stmt);
    return rc;
}
