/*
 * pg/admin.c — operator actions on PostgreSQL: cancel, retry and queue
 * pause (queue stats: pg/counts.c; retention: pg/prune.c).
 *
 * Cancel and retry are each one conditional statement; when it matches
 * nothing, the job is read to say why (not found, or its status forbids
 * it), and read again if it changed status in between. Split from
 * pg/open.c by concern; the conventions are in pg/internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

/* ---- operator actions ---- */

/*
 * $1 id, $2 now: pending or waiting -> cancelled, or running -> cancel
 * requested. A waiting job's row is in jobs_waiting (schema version 24).
 */
/* clang-format off */
PG_STMT(st_cancel,
    "WITH d AS (DELETE FROM jobd.jobs WHERE id = $1::bigint AND status = 'pending'"
    "           RETURNING *),"
    " w AS (DELETE FROM jobd.jobs_waiting WHERE id = $1::bigint RETURNING *),"
    " wgone AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
    PG_DONE_SELECT("'cancelled'", "NULL", "d.last_error", PG_NOW("$2"))
    "          FROM w d RETURNING " PG_JOB_COLS("") "),"
    " gone AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
    PG_DONE_SELECT("'cancelled'", "NULL", "d.last_error", PG_NOW("$2"))
    "          FROM d RETURNING " PG_JOB_COLS("") "),"
    " req AS (UPDATE jobd.jobs SET cancel_requested = true"
    "         WHERE id = $1::bigint AND status = 'running' RETURNING " PG_JOB_COLS("") ") "
    "SELECT * FROM gone UNION ALL SELECT * FROM req UNION ALL SELECT * FROM wgone");
/* clang-format on */

/* $1 id, $2 now: dead/cancelled -> pending with max_attempts fresh attempts. */
PG_STMT(st_retry,
        "WITH d AS (DELETE FROM jobd.jobs_done WHERE id = $1::bigint"
        "           AND status IN ('dead', 'cancelled') RETURNING *) "
        "INSERT INTO jobd.jobs (" PG_JOB_TABLE_COLS ") "
        "SELECT d.id, d.queue, d.type, d.payload, 'pending', d.priority, " PG_NOW(
            "$2") ","
                  "       d.attempt, d.attempt, d.max_attempts, d.idempotency_key, d.schedule,"
                  "       d.scheduled_for, NULL, NULL, d.timeout_ms, false, d.last_error, NULL,"
                  "       d.created_at, NULL, NULL, d.traceparent, d.has_children, d.grp FROM d "
                  "RETURNING " PG_JOB_COLS(""));

PG_STMT(st_queue_pause, "INSERT INTO jobd.queues (name, paused) VALUES ($1::text, $2::boolean) "
                        "ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused");

/* ---- operator actions ---- */

/* Why an action on job id matched nothing: it does not exist, or its status forbids it. */
static int
explain_miss(struct store_pg *s, int64_t id, enum job_action action, bool *transient,
             struct jobd_error *err)
{
    struct job j = {0};
    *transient = false;
    int rc = pg_op_get(&s->base, id, &j, err);
    if (rc != JOBD_OK)
        return rc;
    enum job_status status = j.status;
    job_fini(&j);
    if (job_action_allowed(action, status)) {
        *transient = true; /* it changed status under us: try again */
        return JOBD_E_STATE;
    }
    return job_error_refused(err, action, id, status);
}

static int
operator_action(struct store *st, const struct pg_stmt *stmt, enum job_action action, int64_t id,
                struct job *out, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    for (int tries = 0; tries < PG_ACTION_RACE_TRIES; tries++) {
        char b[24], nowb[24];
        const char *vals[2] = {pg_i64(b, id), pg_now_param(s, nowb)};
        PGresult *r = NULL;
        int rc = pg_exec(s, stmt, 2, vals, &r, err);
        if (rc != JOBD_OK)
            return rc;
        if (PQntuples(r) > 0) {
            rc = out ? pg_row_to_job(r, 0, 0, out) : JOBD_OK;
            PQclear(r);
            return rc == JOBD_OK ? rc : jobd_error_set(err, rc, NULL, "out of memory");
        }
        PQclear(r);
        bool transient;
        rc = explain_miss(s, id, action, &transient, err);
        if (!transient)
            return rc;
    }
    return jobd_error_set(err, JOBD_E_STATE, "status",
                          "job %lld keeps changing status; "
                          "try again",
                          (long long)id);
}

int
pg_op_cancel(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return operator_action(st, &st_cancel, JOB_ACTION_CANCEL, id, out, err);
}

int
pg_op_retry(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return operator_action(st, &st_retry, JOB_ACTION_RETRY, id, out, err);
}

int
pg_op_queue_pause(struct store *st, const char *queue, bool paused, struct jobd_error *err)
{
    const char *vals[2] = {queue, paused ? "true" : "false"};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_queue_pause, 2, vals, &r, err);
    PQclear(r);
    return rc;
}
