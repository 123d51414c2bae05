/*
 * sqlite/prune.c — retention per outcome (store_prune_status) on SQLite:
 * the prune of store.h restricted to some terminal statuses. One
 * transaction a batch; the same ordered pick three times in it selects the
 * same rows, so keys and history go with their jobs.
 */
#include "core/err.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"

#define PICK                                                                                       \
    "(SELECT id FROM jobs_done WHERE finished_at < ?1 AND (status = ?3 OR status = "               \
    "?4)" SQ_WF_SETTLED("jobs_done") " ORDER BY finished_at, id LIMIT ?2)"

int
sq_op_prune_status(struct store *st, bool succeeded, int64_t cutoff_us, int limit, int *deleted,
                   struct jobd_error *err)
{
    static const char *const steps[] = {
        "DELETE FROM job_keys WHERE job_id IN " PICK,
        "DELETE FROM job_attempts WHERE job_id IN " PICK,
        "DELETE FROM job_progress WHERE job_id IN " PICK,
        "DELETE FROM job_attempt_logs WHERE job_id IN " PICK,
        "DELETE FROM job_deps WHERE child IN " PICK, /* a finished child's edges */
        "DELETE FROM workflow_steps WHERE job_id IN " PICK,
        "DELETE FROM enqueue_keys WHERE job_id IN " PICK, /* sqlite/enqkeys.c */
        "DELETE FROM jobs_done WHERE id IN " PICK,
    };
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    for (size_t i = 0; rc == JOBD_OK && i < sizeof steps / sizeof steps[0]; i++) {
        sqlite3_stmt *stmt;
        if ((rc = sq_prepare(s, steps[i], &stmt, err)) != JOBD_OK)
            break;
        sqlite3_bind_int64(stmt, 1, cutoff_us);
        sqlite3_bind_int(stmt, 2, limit);
        sq_bind_text(stmt, 3, succeeded ? "succeeded" : "dead");
        sq_bind_text(stmt, 4, succeeded ? "succeeded" : "cancelled");
        rc = sq_step_done(s, stmt, "prune jobs", err);
    }
    int count = sqlite3_changes(s->db);
    if (rc == JOBD_OK && (rc = sq_commit(s, err)) == JOBD_OK) {
        *deleted = count;
        /* whole workflows: succeeded ones by this cutoff of succeeded jobs, failed by the other */
        if (count < limit)
            rc = sq_prune_workflows(s, succeeded ? cutoff_us : SQ_NO_CUT,
                                    succeeded ? SQ_NO_CUT : cutoff_us, limit - count, deleted, err);
        return rc;
    }
    sq_rollback(s);
    return rc;
}

/*
 * The workflows sq_prune_workflows takes (?1 ok_cut, ?2 failed_cut, ?3
 * limit): every step ended, the last before its kind's cutoff, or no step
 * left; with their numbers of steps, oldest first.
 */
#define SQ_ALL_JOBS                                                                                \
    "(SELECT id, status, finished_at FROM jobs UNION ALL SELECT id, status, finished_at FROM "     \
    "jobs_done UNION ALL SELECT id, status, finished_at FROM jobs_waiting)"
static const char wf_pick[] =
    "SELECT w.id, count(a.id) FROM workflows w LEFT JOIN workflow_steps s ON s.workflow = w.id"
    " LEFT JOIN " SQ_ALL_JOBS " a ON a.id = s.job_id WHERE w.created_at < max(?1, ?2)"
    " GROUP BY w.id HAVING count(a.id) = 0 OR (min(a.status IN ('succeeded', 'dead',"
    " 'cancelled')) = 1 AND max(a.finished_at) < CASE WHEN min(a.status = 'succeeded') = 1"
    " THEN ?1 ELSE ?2 END) ORDER BY w.id LIMIT ?3";

int
sq_prune_workflows(struct sqlite_store *s, int64_t ok_cut, int64_t failed_cut, int limit,
                   int *deleted, struct jobd_error *err)
{
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    int64_t ids[64];
    int64_t steps = 0;
    size_t n = 0;
    if ((rc = sq_prepare(s, wf_pick, &stmt, err)) == JOBD_OK) {
        sqlite3_bind_int64(stmt, 1, ok_cut);
        sqlite3_bind_int64(stmt, 2, failed_cut);
        sqlite3_bind_int(stmt, 3, limit < 64 ? limit : 64);
        /* oldest first, while the steps before each number fewer than limit */
        while (steps < limit && (rc = sq_step_row(s, stmt, "pick workflows", err)) == 1) {
            ids[n++] = sqlite3_column_int64(stmt, 0);
            steps += sqlite3_column_int64(stmt, 1);
        }
        if (rc == 1)
            sq_reset(stmt);
        rc = rc < 0 ? rc : JOBD_OK;
    }
    for (size_t i = 0; rc == JOBD_OK && i < n; i++)
        rc = sq_workflow_delete_rows(s, ids[i], err);
    if (rc == JOBD_OK && (rc = sq_commit(s, err)) == JOBD_OK) {
        *deleted += (int)steps;
        return JOBD_OK;
    }
    sq_rollback(s);
    return rc;
}
