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
        return JOBD_OK;
    }
    sq_rollback(s);
    return rc;
}
