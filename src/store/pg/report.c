/*
 * pg/report.c — a worker's reports on PostgreSQL: heartbeat,
 * complete, complete_batch, fail, and the reaper.
 *
 * Every report is ONE statement carrying the fence `status = 'running' AND
 * attempt = $a`, so a stale report changes nothing. A completion updates
 * the row in place (it stays in jobd.jobs, succeeded, until the archive
 * pass); a failure's data-modifying CTEs move the row to jobd.jobs_done or
 * back to pending in the statement that decides its fate. Split from pg/open.c by concern; the conventions are in
 * pg/internal.h.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/stats_int.h"
#include "store/pg/internal.h"

/*
 * $1 id, $2 attempt, $3 now: a claimed attempt given back unused. The row
 * goes back into jobs (the insert fires the NOTIFY of a due job) with
 * attempt_floor + 1, so the attempt is not counted; with a cancel requested
 * it ends cancelled instead. The attempt's history row says which
 * (store/operator.h). Returns one row when the fence matched.
 */
PG_STMT(
    st_release,
    "WITH d AS (DELETE FROM jobd.jobs WHERE id = $1::bigint AND status = 'running'"
    "           AND attempt = $2::int RETURNING *),"
    " h AS (INSERT INTO jobd.job_attempts (job_id, attempt, worker_id, started_at,"
    "                                     finished_at, outcome, error, lease_token_hash)"
    "       SELECT d.id, d.attempt, d.worker_id, d.started_at, " PG_NOW(
        "$3") ","
              "              CASE WHEN d.cancel_requested THEN 'cancelled' ELSE 'released' END, "
              "NULL, d.lease_token_hash"
              "       FROM d ON CONFLICT (job_id, attempt) DO NOTHING),"
              " back AS (INSERT INTO jobd.jobs (" PG_JOB_TABLE_COLS ") "
              "          SELECT d.id, d.queue, d.type, d.payload, 'pending', d.priority, " PG_NOW(
                  "$3") ", d.attempt, d.attempt_floor + 1, d.max_attempts, d.idempotency_key,"
                        "                 d.schedule, d.scheduled_for, NULL, NULL, d.timeout_ms, "
                        "false,"
                        "                 d.last_error, NULL, d.created_at, d.started_at, NULL, "
                        "d.traceparent, d.has_children, d.grp"
                        "          FROM d WHERE NOT d.cancel_requested RETURNING id),"
                        " done AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS
                        ") " PG_DONE_SELECT(
                            "'cancelled'", "NULL", "d.last_error",
                            PG_NOW("$3")) "          FROM d WHERE d.cancel_requested RETURNING id) "
                                          "SELECT id FROM back UNION ALL SELECT id FROM done");

/* ---- reports ---- */

/* $1 id, $2 attempt, $3 lease_ms, $4 now. */
PG_STMT(st_heartbeat,
        "UPDATE jobd.jobs SET lease_expires_at = " PG_NOW("$4") " + " PG_MS(
            "$3") " "
                  "WHERE id = $1::bigint AND status = 'running' AND attempt = $2::int "
                  "RETURNING " PG_TS_US("lease_expires_at") ", cancel_requested");

/*
 * A completion moves the row (migration 38, docs/DESIGN.md, Table layout,
 * round three): a DELETE from jobs fenced as before (status running, the
 * attempt), and an INSERT into jobs_done's partition of its day and status,
 * with its lease token hash (pg_op_lease_replayed). Its events, the release
 * of its dependants and its wake-up are CTEs of the statement, so no trigger
 * with a transition table fires: COMPLETE_AFTER over the moved rows u.
 */
/* clang-format off */
#define COMPLETE_MOVE(result, now)                                                      \
    "INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ", lease_token_hash) "             \
    "SELECT d.id, d.queue, d.type, d.payload, 'succeeded', d.priority, d.run_at,"       \
    "       d.attempt, d.attempt_floor, d.max_attempts, d.idempotency_key, d.schedule," \
    "       d.scheduled_for, d.worker_id, NULL, d.timeout_ms, d.cancel_requested,"      \
    "       d.last_error, " result ", d.created_at, d.started_at, " now ","             \
    "       d.traceparent, d.has_children, d.grp, d.lease_token_hash FROM d "
#define COMPLETE_AFTER(now)                                                             \
    PG_STATS_SUCCEEDED(now, "u") ","                                                    \
    PG_EVENTS_BATCH("u", "running", "succeeded") ","                                    \
    " dep AS (SELECT jobd.deps_succeeded_ids(array_agg(u.id), " now ") AS n"            \
    "         FROM u WHERE u.has_children HAVING count(*) > 0) "
/* clang-format on */

/* $1 id, $2 attempt, $3 result, $4 now. */
/* clang-format off */
PG_STMT(st_complete,
     "WITH d AS (DELETE FROM jobd.jobs j"
     "   WHERE j.id = $1::bigint AND j.status = 'running' AND j.attempt = $2::int RETURNING j.*),"
     " u AS (" COMPLETE_MOVE("$3::json", PG_NOW("$4")) "RETURNING *),"
     COMPLETE_AFTER(PG_NOW("$4"))
     "SELECT " PG_JOB_COLS("u.") " FROM u" PG_ENDED_WAKE("u") PG_DEPS_RAN);
/* clang-format on */

/*
 * $1 ids, $2 attempts, $3 results, $4 now: returns the (id, attempt) pairs
 * that matched. Each row finds its item with array_position (a scan of the
 * id array in C), not by joining unnest(): a generic plan guesses 10 rows
 * for the unnest and nests the loop, which re-scans the whole function for
 * every row (500 x 500 at the completer's batch size, ~100 ms a statement).
 * Only right while every id occurs once with one attempt: otherwise
 * st_complete_batch_join.
 */
/* clang-format off */
PG_STMT(st_complete_batch,
     "WITH d AS (DELETE FROM jobd.jobs j"
     "   WHERE j.id = ANY($1::bigint[]) AND j.status = 'running'"
     "     AND j.attempt = ($2::int[])[array_position($1::bigint[], j.id)] RETURNING j.*),"
     " u AS (" COMPLETE_MOVE("($3::json[])[array_position($1::bigint[], d.id)]", PG_NOW("$4"))
     "       RETURNING id, attempt, queue, type, has_children),"
     COMPLETE_AFTER(PG_NOW("$4"))
     "SELECT id, attempt FROM u" PG_ENDED_WAKE("u") PG_DEPS_RAN);
/* clang-format on */

/* The same by a join, for a batch in which one id comes with two attempts. */
/* clang-format off */
PG_STMT(st_complete_batch_join,
     "WITH d AS (DELETE FROM jobd.jobs j"
     "   USING (SELECT * FROM unnest($1::bigint[], $2::int[], $3::json[])"
     "          AS c(id, attempt, result)) c"
     "   WHERE j.id = ANY($1::bigint[]) AND j.id = c.id AND j.attempt = c.attempt"
     "     AND j.status = 'running' RETURNING j.*, c.result AS c_result),"
     " u AS (" COMPLETE_MOVE("d.c_result", PG_NOW("$4"))
     "       RETURNING id, attempt, queue, type, has_children),"
     COMPLETE_AFTER(PG_NOW("$4"))
     "SELECT id, attempt FROM u" PG_ENDED_WAKE("u") PG_DEPS_RAN);
/* clang-format on */

/*
 * The fate of a failed attempt, from the deleted row d: cancelled if asked,
 * pending while retryable with attempts left (counted since the last manual
 * retry: core/rules.h, job_has_attempts_left), else dead. Pending rows go
 * back into jobs in the same statement.
 */
#define FATE(retryable)                                                                            \
    "CASE WHEN d.cancel_requested THEN 'cancelled'"                                                \
    "     WHEN " retryable " AND d.attempt - d.attempt_floor < d.max_attempts"                     \
    "     THEN 'pending' ELSE 'dead' END"
/*
 * The attempt history row (store/operator.h) of an attempt that ended other
 * than in success, from x d: its outcome follows the job's fate (a reaped
 * attempt says so whatever the fate).
 */
#define HISTORY(outcome, error, now)                                                               \
    "INSERT INTO jobd.job_attempts (job_id, attempt, worker_id, started_at, finished_at,"          \
    "                               outcome, error, lease_token_hash) "                            \
    "SELECT d.id, d.attempt, d.worker_id, d.started_at, " now ", " outcome ", " error              \
    ", d.lease_token_hash FROM x d ON CONFLICT (job_id, attempt) DO NOTHING"
#define FAIL_OUTCOME "CASE d.fate WHEN 'pending' THEN 'failed' ELSE d.fate END"
#define BACK_TO_PENDING(run_at, error)                                                             \
    "INSERT INTO jobd.jobs (" PG_JOB_TABLE_COLS ") "                                               \
    "SELECT d.id, d.queue, d.type, d.payload, 'pending', d.priority, " run_at ","                  \
    "       d.attempt, d.attempt_floor, d.max_attempts, d.idempotency_key, d.schedule,"            \
    "       d.scheduled_for, NULL, NULL, d.timeout_ms, false, " error ", NULL,"                    \
    "       d.created_at, d.started_at, NULL, d.traceparent, d.has_children, d.grp FROM x d "      \
    "WHERE "                                                                                       \
    "d.fate = 'pending' "

/*
 * Full-jitter backoff in SQL over the attempts of x d counted since the last
 * manual retry, from base and cap in ms: random() * LEAST(cap, base * 2^n),
 * n = d.attempt - d.attempt_floor (job_retry_delay_ms in core/rules.h;
 * capped at 40 so 2^n stays a finite double), as an interval.
 */
#define BACKOFF_DELAY(base, cap)                                                                   \
    "random() * LEAST(" cap "::float8, " base "::float8 * power(2::float8,"                        \
    " LEAST(d.attempt - d.attempt_floor, 40))) * interval '1 millisecond'"

/*
 * $1 id, $2 attempt, $3 error, $4 retryable, $5 delay_ms (< 0: the backoff
 * of $7 base_ms and $8 cap_ms, from the row this statement deletes), $6 now.
 */
/* clang-format off */
PG_STMT(st_fail,
     "WITH d0 AS (DELETE FROM jobd.jobs WHERE id = $1::bigint AND status = 'running'"
     "            AND attempt = $2::int RETURNING *),"
     " x AS (SELECT d.*, " FATE("$4::boolean") " AS fate FROM d0 d),"
     PG_STATS_FATES(PG_NOW("$6"), "x") ","
     " h AS (" HISTORY(FAIL_OUTCOME, "$3::text", PG_NOW("$6")) "),"
     " back AS (" BACK_TO_PENDING(PG_NOW("$6") " + CASE WHEN $5::bigint >= 0 THEN " PG_MS("$5")
                                  " ELSE " BACKOFF_DELAY("$7", "$8") " END", "$3::text")
     "          RETURNING " PG_JOB_COLS("") "),"
     " done AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     PG_DONE_SELECT("d.fate", "NULL", "$3::text", PG_NOW("$6"))
     "          FROM x d WHERE d.fate <> 'pending' RETURNING " PG_JOB_COLS("") ") "
     "SELECT * FROM back UNION ALL SELECT * FROM done");
/* clang-format on */

/*
 * st_fail for many reports at once: $1 ids, $2 attempts, $3 errors, $4
 * retryable, $5 delay_ms (arrays, one element per report), $6 now. A
 * report sent twice deletes its row once (DELETE ... USING returns each
 * deleted row once), so it is applied once. Returns (id, attempt, status)
 * of each applied report.
 */
/* clang-format off */
PG_STMT(st_fail_batch,
     "WITH c AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::boolean[],"
     "                                $5::bigint[]) AS c(f_id, f_attempt, f_error, f_retryable,"
     "                                                   f_delay)),"
     " d0 AS (DELETE FROM jobd.jobs j USING c WHERE j.id = ANY($1::bigint[])"
     "            AND j.id = c.f_id AND j.attempt = c.f_attempt AND j.status = 'running'"
     "            RETURNING j.*, c.f_error, c.f_retryable, c.f_delay),"
     " x AS (SELECT d.*, " FATE("d.f_retryable") " AS fate FROM d0 d),"
     PG_STATS_FATES(PG_NOW("$6"), "x") ","
     " h AS (" HISTORY(FAIL_OUTCOME, "d.f_error", PG_NOW("$6")) "),"
     " back AS (" BACK_TO_PENDING(PG_NOW("$6") " + " PG_MS("d.f_delay"), "d.f_error")
     "          RETURNING id, attempt, status),"
     " done AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     PG_DONE_SELECT("d.fate", "NULL", "d.f_error", PG_NOW("$6"))
     "          FROM x d WHERE d.fate <> 'pending' RETURNING id, attempt, status) "
     "SELECT * FROM back UNION ALL SELECT * FROM done");
/* clang-format on */

/*
 * $1 limit, $2 base_ms, $3 cap_ms, $4 now. The locking sub-select is a
 * MATERIALIZED CTE so it runs exactly once: re-run on the inner side of a
 * join it would skip the rows this statement already deleted and hand out
 * more than the limit. The delay is BACKOFF_DELAY's. One row per lease
 * reaped, for the reaper's log line
 * (back and done run whether or not the answer reads them, as every
 * data-modifying WITH does).
 */
/* clang-format off */
PG_STMT(st_reap,
     "WITH due AS MATERIALIZED ("
     "   SELECT id FROM jobd.jobs WHERE status = 'running' AND lease_expires_at < " PG_NOW("$4")
     "    ORDER BY lease_expires_at LIMIT $1::int FOR UPDATE SKIP LOCKED),"
     " d0 AS (DELETE FROM jobd.jobs j WHERE j.id = ANY(ARRAY(SELECT id FROM due))"
     "            AND j.status = 'running' AND j.lease_expires_at < " PG_NOW("$4")
     "            RETURNING j.*),"
     " x AS (SELECT d.*, " FATE("true") " AS fate FROM d0 d),"
     PG_STATS_FATES(PG_NOW("$4"), "x") ","
     " h AS (" HISTORY("'reaped'", "'lease expired'", PG_NOW("$4")) "),"
     " back AS (" BACK_TO_PENDING(PG_NOW("$4") " + " BACKOFF_DELAY("$2", "$3"), "'lease expired'")
     "          RETURNING 1),"
     " done AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     PG_DONE_SELECT("d.fate", "NULL", "'lease expired'", PG_NOW("$4"))
     "          FROM x d WHERE d.fate <> 'pending' RETURNING 1) "
     "SELECT d.id, d.attempt, d.fate, d.type, d.queue, d.worker_id, d.traceparent FROM x d");
/* clang-format on */

/* ---- reports ---- */

int
pg_op_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
                int64_t *lease_expires_at_us, bool *cancel_requested, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char b[3][24], nowb[24];
    const char *vals[4] = {pg_i64(b[0], id), pg_i64(b[1], attempt), pg_i64(b[2], lease_ms),
                           pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_heartbeat, 4, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = job_error_stale(err, id, attempt);
    } else {
        if (lease_expires_at_us != NULL)
            *lease_expires_at_us = pg_get_i64(r, 0, 0);
        if (cancel_requested != NULL)
            *cancel_requested = PQgetvalue(r, 0, 1)[0] == 't';
    }
    PQclear(r);
    return rc;
}

/* Finishes a one-row report: the job into out, or stale when nothing matched. */
static int
report_result(PGresult *r, int64_t id, int32_t attempt, struct job *out, struct jobd_error *err)
{
    int rc = JOBD_OK;
    if (PQntuples(r) == 0)
        rc = job_error_stale(err, id, attempt);
    else if (out != NULL && pg_row_to_job(r, 0, 0, out) != JOBD_OK)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    PQclear(r);
    return rc;
}

int
pg_op_complete(struct store *st, int64_t id, int32_t attempt, const char *result, struct job *out,
               struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char b[2][24], nowb[24];
    const char *vals[4] = {pg_i64(b[0], id), pg_i64(b[1], attempt), result, pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_complete, 4, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    return report_result(r, id, attempt, out, err);
}

/*
 * The reports of a batch statement as mark_applied sees them, whatever
 * their struct: item i's id and attempt at base + i * size + the offsets.
 */
struct report_keys {
    const char *base;
    size_t size, id_off, attempt_off;
};
#define REPORT_KEYS(v, type)                                                                       \
    ((struct report_keys){(const char *)(v), sizeof(type), offsetof(type, id),                     \
                          offsetof(type, attempt)})

/*
 * The outcome of each report of a batch from the (id, attempt) rows, in
 * columns 0 and 1, of the statement that applied them: each row marks the
 * first report of its pair not yet marked JOBD_OK (and calls applied, if
 * not NULL, with that report's index and the row); every other report is
 * JOBD_E_STALE, so a report sent twice in one batch is applied once.
 */
static void
mark_applied(const PGresult *r, struct report_keys k, size_t n, int *outcome,
             void (*applied)(void *ctx, size_t item, const PGresult *r, int row), void *ctx)
{
    for (size_t i = 0; i < n; i++)
        outcome[i] = JOBD_E_STALE;
    for (int row = 0; row < PQntuples(r); row++) {
        int64_t id = pg_get_i64(r, row, 0);
        int32_t at = (int32_t)pg_get_i64(r, row, 1);
        for (size_t i = 0; i < n; i++) {
            const char *item = k.base + i * k.size;
            int64_t item_id;
            int32_t item_at;
            memcpy(&item_id, item + k.id_off, sizeof item_id);
            memcpy(&item_at, item + k.attempt_off, sizeof item_at);
            if (outcome[i] == JOBD_E_STALE && item_id == id && item_at == at) {
                outcome[i] = JOBD_OK;
                if (applied != NULL)
                    applied(ctx, i, r, row);
                break;
            }
        }
    }
}

static int
cmp_completion(const void *a, const void *b)
{
    const struct completion *x = a, *y = b;
    if (x->id != y->id)
        return (x->id > y->id) - (x->id < y->id);
    return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

/* Whether some id comes with two different attempts (st_complete_batch cannot take it). */
static bool
has_mixed_attempts(const struct completion *c, size_t n)
{
    struct completion *v = malloc(n * sizeof *v);
    if (v == NULL)
        return true; /* the join is right in every case */
    memcpy(v, c, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_completion);
    bool mixed = false;
    for (size_t i = 1; i < n && !mixed; i++)
        mixed = v[i].id == v[i - 1].id && v[i].attempt != v[i - 1].attempt;
    free(v);
    return mixed;
}

int
pg_op_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                     struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    bool mixed = has_mixed_attempts(c, n);
    struct pg_array a[3];
    for (int k = 0; k < 3; k++)
        pg_array_begin(&a[k]);
    for (size_t i = 0; i < n; i++) {
        pg_array_add_i64(&a[0], c[i].id, false);
        pg_array_add_i64(&a[1], c[i].attempt, false);
        pg_array_add_str(&a[2], c[i].result);
    }
    char nowb[24];
    const char *vals[4] = {pg_array_end(&a[0]), pg_array_end(&a[1]), pg_array_end(&a[2]),
                           pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc;
    if (vals[0] == NULL || vals[1] == NULL || vals[2] == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    else
        rc = pg_exec(s, mixed ? &st_complete_batch_join : &st_complete_batch, 4, vals, &r, err);
    if (rc == JOBD_OK)
        mark_applied(r, REPORT_KEYS(c, struct completion), n, outcome, NULL, NULL);
    PQclear(r);
    for (int k = 0; k < 3; k++)
        pg_array_fini(&a[k]);
    return rc;
}

/* bp's base and cap in ms into b[0] and b[1], the defaults for 0 or NULL (BACKOFF_DELAY's). */
static void
backoff_params(const struct backoff_policy *bp, char b[2][24])
{
    pg_i64(b[0], bp && bp->base_ms > 0 ? bp->base_ms : JOB_DEFAULT_BACKOFF_BASE_MS);
    pg_i64(b[1], bp && bp->cap_ms > 0 ? bp->cap_ms : JOB_DEFAULT_BACKOFF_CAP_MS);
}

int
pg_op_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
           int64_t retry_delay_ms, const struct backoff_policy *bp, struct job *out,
           struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char b[3][24], nowb[24], policy[2][24];
    backoff_params(bp, policy);
    const char *vals[8] = {pg_i64(b[0], id),
                           pg_i64(b[1], attempt),
                           job_error_tail(error),
                           retryable ? "true" : "false",
                           pg_i64(b[2], retry_delay_ms < 0 ? -1 : retry_delay_ms),
                           pg_now_param(s, nowb),
                           policy[0],
                           policy[1]};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_fail, 8, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    return report_result(r, id, attempt, out, err);
}

/* An applied failure report's new status, from column 2 of its row (ctx: the status array). */
static void
fail_status(void *ctx, size_t item, const PGresult *r, int row)
{
    enum job_status *status = ctx;
    if (job_status_parse(PQgetvalue(r, row, 2), &status[item]) != 0)
        status[item] = JOB_DEAD; /* not reached: the statement writes known names */
}

int
pg_op_fail_batch(struct store *st, const struct fail_report *f, size_t n, int *outcome,
                 enum job_status *status, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    struct pg_array a[5];
    for (int k = 0; k < 5; k++)
        pg_array_begin(&a[k]);
    for (size_t i = 0; i < n; i++) {
        pg_array_add_i64(&a[0], f[i].id, false);
        pg_array_add_i64(&a[1], f[i].attempt, false);
        pg_array_add_str(&a[2], f[i].error != NULL ? job_error_tail(f[i].error) : NULL);
        pg_array_add_str(&a[3], f[i].retryable ? "t" : "f");
        pg_array_add_i64(&a[4], f[i].retry_delay_ms, false);
    }
    char nowb[24];
    const char *vals[6] = {pg_array_end(&a[0]), pg_array_end(&a[1]), pg_array_end(&a[2]),
                           pg_array_end(&a[3]), pg_array_end(&a[4]), pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = JOBD_OK;
    for (int k = 0; k < 5 && rc == JOBD_OK; k++)
        if (vals[k] == NULL)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    if (rc == JOBD_OK && (rc = pg_exec(s, &st_fail_batch, 6, vals, &r, err)) == JOBD_OK)
        mark_applied(r, REPORT_KEYS(f, struct fail_report), n, outcome,
                     status != NULL ? fail_status : NULL, status);
    PQclear(r);
    for (int k = 0; k < 5; k++)
        pg_array_fini(&a[k]);
    return rc;
}

int
pg_op_reap(struct store *st, int limit, const struct backoff_policy *bp, struct reaped_job *out,
           size_t room, int *reaped, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char b[24], nowb[24], policy[2][24];
    backoff_params(bp, policy);
    const char *vals[4] = {pg_i64(b, limit > 0 ? limit : JOB_PAGE_MAX), policy[0], policy[1],
                           pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_reap, 4, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    for (int row = 0; out != NULL && row < rows && (size_t)row < room; row++) {
        struct reaped_job *o = &out[row];
        o->id = pg_get_i64(r, row, 0);
        o->attempt = (int32_t)pg_get_i64(r, row, 1);
        if (job_status_parse(PQgetvalue(r, row, 2), &o->now) != JOBD_OK)
            o->now = JOB_DEAD; /* not reached: FATE writes known names */
        snprintf(o->type, sizeof o->type, "%s", PQgetvalue(r, row, 3));
        snprintf(o->queue, sizeof o->queue, "%s", PQgetvalue(r, row, 4));
        snprintf(o->worker_id, sizeof o->worker_id, "%s", PQgetvalue(r, row, 5));
        snprintf(o->traceparent, sizeof o->traceparent, "%s", PQgetvalue(r, row, 6));
    }
    *reaped = rows;
    PQclear(r);
    return JOBD_OK;
}


int
pg_op_release(struct store *st, int64_t id, int32_t attempt, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char b[2][24], nowb[24];
    const char *vals[3] = {pg_i64(b[0], id), pg_i64(b[1], attempt), pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_release, 3, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    return report_result(r, id, attempt, NULL, err);
}
