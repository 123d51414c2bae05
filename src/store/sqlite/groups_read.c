/*
 * sqlite/groups_read.c — the reads of store/groups.h on SQLite: a queue's
 * busiest groups, and how many groups of each grouped queue have due jobs.
 * Both read the jobs of the queues rather than an index by group: the
 * busiest groups walk a queue's pending and running jobs, and the count
 * probes each untagged group's head but walks the tagged jobs once (they
 * are in no index in group order: docs/DESIGN.md, Groups, "Tags on
 * SQLite"), a read of the due backlog each /metrics.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/groups.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"

int
sq_op_queue_groups(struct store *st, const char *queue, int limit, struct queue_group **out,
                   size_t *n, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT grp, sum(status = 'pending'), sum(status = 'running')"
                        " FROM jobs INDEXED BY jobs_queue_id WHERE queue = ?1"
                        " AND status IN ('pending', 'running')"
                        " GROUP BY grp ORDER BY count(*) DESC, grp IS NOT NULL, grp LIMIT ?2",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    if ((*out = calloc((size_t)limit, sizeof **out)) == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    sq_bind_text(stmt, 1, queue);
    sqlite3_bind_int(stmt, 2, limit);
    int oom = 0;
    while (!oom && *n < (size_t)limit && (rc = sq_step_row(s, stmt, "list groups", err)) == 1) {
        struct queue_group *g = &(*out)[(*n)++];
        g->group = sq_col_strdup(stmt, 0, &oom);
        g->pending = sqlite3_column_int64(stmt, 1);
        g->running = sqlite3_column_int64(stmt, 2);
    }
    sq_reset(stmt);
    if (oom)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    return rc < 0 ? rc : JOBD_OK;
}

int
sq_op_queue_group_counts(struct store *st, struct queue_group_count **out, size_t *n,
                         struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(
        s,
        "SELECT x.queue, count(*) FROM job_groups x"
        " WHERE EXISTS (SELECT 1 FROM jobs j INDEXED BY jobs_group_claim"
        "   WHERE j.queue = x.queue AND j.grp IS NULLIF(x.grp, '')"
        "     AND j.status = 'pending' AND j.tag IS NULL AND +j.run_at <= ?1)"
        /* tagged: due when tagged (sqlite/groups_tag.c); one walk of them */
        " OR (x.queue, x.grp) IN (SELECT jt.queue, COALESCE(jt.grp, '') FROM jobs jt"
        "   INDEXED BY jobs_fair_claim WHERE jt.status = 'pending' AND jt.tag IS NOT NULL)"
        " GROUP BY x.queue ORDER BY x.queue",
        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, sq_now(s));
    size_t cap = 0;
    int oom = 0;
    while (!oom && (rc = sq_step_row(s, stmt, "count groups", err)) == 1) {
        if (*n == cap) {
            struct queue_group_count *nv = realloc(*out, (cap = cap ? cap * 2 : 8) * sizeof *nv);
            if (nv == NULL) {
                oom = 1;
                break;
            }
            *out = nv;
        }
        struct queue_group_count *c = &(*out)[(*n)++];
        c->queue = sq_col_strdup(stmt, 0, &oom);
        c->groups = sqlite3_column_int64(stmt, 1);
    }
    sq_reset(stmt);
    if (oom)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    return rc < 0 ? rc : JOBD_OK;
}
