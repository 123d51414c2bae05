/*
 * pg/bulk.c — bulk actions (store_bulk_batch) on PostgreSQL, and the job
 * filter's parameters shared with the job list.
 *
 * One batch is ONE statement: a MATERIALIZED CTE picks the newest matching
 * jobs below the cursor, and data-modifying CTEs apply the action to those
 * whose status allows it. Each modifying CTE repeats the single-job guard
 * (status = 'pending', status IN ('dead', 'cancelled'), ...) in its own
 * WHERE, so a job that moved on since the pick is skipped, not forced. The
 * picked rows are found by primary key (= ANY(ARRAY(...))), as the claim
 * does, so a generic plan cannot turn the batch into a scan of the table.
 *
 * Parameters: $1..$7 the filter (PG_FILTER_WHERE), $8 ids (NULL = any),
 * $9 cursor (0 = from the newest), $10 batch size, $11 now (not by delete,
 * which writes no time). Every statement
 * answers (matched, changed, smallest id matched, cancelled).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

#define BULK_PICK                                                                                  \
    "WITH m AS MATERIALIZED (SELECT id FROM jobd.all_jobs WHERE " PG_FILTER_WHERE                  \
    "   AND ($8::bigint[] IS NULL OR id = ANY($8::bigint[]))"                                      \
    "   AND ($9::bigint = 0 OR id < $9::bigint) ORDER BY id DESC LIMIT $10::int),"
#define PICKED "ARRAY(SELECT id FROM m)"

static const struct pg_stmt bulk_retry = {
    "bulk_retry", BULK_PICK
    " d AS (DELETE FROM jobd.jobs_done WHERE id = ANY(" PICKED ")"
    "       AND status IN ('dead', 'cancelled') RETURNING *),"
    " ins AS (INSERT INTO jobd.jobs (" PG_JOB_TABLE_COLS ") "
    "   SELECT d.id, d.queue, d.type, d.payload, 'pending', d.priority, " PG_NOW(
        "$11") ","
               "          d.attempt, d.attempt, d.max_attempts, d.idempotency_key, d.schedule,"
               "          d.scheduled_for, NULL, NULL, d.timeout_ms, false, d.last_error, NULL,"
               "          d.created_at, NULL, NULL, d.traceparent, d.has_children, d.grp FROM d "
               "RETURNING "
               "1) "
               "SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM ins), (SELECT min(id) FROM "
               "m), 0"};

/* clang-format off */
static const struct pg_stmt bulk_cancel = {
    "bulk_cancel", BULK_PICK
    " d AS (DELETE FROM jobd.jobs WHERE id = ANY(" PICKED ") AND status = 'pending'"
    "       RETURNING *),"
    /* waiting jobs too, as the single-job cancel (pg/admin.c): rows of jobs_waiting */
    " w AS (DELETE FROM jobd.jobs_waiting WHERE id = ANY(" PICKED ") RETURNING *),"
    " gone AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
    PG_DONE_SELECT("'cancelled'", "NULL", "d.last_error", PG_NOW("$11")) "FROM d RETURNING 1),"
    " wgone AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
    PG_DONE_SELECT("'cancelled'", "NULL", "d.last_error", PG_NOW("$11")) "FROM w d RETURNING 1),"
    " req AS (UPDATE jobd.jobs SET cancel_requested = true"
    "         WHERE id = ANY(" PICKED ") AND status = 'running' RETURNING 1) "
    "SELECT (SELECT count(*) FROM m),"
    "       (SELECT count(*) FROM gone) + (SELECT count(*) FROM wgone) + (SELECT count(*) FROM req),"
    "       (SELECT min(id) FROM m), (SELECT count(*) FROM gone) + (SELECT count(*) FROM wgone)"};
/* clang-format on */

/*
 * A job some waiting job depends on is not deleted (docs/API.md, Deleting
 * jobs): it would wait for ever. has_children first, so a job that was
 * never a parent costs no look-up.
 */
#define NO_WAITING_CHILD(t)                                                                        \
    "(NOT " t ".has_children OR NOT EXISTS (SELECT 1 FROM jobd.job_deps x"                         \
    " JOIN jobd.jobs_waiting y ON y.id = x.child WHERE x.parent = " t ".id))"

/* clang-format off */
static const struct pg_stmt bulk_delete = {
    "bulk_delete",
    BULK_PICK
    " d1 AS (DELETE FROM jobd.jobs WHERE id = ANY(" PICKED ") AND status <> 'running'"
    "        AND " NO_WAITING_CHILD("jobs") " RETURNING id, idempotency_key),"
    " d2 AS (DELETE FROM jobd.jobs_done WHERE id = ANY(" PICKED ")"
    "        AND " NO_WAITING_CHILD("jobs_done") " RETURNING id, idempotency_key),"
    " d3 AS (DELETE FROM jobd.jobs_waiting WHERE id = ANY(" PICKED ")"
    "        AND " NO_WAITING_CHILD("jobs_waiting") " RETURNING id, idempotency_key),"
    " d AS (SELECT * FROM d1 UNION ALL SELECT * FROM d2 UNION ALL SELECT * FROM d3),"
    " e AS (DELETE FROM jobd.job_deps e USING d WHERE e.child = d.id OR e.parent = d.id),"
    " k AS (DELETE FROM jobd.job_keys jk USING d"
    "       WHERE jk.idempotency_key = d.idempotency_key AND jk.job_id = d.id),"
    " gp AS (DELETE FROM jobd.job_progress p USING d WHERE p.job_id = d.id),"
    " gl AS (DELETE FROM jobd.job_attempt_logs l USING d WHERE l.job_id = d.id),"
    /* A key an enqueue holds is left to it (pg/enqkeys.c): it waits for
     * the job's row while holding the key's, so waiting here could
     * deadlock; that enqueue finds the job gone and points the key anew. */
    " ek AS (DELETE FROM jobd.enqueue_keys WHERE ctid = ANY(ARRAY("
    "        SELECT x.ctid FROM jobd.enqueue_keys x JOIN d ON x.job_id = d.id"
    "        FOR UPDATE OF x SKIP LOCKED))),"
    " h AS (DELETE FROM jobd.job_attempts a USING d WHERE a.job_id = d.id) "
    "SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM d), (SELECT min(id) FROM m), 0"};
/* clang-format on */

void
pg_filter_params(const struct job_filter *f, char buf[2][24], const char **vals)
{
    vals[0] = f->status == STORE_ANY ? NULL : job_status_name((enum job_status)f->status);
    vals[1] = f->queue;
    vals[2] = f->type;
    vals[3] = f->schedule;
    vals[4] = f->created_after_us ? pg_i64(buf[0], f->created_after_us) : NULL;
    vals[5] = f->created_before_us ? pg_i64(buf[1], f->created_before_us) : NULL;
    vals[6] = f->key;
}

int
pg_op_bulk_batch(struct store *st, const struct bulk_req *r, int n, int64_t *cursor,
                 struct bulk_counts *c, struct jobd_error *err)
{
    static const struct pg_stmt *const stmts[] = {&bulk_retry, &bulk_cancel, &bulk_delete};
    struct store_pg *s = (struct store_pg *)st;
    char fb[2][24], cb[24], nb[24], nowb[24];
    const char *vals[11];
    pg_filter_params(&r->f, fb, vals);
    struct pg_array ids;
    pg_array_begin(&ids);
    for (size_t i = 0; r->ids != NULL && i < r->n_ids; i++)
        pg_array_add_i64(&ids, r->ids[i], false);
    vals[7] = r->ids != NULL ? pg_array_end(&ids) : NULL;
    if (r->ids != NULL && vals[7] == NULL) {
        pg_array_fini(&ids);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    vals[8] = pg_i64(cb, *cursor);
    vals[9] = pg_i64(nb, n);
    vals[10] = pg_now_param(s, nowb);
    PGresult *res = NULL;
    int rc = pg_exec(s, stmts[r->action], r->action == BULK_DELETE ? 10 : 11, vals, &res, err);
    pg_array_fini(&ids);
    if (rc != JOBD_OK)
        return rc;
    int64_t matched = pg_get_i64(res, 0, 0);
    c->matched += matched;
    c->changed += pg_get_i64(res, 0, 1);
    c->cancelled += pg_get_i64(res, 0, 3);
    *cursor = matched < n ? 0 : pg_get_i64(res, 0, 2);
    PQclear(res);
    return JOBD_OK;
}
