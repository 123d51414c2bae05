/*
 * sqlite/workflow_ops.c — the operations on a workflow after its submit on
 * SQLite (store/workflow.h): adding steps, cancel, retry and delete, each
 * one BEGIN IMMEDIATE transaction (the database's one writer, so nothing
 * changes between a read and a write in it). The settling of waiting
 * steps is sqlite/deps.c's: queued by the schema's triggers, drained in
 * the transaction (sq_deps_flush) before COMMIT, and between the steps of
 * a retry so that a parent's children see its edges open again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/sqlite/internal.h"
#include "store/workflow.h"

/* Runs sql with ?1 = a and, if want_b, ?2 = b; *changes (may be NULL) the rows changed. */
static int
run(struct sqlite_store *s, const char *sql, int64_t a, int64_t b, bool want_b, int *changes,
    struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, a);
    if (want_b)
        sqlite3_bind_int64(stmt, 2, b);
    rc = sq_step_done(s, stmt, "workflow", err);
    if (changes != NULL)
        *changes = rc == JOBD_OK ? sqlite3_changes(s->db) : 0;
    return rc;
}

/* Workflow id as it is inside the open transaction; JOBD_E_NOTFOUND without steps. */
static int
read_wf(struct sqlite_store *s, int64_t id, struct workflow *w, struct jobd_error *err)
{
    memset(w, 0, sizeof *w);
    int rc = sq_op_workflow_get(&s->base, id, w, err);
    if (rc == JOBD_OK && w->n_steps == 0)
        rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no workflow with id %lld", (long long)id);
    return rc;
}

/* Ends the transaction: commits on JOBD_OK, else rolls back. */
static int
end(struct sqlite_store *s, int rc, struct jobd_error *err)
{
    if (rc == JOBD_OK)
        return sq_commit(s, err);
    sq_rollback(s);
    return rc;
}

/* ---- adding steps ---- */

static bool
live(const struct workflow *w)
{
    for (size_t i = 0; i < w->n_steps; i++)
        if (!job_status_terminal((enum job_status)w->steps[i].status))
            return true;
    return false;
}

/* The new steps in the plan's order through sq_enqueue_one, and their rows. */
static int
insert_steps(struct sqlite_store *s, int64_t id, const struct workflow_add *add,
             const struct workflow_add_plan *ap, int64_t *job_ids, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(
        s, "SELECT COALESCE(max(ord), -1) + 1 FROM workflow_steps WHERE workflow = ?1", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    if ((rc = sq_step_row(s, stmt, "read workflow steps", err)) < 0)
        return rc;
    int64_t base = sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    int64_t now = sq_now(s);
    int64_t *parents = malloc(WORKFLOW_DEPS_MAX * sizeof *parents);
    rc = parents ? JOBD_OK : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    const struct workflow_plan *plan = &ap->plan;
    for (size_t k = 0; rc == JOBD_OK && k < add->n; k++) {
        size_t i = plan->order[k], np = 0;
        struct job_spec js = add->steps[i].job;
        for (size_t x = ap->ext_off[i]; x < ap->ext_off[i + 1] && np < WORKFLOW_DEPS_MAX; x++)
            parents[np++] = ap->ext[x];
        for (size_t x = plan->off[i]; x < plan->off[i + 1] && np < WORKFLOW_DEPS_MAX; x++)
            parents[np++] = job_ids[plan->idx[x]];
        js.depends_on = parents;
        js.n_depends_on = np;
        char prefix[40];
        snprintf(prefix, sizeof prefix, "steps[%zu].", i);
        if ((rc = sq_enqueue_one(s, &js, now, prefix, NULL, NULL, &job_ids[i], err)) != JOBD_OK)
            break;
        rc = sq_prepare(s,
                        "INSERT INTO workflow_steps (job_id, workflow, ref, ord) "
                        "VALUES (?1, ?2, ?3, ?4)",
                        &stmt, err);
        if (rc != JOBD_OK)
            break;
        sqlite3_bind_int64(stmt, 1, job_ids[i]);
        sqlite3_bind_int64(stmt, 2, id);
        sq_bind_text(stmt, 3, add->steps[i].ref);
        sqlite3_bind_int64(stmt, 4, base + (int64_t)i);
        rc = sq_step_done(s, stmt, "insert workflow step", err);
    }
    free(parents);
    return rc;
}

/*
 * Before step k (job c) gains every new step as a parent, with its own
 * policy; an edge from a new step that ended already (cancelled for a
 * parent of its own) is ended from the start.
 */
static int
attach_before(struct sqlite_store *s, const struct workflow *w, const struct workflow_add *add,
              size_t k, int64_t c, const int64_t *job_ids, struct jobd_error *err)
{
    char field[32];
    snprintf(field, sizeof field, "before[%zu]", k);
    for (size_t i = 0; i < w->n_steps; i++)
        if (w->steps[i].job_id == c && w->steps[i].status != JOB_WAITING)
            return jobd_error_set(err, JOBD_E_CONFLICT, field,
                                  "%s: step '%s' (job %lld) is %s, no longer waiting", field,
                                  w->steps[i].ref, (long long)c,
                                  job_status_name((enum job_status)w->steps[i].status));
    /* c's policy, read once: per new edge, it read all of c's edges (5,000
     * steps before one of 5,000 parents: 37 million rows, ~30 s) */
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT max(run_on_failure) FROM job_deps WHERE child = ?1", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, c);
    if ((rc = sq_step_row(s, stmt, "read dependencies", err)) < 0)
        return rc;
    bool null_policy = sqlite3_column_type(stmt, 0) == SQLITE_NULL;
    int policy = sqlite3_column_int(stmt, 0);
    sq_reset(stmt);
    rc = JOBD_OK;
    for (size_t i = 0; rc == JOBD_OK && i < add->n; i++) {
        if ((rc = sq_prepare(s,
                             "INSERT OR IGNORE INTO job_deps (parent, child, ended_status,"
                             " run_on_failure) SELECT ?1, ?2, (SELECT status FROM jobs_done"
                             " WHERE id = ?1), ?3",
                             &stmt, err)) != JOBD_OK)
            break;
        sqlite3_bind_int64(stmt, 1, job_ids[i]);
        sqlite3_bind_int64(stmt, 2, c);
        if (null_policy)
            sqlite3_bind_null(stmt, 3);
        else
            sqlite3_bind_int(stmt, 3, policy);
        rc = sq_step_done(s, stmt, "workflow", err);
    }
    return rc;
}

int
sq_op_workflow_add(struct store *st, int64_t id, const struct workflow_add *add, int64_t *job_ids,
                   struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct workflow w;
    struct workflow_add_plan ap = {0};
    rc = read_wf(s, id, &w, err);
    if (rc == JOBD_OK)
        rc = workflow_add_resolve(&w, add, &ap, err);
    if (rc == JOBD_OK && !live(&w))
        rc = jobd_error_set(err, JOBD_E_STATE, "status",
                            "workflow %lld has ended: every step is finished", (long long)id);
    if (rc == JOBD_OK)
        rc = insert_steps(s, id, add, &ap, job_ids, err);
    for (size_t k = 0; rc == JOBD_OK && k < add->n_before; k++)
        rc = attach_before(s, &w, add, k, ap.before_ids[k], job_ids, err);
    workflow_add_plan_fini(&ap);
    workflow_fini(&w);
    return end(s, rc, err);
}

/* ---- cancel ---- */

/* Cancels step job id of status st, as sq_op_cancel cancels one job (sqlite/admin.c). */
static int
cancel_one(struct sqlite_store *s, int64_t id, int st, int64_t now, struct workflow_change *c,
           struct jobd_error *err)
{
    int changed = 0, rc = JOBD_OK;
    if (st == JOB_PENDING) {
        struct sq_finish f = {
            .from = JOB_PENDING, .attempt = SQ_ANY_ATTEMPT, .to = JOB_CANCELLED, .now_us = now};
        rc = sq_finish_job(s, id, &f, err);
        c->cancelled += rc == 1;
    } else if (st == JOB_RUNNING) {
        rc = run(s,
                 "UPDATE jobs SET cancel_requested = 1"
                 " WHERE id = ?1 AND status = 'running' AND cancel_requested = 0",
                 id, 0, false, &changed, err);
        c->requested += changed;
    } else if (st == JOB_WAITING) {
        rc = sq_deps_cancel_waiting(s, id, now, err);
        c->cancelled += rc == 1;
    }
    return rc < 0 ? rc : JOBD_OK;
}

int
sq_op_workflow_cancel(struct store *st, int64_t id, struct workflow_change *c,
                      struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct workflow w;
    rc = read_wf(s, id, &w, err);
    int64_t now = sq_now(s);
    for (size_t i = 0; rc == JOBD_OK && i < w.n_steps; i++)
        rc = cancel_one(s, w.steps[i].job_id, w.steps[i].status, now, c, err);
    workflow_fini(&w);
    rc = end(s, rc, err);
    if (rc != JOBD_OK)
        memset(c, 0, sizeof *c);
    return rc;
}

/* ---- retry ---- */

/* attempt_floor = attempt: max_attempts fresh attempts, as sq_op_retry (sqlite/admin.c). */
#define SQ_WF_RETRY(table, status)                                                                 \
    "INSERT INTO " table " (" SQ_JOB_COLS ") SELECT id, queue, type, payload, '" status            \
    "', priority, ?2, attempt, max_attempts, idempotency_key, schedule, scheduled_for, NULL, "     \
    "NULL, timeout_ms, 0, last_error, NULL, created_at, NULL, NULL, attempt, traceparent, grp "    \
    "FROM jobs_done WHERE id = ?1 AND status IN ('dead', 'cancelled')"

/* Step job id back to pending, or waiting while a parent has not ended. */
static int
retry_one(struct sqlite_store *s, int64_t id, int64_t now, struct workflow_change *c,
          struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT 1 FROM job_deps WHERE child = ?1 AND ended_status IS NULL",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    if ((rc = sq_step_row(s, stmt, "look up parents", err)) < 0)
        return rc;
    bool waits = rc == 1;
    if (waits)
        sq_reset(stmt);
    int changed = 0;
    rc = run(s, waits ? SQ_WF_RETRY("jobs_waiting", "waiting") : SQ_WF_RETRY("jobs", "pending"), id,
             now, true, &changed, err);
    if (rc != JOBD_OK || changed == 0)
        return rc; /* not dead nor cancelled (back with its parent already) */
    c->retried++;
    if ((rc = run(s, "DELETE FROM jobs_done WHERE id = ?1", id, 0, false, NULL, err)) != JOBD_OK)
        return rc;
    /* its children cancelled for it wait again, its edges open, before the next step looks */
    return sq_deps_flush(s, err);
}

int
sq_op_workflow_retry(struct store *st, int64_t id, const int64_t *ids, size_t n,
                     struct workflow_change *c, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct workflow w;
    rc = read_wf(s, id, &w, err);
    workflow_fini(&w);
    int64_t now = sq_now(s);
    for (size_t i = 0; rc == JOBD_OK && i < n; i++)
        rc = retry_one(s, ids[i], now, c, err);
    rc = end(s, rc, err);
    if (rc != JOBD_OK)
        memset(c, 0, sizeof *c);
    return rc;
}

/* ---- delete ---- */

#define SQ_WF_JOBS "(SELECT job_id FROM workflow_steps WHERE workflow = ?1)"

/* Why workflow w cannot be deleted (JOBD_E_STATE), or JOBD_OK. */
static int
delete_refused(struct sqlite_store *s, const struct workflow *w, struct jobd_error *err)
{
    for (size_t i = 0; i < w->n_steps; i++)
        if (!job_status_terminal((enum job_status)w->steps[i].status))
            return jobd_error_set(err, JOBD_E_STATE, "status",
                                  "workflow %lld is running: step '%s' is %s (cancel it first)",
                                  (long long)w->id, w->steps[i].ref,
                                  job_status_name((enum job_status)w->steps[i].status));
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT d.child FROM job_deps d JOIN jobs_waiting j ON j.id = d.child"
                        " WHERE d.parent IN " SQ_WF_JOBS " LIMIT 1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, w->id);
    if ((rc = sq_step_row(s, stmt, "look up children", err)) < 0)
        return rc;
    if (rc == 0)
        return JOBD_OK;
    long long child = (long long)sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    return jobd_error_set(err, JOBD_E_STATE, "depends_on",
                          "job %lld, waiting, depends on a step of workflow %lld", child,
                          (long long)w->id);
}

int
sq_workflow_delete_rows(struct sqlite_store *s, int64_t id, struct jobd_error *err)
{
    static const char *const steps[] = {
        "DELETE FROM job_keys WHERE job_id IN " SQ_WF_JOBS,
        "DELETE FROM job_attempts WHERE job_id IN " SQ_WF_JOBS,
        "DELETE FROM job_progress WHERE job_id IN " SQ_WF_JOBS,
        "DELETE FROM job_attempt_logs WHERE job_id IN " SQ_WF_JOBS,
        "DELETE FROM job_deps WHERE child IN " SQ_WF_JOBS " OR parent IN " SQ_WF_JOBS,
        "DELETE FROM jobs_done WHERE id IN " SQ_WF_JOBS,
        "DELETE FROM workflow_steps WHERE workflow = ?1",
        "DELETE FROM workflows WHERE id = ?1",
    };
    int rc = JOBD_OK;
    for (size_t i = 0; rc == JOBD_OK && i < sizeof steps / sizeof steps[0]; i++)
        rc = run(s, steps[i], id, 0, false, NULL, err);
    return rc;
}

int
sq_op_workflow_delete(struct store *st, int64_t id, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    struct workflow w;
    rc = read_wf(s, id, &w, err);
    if (rc == JOBD_OK)
        rc = delete_refused(s, &w, err);
    workflow_fini(&w);
    if (rc == JOBD_OK)
        rc = sq_workflow_delete_rows(s, id, err);
    return end(s, rc, err);
}
