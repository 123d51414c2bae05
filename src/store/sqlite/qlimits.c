/*
 * sqlite/qlimits.c — queue limits on SQLite (qlimits.h): setting them, the
 * connection's cache of limited queues, and the limited claim path.
 *
 * A claim already holds the database's one write lock (BEGIN IMMEDIATE)
 * from its first read of a limited queue's row to its commit, so claimers
 * are serialized without a row lock: the running count and the window's
 * count it reads cannot change under it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/qlimits.h"
#include "store/sqlite/internal.h"

int
sq_op_queue_limits(struct store *st, const char *queue, const struct queue_limits_change *c,
                   struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    rc = sq_prepare(
        s,
        "INSERT INTO queues (name, max_running, rate_limit, rate_per_ms, group_max_running,"
        "  group_rate_limit, group_rate_per_ms) "
        "VALUES (?1, ?3, ?5, ?6, ?8, ?10, ?11) ON CONFLICT (name) DO UPDATE SET "
        " max_running = CASE WHEN ?2 THEN excluded.max_running ELSE max_running END,"
        " rate_limit = CASE WHEN ?4 THEN excluded.rate_limit ELSE rate_limit END,"
        " rate_per_ms = CASE WHEN ?4 THEN excluded.rate_per_ms ELSE rate_per_ms END,"
        " group_max_running = CASE WHEN ?7 THEN excluded.group_max_running"
        "                     ELSE group_max_running END,"
        " group_rate_limit = CASE WHEN ?9 THEN excluded.group_rate_limit ELSE group_rate_limit END,"
        " group_rate_per_ms = CASE WHEN ?9 THEN excluded.group_rate_per_ms"
        "                     ELSE group_rate_per_ms END",
        &stmt, err);
    if (rc != JOBD_OK) {
        sq_rollback(s);
        return rc;
    }
    sq_bind_text(stmt, 1, queue);
    sqlite3_bind_int(stmt, 2, c->set_max_running);
    sq_bind_opt(stmt, 3, c->set_max_running ? c->max_running : 0);
    sqlite3_bind_int(stmt, 4, c->set_rate);
    sq_bind_opt(stmt, 5, c->set_rate ? c->rate_limit : 0);
    sq_bind_opt(stmt, 6, c->set_rate && c->rate_limit > 0 ? c->rate_per_ms : 0);
    sqlite3_bind_int(stmt, 7, c->set_group_max_running);
    sq_bind_opt(stmt, 8, c->set_group_max_running ? c->group_max_running : 0);
    sqlite3_bind_int(stmt, 9, c->set_group_rate);
    sq_bind_opt(stmt, 10, c->set_group_rate ? c->group_rate_limit : 0);
    sq_bind_opt(stmt, 11, c->set_group_rate && c->group_rate_limit > 0 ? c->group_rate_per_ms : 0);
    if ((rc = sq_step_done(s, stmt, "set queue limits", err)) != JOBD_OK) {
        sq_rollback(s);
        return rc;
    }
    qlimits_cache_invalidate(&s->qlim);
    return sq_commit(s, err);
}

/* Whether a queue's jobs without a group have a tagged pending one (sqlite/groups_tag.c). */
#define NOGROUP_TAGGED SQ_GR_NOGROUP_TAGGED("queues.name")

/* Re-reads the limited queues' names into the connection's cache. */
static int
refresh(struct sqlite_store *s, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(
        s,
        "SELECT name, (max_running IS NOT NULL OR rate_limit IS NOT NULL)"
        " + 2 * (grouped = 1 OR group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL)"
        " + 4 * (group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL)"
        /* one group, not counting '' while no job without a group is pending
         * (the row a queue gets when it becomes grouped, docs/DESIGN.md, Groups) */
        " + 8 * ((SELECT count(*) FROM (SELECT 1 FROM job_groups g WHERE g.queue = queues.name"
        "   AND (g.grp <> '' OR EXISTS (SELECT 1 FROM jobs j INDEXED BY jobs_group_claim"
        "     WHERE j.queue = queues.name AND j.grp IS NULL AND j.status = 'pending'"
        "       AND j.tag IS NULL) OR " NOGROUP_TAGGED ")"
        "   LIMIT 2)) = 1)"
        " FROM queues WHERE " QLIMITS_PATH_WHERE,
        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    char **names = NULL;
    unsigned char *kinds = NULL;
    size_t n = 0, cap = 0;
    while ((rc = sq_step_row(s, stmt, "read queue limits", err)) == 1) {
        const char *name = (const char *)sqlite3_column_text(stmt, 0);
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            char **nv = realloc(names, cap * sizeof *nv);
            names = nv != NULL ? nv : names;
            unsigned char *kv = realloc(kinds, cap);
            kinds = kv != NULL ? kv : kinds;
            if (nv == NULL || kv == NULL) {
                rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
                break;
            }
        }
        char *copy = name != NULL ? strdup(name) : NULL;
        if (copy == NULL) {
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            break;
        }
        kinds[n] = (unsigned char)sqlite3_column_int(stmt, 1);
        names[n++] = copy;
    }
    sq_reset(stmt);
    if (rc != JOBD_OK) {
        while (n > 0)
            free(names[--n]);
        free(names);
        free(kinds);
        return rc;
    }
    qlimits_cache_set(&s->qlim, names, kinds, n);
    return JOBD_OK;
}

int
sq_qlimits_covers(struct sqlite_store *s, const struct claim_req *req, bool *covers,
                  struct jobd_error *err)
{
    int rc = JOBD_OK;
    if (qlimits_cache_stale(&s->qlim) && (rc = refresh(s, err)) != JOBD_OK)
        return rc;
    *covers = qlimits_cache_covers(&s->qlim, req);
    return JOBD_OK;
}

/* The backend of qlimits_claim_queue; b is the sqlite_store. */

static int
ql_read(void *b, const char *q, struct qlimits_row *row, int64_t *now_us, bool *found,
        struct jobd_error *err)
{
    struct sqlite_store *s = b;
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT paused, max_running, rate_limit, rate_per_ms, "
                        "rate_window_us, rate_count, grouped, group_max_running, "
                        "group_rate_limit, group_rate_per_ms FROM queues WHERE name = ?1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    if ((rc = sq_step_row(s, stmt, "read queue limits", err)) < 0)
        return rc;
    *found = rc == 1;
    if (*found) {
        row->paused = sqlite3_column_int(stmt, 0) != 0;
        row->max_running = sqlite3_column_int(stmt, 1); /* NULL reads 0 */
        row->rate_limit = sqlite3_column_int(stmt, 2);
        row->rate_per_ms = sqlite3_column_int64(stmt, 3);
        row->window_us = sqlite3_column_int64(stmt, 4);
        row->rate_count = sqlite3_column_int(stmt, 5);
        row->grouped = sqlite3_column_int(stmt, 6) != 0;
        row->group_max_running = sqlite3_column_int(stmt, 7);
        row->group_rate_limit = sqlite3_column_int(stmt, 8);
        row->group_rate_per_ms = sqlite3_column_int64(stmt, 9);
    }
    sq_reset(stmt);
    *now_us = sq_now(s);
    if (!*found || row->max_running == 0)
        return JOBD_OK;
    /* Running jobs are few (at most every worker's slots): walk them, not the queue. */
    rc = sq_prepare(s,
                    "SELECT count(*) FROM jobs INDEXED BY jobs_lease "
                    "WHERE status = 'running' AND queue = ?1",
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    if ((rc = sq_step_row(s, stmt, "count running jobs", err)) < 0)
        return rc;
    row->running = rc == 1 ? sqlite3_column_int64(stmt, 0) : 0;
    sq_reset(stmt);
    return JOBD_OK;
}

/* req narrowed to queue q. */
static struct claim_req
only(const struct claim_req *req, const char **q)
{
    struct claim_req r = *req;
    r.queues = q;
    r.n_queues = 1;
    return r;
}

/* The row was read under the write lock, paused included: nothing else holds it back. */
#define SQ_HELD_NONE "0"

static int
ql_claim(void *b, const char *q, const struct claim_req *req, int n, int64_t now_us,
         const struct qlimits_row *row, int64_t group_window_us, struct job_list *out,
         struct jobd_error *err)
{
    if (row->grouped || row->group_max_running > 0 || row->group_rate_limit > 0)
        return sq_groups_claim(b, q, req, n, now_us, row, group_window_us, out, err);
    struct claim_req r = only(req, &q);
    return sq_claim_due(b, &r, n, now_us, SQ_HELD_NONE, out, err);
}

static int
ql_any_due(void *b, const char *q, const struct claim_req *req, int64_t now_us,
           struct jobd_error *err)
{
    struct claim_req r = only(req, &q);
    return sq_any_due(b, &r, now_us, SQ_HELD_NONE, err);
}

static int
ql_count(void *b, const char *q, int64_t window_us, int32_t n, struct jobd_error *err)
{
    struct sqlite_store *s = b;
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "UPDATE queues SET rate_window_us = ?2, rate_count = ?3 "
                        "WHERE name = ?1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, q);
    sqlite3_bind_int64(stmt, 2, window_us);
    sqlite3_bind_int(stmt, 3, n);
    return sq_step_done(s, stmt, "count a rate window", err);
}

static const struct qlimits_backend sq_ql_backend = {
    .read = ql_read,
    .claim = ql_claim,
    .any_due = ql_any_due,
    .count = ql_count,
};

int
sq_qlimits_claim(struct sqlite_store *s, const struct claim_req *req, struct job_list *out,
                 int *left, struct jobd_error *err)
{
    int64_t held = 0;
    int rc = JOBD_OK;
    for (size_t i = 0; rc == JOBD_OK && *left > 0 && i < s->qlim.n; i++) {
        const char *q = s->qlim.names[i];
        if (!qlimits_req_covers(req, q))
            continue;
        size_t before = out->n;
        char spare[JOB_GROUP_MAX + 1] = "";
        s->group_cursor = qlimits_cursor(&s->qlim, i);
        if (s->group_cursor == NULL)
            s->group_cursor = spare;
        if (s->qlim.kinds[i] == (QLIMITS_KIND_GROUPED | QLIMITS_KIND_ONE_GROUP)) {
            /* one group, whose turn it always is: its plain claim order, as
             * pg/qlimits.c does (a second group is seen at the next refresh) */
            struct claim_req r = only(req, &q);
            rc = sq_claim_due(s, &r, *left, sq_now(s), "paused = 1", out, err);
        } else if (s->qlim.kinds[i] == QLIMITS_KIND_GROUPED) { /* no limit to read */
            struct claim_req r = only(req, &q);
            int due = sq_any_due(s, &r, sq_now(s), "paused = 1", err);
            if (due == 1)
                rc = sq_groups_claim(s, q, req, *left, sq_now(s), NULL, 0, out, err);
            else
                rc = due;
        } else {
            rc = qlimits_claim_queue(&sq_ql_backend, s, q, req, *left, out, &held, err);
        }
        *left -= (int)(out->n - before);
        s->group_cursor = NULL;
    }
    if (req->held_until_us != NULL)
        *req->held_until_us = held;
    return rc;
}

int
sq_qlimits_fill(struct sqlite_store *s, struct queue_stat *v, size_t n, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT name, max_running, rate_limit, rate_per_ms, group_max_running,"
                        " group_rate_limit, group_rate_per_ms FROM queues"
                        " WHERE max_running IS NOT NULL OR rate_limit IS NOT NULL"
                        "    OR group_max_running IS NOT NULL OR group_rate_limit IS NOT NULL",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    while ((rc = sq_step_row(s, stmt, "read queue limits", err)) == 1) {
        const char *name = (const char *)sqlite3_column_text(stmt, 0);
        for (size_t i = 0; name != NULL && i < n; i++)
            if (strcmp(v[i].name, name) == 0) {
                v[i].max_running = sqlite3_column_int(stmt, 1);
                v[i].rate_limit = sqlite3_column_int(stmt, 2);
                v[i].rate_per_ms = sqlite3_column_int64(stmt, 3);
                v[i].group_max_running = sqlite3_column_int(stmt, 4);
                v[i].group_rate_limit = sqlite3_column_int(stmt, 5);
                v[i].group_rate_per_ms = sqlite3_column_int64(stmt, 6);
            }
    }
    sq_reset(stmt);
    return rc < 0 ? rc : JOBD_OK;
}
