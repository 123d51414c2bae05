/*
 * sqlite/bulk.c — bulk actions (store_bulk_batch) on SQLite, and the job
 * filter's bindings shared with the job list.
 *
 * One batch is one BEGIN IMMEDIATE transaction: pick the newest matching
 * ids below the cursor, then a few set-based statements over those ids
 * (passed as one JSON array, read with json_each) apply the action where
 * the job's status allows it. Each statement repeats the single-job guard
 * in its WHERE, so a job's own transition and the bulk one agree. SQLite
 * serializes writers: a batch holds claims up for one batch, no longer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/sqlite/internal.h"

#define IN_IDS " id IN (SELECT value FROM json_each(?1))"

/* One statement of an action; count says how its changes() count. */
struct bulk_step {
    const char *sql; /* ?1 = the batch's ids (JSON array), ?2 = now */
    int count;       /* 0 not counted, 1 changed, 2 changed and cancelled */
};

static const struct bulk_step retry_steps[] = {
    {"INSERT INTO jobs (" SQ_JOB_COLS ") "
     "SELECT id, queue, type, payload, 'pending', priority, ?2, attempt, max_attempts, "
     "  idempotency_key, schedule, scheduled_for, worker_id, NULL, timeout_ms, 0, "
     "  last_error, NULL, created_at, started_at, NULL, attempt, traceparent, grp "
     "FROM jobs_done WHERE" IN_IDS " AND status IN ('dead', 'cancelled')",
     1},
    {"DELETE FROM jobs_done WHERE" IN_IDS " AND status IN ('dead', 'cancelled')", 0},
    {NULL, 0},
};

static const struct bulk_step cancel_steps[] = {
    {"INSERT INTO jobs_done (" SQ_JOB_COLS ") "
     "SELECT id, queue, type, payload, 'cancelled', priority, run_at, attempt, max_attempts, "
     "  idempotency_key, schedule, scheduled_for, worker_id, NULL, timeout_ms, "
     "  cancel_requested, last_error, result, created_at, started_at, ?2, attempt_floor, "
     "  traceparent, grp "
     "FROM jobs WHERE" IN_IDS " AND status = 'pending'",
     2},
    {"DELETE FROM jobs WHERE" IN_IDS " AND status = 'pending'", 0},
    {"UPDATE jobs SET cancel_requested = 1 WHERE" IN_IDS " AND status = 'running'", 1},
    /* waiting jobs (sqlite/deps.c) */
    {"INSERT INTO jobs_done (" SQ_JOB_COLS ") "
     "SELECT id, queue, type, payload, 'cancelled', priority, run_at, attempt, max_attempts, "
     "  idempotency_key, schedule, scheduled_for, worker_id, NULL, timeout_ms, "
     "  cancel_requested, last_error, result, created_at, started_at, ?2, attempt_floor, "
     "  traceparent, grp "
     "FROM jobs_waiting WHERE" IN_IDS,
     2},
    {"DELETE FROM jobs_waiting WHERE" IN_IDS, 0},
    {NULL, 0},
};

/* A job a waiting job depends on stays (docs/API.md, Deleting jobs). */
#define NO_WAITING_CHILD(t)                                                                        \
    " AND NOT EXISTS (SELECT 1 FROM job_deps x JOIN jobs_waiting y ON y.id = x.child"              \
    " WHERE x.parent = " t ".id)"
#define DELETABLE                                                                                  \
    "(SELECT id FROM jobs WHERE" IN_IDS " AND status = 'pending'" NO_WAITING_CHILD(                \
        "jobs") " UNION ALL SELECT id FROM jobs_done WHERE" IN_IDS                                 \
        NO_WAITING_CHILD("jobs_done") " UNION ALL SELECT id FROM jobs_waiting WHERE" IN_IDS        \
            NO_WAITING_CHILD("jobs_waiting") ")"
static const struct bulk_step delete_steps[] = {
    {"DELETE FROM job_deps WHERE child IN " DELETABLE " OR parent IN " DELETABLE, 0},
    {"DELETE FROM job_keys WHERE job_id IN " DELETABLE, 0},
    {"DELETE FROM enqueue_keys WHERE job_id IN " DELETABLE, 0},
    {"DELETE FROM job_attempts WHERE job_id IN " DELETABLE, 0},
    {"DELETE FROM job_progress WHERE job_id IN " DELETABLE, 0},
    {"DELETE FROM job_attempt_logs WHERE job_id IN " DELETABLE, 0},
    {"DELETE FROM jobs WHERE" IN_IDS " AND status = 'pending'" NO_WAITING_CHILD("jobs"), 1},
    {"DELETE FROM jobs_done WHERE" IN_IDS NO_WAITING_CHILD("jobs_done"), 1},
    {"DELETE FROM jobs_waiting WHERE" IN_IDS NO_WAITING_CHILD("jobs_waiting"), 1},
    {NULL, 0},
};

void
sq_filter_bind(sqlite3_stmt *stmt, const struct job_filter *f)
{
    if (f->status != STORE_ANY)
        sq_bind_text(stmt, 1, job_status_name((enum job_status)f->status));
    sq_bind_text(stmt, 2, f->queue);
    sq_bind_text(stmt, 3, f->type);
    sq_bind_text(stmt, 4, f->schedule);
    sq_bind_opt(stmt, 5, f->created_after_us);
    sq_bind_opt(stmt, 6, f->created_before_us);
    sq_bind_text(stmt, 7, f->key);
}

/* The newest n ids matching r below *cursor, into ids (room for n); returns how many or < 0. */
static int
pick(struct sqlite_store *s, const struct bulk_req *r, int n, int64_t cursor,
     const char *filter_ids, int64_t *ids, struct jobd_error *err)
{
#define PICK_WHERE                                                                                 \
    " WHERE" SQ_FILTER_WHERE                                                                       \
    " AND (?8 IS NULL OR id IN (SELECT value FROM json_each(?8))) AND id < ?9"
    static const char sql[] =
        "SELECT id FROM jobs" PICK_WHERE " UNION ALL SELECT id FROM jobs_done" PICK_WHERE
        " UNION ALL SELECT id FROM jobs_waiting" PICK_WHERE " ORDER BY id DESC LIMIT ?10";
#undef PICK_WHERE
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_filter_bind(stmt, &r->f);
    sq_bind_text(stmt, 8, filter_ids);
    sqlite3_bind_int64(stmt, 9, cursor > 0 ? cursor : INT64_MAX);
    sqlite3_bind_int(stmt, 10, n);
    int got = 0;
    while (got < n && (rc = sq_step_row(s, stmt, "pick jobs", err)) == 1)
        ids[got++] = sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    return rc < 0 ? rc : got;
}

/* Runs the action's steps over the batch's ids (JSON text) and counts. */
static int
apply(struct sqlite_store *s, const struct bulk_step *steps, const char *batch_ids,
      struct bulk_counts *c, struct jobd_error *err)
{
    int64_t now = sq_now(s);
    for (const struct bulk_step *k = steps; k->sql != NULL; k++) {
        sqlite3_stmt *stmt;
        int rc = sq_prepare(s, k->sql, &stmt, err);
        if (rc != JOBD_OK)
            return rc;
        sq_bind_text(stmt, 1, batch_ids);
        if (sqlite3_bind_parameter_count(stmt) >= 2)
            sqlite3_bind_int64(stmt, 2, now);
        if ((rc = sq_step_done(s, stmt, "bulk action", err)) != JOBD_OK)
            return rc;
        int changes = sqlite3_changes(s->db);
        if (k->count >= 1)
            c->changed += changes;
        if (k->count == 2)
            c->cancelled += changes;
    }
    return JOBD_OK;
}

int
sq_op_bulk_batch(struct store *st, const struct bulk_req *r, int n, int64_t *cursor,
                 struct bulk_counts *c, struct jobd_error *err)
{
    static const struct bulk_step *const steps[] = {retry_steps, cancel_steps, delete_steps};
    struct sqlite_store *s = sq_of(st);
    char *filter_ids = r->ids ? sq_ids_json(r->ids, r->n_ids) : NULL;
    int64_t *ids = malloc((size_t)n * sizeof *ids);
    char *batch_ids = NULL;
    int rc = JOBD_OK;
    if (ids == NULL || (r->ids != NULL && filter_ids == NULL)) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    if ((rc = sq_begin(s, err)) != JOBD_OK)
        goto out;
    int got = pick(s, r, n, *cursor, filter_ids, ids, err);
    if (got < 0) {
        rc = got;
    } else if (got > 0 && (batch_ids = sq_ids_json(ids, (size_t)got)) == NULL) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    } else {
        struct bulk_counts add = {.matched = got};
        rc = got > 0 ? apply(s, steps[r->action], batch_ids, &add, err) : JOBD_OK;
        if (rc == JOBD_OK && (rc = sq_commit(s, err)) == JOBD_OK) {
            c->matched += add.matched;
            c->changed += add.changed;
            c->cancelled += add.cancelled;
            *cursor = got < n ? 0 : ids[got - 1];
        }
    }
    if (rc != JOBD_OK)
        sq_rollback(s);
out:
    free(filter_ids);
    free(batch_ids);
    free(ids);
    return rc;
}
