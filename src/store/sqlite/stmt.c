/*
 * sqlite/stmt.c — the small helpers every SQLite file of src/store shares
 * (sqlite/internal.h): the store's clock, errors, the statement cache,
 * binding, stepping and reading a job row. Apart from sqlite/open.c so that
 * the files of operations depend on it and it on none of them (no file
 * cycle: docs/DESIGN.md, Source layout).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/sqlite/internal.h"
#include "util/lazylib.h"

int64_t
sq_now(struct sqlite_store *s)
{
    const struct jobd_clock *c = s->base.clock ? s->base.clock : clock_real();
    return clock_now_us(c);
}

int
sq_error(struct sqlite_store *s, int rc, const char *what, struct jobd_error *err)
{
    const char *msg = s != NULL && s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    int code;
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: code = JOBD_E_UNAVAILABLE; break;
    case SQLITE_NOMEM: code = JOBD_E_NOMEM; break;
    case SQLITE_CANTOPEN: code = JOBD_E_UNAVAILABLE; break;
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
        /* The disk, not the request: 503, and /healthz says so until a write works. */
        code = JOBD_E_UNAVAILABLE;
        if (s != NULL && s->db != NULL)
            sq_file_write_failed(s);
        break;
    default: code = JOBD_E_STORE; break;
    }
    return jobd_error_set(err, code, "db", "sqlite: %s: %s", what, msg);
}

int
sq_prepare(struct sqlite_store *s, const char *sql, sqlite3_stmt **out, struct jobd_error *err)
{
    for (size_t i = 0; i < s->n_cached; i++) {
        if (s->cache[i].sql == sql || strcmp(s->cache[i].sql, sql) == 0) {
            sqlite3_reset(s->cache[i].stmt);
            sqlite3_clear_bindings(s->cache[i].stmt);
            *out = s->cache[i].stmt;
            return JOBD_OK;
        }
    }
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, NULL);
    if (rc != SQLITE_OK)
        return sq_error(s, rc, "prepare", err);
    char *copy = strdup(sql);
    if (copy == NULL) {
        sqlite3_finalize(stmt);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    size_t slot;
    if (s->n_cached < SQ_CACHE_MAX) {
        slot = s->n_cached++;
    } else {
        /* Only claim variants with unusual filter counts get here. */
        slot = s->next_evict;
        s->next_evict = (s->next_evict + 1) % SQ_CACHE_MAX;
        sqlite3_finalize(s->cache[slot].stmt);
        free(s->cache[slot].sql);
    }
    s->cache[slot].sql = copy;
    s->cache[slot].stmt = stmt;
    *out = stmt;
    return JOBD_OK;
}

void
sq_reset(sqlite3_stmt *stmt)
{
    if (stmt != NULL)
        sqlite3_reset(stmt);
}

char *
sq_ids_json(const int64_t *ids, size_t n)
{
    size_t cap = n * 21 + 3; /* "," and 20 characters an id, "[", "]", NUL */
    char *p = malloc(cap);
    if (p == NULL)
        return NULL;
    size_t at = 0;
    p[at++] = '[';
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(p + at, cap - at, "%s%" PRId64, i ? "," : "", ids[i]);
    p[at++] = ']';
    p[at] = '\0';
    return p;
}

int
sq_bind_text(sqlite3_stmt *stmt, int i, const char *text)
{
    if (text == NULL)
        return sqlite3_bind_null(stmt, i);
    return sqlite3_bind_text(stmt, i, text, -1, SQLITE_TRANSIENT);
}

int
sq_bind_opt(sqlite3_stmt *stmt, int i, int64_t v)
{
    if (v == 0)
        return sqlite3_bind_null(stmt, i);
    return sqlite3_bind_int64(stmt, i, v);
}

int
sq_step_done(struct sqlite_store *s, sqlite3_stmt *stmt, const char *what, struct jobd_error *err)
{
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
        ;
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE)
        return sq_error(s, rc, what, err);
    return JOBD_OK;
}

int
sq_step_row(struct sqlite_store *s, sqlite3_stmt *stmt, const char *what, struct jobd_error *err)
{
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW)
        return 1;
    sqlite3_reset(stmt);
    if (rc == SQLITE_DONE)
        return 0;
    return sq_error(s, rc, what, err);
}

int
sq_exec(struct sqlite_store *s, const char *sql, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    return sq_step_done(s, stmt, sql, err);
}

char *
sq_col_strdup(sqlite3_stmt *stmt, int col, int *oom)
{
    const unsigned char *t = sqlite3_column_text(stmt, col);
    if (t == NULL) {
        if (sqlite3_column_type(stmt, col) != SQLITE_NULL)
            *oom = 1;
        return NULL;
    }
    size_t n = (size_t)sqlite3_column_bytes(stmt, col);
    char *p = malloc(n + 1);
    if (p == NULL) {
        *oom = 1;
        return NULL;
    }
    memcpy(p, t, n);
    p[n] = '\0';
    return p;
}

static enum job_status
status_from_text(const unsigned char *t)
{
    enum job_status st = JOB_PENDING;
    if (t != NULL && job_status_parse((const char *)t, &st) == JOBD_OK)
        return st;
    return JOB_PENDING;
}

int
sq_row_job(sqlite3_stmt *stmt, int c, struct job *out)
{
    int oom = 0;
    out->id = sqlite3_column_int64(stmt, c + 0);
    out->queue = sq_col_strdup(stmt, c + 1, &oom);
    out->type = sq_col_strdup(stmt, c + 2, &oom);
    out->payload = sq_col_strdup(stmt, c + 3, &oom);
    out->status = status_from_text(sqlite3_column_text(stmt, c + 4));
    out->priority = sqlite3_column_int(stmt, c + 5);
    out->run_at_us = sqlite3_column_int64(stmt, c + 6);
    out->attempt = sqlite3_column_int(stmt, c + 7);
    out->max_attempts = sqlite3_column_int(stmt, c + 8);
    out->idempotency_key = sq_col_strdup(stmt, c + 9, &oom);
    out->schedule = sq_col_strdup(stmt, c + 10, &oom);
    out->scheduled_for_us = sqlite3_column_int64(stmt, c + 11);
    out->worker_id = sq_col_strdup(stmt, c + 12, &oom);
    out->lease_expires_at_us = sqlite3_column_int64(stmt, c + 13);
    out->timeout_ms = sqlite3_column_int64(stmt, c + 14);
    out->cancel_requested = sqlite3_column_int(stmt, c + 15) != 0;
    out->last_error = sq_col_strdup(stmt, c + 16, &oom);
    out->result = sq_col_strdup(stmt, c + 17, &oom);
    out->created_at_us = sqlite3_column_int64(stmt, c + 18);
    out->started_at_us = sqlite3_column_int64(stmt, c + 19);
    out->finished_at_us = sqlite3_column_int64(stmt, c + 20);
    if (sqlite3_column_count(stmt) > c + 21)
        out->attempt_floor = sqlite3_column_int(stmt, c + 21);
    if (sqlite3_column_count(stmt) > c + 22)
        out->traceparent = sq_col_strdup(stmt, c + 22, &oom);
    if (sqlite3_column_count(stmt) > c + 23)
        out->group = sq_col_strdup(stmt, c + 23, &oom);
    if (oom) {
        job_fini(out);
        return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}

int
sq_load_job(struct sqlite_store *s, int64_t id, struct job *out, struct jobd_error *err)
{
    static const char sql[] = "SELECT " SQ_JOB_COLS " FROM jobs WHERE id = ?1 "
                              "UNION ALL SELECT " SQ_JOB_COLS " FROM jobs_done WHERE id = ?1 "
                              "UNION ALL SELECT " SQ_JOB_COLS " FROM jobs_waiting WHERE id = ?1";
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    rc = sq_step_row(s, stmt, "read job", err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no job with id %lld", (long long)id);
    job_fini(out);
    rc = sq_row_job(stmt, 0, out);
    sq_reset(stmt);
    if (rc != JOBD_OK)
        return jobd_error_set(err, rc, NULL, "out of memory reading job %lld", (long long)id);
    return JOBD_OK;
}
