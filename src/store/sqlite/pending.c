/*
 * sqlite/pending.c — store_pending_queue_types on SQLite: the distinct
 * (queue, type) pairs of pending jobs by a skip scan over the index
 * jobs_queue_type (queue, type), one seek per pair, so its cost follows the
 * number of pairs and not the backlog. The index is not partial: SQLite
 * leaves an index alone on an UPDATE that does not change its columns, so
 * claims and reports never touch it; the pairs that only have running jobs
 * are dropped by a second seek (which walks at most those running jobs).
 */
#include <sqlite3.h>
#include <stdio.h>

#include "core/err.h"
#include "core/job.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"

/* The pair after (q, t) in index order, copied into nq and nt (which may be q
 * and t: the binds are copies); 1 found, 0 at the end, or a negative error. */
static int
next_pair(struct sqlite_store *s, const char *q, const char *t, char *nq, char *nt, size_t len,
          struct jobd_error *err)
{
    /* Two seeks rather than "(queue, type) > (?1, ?2)": SQLite seeks that
     * row value on queue alone and then walks every job of (q, t). */
    static const char sql[] =
        "SELECT * FROM (SELECT queue, type FROM jobs WHERE queue = ?1 AND type > ?2"
        "  ORDER BY type LIMIT 1) UNION ALL SELECT * FROM (SELECT queue, type FROM jobs"
        "  WHERE queue > ?1 ORDER BY queue, type LIMIT 1) LIMIT 1";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    sq_bind_text(stmt, 2, t);
    rc = sq_step_row(s, stmt, "skip to the next queue and type", err);
    if (rc == 1) {
        snprintf(nq, len, "%s", (const char *)sqlite3_column_text(stmt, 0));
        snprintf(nt, len, "%s", (const char *)sqlite3_column_text(stmt, 1));
    }
    sq_reset(stmt);
    return rc;
}

/* 1 if queue q has a pending job of type t, 0 if not, or a negative error. */
static int
has_pending(struct sqlite_store *s, const char *q, const char *t, struct jobd_error *err)
{
    static const char sql[] = "SELECT 1 FROM jobs WHERE queue = ?1 AND type = ?2"
                              " AND status = 'pending' LIMIT 1";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    sq_bind_text(stmt, 2, t);
    rc = sq_step_row(s, stmt, "look for a pending job", err);
    sq_reset(stmt);
    return rc;
}

int
sq_op_pending_queue_types(struct store *st, struct queue_type_list *out, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    /* Names are at most JOB_NAME_MAX bytes; "" sorts before every name. */
    char q[JOB_NAME_MAX + 1] = "", t[JOB_NAME_MAX + 1] = "";
    int rc = 0;
    /* Pairs with running jobs only are skipped, so the steps get a bound too. */
    for (int seen = 0, steps = 0;
         seen < STORE_PENDING_PAIRS_MAX && steps < 4 * STORE_PENDING_PAIRS_MAX; steps++) {
        if ((rc = next_pair(s, q, t, q, t, sizeof q, err)) != 1)
            break;
        if ((rc = has_pending(s, q, t, err)) < 0)
            break;
        if (rc == 1) {
            if (!queue_types_push(out, q, t))
                return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            seen++;
        }
    }
    return rc < 0 ? rc : JOBD_OK;
}
