/*
 * sqlite/search.c — GET /v1/jobs?q=TEXT on SQLite (store_search): the
 * listing's statement (sq_list_sql) bounded to the scan budget, and of its
 * rows those whose type, idempotency key, payload or last error contain the
 * text. A scan budget rather than a timer, so the same store always gives
 * the same answer (docs/API.md, Search; docs/BENCHMARKS.md, Search).
 *
 * When the page is not full, a second statement reads the ids at the
 * budget's end: a job beyond it means the scan stopped early ("partial"),
 * and the last one examined is the cursor to go on from.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"

/* Lower-cased (ASCII) column c contains ?10, already folded by store_search. */
#define HAS(c) "instr(lower(" c "), ?10)"

/* The hits of the listing's first ?9 rows; the ids at that window's end. */
#define SEARCH_HITS                                                                                \
    "SELECT * FROM (%s) WHERE " HAS("type") " OR " HAS("idempotency_key") " OR " HAS(              \
        "payload") " OR " HAS("last_error") " ORDER BY id DESC LIMIT ?11"
#define SEARCH_EDGE "SELECT id FROM (%s) ORDER BY id DESC LIMIT 2 OFFSET ?10"

/* The statement: the listing limited to ?9 rows (the budget), then the hits. */
static char *
search_sql(const struct job_filter *f, bool edge)
{
    char *window = sq_list_sql(f);
    if (window == NULL)
        return NULL;
    size_t cap = strlen(SEARCH_HITS) + strlen(window) + 1;
    char *sql = malloc(cap);
    if (sql != NULL && edge)
        snprintf(sql, cap, SEARCH_EDGE, window);
    else if (sql != NULL)
        snprintf(sql, cap, SEARCH_HITS, window);
    free(window);
    return sql;
}

/* Prepares the statement (edge or hits) with f's filters bound. */
static int
prepare(struct sqlite_store *s, const struct job_filter *f, bool edge, sqlite3_stmt **stmt,
        struct jobd_error *err)
{
    char *sql = search_sql(f, edge);
    if (sql == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    int rc = sq_prepare(s, sql, stmt, err);
    free(sql);
    if (rc != JOBD_OK)
        return rc;
    sq_filter_bind(*stmt, f);
    sq_list_bind_group(*stmt, f);
    sqlite3_bind_int64(*stmt, 8, f->before_id > 0 ? f->before_id : INT64_MAX);
    return JOBD_OK;
}

/* Whether a job lies beyond the budget; if so *cursor is the last examined. */
static int
scan_edge(struct sqlite_store *s, const struct job_filter *f, int64_t *cursor, bool *partial,
          struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = prepare(s, f, true, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int(stmt, 9, f->scan + 1);
    sqlite3_bind_int(stmt, 10, f->scan - 1);
    int64_t ids[2];
    int n = 0;
    while (n < 2 && (rc = sq_step_row(s, stmt, "search jobs", err)) == 1)
        ids[n++] = sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    if (rc < 0)
        return rc;
    if (n == 2) {
        *partial = true;
        *cursor = ids[0];
    }
    return JOBD_OK;
}

int
sq_op_search(struct store *st, const struct job_filter *f, struct job_list *out,
             int64_t *next_cursor, bool *partial, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int limit = f->limit > 0 ? f->limit : JOB_PAGE_DEFAULT;
    if (f->status != STORE_ANY && (f->status < 0 || f->status >= JOB_STATUS_COUNT))
        return jobd_error_set(err, JOBD_E_INVALID, "status", "unknown status %d", f->status);
    sqlite3_stmt *stmt;
    int rc = prepare(s, f, false, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int(stmt, 9, f->scan);
    sqlite3_bind_text(stmt, 10, f->search, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(stmt, 11, limit + 1);
    int got = 0;
    while ((rc = sq_step_row(s, stmt, "search jobs", err)) == 1) {
        if (got == limit) {
            *next_cursor = out->v[out->n - 1].id;
            break;
        }
        struct job *j = job_list_push(out);
        if (j == NULL || sq_row_job(stmt, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            sq_reset(stmt);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory searching jobs");
        }
        got++;
    }
    sq_reset(stmt);
    if (rc < 0)
        return rc;
    return *next_cursor != 0 ? JOBD_OK : scan_edge(s, f, next_cursor, partial, err);
}
