/*
 * store_sqlite_read.c — reads and claims on SQLite: get, list, claim and
 * next_run_at.
 *
 * A claim reads first (WAL readers never wait for the writer) and takes the
 * write lock only when something is due; the claim itself is one UPDATE …
 * RETURNING over the claim-order index. Split from store_sqlite_jobs.c by
 * concern; conventions in store_sqlite_int.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/store_sqlite_int.h"


/* Largest number of queue + type names one claim may filter on. */
#define SQ_FILTER_NAMES_MAX 1000


/*
 * Appends " AND queue IN (?a,…) AND type IN (?b,…)" for the claim filters,
 * numbering parameters from first. Returns a malloc'd string or NULL.
 */
static char *
filter_sql(const char *head, const char *tail, const struct claim_req *req, int first)
{
    size_t cap = strlen(head) + strlen(tail) + 64 + 10 * (req->n_queues + req->n_types);
    char *sql = malloc(cap);
    if (sql == NULL)
        return NULL;
    size_t n = (size_t)snprintf(sql, cap, "%s", head);
    int p = first;
    if (req->queues != NULL && req->n_queues > 0) {
        n += (size_t)snprintf(sql + n, cap - n, " AND queue IN (");
        for (size_t i = 0; i < req->n_queues; i++)
            n += (size_t)snprintf(sql + n, cap - n, "%s?%d", i ? "," : "", p++);
        n += (size_t)snprintf(sql + n, cap - n, ")");
    }
    if (req->types != NULL && req->n_types > 0) {
        n += (size_t)snprintf(sql + n, cap - n, " AND type IN (");
        for (size_t i = 0; i < req->n_types; i++)
            n += (size_t)snprintf(sql + n, cap - n, "%s?%d", i ? "," : "", p++);
        n += (size_t)snprintf(sql + n, cap - n, ")");
    }
    snprintf(sql + n, cap - n, "%s", tail);
    return sql;
}

/* Binds the names filter_sql numbered from first. */
static void
bind_filter(sqlite3_stmt *stmt, const struct claim_req *req, int first)
{
    int p = first;
    if (req->queues != NULL)
        for (size_t i = 0; i < req->n_queues; i++)
            sq_bind_text(stmt, p++, req->queues[i]);
    if (req->types != NULL)
        for (size_t i = 0; i < req->n_types; i++)
            sq_bind_text(stmt, p++, req->types[i]);
}

static int
check_filter(const struct claim_req *req, struct jobd_error *err)
{
    size_t nq = req->queues ? req->n_queues : 0, nt = req->types ? req->n_types : 0;
    if (nq + nt > SQ_FILTER_NAMES_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "types",
                              "a claim may name at most %d queues and types together",
                              SQ_FILTER_NAMES_MAX);
    for (size_t i = 0; i < nq; i++)
        if (req->queues[i] == NULL)
            return jobd_error_set(err, JOBD_E_INVALID, "queues", "queue name %zu is null", i);
    for (size_t i = 0; i < nt; i++)
        if (req->types[i] == NULL)
            return jobd_error_set(err, JOBD_E_INVALID, "types", "type name %zu is null", i);
    return JOBD_OK;
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

int
sq_op_get(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return sq_load_job(sq_of(st), id, out, err);
}

int
sq_op_list(struct store *st, const struct job_filter *f, struct job_list *out,
           int64_t *next_cursor, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    /* One ordered merge of two rowid scans, newest first. */
#define LIST_WHERE                                                                     \
    " WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR queue = ?2)"                \
    " AND (?3 IS NULL OR type = ?3) AND (?4 IS NULL OR schedule = ?4) AND id < ?5"
    static const char sql[] =
        "SELECT " SQ_JOB_COLS " FROM jobs" LIST_WHERE
        " UNION ALL SELECT " SQ_JOB_COLS " FROM jobs_done" LIST_WHERE
        " ORDER BY id DESC LIMIT ?6";
#undef LIST_WHERE
    int limit = f->limit > 0 ? f->limit : 100;
    if (f->status != STORE_ANY && (f->status < 0 || f->status >= JOB_STATUS_COUNT))
        return jobd_error_set(err, JOBD_E_INVALID, "status", "unknown status %d", f->status);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    if (f->status != STORE_ANY)
        sq_bind_text(stmt, 1, job_status_name((enum job_status)f->status));
    sq_bind_text(stmt, 2, f->queue);
    sq_bind_text(stmt, 3, f->type);
    sq_bind_text(stmt, 4, f->schedule);
    sqlite3_bind_int64(stmt, 5, f->before_id > 0 ? f->before_id : INT64_MAX);
    sqlite3_bind_int(stmt, 6, limit + 1);
    int got = 0;
    *next_cursor = 0;
    while ((rc = sq_step_row(s, stmt, "list jobs", err)) == 1) {
        if (got == limit) {
            *next_cursor = out->v[out->n - 1].id;
            break;
        }
        struct job *j = job_list_push(out);
        if (j == NULL || sq_row_job(stmt, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            sq_reset(stmt);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory listing jobs");
        }
        got++;
    }
    sq_reset(stmt);
    return rc < 0 ? rc : JOBD_OK;
}

/* ------------------------------------------------------------------ */
/* the worker protocol                                                 */

/* 1 if a job req could claim is due at now, 0 if none, or an error. */
static int
any_due(struct sqlite_store *s, const struct claim_req *req, int64_t now,
        struct jobd_error *err)
{
    char *sql = filter_sql("SELECT 1 FROM jobs WHERE status = 'pending' AND run_at <= ?1 "
                           "AND queue NOT IN (SELECT name FROM queues WHERE paused = 1)",
                           " LIMIT 1", req, 2);
    if (sql == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    free(sql);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, now);
    bind_filter(stmt, req, 2);
    rc = sq_step_row(s, stmt, "look for due jobs", err);
    sq_reset(stmt);
    return rc;
}

int
sq_op_claim(struct store *st, const struct claim_req *req, struct job_list *out,
            struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = check_filter(req, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    /*
     * Idle workers poll often; a read (which never waits for the writer in
     * WAL mode) spares them the write lock when nothing is due. A job that
     * becomes due right after this check is claimed at the next poll.
     */
    if ((rc = any_due(s, req, now, err)) <= 0)
        return rc;
    /*
     * The statement picks the due jobs in claim order through the partial
     * index and flips them to running in one step; RETURNING does not keep
     * that order, so the result is sorted afterwards by the same key.
     */
    if ((rc = sq_begin_relaxed(s, err)) != JOBD_OK)
        return rc;
    now = sq_now(s);
    int64_t lease_ms = req->lease_ms > 0 ? req->lease_ms : JOB_DEFAULT_LEASE_MS;
    char *sql = filter_sql(
        "UPDATE jobs SET status = 'running', attempt = attempt + 1, worker_id = ?2, "
        "  lease_expires_at = ?3, started_at = ?1 "
        "WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' AND run_at <= ?1 "
        "  AND queue NOT IN (SELECT name FROM queues WHERE paused = 1)",
        " ORDER BY priority DESC, run_at, id LIMIT ?4) RETURNING " SQ_JOB_COLS, req, 5);
    sqlite3_stmt *stmt;
    if (sql == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    else
        rc = sq_prepare(s, sql, &stmt, err);
    free(sql);
    if (rc != JOBD_OK) {
        sq_rollback(s);
        return rc;
    }
    sqlite3_bind_int64(stmt, 1, now);
    sq_bind_text(stmt, 2, req->worker_id);
    sqlite3_bind_int64(stmt, 3, now + lease_ms * 1000);
    sqlite3_bind_int(stmt, 4, req->limit);
    bind_filter(stmt, req, 5);
    size_t first = out->n;
    while ((rc = sq_step_row(s, stmt, "claim", err)) == 1) {
        struct job *j = job_list_push(out);
        if (j == NULL || sq_row_job(stmt, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory claiming jobs");
            break;
        }
    }
    sq_reset(stmt);
    if (rc == 0)
        rc = sq_commit(s, err);
    else
        sq_rollback(s);
    if (rc != JOBD_OK) {
        /* Rolled back: none of them is claimed. */
        while (out->n > first)
            job_fini(&out->v[--out->n]);
        return rc;
    }
    if (out->n > first)
        qsort(out->v + first, out->n - first, sizeof *out->v, job_claim_order_cmp);
    return JOBD_OK;
}

int
sq_op_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                  struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = check_filter(req, err);
    if (rc != JOBD_OK)
        return rc;
    /* ORDER BY … LIMIT 1 rather than min(): stops at the first match of jobs_next_run. */
    char *sql = filter_sql("SELECT run_at FROM jobs WHERE status = 'pending' "
                           "AND queue NOT IN (SELECT name FROM queues WHERE paused = 1)",
                           " ORDER BY run_at LIMIT 1", req, 1);
    if (sql == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    sqlite3_stmt *stmt;
    rc = sq_prepare(s, sql, &stmt, err);
    free(sql);
    if (rc != JOBD_OK)
        return rc;
    bind_filter(stmt, req, 1);
    if ((rc = sq_step_row(s, stmt, "next run_at", err)) < 0)
        return rc;
    *run_at_us = rc == 1 ? sqlite3_column_int64(stmt, 0) : 0;
    sq_reset(stmt);
    return JOBD_OK;
}
