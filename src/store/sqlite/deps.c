/*
 * sqlite/deps.c — dependencies on SQLite (docs/MODEL.md, Dependencies):
 * a child's parents at enqueue, the settling of waiting children when
 * their parents end, and the parents as the job object shows them.
 *
 * The schema (migration 17) notices every end of a parent itself: its move
 * into jobs_done, whichever operation made it, ends the parent's edges and
 * queues a row in deps_todo in the same statement, and a job coming back
 * from jobs_done (a manual retry) queues one too. sq_commit then runs
 * sq_deps_flush inside the same transaction, before COMMIT: the children
 * are settled (released to pending, or cancelled for a parent that did not
 * succeed) in the parent's own transaction, and a child cancelled that way
 * is an end too, so cascades drain through the same queue. A transaction
 * that ended no parent with children finds deps_todo empty: one read of an
 * empty table before its COMMIT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/deps.h"
#include "store/sqlite/internal.h"

/* Reads the ids one statement answers (first column; ?1 bound to id) into *v. */
static int
read_ids(struct sqlite_store *s, const char *sql, int64_t id, int64_t **v, size_t *n,
         struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    *v = NULL;
    *n = 0;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    size_t cap = 0;
    while ((rc = sq_step_row(s, stmt, "read dependencies", err)) == 1) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *nv = realloc(*v, cap * sizeof *nv);
            if (nv == NULL) {
                sq_reset(stmt);
                free(*v);
                *v = NULL;
                return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            }
            *v = nv;
        }
        (*v)[(*n)++] = sqlite3_column_int64(stmt, 0);
    }
    if (rc < 0) {
        free(*v);
        *v = NULL;
        return rc;
    }
    return JOBD_OK;
}

/* Runs sql with ?1 = a, ?2 = b (b bound only if want_b). */
static int
run2(struct sqlite_store *s, const char *sql, int64_t a, int64_t b, bool want_b,
     struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, a);
    if (want_b)
        sqlite3_bind_int64(stmt, 2, b);
    return sq_step_done(s, stmt, "settle dependencies", err);
}

/*
 * Child c, waiting, whose parents have all ended: pending (due at
 * max(run_at, at)) when all succeeded or it runs anyway; else cancelled,
 * naming the first parent that did not succeed.
 */
static int
settle(struct sqlite_store *s, int64_t c, int64_t at, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT parent, ended_status, run_on_failure FROM job_deps"
                        " WHERE child = ?1 AND ended_status <> 'succeeded' ORDER BY parent LIMIT 1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, c);
    if ((rc = sq_step_row(s, stmt, "settle dependencies", err)) < 0)
        return rc;
    bool cancel = rc == 1 && sqlite3_column_int(stmt, 2) == 0;
    int64_t bad = rc == 1 ? sqlite3_column_int64(stmt, 0) : 0;
    char why[96] = "";
    if (rc == 1)
        snprintf(why, sizeof why, "parent job %lld is %s", (long long)bad,
                 (const char *)sqlite3_column_text(stmt, 1));
    if (rc == 1)
        sq_reset(stmt);
    if (!cancel) {
        rc = run2(
            s,
            "INSERT INTO jobs (" SQ_JOB_COLS ") SELECT id, queue, type, payload, 'pending', "
            "priority, max(run_at, ?2), attempt, max_attempts, idempotency_key, schedule, "
            "scheduled_for, NULL, NULL, timeout_ms, 0, last_error, result, created_at, "
            "started_at, NULL, attempt_floor, traceparent, grp FROM jobs_waiting WHERE id = ?1",
            c, at, true, err);
    } else {
        if ((rc = run2(s, "UPDATE job_deps SET cause = 1 WHERE parent = ?2 AND child = ?1", c, bad,
                       true, err)) != JOBD_OK)
            return rc;
        if ((rc = sq_prepare(
                 s,
                 "INSERT INTO jobs_done (" SQ_JOB_COLS ") SELECT id, queue, type, "
                 "payload, 'cancelled', priority, run_at, attempt, max_attempts, "
                 "idempotency_key, schedule, scheduled_for, NULL, NULL, timeout_ms, 0, "
                 "?3, result, created_at, started_at, ?2, attempt_floor, traceparent, grp "
                 "FROM jobs_waiting WHERE id = ?1",
                 &stmt, err)) != JOBD_OK)
            return rc;
        sqlite3_bind_int64(stmt, 1, c);
        sqlite3_bind_int64(stmt, 2, at);
        sq_bind_text(stmt, 3, why);
        rc = sq_step_done(s, stmt, "settle dependencies", err);
    }
    if (rc != JOBD_OK)
        return rc;
    return run2(s, "DELETE FROM jobs_waiting WHERE id = ?1", c, 0, false, err);
}

/* p's waiting children with no parent left to end (job_deps_open, migration 22) */
#define SQ_READY_KIDS(w)                                                                           \
    " IN (SELECT d.child FROM job_deps d WHERE d.parent = ?1) AND NOT EXISTS (SELECT 1 FROM"       \
    " job_deps o WHERE o.child = " w " AND o.ended_status IS NULL)"
/* ... of which one did not succeed */
#define SQ_SOME_FAILED(w)                                                                          \
    " EXISTS (SELECT 1 FROM job_deps b WHERE b.child = " w " AND b.ended_status <> 'succeeded')"

/*
 * Parent p ended at `at` (its edges ended already): its waiting children
 * settle. Those whose parents all succeeded move to pending together, three
 * statements for any number (a root of 10,000 children); a child with a
 * parent that did not succeed settles alone (cancelled, naming it, or run).
 * The write lock is held throughout, so nothing else settles them meanwhile.
 */
static int
parent_ended(struct sqlite_store *s, int64_t p, int64_t at, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(
        s,
        "SELECT w.id," SQ_SOME_FAILED("w.id") " FROM jobs_waiting w WHERE w.id" SQ_READY_KIDS(
            "w.id") " ORDER BY w.id",
        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, p);
    int64_t *bad = NULL;
    size_t nbad = 0, cap = 0, ok = 0;
    while ((rc = sq_step_row(s, stmt, "read dependencies", err)) == 1) {
        if (sqlite3_column_int(stmt, 1) == 0) {
            ok++;
            continue;
        }
        if (nbad == cap) {
            cap = cap ? cap * 2 : 16;
            int64_t *nv = realloc(bad, cap * sizeof *nv);
            if (nv == NULL) {
                sq_reset(stmt);
                free(bad);
                return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            }
            bad = nv;
        }
        bad[nbad++] = sqlite3_column_int64(stmt, 0);
    }
    rc = rc < 0 ? rc : JOBD_OK;
    for (size_t i = 0; rc == JOBD_OK && i < nbad; i++)
        rc = settle(s, bad[i], at, err);
    free(bad);
    if (rc != JOBD_OK || ok == 0)
        return rc;
    /* inserted before deleted, as every move is (the events triggers, migration 18) */
    if ((rc = run2(s,
                   "INSERT INTO jobs (" SQ_JOB_COLS ") SELECT id, queue, type, payload, 'pending', "
                   "priority, max(run_at, ?2), attempt, max_attempts, idempotency_key, schedule, "
                   "scheduled_for, NULL, NULL, timeout_ms, 0, last_error, result, created_at, "
                   "started_at, NULL, attempt_floor, traceparent, grp FROM jobs_waiting w WHERE "
                   "w.id" SQ_READY_KIDS("w.id") " AND NOT" SQ_SOME_FAILED("w.id") " ORDER BY w.id",
                   p, at, true, err)) != JOBD_OK)
        return rc;
    return run2(
        s,
        "DELETE FROM jobs_waiting WHERE id IN (SELECT d.child FROM job_deps d"
        " WHERE d.parent = ?1) AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = jobs_waiting.id)",
        p, 0, false, err);
}

/* Parent p is live again: the children cancelled for it wait again; its edges open. */
static int
parent_reopened(struct sqlite_store *s, int64_t p, struct jobd_error *err)
{
    int64_t *kids;
    size_t n;
    int rc = read_ids(s,
                      "SELECT d.child FROM job_deps d JOIN jobs_done j ON j.id = d.child"
                      " WHERE d.parent = ?1 AND d.cause = 1 AND j.status = 'cancelled'"
                      " ORDER BY d.child",
                      p, &kids, &n, err);
    for (size_t i = 0; rc == JOBD_OK && i < n; i++) {
        rc = run2(s,
                  "INSERT INTO jobs_waiting (" SQ_JOB_COLS ") SELECT id, queue, type, payload, "
                  "'waiting', priority, run_at, attempt, max_attempts, idempotency_key, schedule, "
                  "scheduled_for, NULL, NULL, timeout_ms, 0, last_error, result, created_at, "
                  "started_at, NULL, attempt_floor, traceparent, grp FROM jobs_done WHERE id = ?1",
                  kids[i], 0, false, err);
        if (rc == JOBD_OK)
            rc = run2(s, "DELETE FROM jobs_done WHERE id = ?1", kids[i], 0, false, err);
    }
    free(kids);
    if (rc == JOBD_OK)
        rc = run2(s,
                  "UPDATE job_deps SET ended_status = NULL, cause = 0"
                  " WHERE parent = ?1 AND ended_status IS NOT NULL",
                  p, 0, false, err);
    return rc;
}

/* One row of deps_todo. */
struct todo {
    int64_t parent, at;
    bool reopen;
};

/*
 * Reads up to max of deps_todo's rows in order into v and deletes them
 * (what settling them adds comes after them): how many, or < 0.
 */
static int
todo_take(struct sqlite_store *s, struct todo *v, int max, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT seq, parent, reopen, at FROM deps_todo ORDER BY seq LIMIT ?1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int(stmt, 1, max);
    int n = 0;
    int64_t last = 0;
    while (n < max && (rc = sq_step_row(s, stmt, "read deps_todo", err)) == 1) {
        last = sqlite3_column_int64(stmt, 0);
        v[n].parent = sqlite3_column_int64(stmt, 1);
        v[n].reopen = sqlite3_column_int(stmt, 2) != 0;
        v[n++].at = sqlite3_column_int64(stmt, 3);
    }
    if (n == max)
        sq_reset(stmt);
    else if (rc < 0)
        return rc;
    if (n > 0 &&
        (rc = run2(s, "DELETE FROM deps_todo WHERE seq <= ?1", last, 0, false, err)) != JOBD_OK)
        return rc;
    return n;
}

int
sq_deps_flush(struct sqlite_store *s, struct jobd_error *err)
{
    struct todo v[256];
    int n = 0, rc = JOBD_OK;
    while (rc == JOBD_OK && (n = todo_take(s, v, 256, err)) > 0)
        for (int i = 0; rc == JOBD_OK && i < n; i++)
            rc = v[i].reopen ? parent_reopened(s, v[i].parent, err)
                             : parent_ended(s, v[i].parent, v[i].at, err);
    return rc != JOBD_OK ? rc : n < 0 ? n : JOBD_OK;
}

int
sq_deps_enqueued(struct sqlite_store *s, const struct job_spec *spec, const char *field_prefix,
                 int64_t id, int64_t now, struct jobd_error *err)
{
    char field[64];
    snprintf(field, sizeof field, "%sdepends_on", field_prefix ? field_prefix : "");
    sqlite3_stmt *stmt;
    int rc;
    for (size_t i = 0; i < spec->n_depends_on; i++) {
        int64_t p = spec->depends_on[i];
        if ((rc = sq_prepare(s,
                             "SELECT status FROM jobs WHERE id = ?1"
                             " UNION ALL SELECT status FROM jobs_done WHERE id = ?1"
                             " UNION ALL SELECT status FROM jobs_waiting WHERE id = ?1",
                             &stmt, err)) != JOBD_OK)
            return rc;
        sqlite3_bind_int64(stmt, 1, p);
        if ((rc = sq_step_row(s, stmt, "look up parent", err)) < 0)
            return rc;
        if (rc == 0)
            return jobd_error_set(err, JOBD_E_INVALID, field, "depends_on: no job with id %lld",
                                  (long long)p);
        enum job_status ps = JOB_PENDING;
        (void)job_status_parse((const char *)sqlite3_column_text(stmt, 0), &ps);
        sq_reset(stmt);
        if ((rc = sq_prepare(s,
                             "INSERT OR IGNORE INTO job_deps (parent, child, ended_status,"
                             " run_on_failure) VALUES (?1, ?2, ?3, ?4)",
                             &stmt, err)) != JOBD_OK)
            return rc;
        sqlite3_bind_int64(stmt, 1, p);
        sqlite3_bind_int64(stmt, 2, id);
        sq_bind_text(stmt, 3, job_status_terminal(ps) ? job_status_name(ps) : NULL);
        sqlite3_bind_int(stmt, 4, spec->run_on_parent_failure);
        if ((rc = sq_step_done(s, stmt, "insert dependency", err)) != JOBD_OK)
            return rc;
    }
    /* It was inserted pending: it waits, and settles at once if nothing is left to wait for. */
    if ((rc = run2(s,
                   "INSERT INTO jobs_waiting (" SQ_JOB_COLS ") SELECT id, queue, type, payload, "
                   "'waiting', priority, run_at, attempt, max_attempts, idempotency_key, schedule, "
                   "scheduled_for, NULL, NULL, timeout_ms, 0, last_error, result, created_at, "
                   "started_at, NULL, attempt_floor, traceparent, grp FROM jobs WHERE id = ?1",
                   id, 0, false, err)) != JOBD_OK ||
        (rc = run2(s, "DELETE FROM jobs WHERE id = ?1", id, 0, false, err)) != JOBD_OK)
        return rc;
    if ((rc = sq_prepare(s, "SELECT 1 FROM job_deps WHERE child = ?1 AND ended_status IS NULL",
                         &stmt, err)) != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, id);
    if ((rc = sq_step_row(s, stmt, "look up parents", err)) < 0)
        return rc;
    if (rc == 1) {
        sq_reset(stmt);
        return JOBD_OK;
    }
    return settle(s, id, now, err);
}

/* The workflow and step of v's jobs (store/workflow.h: workflow_steps). */
static int
workflow_attach(struct sqlite_store *s, struct job *v, size_t n, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc =
        sq_prepare(s, "SELECT workflow, ref FROM workflow_steps WHERE job_id = ?1", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(stmt, 1, v[i].id);
        if ((rc = sq_step_row(s, stmt, "read workflow step", err)) < 0)
            return rc;
        if (rc == 0)
            continue;
        v[i].workflow = sqlite3_column_int64(stmt, 0);
        free(v[i].step);
        const char *ref = (const char *)sqlite3_column_text(stmt, 1);
        v[i].step = strdup(ref ? ref : "");
        sq_reset(stmt);
        if (v[i].step == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    return JOBD_OK;
}

int
sq_op_deps_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT parent, run_on_failure FROM job_deps WHERE child = ?1"
                        " ORDER BY parent",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(stmt, 1, v[i].id);
        while ((rc = sq_step_row(s, stmt, "read dependencies", err)) == 1)
            if (store_deps_add(&v[i], 1, v[i].id, sqlite3_column_int64(stmt, 0),
                               sqlite3_column_int(stmt, 1) != 0) != JOBD_OK) {
                sq_reset(stmt);
                return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            }
        if (rc < 0)
            return rc;
    }
    return workflow_attach(s, v, n, err);
}

int
sq_deps_cancel_waiting(struct sqlite_store *s, int64_t id, int64_t now, struct jobd_error *err)
{
    int rc = run2(s,
                  "INSERT INTO jobs_done (" SQ_JOB_COLS ") SELECT id, queue, type, payload, "
                  "'cancelled', priority, run_at, attempt, max_attempts, idempotency_key, "
                  "schedule, scheduled_for, NULL, NULL, timeout_ms, 0, last_error, result, "
                  "created_at, started_at, ?2, attempt_floor, traceparent, grp FROM jobs_waiting "
                  "WHERE id = ?1",
                  id, now, true, err);
    if (rc != JOBD_OK)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return 0;
    rc = run2(s, "DELETE FROM jobs_waiting WHERE id = ?1", id, 0, false, err);
    return rc == JOBD_OK ? 1 : rc;
}

int
sq_op_parents_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    /*
     * One probe of job_deps_child per job: a job without parents costs that.
     * Each parent is looked up by id in the three tables (it is in one): a
     * join with their UNION ALL would read all three whole, per job.
     */
    int rc = sq_prepare(
        s,
        "SELECT json_group_array(json_object('id', d.parent, 'step', (SELECT ws.ref FROM"
        " workflow_steps ws WHERE ws.job_id = d.parent),"
        " 'type', coalesce(j.type, x.type, w.type), 'status', coalesce(j.status, x.status,"
        " w.status), 'result', json(coalesce(j.result, x.result, w.result))))"
        " FROM (SELECT parent FROM job_deps WHERE child = ?1 ORDER BY parent) d"
        " LEFT JOIN jobs j ON j.id = d.parent LEFT JOIN jobs_done x ON x.id = d.parent"
        " LEFT JOIN jobs_waiting w ON w.id = d.parent"
        " WHERE coalesce(j.id, x.id, w.id) IS NOT NULL HAVING count(*) > 0",
        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(stmt, 1, v[i].id);
        if ((rc = sq_step_row(s, stmt, "read parents", err)) < 0)
            return rc;
        if (rc == 0)
            continue;
        free(v[i].parents);
        v[i].parents = strdup((const char *)sqlite3_column_text(stmt, 0));
        sq_reset(stmt);
        if (v[i].parents == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    return JOBD_OK;
}
