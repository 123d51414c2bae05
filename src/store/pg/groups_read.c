/*
 * pg/groups_read.c — the reads of store/groups.h on PostgreSQL: a queue's
 * busiest groups, and how many groups of each grouped queue have due jobs.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/groups.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

/* $1 queue, $2 limit: the queue's pending and running jobs by group, busiest first. */
PG_STMT(st_gr_list, "SELECT grp, count(*) FILTER (WHERE status = 'pending'),"
                    " count(*) FILTER (WHERE status = 'running') FROM jobd.jobs"
                    " WHERE queue = $1::text AND status IN ('pending', 'running')"
                    " GROUP BY grp ORDER BY count(*) DESC, grp NULLS FIRST LIMIT $2::int");

/* $1 now: the groups of job_groups with a due job, by queue (a probe of jobs_group_claim each). */
PG_STMT(st_gr_counts, "SELECT x.queue, count(*) FROM jobd.job_groups x"
                      " WHERE EXISTS (SELECT 1 FROM jobd.jobs j WHERE j.queue = x.queue"
                      "   AND COALESCE(j.grp, '') = x.grp"
                      "   AND j.status NOT IN ('running', 'succeeded') AND j.run_at <= " PG_NOW(
                          "$1") ")"
                                " GROUP BY x.queue ORDER BY x.queue");

int
pg_op_queue_groups(struct store *st, const char *queue, int limit, struct queue_group **out,
                   size_t *n, struct jobd_error *err)
{
    char lb[24];
    const char *vals[2] = {queue, pg_i64(lb, limit)};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_gr_list, 2, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    *out = calloc(rows > 0 ? (size_t)rows : 1, sizeof **out);
    bool oom = *out == NULL;
    for (int i = 0; !oom && i < rows; i++) {
        (*out)[i].group = pg_get_str(r, i, 0, &oom);
        (*out)[i].pending = pg_get_i64(r, i, 1);
        (*out)[i].running = pg_get_i64(r, i, 2);
        *n = (size_t)i + 1;
    }
    PQclear(r);
    return oom ? jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory") : JOBD_OK;
}

int
pg_op_queue_group_counts(struct store *st, struct queue_group_count **out, size_t *n,
                         struct jobd_error *err)
{
    char nb[24];
    const char *vals[1] = {pg_now_param(pg_of(st), nb)};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_gr_counts, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    *out = calloc(rows > 0 ? (size_t)rows : 1, sizeof **out);
    bool oom = *out == NULL;
    for (int i = 0; !oom && i < rows; i++) {
        (*out)[i].queue = pg_get_str(r, i, 0, &oom);
        (*out)[i].groups = pg_get_i64(r, i, 1);
        *n = (size_t)i + 1;
    }
    PQclear(r);
    return oom ? jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory") : JOBD_OK;
}
