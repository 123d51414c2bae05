/*
 * pg/admin.c — operator actions on PostgreSQL: cancel, retry, queue
 * pause and queue stats (retention: pg/prune.c).
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

/*
 * Queue counts come from jobd.queue_counts, a cache every server shares
 * (migration 4). Requests only read it (st_queue_stats): the recount is the
 * one statement here whose cost grows with the backlog, so it runs in the
 * background (pg_op_counts_refresh, called by each server's counts thread,
 * src/api/countsd.c), at most once per max age over all servers: an
 * advisory lock keeps it to one recount at a time, and a server that finds
 * the cache fresh (another server just recounted) does nothing. Only a
 * cache that was never filled is filled on the request path, once.
 */
#define PG_COUNTS_LOCK "7316048275123" /* advisory lock key: one recount at a time */

/* $1 now, $2 max age in ms: whether the cache is older than that. */
PG_STMT(st_counts_stale,
        "SELECT computed_at <= " PG_NOW("$1") " - " PG_MS("$2") " FROM jobd.queue_counts_meta");

/* $1 now, $2 max age in ms: in the recount's transaction, true if this server should recount. */
PG_STMT(st_counts_claim,
        "SELECT pg_try_advisory_xact_lock(" PG_COUNTS_LOCK
        ") AND computed_at <= " PG_NOW("$1") " - " PG_MS("$2") " FROM jobd.queue_counts_meta");

PG_STMT(st_counts_clear, "DELETE FROM jobd.queue_counts");

/* $1 now. Succeeded jobs may be in both tables (until archived): their counts add up. */
/* clang-format off */
PG_STMT(st_counts_fill,
     "WITH f AS (INSERT INTO jobd.queue_counts (queue, status, n, oldest)"
     "  SELECT queue, status, sum(n), min(oldest) FROM ("
     "    SELECT queue, status, count(*) AS n,"
     "           min(run_at) FILTER (WHERE status = 'pending') AS oldest"
     "      FROM jobd.jobs GROUP BY queue, status"
     "    UNION ALL SELECT queue, status, count(*), NULL FROM jobd.jobs_done"
     "      GROUP BY queue, status"
     "    UNION ALL SELECT queue, status, count(*), NULL FROM jobd.jobs_waiting"
     "      GROUP BY queue, status) c GROUP BY queue, status RETURNING 1) "
     "UPDATE jobd.queue_counts_meta SET computed_at = " PG_NOW("$1"));
/* clang-format on */

/* $1 now: (queue, paused, status, count, oldest due pending age in us), by queue. */
PG_STMT(st_queue_stats,
        "SELECT s.name, COALESCE(q.paused, false), s.status, s.n, s.age_us FROM ("
        "  SELECT queue AS name, status, n,"
        "         CASE WHEN oldest <= " PG_NOW(
            "$1") " THEN"
                  "           " PG_TS_US(PG_NOW("$1")) " - " PG_TS_US(
                      "oldest") " END AS age_us"
                                "    FROM jobd.queue_counts WHERE n > 0"
                                "  UNION ALL SELECT name, NULL, 0, NULL FROM jobd.queues) s "
                                "LEFT JOIN jobd.queues q ON q.name = s.name ORDER BY s.name");

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

/* Whether the cache is older than vals' max age ($2). */
static int
counts_stale(struct store_pg *s, const char *const *vals, bool *stale, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_counts_stale, 2, vals, &r, err);
    *stale = rc == JOBD_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return rc;
}

/* Recounts the queue_counts cache, unless another server is doing it right now. */
static int
recount(struct store_pg *s, const char *const *vals, bool *mine, struct jobd_error *err)
{
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    PGresult *r = NULL;
    rc = pg_exec(s, &st_counts_claim, 2, vals, &r, err);
    *mine = rc == JOBD_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (rc == JOBD_OK && *mine &&
        (rc = pg_exec(s, &st_counts_clear, 0, NULL, &r, err)) == JOBD_OK) {
        PQclear(r);
        if ((rc = pg_exec(s, &st_counts_fill, 1, vals, &r, err)) == JOBD_OK)
            PQclear(r);
    }
    if (rc != JOBD_OK)
        *mine = false;
    return pg_tx_end(s, rc, err);
}

int
pg_op_counts_refresh(struct store *st, int64_t max_age_ms, bool *recounted, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char nowb[24], ageb[24];
    const char *vals[2] = {pg_now_param(s, nowb), pg_i64(ageb, max_age_ms > 0 ? max_age_ms : 0)};
    bool stale = false;
    *recounted = false;
    int rc = counts_stale(s, vals, &stale, err);
    if (rc == JOBD_OK && stale)
        rc = recount(s, vals, recounted, err);
    return rc;
}

int
pg_op_queue_stats(struct store *st, struct queue_stat **out, size_t *n, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char nowb[24], ageb[24];
    /* An age no cache has but one never filled ('-infinity'): filled here, once. */
    const char *vals[2] = {pg_now_param(s, nowb), pg_i64(ageb, 1000LL * 3600 * 24 * 365 * 1000)};
    bool never = false, mine = false;
    PGresult *r = NULL;
    int rc = counts_stale(s, vals, &never, err);
    if (rc == JOBD_OK && never)
        rc = recount(s, vals, &mine, err);
    if (rc == JOBD_OK)
        rc = pg_exec(s, &st_queue_stats, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    struct queue_stat *v = calloc(rows > 0 ? (size_t)rows : 1, sizeof *v);
    if (v == NULL) {
        PQclear(r);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    size_t k = 0;
    for (int row = 0; row < rows; row++) {
        const char *name = PQgetvalue(r, row, 0);
        if (k == 0 || strcmp(v[k - 1].name, name) != 0) {
            snprintf(v[k].name, sizeof v[k].name, "%s", name);
            v[k].paused = PQgetvalue(r, row, 1)[0] == 't';
            k++;
        }
        struct queue_stat *q = &v[k - 1];
        enum job_status status;
        if (!PQgetisnull(r, row, 2) && job_status_parse(PQgetvalue(r, row, 2), &status) == JOBD_OK)
            q->count[status] += pg_get_i64(r, row, 3);
        if (!PQgetisnull(r, row, 4)) { /* NULL: none due (st_queue_stats) */
            q->any_due = true;
            q->oldest_pending_age_s = (double)pg_get_i64(r, row, 4) / 1e6;
        }
    }
    PQclear(r);
    if ((rc = pg_qlimits_fill(s, v, k, err)) != JOBD_OK) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return JOBD_OK;
}
