/*
 * pg/attemptlog.c — store/attemptlog.h on PostgreSQL: the table
 * jobd.job_attempt_logs (migration 21), one row per attempt. A log is one
 * statement: the upsert, only for an attempt the job has had (jobs or
 * jobs_done, through all_jobs).
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/attemptlog.h"
#include "store/pg/internal.h"

/* $1 id, $2 attempt, $3 text, $4 now. */
PG_STMT(
    st_log_put,
    "INSERT INTO jobd.job_attempt_logs (job_id, attempt, text, at)"
    " SELECT j.id, $2::int, $3::text, " PG_NOW(
        "$4") " FROM jobd.all_jobs j"
              " WHERE j.id = $1::bigint AND $2::int BETWEEN 1 AND j.attempt"
              " ON CONFLICT (job_id, attempt) DO UPDATE SET text = EXCLUDED.text, at = EXCLUDED.at"
              " RETURNING job_id");

/* $1 id, $2 attempt. */
PG_STMT(st_log_get, "SELECT text FROM jobd.job_attempt_logs WHERE job_id = $1::bigint"
                    " AND attempt = $2::int");

/* $1 id. */
PG_STMT(st_log_sizes, "SELECT attempt, octet_length(text) FROM jobd.job_attempt_logs"
                      " WHERE job_id = $1::bigint ORDER BY attempt");

int
pg_op_attempt_logs_put(struct store *st, const struct attempt_log *v, size_t n, int *outcome,
                       struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    for (size_t i = 0; i < n; i++) {
        char b[2][24], nowb[24];
        const char *vals[4] = {pg_i64(b[0], v[i].id), pg_i64(b[1], v[i].attempt), v[i].text,
                               pg_now_param(s, nowb)};
        PGresult *r = NULL;
        int rc = pg_exec(s, &st_log_put, 4, vals, &r, err);
        if (rc != JOBD_OK)
            return rc;
        outcome[i] = PQntuples(r) == 1 ? JOBD_OK : JOBD_E_NOTFOUND;
        PQclear(r);
    }
    return JOBD_OK;
}

int
pg_op_attempt_log_get(struct store *st, int64_t id, int32_t attempt, char **text,
                      struct jobd_error *err)
{
    char b[2][24];
    const char *vals[2] = {pg_i64(b[0], id), pg_i64(b[1], attempt)};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_log_get, 2, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = JOBD_E_NOTFOUND;
    } else {
        bool oom = false;
        *text = pg_get_str(r, 0, 0, &oom);
        if (oom)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    PQclear(r);
    return rc;
}

int
pg_op_attempt_log_sizes(struct store *st, int64_t id, struct attempt_log_size **out, size_t *n,
                        struct jobd_error *err)
{
    char b[24];
    const char *vals[1] = {pg_i64(b, id)};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_log_sizes, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    if (rows > 0 && (*out = calloc((size_t)rows, sizeof **out)) == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (int i = 0; rc == JOBD_OK && i < rows; i++) {
        (*out)[i].attempt = (int32_t)pg_get_i64(r, i, 0);
        (*out)[i].bytes = pg_get_i64(r, i, 1);
        *n = (size_t)i + 1;
    }
    PQclear(r);
    return rc;
}
