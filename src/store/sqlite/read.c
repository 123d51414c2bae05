/*
 * sqlite/read.c — reads and claims on SQLite: get, list, claim and
 * next_run_at.
 *
 * A claim reads first (WAL readers never wait for the writer) and takes the
 * write lock only when something is due; the claim itself is one UPDATE …
 * RETURNING over the claim-order index. Split from sqlite/jobs.c by
 * concern; conventions in sqlite/internal.h.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/operator_int.h"
#include "store/qlimits.h"
#include "store/sqlite/internal.h"


/* Largest number of queue + type names one claim may filter on. */
#define SQ_FILTER_NAMES_MAX JOB_FILTER_NAMES_MAX


/* Appends printf-formatted text to the growing string *b (length *n, capacity *cap). */
static bool __attribute__((format(printf, 4, 5)))
sql_cat(char **b, size_t *n, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*b + *n, *cap - *n, fmt, ap);
    va_end(ap);
    if (k < 0)
        return false;
    if ((size_t)k >= *cap - *n) {
        size_t ncap = (*n + (size_t)k + 1) * 2;
        char *nb = realloc(*b, ncap);
        if (nb == NULL)
            return false;
        *b = nb;
        *cap = ncap;
        va_start(ap, fmt);
        vsnprintf(*b + *n, *cap - *n, fmt, ap);
        va_end(ap);
    }
    *n += (size_t)k;
    return true;
}

/* Whether names[i] already appeared in names[0..i). */
static bool
repeated(const char *const *names, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(names[k], names[i]) == 0)
            return true;
    return false;
}

/*
 * The claim filters as SQL, in a shape whose cost does not grow with the
 * backlog: one branch per distinct name of the "split" list (the types if
 * the request names any, else its queues), each
 * "SELECT * FROM (head AND col = ?k [AND +queue IN (…)] tail)", joined by
 * UNION ALL, so each branch is an ordered walk of an index that begins with
 * its name (jobs_claim_type, jobs_next_type, jobs_claim_queue, …) stopping
 * at tail's LIMIT; "+queue" keeps the planner from walking a queue's index
 * instead, which would cost the whole queue for a type it does not hold. With neither list, the one branch "head tail". Queue
 * parameters are numbered from first, then the types (bind_filter).
 * Returns a malloc'd string or NULL.
 */
static char *
filter_sql(const char *head, const char *tail, const struct claim_req *req, int first)
{
    size_t nq = req->queues ? req->n_queues : 0, nt = req->types ? req->n_types : 0;
    size_t n = 0, cap = 256;
    char *b = malloc(cap);
    bool ok = b != NULL;
    if (ok && nq + nt == 0)
        ok = sql_cat(&b, &n, &cap, "SELECT * FROM (%s%s)", head, tail);
    const char *const *split = nt > 0 ? req->types : req->queues;
    const char *col = nt > 0 ? "type" : "queue";
    int p0 = nt > 0 ? first + (int)nq : first;
    bool any = false;
    for (size_t i = 0; ok && i < (nt > 0 ? nt : nq); i++) {
        if (repeated(split, i))
            continue;
        ok = sql_cat(&b, &n, &cap, "%sSELECT * FROM (%s AND %s = ?%d", any ? " UNION ALL " : "",
                     head, col, p0 + (int)i);
        for (size_t q = 0; ok && nt > 0 && q < nq; q++)
            ok = sql_cat(&b, &n, &cap, "%s?%d", q ? "," : " AND +queue IN (", first + (int)q);
        if (ok && nt > 0 && nq > 0)
            ok = sql_cat(&b, &n, &cap, ")");
        if (ok)
            ok = sql_cat(&b, &n, &cap, "%s)", tail);
        any = true;
    }
    if (!ok) {
        free(b);
        return NULL;
    }
    return b;
}

/* pre, inner, post as one string; frees inner. NULL if inner is NULL or on OOM. */
static char *
wrap(const char *pre, char *inner, const char *post)
{
    size_t n = 0, cap = 256;
    char *b = inner != NULL ? malloc(cap) : NULL;
    if (b != NULL && !sql_cat(&b, &n, &cap, "%s%s%s", pre, inner, post)) {
        free(b);
        b = NULL;
    }
    free(inner);
    return b;
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

int
sq_claim_check(const struct claim_req *req, struct jobd_error *err)
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

/* The index a branch of the listing walks, named because with ANALYZE
 * statistics and bound values the planner may walk the rowids instead (for a
 * type or queue with no jobs, all of them). "" lets the planner choose: an
 * idempotency key is one rowid seek (job_keys), and the filters without an
 * index walk the rowids newest first. t: 0 jobs, 1 jobs_done, 2 jobs_waiting.
 * A group in jobs or jobs_done is group_branch's. */
static const char *
list_index(const struct job_filter *f, int t, int status)
{
    if (f->key != NULL)
        return "";
    if (f->group != NULL) /* partial: grp = ?12 implies grp IS NOT NULL */
        return " INDEXED BY jobs_waiting_grp_id";
    if (t == 2) {
        if (f->type != NULL)
            return " INDEXED BY jobs_waiting_type_id";
        return f->queue != NULL ? " INDEXED BY jobs_waiting_queue_id" : "";
    }
    if (t == 0) {
        if (status == JOB_RUNNING) /* few: the jobs held by workers */
            return " INDEXED BY jobs_lease";
        if (f->queue != NULL && f->type != NULL)
            return " INDEXED BY jobs_queue_type"; /* (queue, type, rowid) */
        if (f->type != NULL)
            return " INDEXED BY jobs_type_id";
        if (f->queue != NULL)
            return " INDEXED BY jobs_queue_id";
        return f->schedule != NULL ? " INDEXED BY jobs_schedule_firing" : "";
    }
    if (f->queue != NULL && status != STORE_ANY && f->type == NULL)
        return " INDEXED BY jobs_done_queue_status"; /* (queue, status, rowid) */
    if (f->type != NULL)
        return " INDEXED BY jobs_done_type_id";
    if (f->schedule != NULL)
        return " INDEXED BY jobs_done_schedule_id";
    return status != STORE_ANY ? " INDEXED BY jobs_done_status_id" : "";
}

/* The terms of f (and a literal status, unless STORE_ANY) after a WHERE,
 * each " AND ...", on the columns of the innermost table. */
static bool
list_terms(char **b, size_t *n, size_t *cap, const struct job_filter *f, int status)
{
    bool ok = true;
    if (status != STORE_ANY)
        ok = sql_cat(b, n, cap, " AND status = '%s'", job_status_name((enum job_status)status));
    if (ok && f->queue != NULL)
        ok = sql_cat(b, n, cap, " AND queue = ?2");
    if (ok && f->type != NULL)
        ok = sql_cat(b, n, cap, " AND type = ?3");
    if (ok && f->schedule != NULL)
        ok = sql_cat(b, n, cap, " AND schedule = ?4");
    if (ok && f->created_after_us != 0)
        ok = sql_cat(b, n, cap, " AND created_at >= ?5");
    if (ok && f->created_before_us != 0)
        ok = sql_cat(b, n, cap, " AND created_at < ?6");
    if (ok && f->key != NULL)
        ok = sql_cat(b, n, cap,
                     " AND idempotency_key = ?7 AND id = "
                     "(SELECT job_id FROM job_keys WHERE idempotency_key = ?7)");
    if (ok && f->group != NULL)
        ok = sql_cat(b, n, cap, " AND grp = ?" SQ_LIST_GROUP_PARAM_S);
    if (ok && f->due != JOB_DUE_ANY) /* store_list made the status pending */
        ok = sql_cat(b, n, cap, f->due == JOB_DUE_NOW ? " AND run_at <= ?10" : " AND run_at > ?10");
    return ok;
}

/*
 * A group's branch in jobs or jobs_done (migration 26): their index by
 * group is (SQ_GRP_BUCKET, grp), ordered by group within buckets of
 * 1,024 ids, so that a completion batch over many groups changes the
 * leaves of its bucket only (docs/DESIGN.md, Groups, "Tags on SQLite").
 * The branch probes the buckets newest first, one step per job found or
 * per bucket passed: r's value v is 2 x + 1 for a job x (ids below x are
 * next) and 2 b for a bucket's lower bound b (ids below b are next); each
 * step probes the bucket of the ids just below v / 2 for its newest job
 * of the group under the filters, or else moves to the bucket below. It
 * starts below the cursor or past the table's newest id, ends at its
 * oldest, and stops at the page's end (r is a co-routine, read in order
 * and cut by LIMIT ?9: no sort). A group's page thus costs a probe per
 * bucket between its jobs, at most the table's ids / 1,024.
 */
static bool
group_branch(char **b, size_t *n, size_t *cap, const struct job_filter *f, int t, int status)
{
    const char *tab = t == 0 ? "jobs" : "jobs_done";
    bool ok =
        sql_cat(b, n, cap,
                "%sSELECT * FROM (WITH RECURSIVE r(v) AS ("
                "SELECT min(?8, (SELECT max(id) FROM %s) + 1) * 2"
                " UNION ALL SELECT COALESCE((SELECT id * 2 + 1 FROM %s INDEXED BY %s_grp_bucket"
                " WHERE " SQ_GRP_BUCKET " = (r.v / 2 - 1) / " SQ_GRP_BUCKET_IDS " AND id < r.v / 2",
                *n ? " UNION ALL " : "", tab, tab, tab);
    ok = ok && list_terms(b, n, cap, f, status);
    return ok && sql_cat(b, n, cap,
                         " ORDER BY id DESC LIMIT 1),"
                         " (r.v / 2 - 1) / " SQ_GRP_BUCKET_IDS " * " SQ_GRP_BUCKET_IDS " * 2)"
                         " FROM r WHERE r.v / 2 > (SELECT min(id) FROM %s))"
                         " SELECT " SQ_JOB_COLS " FROM r CROSS JOIN %s ON %s.id = r.v / 2"
                         " WHERE r.v %% 2 = 1 LIMIT ?9)",
                         tab, tab, tab);
}

/* One branch of the listing: table t (0 jobs, 1 jobs_done, 2 jobs_waiting), one status or
 * STORE_ANY, only the filters f sets. The status is a literal, so that the
 * partial index jobs_lease can serve running jobs. */
static bool
list_branch(char **b, size_t *n, size_t *cap, const struct job_filter *f, int t, int status)
{
    if (f->group != NULL && f->key == NULL && t < 2)
        return group_branch(b, n, cap, f, t, status);
    bool ok = sql_cat(b, n, cap, "%sSELECT * FROM (SELECT " SQ_JOB_COLS " FROM %s%s WHERE id < ?8",
                      *n ? " UNION ALL " : "",
                      t == 0   ? "jobs"
                      : t == 1 ? "jobs_done"
                               : "jobs_waiting",
                      list_index(f, t, status));
    ok = ok && list_terms(b, n, cap, f, status);
    return ok && sql_cat(b, n, cap, " ORDER BY id DESC LIMIT ?9)");
}

/*
 * The listing statement for f, newest first: one branch per table a status
 * can be in, each walking an index in id order (list_index) and stopping at
 * the limit. A queue's finished jobs of any status are three branches, one
 * per status, each walking jobs_done_queue_status. Parameters: ?2..?7 those
 * of SQ_FILTER_WHERE (queue, type, schedule, created_after, created_before,
 * key; sq_filter_bind), ?8 before id, ?9 limit, ?10 now when f->due is set,
 * ?12 the group (sq_list_bind_group; ?10 and ?11 are a search's). NULL on OOM.
 */
char *
sq_list_sql(const struct job_filter *f)
{
    size_t n = 0, cap = 1024;
    char *b = malloc(cap);
    bool ok = b != NULL;
    if (f->status != STORE_ANY) {
        bool hot = f->status == JOB_PENDING || f->status == JOB_RUNNING;
        int t = f->status == JOB_WAITING ? 2 : hot ? 0 : 1;
        ok = ok && list_branch(&b, &n, &cap, f, t, f->status);
    } else {
        ok = ok && list_branch(&b, &n, &cap, f, 0, STORE_ANY);
        if (f->queue != NULL && f->type == NULL && f->key == NULL && f->group == NULL)
            for (int st = JOB_SUCCEEDED; ok && st <= JOB_CANCELLED; st++)
                ok = list_branch(&b, &n, &cap, f, 1, st);
        else
            ok = ok && list_branch(&b, &n, &cap, f, 1, STORE_ANY);
        ok = ok && list_branch(&b, &n, &cap, f, 2, STORE_ANY);
    }
    if (ok)
        ok = sql_cat(&b, &n, &cap, " ORDER BY id DESC LIMIT ?9");
    if (!ok) {
        free(b);
        return NULL;
    }
    return b;
}

void
sq_list_bind_group(sqlite3_stmt *stmt, const struct job_filter *f)
{
    if (f->group != NULL)
        sq_bind_text(stmt, SQ_LIST_GROUP_PARAM, f->group);
}

int
sq_op_list(struct store *st, const struct job_filter *f, struct job_list *out, int64_t *next_cursor,
           struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int limit = f->limit > 0 ? f->limit : JOB_PAGE_DEFAULT;
    if (f->status != STORE_ANY && (f->status < 0 || f->status >= JOB_STATUS_COUNT))
        return jobd_error_set(err, JOBD_E_INVALID, "status", "unknown status %d", f->status);
    char *sql = sq_list_sql(f);
    if (sql == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    free(sql);
    if (rc != JOBD_OK)
        return rc;
    sq_filter_bind(stmt, f);
    sq_list_bind_group(stmt, f);
    sqlite3_bind_int64(stmt, 8, f->before_id > 0 ? f->before_id : INT64_MAX);
    sqlite3_bind_int(stmt, 9, limit + 1);
    if (f->due != JOB_DUE_ANY)
        sqlite3_bind_int64(stmt, 10, sq_now(s));
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

/* The head of a claim's pick: due jobs, in queues that are not `held`. */
static char *
due_head(const char *select, const char *run_at, const char *held)
{
    size_t n = 0, cap = 256;
    char *b = malloc(cap);
    if (b != NULL && !sql_cat(&b, &n, &cap,
                              "%s FROM jobs WHERE status = 'pending' AND %s <= ?1 "
                              "AND queue NOT IN (SELECT name FROM queues WHERE %s)",
                              select, run_at, held)) {
        free(b);
        b = NULL;
    }
    return b;
}

int
sq_any_due(struct sqlite_store *s, const struct claim_req *req, int64_t now, const char *held,
           struct jobd_error *err)
{
    char *head = due_head("SELECT 1", "run_at", held);
    char *sql = head != NULL ? filter_sql(head, " LIMIT 1", req, 2) : NULL;
    free(head);
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
sq_claim_due(struct sqlite_store *s, const struct claim_req *req, int limit, int64_t now,
             const char *held, struct job_list *out, struct jobd_error *err)
{
    int64_t lease_ms = req->lease_ms; /* store_claim applied the default */
    /* "+run_at": not a range to search by (jobs_next_*), so each branch walks its
     * claim-order index (jobs_claim_type / _queue / _any) and stops at the LIMIT. */
    char *head = due_head("SELECT id, priority, run_at", "+run_at", held);
    char *pick = head != NULL
                     ? filter_sql(head, " ORDER BY priority DESC, run_at, id LIMIT ?4", req, 5)
                     : NULL;
    free(head);
    char *sql = wrap("UPDATE jobs SET status = 'running', attempt = attempt + 1, "
                     "  worker_id = ?2, lease_expires_at = ?3, started_at = ?1 "
                     "WHERE id IN (SELECT id FROM (",
                     pick, ") ORDER BY priority DESC, run_at, id LIMIT ?4) RETURNING " SQ_JOB_COLS);
    sqlite3_stmt *stmt;
    int rc = sql == NULL ? jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory")
                         : sq_prepare(s, sql, &stmt, err);
    free(sql);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, now);
    sq_bind_text(stmt, 2, req->worker_id);
    sqlite3_bind_int64(stmt, 3, now + lease_ms * 1000);
    sqlite3_bind_int(stmt, 4, limit);
    bind_filter(stmt, req, 5);
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
    return rc;
}

int
sq_op_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
                  struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_claim_check(req, err);
    if (rc != JOBD_OK)
        return rc;
    /* ORDER BY … LIMIT 1 rather than min(): each branch stops at the first match of
     * jobs_next_run / jobs_next_type / jobs_next_queue; the smallest of them wins. */
    char *each = filter_sql("SELECT run_at FROM jobs WHERE status = 'pending' "
                            "AND queue NOT IN (SELECT name FROM queues WHERE paused = 1)",
                            " ORDER BY run_at LIMIT 1", req, 1);
    char *sql = wrap("SELECT min(run_at) FROM (", each, ")");
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
    *run_at_us = rc == 1 ? sqlite3_column_int64(stmt, 0) : 0; /* NULL (none) reads 0 */
    sq_reset(stmt);
    return JOBD_OK;
}
