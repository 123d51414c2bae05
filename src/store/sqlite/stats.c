/*
 * sqlite/stats.c — reading and pruning statistics (store/stats.h) on
 * SQLite: the series, the recent throughput. sqlite/counts.c writes them.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/stats_int.h"
#include "store/sqlite/internal.h"

/* Rows are summed here, not by GROUP BY: the primary key walks them in t
 * order already, and a GROUP BY on the point index would sort them all. */
int
sq_op_stats_series(struct store *st, int64_t from_s, int64_t step_s, size_t n, const char *queue,
                   struct stats_point *points, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT (t - ?1) / ?3, enqueued, succeeded, failed, dead"
                        " FROM stats_buckets WHERE t >= ?1 AND t < ?2"
                        " AND (?4 IS NULL OR queue = ?4)",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, from_s);
    sqlite3_bind_int64(stmt, 2, from_s + (int64_t)n * step_s);
    sqlite3_bind_int64(stmt, 3, step_s);
    sq_bind_text(stmt, 4, queue);
    while ((rc = sq_step_row(s, stmt, "read statistics", err)) == 1) {
        int64_t i = sqlite3_column_int64(stmt, 0);
        for (int k = 0; i >= 0 && (size_t)i < n && k < STATS_KINDS; k++)
            points[i].n[k] += sqlite3_column_int64(stmt, 1 + k);
    }
    return rc < 0 ? rc : JOBD_OK;
}

int
sq_op_stats_throughput(struct store *st, int64_t from_s, struct stats_queue **out, size_t *n,
                       struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT queue, sum(enqueued), sum(succeeded), sum(failed), sum(dead)"
                        " FROM stats_buckets WHERE t >= ?1 GROUP BY queue ORDER BY queue",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, from_s);
    size_t cap = 0;
    while ((rc = sq_step_row(s, stmt, "read throughput", err)) == 1) {
        if (*n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            struct stats_queue *nv = realloc(*out, ncap * sizeof *nv);
            if (nv == NULL) {
                sq_reset(stmt);
                rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
                break;
            }
            *out = nv;
            cap = ncap;
        }
        struct stats_queue *q = &(*out)[(*n)++];
        memset(q, 0, sizeof *q);
        const char *name = (const char *)sqlite3_column_text(stmt, 0);
        size_t len = name != NULL ? strlen(name) : 0;
        memcpy(q->name, name, len < JOB_QUEUE_MAX ? len : JOB_QUEUE_MAX);
        for (int k = 0; k < STATS_KINDS; k++)
            q->n[k] = sqlite3_column_int64(stmt, 1 + k);
    }
    if (rc < 0) {
        free(*out);
        *out = NULL;
        *n = 0;
        return rc;
    }
    return JOBD_OK;
}

int
sq_op_stats_prune(struct store *st, int64_t before_s, int *deleted, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin_relaxed(s, err);
    sqlite3_stmt *stmt = NULL;
    if (rc == JOBD_OK)
        rc = sq_prepare(s, "DELETE FROM stats_buckets WHERE t < ?1", &stmt, err);
    if (rc == JOBD_OK) {
        sqlite3_bind_int64(stmt, 1, before_s);
        rc = sq_step_done(s, stmt, "prune statistics", err);
    }
    if (rc == JOBD_OK) {
        *deleted = sqlite3_changes(s->db);
        return sq_commit(s, err);
    }
    sq_rollback(s);
    return rc;
}
