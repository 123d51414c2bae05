/*
 * pg/prune.c — retention on PostgreSQL.
 *
 * A completion moves its row into jobd.jobs_done, partitioned by UTC day of
 * finished_at and then by status (migration 38; docs/DESIGN.md, Table
 * layout, round three): there is no archive pass (the vtable's archive is
 * NULL). Retention (store_prune, and store_prune_status per outcome) first
 * drops the whole (day, status) leaves of days that ended before the cutoff
 * (jobd.archive_drop: their jobs' keys, history, progress, logs, edges,
 * workflow steps and enqueue keys deleted first, found from the leaf);
 * while it dropped some, that is the call's work. Then the rows of the
 * boundary day, of the legacy partition (jobs_done before migration 38,
 * which keeps its finished_at index) and of the default partitions go by
 * batches, one statement each. A step of a workflow is not in those
 * batches: workflows go whole, by a pass of their own (st_prune_workflows)
 * after each batch of jobs.
 *
 * store_vacuum_hot vacuums jobd.jobs itself (see operator.h for why).
 */
#include "core/err.h"
#include "core/rules.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

/*
 * One retention batch: c picks the limit oldest finished jobs before the
 * cutoff $1 (limit $2), pruned to the partitions before it (after
 * jobd.archive_drop: the boundary day, the legacy and default ones), then
 * they go with their keys and attempt history. done_cond narrows the
 * statuses.
 */
/*
 * A step of a workflow (store/workflow.h) goes only with its whole
 * workflow (wf_batch below), never in a batch of jobs: one probe of
 * workflow_steps per job.
 */
#define PG_WF_SETTLED(t)                                                                           \
    " AND NOT EXISTS (SELECT 1 FROM jobd.workflow_steps ws WHERE ws.job_id = " t ".id)"

/* clang-format off */
#define PRUNE_BATCH(done_cond)                                               \
    "WITH c AS MATERIALIZED ("                                                         \
    "   SELECT id FROM jobd.jobs_done WHERE finished_at < " PG_US_TS("$1")              \
    done_cond PG_WF_SETTLED("jobs_done") " ORDER BY finished_at LIMIT $2::int),"        \
    " d AS (DELETE FROM jobd.jobs_done WHERE id = ANY(ARRAY(SELECT id FROM c))"         \
    "        AND finished_at < " PG_US_TS("$1") " RETURNING id, idempotency_key),"     \
    " k AS (DELETE FROM jobd.job_keys jk USING d"                                       \
    "       WHERE jk.idempotency_key = d.idempotency_key AND jk.job_id = d.id),"        \
    " gp AS (DELETE FROM jobd.job_progress p USING d WHERE p.job_id = d.id),"          \
    " gl AS (DELETE FROM jobd.job_attempt_logs l USING d WHERE l.job_id = d.id),"      \
    " ge AS (DELETE FROM jobd.job_deps e USING d WHERE e.child = d.id),"                 \
    " gw AS (DELETE FROM jobd.workflow_steps w USING d WHERE w.job_id = d.id),"         \
    " ek AS (DELETE FROM jobd.enqueue_keys x USING d WHERE x.job_id = d.id),"           \
    " h AS (DELETE FROM jobd.job_attempts a USING d WHERE a.job_id = d.id) "            \
    "SELECT count(*) FROM d"
/* clang-format on */

/* $1 cutoff_us, $2 limit: old terminal jobs, their keys and history. */
static const struct pg_stmt prune_all = {"prune_all", PRUNE_BATCH("")};

/* $1 cutoff_us, $2 limit, $3 statuses: the same for some statuses. */
/* clang-format off */
static const struct pg_stmt prune_status = {
    "prune_status",
    PRUNE_BATCH(" AND status = ANY($3::text[])")};
/* clang-format on */

/*
 * Retention of whole workflows (docs/MODEL.md, Workflows): $1 the cutoff
 * of a workflow whose every step succeeded, $2 of one that failed (NULL:
 * that kind is kept), $3 the batch size in jobs. A workflow goes once
 * every step has ended and the last ended before its cutoff, with every
 * step's job (as DELETE /v1/workflows/{id}: pg/workflow_ops.c); one whose
 * steps are all gone (deleted one by one) goes too. Each workflow looked
 * at costs one pass over its own steps, whatever their number; workflows
 * are taken oldest first, at most $3 of them, while the steps before each
 * number fewer than $3. Answers the jobs deleted.
 */
/* clang-format off */
PG_STMT(st_prune_workflows,
     "WITH x AS (SELECT w.id, c.n FROM jobd.workflows w CROSS JOIN LATERAL ("
     "   SELECT count(*) AS n, max(a.finished_at) AS fin, bool_and(a.status = 'succeeded') AS ok,"
     "          bool_and(a.status IN ('succeeded', 'dead', 'cancelled')) AS ended"
     "     FROM jobd.workflow_steps s JOIN jobd.all_jobs a ON a.id = s.job_id"
     "    WHERE s.workflow = w.id) c"
     "  WHERE w.created_at < GREATEST(" PG_US_TS("$1") ", " PG_US_TS("$2") ")"
     "    AND (c.n = 0 OR (c.ended AND c.fin < CASE WHEN c.ok THEN " PG_US_TS("$1")
     "                                         ELSE " PG_US_TS("$2") " END))"
     "  ORDER BY w.id LIMIT $3::int),"
     " pick AS MATERIALIZED (SELECT id FROM (SELECT id, n, sum(n) OVER (ORDER BY id) AS cum"
     "                                       FROM x) y WHERE cum - n < $3::int),"
     " s AS MATERIALIZED (SELECT job_id AS id FROM jobd.workflow_steps"
     "                     WHERE workflow = ANY(ARRAY(SELECT id FROM pick))),"
     " d AS (DELETE FROM jobd.jobs_done WHERE id = ANY(ARRAY(SELECT id FROM s))"
     "        RETURNING id, idempotency_key),"
     " e AS (DELETE FROM jobd.job_deps e USING d WHERE e.child = d.id),"
     " k AS (DELETE FROM jobd.job_keys jk USING d"
     "       WHERE jk.idempotency_key = d.idempotency_key AND jk.job_id = d.id),"
     " gp AS (DELETE FROM jobd.job_progress p USING d WHERE p.job_id = d.id),"
     " gl AS (DELETE FROM jobd.job_attempt_logs l USING d WHERE l.job_id = d.id),"
     " h AS (DELETE FROM jobd.job_attempts a USING d WHERE a.job_id = d.id),"
     " ws AS (DELETE FROM jobd.workflow_steps w USING d WHERE w.job_id = d.id),"
     " wf AS (DELETE FROM jobd.workflows w WHERE w.id = ANY(ARRAY(SELECT id FROM pick))"
     "        AND NOT EXISTS (SELECT 1 FROM s WHERE s.id NOT IN (SELECT id FROM d)))"
     " SELECT count(*) FROM d");
/* clang-format on */

/* One batch of st_prune_workflows; *deleted gets the jobs it took added. */
static int
wf_batch(struct store *st, const char *ok_cut, const char *failed_cut, int limit, int *deleted,
         struct jobd_error *err)
{
    char lb[24];
    const char *vals[3] = {ok_cut, failed_cut, pg_i64(lb, limit)};
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, &st_prune_workflows, 3, vals, &r, err);
    if (rc == JOBD_OK)
        *deleted += (int)pg_get_i64(r, 0, 0);
    PQclear(r);
    return rc;
}

static int
run_counted64(struct store *st, const struct pg_stmt *stmt, int n, const char *const *vals,
              int64_t *count, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, stmt, n, vals, &r, err);
    if (rc == JOBD_OK)
        *count = pg_get_i64(r, 0, 0);
    PQclear(r);
    return rc;
}

static int
run_counted(struct store *st, const struct pg_stmt *stmt, int n, const char *const *vals,
            int *count, struct jobd_error *err)
{
    int64_t c = 0;
    int rc = run_counted64(st, stmt, n, vals, &c, err);
    if (rc == JOBD_OK)
        *count = (int)c;
    return rc;
}

/*
 * $1 cutoff (us), $2 statuses: jobd.archive_drop (schema version 38), the
 * whole (day, status) leaves before the cutoff, with a lock timeout (the
 * DROP locks jobs_done for a moment; the next pass tries again).
 */
static const struct pg_stmt st_archive_drop = {
    "st_archive_drop", "SELECT jobd.archive_drop(" PG_US_TS(
                           "$1") ", $2::text[])"
                                 " FROM (SELECT set_config('lock_timeout', '5s', true)) x"};

/* Drops the whole leaves before the cutoff; *deleted gets their jobs. */
static int
drop_days(struct store *st, const char *cutoff, const char *statuses, int *deleted,
          struct jobd_error *err)
{
    const char *vals[2] = {cutoff, statuses};
    int64_t n = 0;
    int rc = run_counted64(st, &st_archive_drop, 2, vals, &n, err);
    if (rc == JOBD_OK)
        *deleted = n > INT32_MAX ? INT32_MAX : (int)n;
    return rc;
}

int
pg_op_prune(struct store *st, int64_t finished_before_us, int limit, int *deleted,
            struct jobd_error *err)
{
    char b[2][24];
    int lim = limit > 0 ? limit : JOB_PAGE_MAX;
    int dropped = 0, batch = 0;
    int rc = drop_days(st, pg_i64(b[0], finished_before_us), "{succeeded,dead,cancelled}", &dropped,
                       err);
    if (rc != JOBD_OK || dropped >= lim) {
        *deleted = dropped;
        return rc;
    }
    const char *vals[2] = {b[0], pg_i64(b[1], lim - dropped)};
    rc = run_counted(st, &prune_all, 2, vals, &batch, err);
    *deleted = dropped + batch;
    if (rc == JOBD_OK && *deleted < lim)
        rc = wf_batch(st, vals[0], vals[0], lim - *deleted, deleted, err);
    return rc;
}

int
pg_op_prune_status(struct store *st, bool succeeded, int64_t cutoff_us, int limit, int *deleted,
                   struct jobd_error *err)
{
    char cb[24], lb[24];
    const char *vals[3] = {pg_i64(cb, cutoff_us), pg_i64(lb, limit),
                           succeeded ? "{succeeded}" : "{dead,cancelled}"};
    int dropped = 0, batch = 0;
    int rc = drop_days(st, vals[0], vals[2], &dropped, err);
    if (rc != JOBD_OK || dropped >= limit) {
        *deleted = dropped;
        return rc;
    }
    pg_i64(lb, limit - dropped);
    rc = run_counted(st, &prune_status, 3, vals, &batch, err);
    *deleted = dropped + batch;
    /* whole workflows: succeeded ones by the cutoff of succeeded jobs, failed ones by the other */
    if (rc == JOBD_OK && *deleted < limit)
        rc = wf_batch(st, succeeded ? vals[0] : NULL, succeeded ? NULL : vals[0], limit - *deleted,
                      deleted, err);
    return rc;
}

/*
 * SKIP_LOCKED: when autovacuum (or another server's plane) is vacuuming the
 * table already, this returns at once instead of queueing behind it. A
 * VACUUM cannot be prepared nor run in a transaction block: one plain
 * statement on the plane's own autocommit connection. A role that does not
 * own the table gets a WARNING from PostgreSQL and no vacuum, not an error.
 */
int
pg_op_vacuum_hot(struct store *st, struct jobd_error *err)
{
    return pg_exec_simple((struct store_pg *)st, "VACUUM (SKIP_LOCKED) jobd.jobs", err);
}

/* Rows deleted from jobd.jobs so far (store_hot_churn); -1 before any statistics. */
static const struct pg_stmt st_hot_churn = {
    "st_hot_churn", "SELECT COALESCE((SELECT n_tup_del FROM pg_stat_user_tables"
                    " WHERE schemaname = 'jobd' AND relname = 'jobs'), -1)"};

int
pg_op_hot_churn(struct store *st, int64_t *rows, struct jobd_error *err)
{
    return run_counted64(st, &st_hot_churn, 0, NULL, rows, err);
}

/*
 * $1 now (us), $2 days ahead: jobd.archive_days (schema version 38). Making
 * a partition locks jobs_done for a moment; with a lock timeout the plane
 * tries again at its next pass rather than queueing completions behind it.
 */
static const struct pg_stmt st_archive_days = {
    "st_archive_days", "SELECT jobd.archive_days(" PG_US_TS(
                           "$1") ", $2::int)"
                                 " FROM (SELECT set_config('lock_timeout', '5s', true)) x"};

int
pg_op_archive_days(struct store *st, int64_t now_us, int days_ahead, int *made,
                   struct jobd_error *err)
{
    char nb[24], db[24];
    const char *vals[2] = {pg_i64(nb, now_us), pg_i64(db, days_ahead)};
    return run_counted(st, &st_archive_days, 2, vals, made, err);
}
