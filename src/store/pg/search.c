/*
 * pg/search.c — GET /v1/jobs?q=TEXT on PostgreSQL (store_search): the
 * listing's statement (pg_list_sql) bounded to the scan budget, and of its
 * rows those whose type, idempotency key, payload or last error contain the
 * text. A scan budget rather than a timer (statement_timeout), so the same
 * store always gives the same answer (docs/API.md, Search;
 * docs/BENCHMARKS.md, Search).
 *
 * When the page is not full, a second statement reads the ids at the
 * budget's end: a job beyond it means the scan stopped early ("partial"),
 * and the last one examined is the cursor to go on from. ASCII letters are
 * folded with translate(), not lower(), so both stores fold alike whatever
 * the database's locale.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/pg/internal.h"

#define FOLD(c) "translate(w." c ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
#define HAS(c) "strpos(" FOLD(c) ", $%d::text) > 0"
/* The hits of the window (%s: pg_list_sql's statement); the ids at its end. */
#define SEARCH_HITS                                                                                \
    "SELECT * FROM (%s) w WHERE " HAS("type") " OR " HAS("idempotency_key") " OR " HAS(            \
        "payload") " OR " HAS("last_error") " ORDER BY id DESC LIMIT $%d::int"
#define SEARCH_EDGE "SELECT id FROM (%s) w ORDER BY id DESC LIMIT 2 OFFSET $%d::int"

/* Runs the hits (edge false) or edge statement over f's first `window` jobs;
 * extra is the outer limit (hits) or offset (edge). */
static int
run(struct store *st, const struct job_filter *f, bool edge, int window, int extra, PGresult **r,
    struct jobd_error *err)
{
    struct pg_list_query q;
    if (pg_list_sql(f, window, NULL, &q) != JOBD_OK) /* h_jobs.c refuses due with q */
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    int text = 0;
    if (!edge) {
        q.vals[q.n++] = f->search;
        text = q.n;
    }
    q.vals[q.n++] = pg_i64(q.buf[4], extra);
    size_t cap = strlen(SEARCH_HITS) + q.len + 64;
    char *sql = malloc(cap);
    if (sql != NULL && edge)
        snprintf(sql, cap, SEARCH_EDGE, q.sql, q.n);
    else if (sql != NULL)
        snprintf(sql, cap, SEARCH_HITS, q.sql, text, text, text, text, q.n);
    free(q.sql);
    if (sql == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    const struct pg_stmt stmt = {edge ? "st_search_edge" : "st_search", sql};
    int rc = pg_exec_replan(pg_of(st), &stmt, q.n, q.vals, r, err);
    free(sql);
    return rc;
}

int
pg_op_search(struct store *st, const struct job_filter *f, struct job_list *out,
             int64_t *next_cursor, bool *partial, struct jobd_error *err)
{
    int limit = f->limit > 0 ? f->limit : JOB_PAGE_DEFAULT;
    if (f->status != STORE_ANY && (f->status < 0 || f->status >= JOB_STATUS_COUNT))
        return jobd_error_set(err, JOBD_E_INVALID, "status", "unknown status %d", f->status);
    PGresult *r = NULL;
    int rc = run(st, f, false, f->scan, limit + 1, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    for (int row = 0; row < rows && row < limit && rc == JOBD_OK; row++) {
        struct job *j = job_list_push(out);
        if (j == NULL || pg_row_to_job(r, row, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    PQclear(r);
    if (rc != JOBD_OK || rows > limit) {
        if (rc == JOBD_OK)
            *next_cursor = out->v[out->n - 1].id;
        return rc;
    }
    if ((rc = run(st, f, true, f->scan + 1, f->scan - 1, &r, err)) != JOBD_OK)
        return rc;
    if (PQntuples(r) == 2) {
        *partial = true;
        *next_cursor = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    }
    PQclear(r);
    return JOBD_OK;
}
