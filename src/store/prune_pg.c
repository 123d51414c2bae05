/*
 * prune_pg.c — retention per outcome (store_prune_status) on PostgreSQL:
 * the prune of store.h restricted to some terminal statuses, so succeeded
 * jobs and dead or cancelled ones can be kept for different times. One
 * statement a batch, walking jobs_done_finished like the prune it mirrors.
 */
#include "core/err.h"
#include "store/operator_int.h"
#include "store/store_pg_int.h"

/* $1 cutoff_us, $2 limit, $3 statuses: old terminal jobs, their keys and history. */
static const struct pg_stmt prune_status = {
    "prune_status",
    "WITH d AS (DELETE FROM jobd.jobs_done WHERE id IN ("
    "             SELECT id FROM jobd.jobs_done WHERE finished_at < " PG_US_TS("$1")
    "                AND status = ANY($3::text[]) ORDER BY finished_at LIMIT $2::int)"
    "           RETURNING id, idempotency_key),"
    " k AS (DELETE FROM jobd.job_keys jk USING d"
    "       WHERE jk.idempotency_key = d.idempotency_key AND jk.job_id = d.id),"
    " h AS (DELETE FROM jobd.job_attempts a USING d WHERE a.job_id = d.id) "
    "SELECT count(*) FROM d"};

int
pg_op_prune_status(struct store *st, bool succeeded, int64_t cutoff_us, int limit,
                   int *deleted, struct jobd_error *err)
{
    char cb[24], lb[24];
    const char *vals[3] = {pg_i64(cb, cutoff_us), pg_i64(lb, limit),
                           succeeded ? "{succeeded}" : "{dead,cancelled}"};
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, &prune_status, 3, vals, &r, err);
    if (rc == JOBD_OK)
        *deleted = (int)pg_get_i64(r, 0, 0);
    PQclear(r);
    return rc;
}
