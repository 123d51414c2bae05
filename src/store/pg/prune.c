/*
 * pg/prune.c — retention and the archive pass on PostgreSQL.
 *
 * A completion leaves its row succeeded in jobd.jobs (migration 8); the
 * archive pass (store_archive) moves such rows to jobd.jobs_done in
 * batches, so the hot table stays small without a completion paying for the
 * move. Retention (store_prune, and store_prune_status per outcome) deletes
 * old finished jobs wherever they are: a succeeded row not archived yet is
 * as old as one that was. Every batch is one statement; rows are found
 * through jobs_succeeded and jobs_done_finished, never by a scan. A step
 * of a workflow is not in those batches: workflows go whole, by a pass of
 * their own (st_prune_workflows) after each batch of jobs.
 *
 * store_vacuum_hot vacuums jobd.jobs itself (see operator.h for why).
 */
#include "core/err.h"
#include "core/rules.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

/*
 * One retention batch over both tables: c picks the limit oldest finished
 * jobs before the cutoff $1 (limit $2) among both, then each table's rows
 * among them go with their keys and attempt history. jobs_cond and
 * done_cond narrow the statuses.
 */
/*
 * A step of a workflow (store/workflow.h) goes only with its whole
 * workflow (wf_batch below), never in a batch of jobs: one probe of
 * workflow_steps per job. dh's status test is written so that it cannot
 * use jobs_succeeded's predicate: with it, and statistics that still say
 * no row is succeeded, the planner ANDs a walk of that whole index into the
 * primary-key look-up (archive_batch below).
 */
#define PG_WF_SETTLED(t)                                                                           \
    " AND NOT EXISTS (SELECT 1 FROM jobd.workflow_steps ws WHERE ws.job_id = " t ".id)"

/* clang-format off */
#define PRUNE_BATCH(jobs_cond, done_cond)                                               \
    "WITH c AS MATERIALIZED (SELECT id FROM ("                                          \
    "   (SELECT id, finished_at FROM jobd.jobs WHERE status = 'succeeded'"              \
    "      AND finished_at < " PG_US_TS("$1") jobs_cond PG_WF_SETTLED("jobs")           \
    "    ORDER BY finished_at LIMIT $2::int)"                                           \
    "   UNION ALL"                                                                      \
    "   (SELECT id, finished_at FROM jobd.jobs_done WHERE finished_at < " PG_US_TS("$1") \
    done_cond PG_WF_SETTLED("jobs_done") " ORDER BY finished_at LIMIT $2::int)) x"      \
    "  ORDER BY finished_at LIMIT $2::int),"                                            \
    " dd AS (DELETE FROM jobd.jobs_done WHERE id = ANY(ARRAY(SELECT id FROM c))"        \
    "        RETURNING id, idempotency_key),"                                           \
    " dh AS (DELETE FROM jobd.jobs WHERE id = ANY(ARRAY(SELECT id FROM c))"             \
    "        AND status || '' = 'succeeded' RETURNING id, idempotency_key),"            \
    " d AS (SELECT * FROM dd UNION ALL SELECT * FROM dh),"                              \
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
static const struct pg_stmt prune_all = {"prune_all", PRUNE_BATCH("", "")};

/* $1 cutoff_us, $2 limit, $3 statuses: the same for some statuses. */
/* clang-format off */
static const struct pg_stmt prune_status = {
    "prune_status",
    PRUNE_BATCH(" AND status = ANY($3::text[])", " AND status = ANY($3::text[])")};
/* clang-format on */

/*
 * $1 finished before (us), $2 limit: moves the oldest succeeded rows of jobs
 * to jobs_done, with their lease token hash (pg_op_lease_replayed). SKIP LOCKED: a row a prune or delete holds is left for the
 * next batch rather than waited for.
 */
/* clang-format off */
static const struct pg_stmt archive_batch = {
    "archive_batch",
    "WITH m AS MATERIALIZED (SELECT id FROM jobd.jobs WHERE status = 'succeeded'"
    "   AND finished_at < " PG_US_TS("$1") " ORDER BY finished_at LIMIT $2::int"
    "   FOR UPDATE SKIP LOCKED),"
    /* No status test here: m's rows are locked, FOR UPDATE rechecked their
     * status, and one would let the planner AND in a walk of all of
     * jobs_succeeded (400 ms a batch at 20,000 rows right after a burst,
     * while the statistics still say there are none). */
    " d AS (DELETE FROM jobd.jobs WHERE id = ANY(ARRAY(SELECT id FROM m)) RETURNING *),"
    " ins AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ", lease_token_hash) "
    "   SELECT " PG_JOB_TABLE_COLS ", lease_token_hash FROM d RETURNING 1) "
    "SELECT count(*) FROM ins"};
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
     " d1 AS (DELETE FROM jobd.jobs WHERE id = ANY(ARRAY(SELECT id FROM s))"
     "        AND status || '' = 'succeeded' RETURNING id, idempotency_key),"
     " d2 AS (DELETE FROM jobd.jobs_done WHERE id = ANY(ARRAY(SELECT id FROM s))"
     "        RETURNING id, idempotency_key),"
     " d AS (SELECT * FROM d1 UNION ALL SELECT * FROM d2),"
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
run_counted(struct store *st, const struct pg_stmt *stmt, int n, const char *const *vals,
            int *count, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, stmt, n, vals, &r, err);
    if (rc == JOBD_OK)
        *count = (int)pg_get_i64(r, 0, 0);
    PQclear(r);
    return rc;
}

int
pg_op_prune(struct store *st, int64_t finished_before_us, int limit, int *deleted,
            struct jobd_error *err)
{
    char b[2][24];
    int lim = limit > 0 ? limit : JOB_PAGE_MAX;
    const char *vals[2] = {pg_i64(b[0], finished_before_us), pg_i64(b[1], lim)};
    int rc = run_counted(st, &prune_all, 2, vals, deleted, err);
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
    int rc = run_counted(st, &prune_status, 3, vals, deleted, err);
    /* whole workflows: succeeded ones by the cutoff of succeeded jobs, failed ones by the other */
    if (rc == JOBD_OK && *deleted < limit)
        rc = wf_batch(st, succeeded ? vals[0] : NULL, succeeded ? NULL : vals[0], limit - *deleted,
                      deleted, err);
    return rc;
}

int
pg_op_archive(struct store *st, int64_t finished_before_us, int limit, int *moved,
              struct jobd_error *err)
{
    char cb[24], lb[24];
    const char *vals[2] = {pg_i64(cb, finished_before_us), pg_i64(lb, limit)};
    return run_counted(st, &archive_batch, 2, vals, moved, err);
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
