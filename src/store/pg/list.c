/*
 * pg/list.c — GET /v1/jobs on PostgreSQL (store_list): the listing as one
 * branch per status, each an ordered walk of an index in id order that
 * stops at the page's limit, merged newest first.
 *
 * Why per status: the indexes that serve a queue's or a status's jobs in id
 * order are partial or lead with the status, so that claims and completions
 * (which change the status of a row of jobd.jobs) add no entry to them
 * (migration 13). A branch names its status as a literal, so the planner can
 * prove those predicates; running jobs are the rows with a lease (jobs_lease),
 * few and sorted. Finished jobs are in jobs_done, partitioned by day and
 * status (migration 38): a finished status's branch is pruned to that
 * status's leaves and merges their (id) (or (queue, status, id), (type, id),
 * (grp, id)) walks. The statement is planned with the values at each call
 * (pg_exec_replan), and only the filters set appear in it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/pg/internal.h"

/* Appends printf-formatted text to q->sql; false when out of memory. */
static bool __attribute__((format(printf, 2, 3))) cat(struct pg_list_query *q, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(q->sql + q->len, q->cap - q->len, fmt, ap);
    va_end(ap);
    if (k < 0)
        return false;
    if ((size_t)k >= q->cap - q->len) {
        size_t ncap = (q->len + (size_t)k + 1) * 2;
        char *nb = realloc(q->sql, ncap);
        if (nb == NULL)
            return false;
        q->sql = nb;
        q->cap = ncap;
        va_start(ap, fmt);
        vsnprintf(q->sql + q->len, q->cap - q->len, fmt, ap);
        va_end(ap);
    }
    q->len += (size_t)k;
    return true;
}

/* Adds a parameter; returns its number ($n). */
static int
param(struct pg_list_query *q, const char *v)
{
    q->vals[q->n] = v;
    return ++q->n;
}

/* The numbered parameters of the filters f sets, in q (shared by every branch). */
struct list_params {
    int queue, type, schedule, after, before, key, group, cursor, limit, now;
};

/* One branch: status st of table "jobs", "jobs_done" or "jobs_waiting". */
static bool
branch(struct pg_list_query *q, const struct job_filter *f, const struct list_params *p,
       const char *table, int st)
{
    bool ok = cat(q, "%s(SELECT " PG_JOB_COLS("") " FROM jobd.%s WHERE status = '%s'",
                  q->branches++ ? " UNION ALL " : "", table, job_status_name((enum job_status)st));
    if (ok && st == JOB_RUNNING)
        ok = cat(q, " AND lease_expires_at IS NOT NULL"); /* every running job has a lease */
    if (ok && p->queue)
        ok = cat(q, " AND queue = $%d::text", p->queue);
    if (ok && p->type)
        ok = cat(q, " AND type = $%d::text", p->type);
    if (ok && p->schedule)
        ok = cat(q, " AND schedule = $%d::text", p->schedule);
    if (ok && p->after)
        ok = cat(q, " AND created_at >= " PG_US_TS("$%d"), p->after);
    if (ok && p->before)
        ok = cat(q, " AND created_at < " PG_US_TS("$%d"), p->before);
    if (ok && p->key)
        ok = cat(q,
                 " AND idempotency_key = $%d::text AND id = (SELECT job_id FROM jobd.job_keys"
                 " WHERE idempotency_key = $%d::text)",
                 p->key, p->key);
    if (ok &&
        p->group) /* jobs_grp_id (pending, version 37), jobs_arch_grp_id, jobs_waiting_grp_id */
        ok = cat(q, " AND grp = $%d::text", p->group);
    if (ok && p->now) /* the due filter; store_list made the status pending */
        ok = cat(q, " AND run_at %s " PG_NOW("$%d"), f->due == JOB_DUE_NOW ? "<=" : ">", p->now);
    if (ok && p->cursor)
        ok = cat(q, " AND id < $%d::bigint", p->cursor);
    return ok && cat(q, " ORDER BY id DESC LIMIT $%d::int)", p->limit);
}

int
pg_list_sql(const struct job_filter *f, int limit, const char *now, struct pg_list_query *q)
{
    memset(q, 0, sizeof *q);
    struct list_params p = {0};
    if (f->queue)
        p.queue = param(q, f->queue);
    if (f->type)
        p.type = param(q, f->type);
    if (f->schedule)
        p.schedule = param(q, f->schedule);
    if (f->created_after_us)
        p.after = param(q, pg_i64(q->buf[0], f->created_after_us));
    if (f->created_before_us)
        p.before = param(q, pg_i64(q->buf[1], f->created_before_us));
    if (f->key)
        p.key = param(q, f->key);
    if (f->group)
        p.group = param(q, f->group);
    if (f->before_id > 0)
        p.cursor = param(q, pg_i64(q->buf[2], f->before_id));
    p.limit = param(q, pg_i64(q->buf[3], limit));
    if (f->due != JOB_DUE_ANY)
        p.now = param(q, now);
    q->cap = 2048;
    q->sql = malloc(q->cap);
    bool ok = q->sql != NULL && cat(q, "SELECT * FROM (");
    for (int st = 0; ok && st < JOB_STATUS_COUNT; st++) {
        if (f->status != STORE_ANY && f->status != st)
            continue;
        if (st == JOB_WAITING) { /* waiting jobs have a table of their own */
            ok = branch(q, f, &p, "jobs_waiting", st);
            continue;
        }
        ok = branch(q, f, &p, st == JOB_PENDING || st == JOB_RUNNING ? "jobs" : "jobs_done", st);
    }
    if (ok)
        ok = cat(q, ") l ORDER BY id DESC LIMIT $%d::int", p.limit);
    if (!ok) {
        free(q->sql);
        q->sql = NULL;
        return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}

int
pg_op_list(struct store *st, const struct job_filter *f, struct job_list *out, int64_t *next_cursor,
           struct jobd_error *err)
{
    int limit = f->limit > 0 ? f->limit : JOB_PAGE_DEFAULT;
    if (f->status != STORE_ANY && (f->status < 0 || f->status >= JOB_STATUS_COUNT))
        return jobd_error_set(err, JOBD_E_INVALID, "status", "unknown status %d", f->status);
    struct pg_list_query q;
    char nowb[24];
    if (pg_list_sql(f, limit + 1, pg_now_param(pg_of(st), nowb), &q) != JOBD_OK)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    const struct pg_stmt stmt = {"st_list", q.sql};
    PGresult *r = NULL;
    int rc = pg_exec_replan(pg_of(st), &stmt, q.n, q.vals, &r, err);
    free(q.sql);
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
    if (rc == JOBD_OK && rows > limit)
        *next_cursor = out->v[out->n - 1].id;
    PQclear(r);
    return rc;
}
