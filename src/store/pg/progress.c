/*
 * pg/progress.c — store/progress.h on PostgreSQL: the table
 * jobd.job_progress (migration 19), one row per job. A report is one
 * statement: the fenced lease extension of a heartbeat, and the upsert of
 * the row only when the fence matched. Reading is one query for a page.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/progress.h"
#include "store/pg/internal.h"

/* $1 id, $2 attempt, $3 lease_ms, $4 now, $5 percent, $6 message, $7 data. */
PG_STMT(st_progress,
        "WITH hb AS (UPDATE jobd.jobs SET lease_expires_at = GREATEST(lease_expires_at, " PG_NOW(
            "$4") " + " PG_MS("$3") ")"
                                    "            WHERE id = $1::bigint AND status = 'running' AND "
                                    "attempt = $2::int"
                                    "            RETURNING id, attempt, lease_expires_at, "
                                    "cancel_requested),"
                                    " p AS (INSERT INTO jobd.job_progress (job_id, attempt, "
                                    "percent, message, data, at)"
                                    "       SELECT id, attempt, $5::double precision, $6::text, "
                                    "$7::text, " PG_NOW(
                                        "$4") "       FROM hb ON CONFLICT (job_id) DO UPDATE SET "
                                              "attempt = EXCLUDED.attempt,"
                                              "       percent = EXCLUDED.percent, message = "
                                              "EXCLUDED.message, data = EXCLUDED.data,"
                                              "       at = EXCLUDED.at) "
                                              "SELECT " PG_TS_US(
                                                  "lease_expires_at") ", cancel_requested FROM hb");

/* $1 ids (an array literal). */
PG_STMT(st_progress_read, "SELECT job_id, attempt, percent, message, data, " PG_TS_US(
                              "at") " FROM jobd.job_progress WHERE job_id = ANY($1::bigint[])");

int
pg_op_progress(struct store *st, int64_t id, int32_t attempt, const struct progress_report *p,
               int64_t lease_ms, int64_t *lease_expires_at_us, bool *cancel_requested,
               struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char b[3][24], nowb[24], pct[40];
    if (p->has_percent)
        snprintf(pct, sizeof pct, "%.17g", p->percent);
    const char *vals[7] = {pg_i64(b[0], id),
                           pg_i64(b[1], attempt),
                           pg_i64(b[2], lease_ms),
                           pg_now_param(s, nowb),
                           p->has_percent ? pct : NULL,
                           p->message,
                           p->data};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_progress, 7, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = job_error_stale(err, id, attempt);
    } else {
        *lease_expires_at_us = pg_get_i64(r, 0, 0);
        *cancel_requested = PQgetvalue(r, 0, 1)[0] == 't';
    }
    PQclear(r);
    return rc;
}

/* The job of v[0..n) with this id and attempt, or NULL. */
static struct job *
find(struct job *v, size_t n, int64_t id, int32_t attempt)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].id == id && v[i].attempt == attempt)
            return &v[i];
    return NULL;
}

int
pg_op_progress_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err)
{
    /* Only jobs ever claimed can have reported. */
    char *ids = malloc(n * 21 + 3);
    if (ids == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    size_t len = 0, k = 0;
    ids[len++] = '{';
    for (size_t i = 0; i < n; i++)
        if (v[i].attempt > 0)
            len += (size_t)snprintf(ids + len, 22, "%s%" PRId64, k++ ? "," : "", v[i].id);
    ids[len++] = '}';
    ids[len] = '\0';
    if (k == 0) {
        free(ids);
        return JOBD_OK;
    }
    const char *vals[1] = {ids};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_progress_read, 1, vals, &r, err);
    free(ids);
    if (rc != JOBD_OK)
        return rc;
    for (int row = 0; rc == JOBD_OK && row < PQntuples(r); row++) {
        struct job *j = find(v, n, pg_get_i64(r, row, 0), (int32_t)pg_get_i64(r, row, 1));
        if (j == NULL || j->progress != NULL)
            continue; /* an earlier attempt's: the next claim cleared it */
        struct job_progress *p = calloc(1, sizeof *p);
        bool oom = p == NULL;
        if (p != NULL) {
            p->attempt = j->attempt;
            p->has_percent = !PQgetisnull(r, row, 2);
            p->percent = p->has_percent ? strtod(PQgetvalue(r, row, 2), NULL) : 0;
            p->message = pg_get_str(r, row, 3, &oom);
            p->data = pg_get_str(r, row, 4, &oom);
            p->at_us = pg_get_i64(r, row, 5);
        }
        j->progress = p;
        if (oom)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    PQclear(r);
    return rc;
}
