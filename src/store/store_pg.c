/*
 * store_pg.c — the job operations of store.h on PostgreSQL (libpq).
 *
 * Every transition is ONE statement: data-modifying CTEs move a row between
 * jobd.jobs (pending/running, the hot set) and jobd.jobs_done (terminal) in
 * the same statement that decides its fate, and every report carries the
 * fence `status = 'running' AND attempt = $a`. Claims lock with FOR UPDATE
 * SKIP LOCKED, so claimers never wait for each other and never share a job.
 * Parameters are text; times are bigint microseconds (see store_pg_int.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/store_pg.h"
#include "store/store_pg_int.h"

#define STMT(n, s) static const struct pg_stmt n = {#n, s}

/* ---- enqueue ---- */

/*
 * $1 type, $2 payload, $3 queue, $4 priority, $5 run_at_us, $6 max_attempts,
 * $7 key, $8 timeout_ms, $9 schedule, $10 scheduled_for_us, $11 now_us.
 * With a key, the key row is claimed first (ON CONFLICT DO NOTHING waits for
 * a concurrent inserter of the same key to finish); no row back means the key
 * was taken and the caller looks up the holder (st_key_holder).
 */
STMT(st_enqueue,
     "WITH k AS (INSERT INTO jobd.job_keys (idempotency_key, job_id)"
     "           SELECT $7::text, nextval('jobd.job_id_seq') WHERE $7::text IS NOT NULL"
     "           ON CONFLICT (idempotency_key) DO NOTHING RETURNING job_id) "
     "INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at, attempt,"
     "                       attempt_floor, max_attempts, idempotency_key, schedule,"
     "                       scheduled_for, timeout_ms, created_at) "
     "SELECT COALESCE((SELECT job_id FROM k), nextval('jobd.job_id_seq')), $3::text, $1::text,"
     "       $2::json, 'pending', $4::int, COALESCE(" PG_US_TS("$5") ", " PG_NOW("$11") "),"
     "       0, 0, $6::int, $7::text, $9::text, " PG_US_TS("$10") ", $8::bigint, "
     PG_NOW("$11") " WHERE $7::text IS NULL OR EXISTS (SELECT 1 FROM k) "
     "RETURNING " PG_JOB_COLS(""));

/* $1 key, $2 type, $3 queue, $4 payload: the job holding a key, and whether it matches. */
STMT(st_key_holder,
     "SELECT " PG_JOB_COLS("a.") ", (a.type = $2::text AND a.queue = $3::text"
     "        AND a.payload::jsonb = $4::jsonb) AS same "
     "FROM jobd.all_jobs a WHERE a.id = (SELECT job_id FROM jobd.job_keys"
     "                                   WHERE idempotency_key = $1::text)");

STMT(st_next_ids, "SELECT nextval('jobd.job_id_seq') FROM generate_series(1, $1::int)");

/*
 * A batch as one statement over arrays: $1 ids (preallocated, ascending in
 * batch order) ... $10 scheduled_for, $11 now, $12 keys. Keys are claimed in
 * batch order, so of two items with one key the first wins; an item whose
 * key was taken is left out (its id is missing from the result) and the
 * caller resolves it inside the same transaction.
 */
STMT(st_enqueue_many,
     "WITH t AS (SELECT * FROM unnest($1::bigint[], $2::text[], $3::json[], $4::text[],"
     "                                $5::int[], $6::bigint[], $7::int[], $8::bigint[],"
     "                                $9::text[], $10::bigint[], $12::text[])"
     "           AS t(id, type, payload, queue, priority, run_at, max_attempts, timeout_ms,"
     "                schedule, sched, key)),"
     " k AS (INSERT INTO jobd.job_keys (idempotency_key, job_id)"
     "       SELECT key, id FROM t WHERE key IS NOT NULL ORDER BY id"
     "       ON CONFLICT (idempotency_key) DO NOTHING RETURNING job_id) "
     "INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at, attempt,"
     "                       attempt_floor, max_attempts, idempotency_key, schedule,"
     "                       scheduled_for, timeout_ms, created_at) "
     "SELECT t.id, t.queue, t.type, t.payload, 'pending', t.priority,"
     "       COALESCE(" PG_US_TS("t.run_at") ", " PG_NOW("$11") "), 0, 0, t.max_attempts,"
     "       t.key, t.schedule, " PG_US_TS("t.sched") ", t.timeout_ms, " PG_NOW("$11") " "
     "FROM t WHERE t.key IS NULL OR t.id IN (SELECT job_id FROM k) "
     "RETURNING " PG_JOB_COLS(""));

/*
 * The same without keys, in one round trip: ids come from nextval in batch
 * order (the rows are sorted by ordinality before the projection that calls
 * it), so the k-th smallest returned id is item k. $1 and $12 (ids, keys)
 * are passed as NULL to keep one parameter layout.
 */
STMT(st_enqueue_many_nokey,
     "WITH t AS (SELECT * FROM unnest($2::text[], $3::json[], $4::text[],"
     "                                $5::int[], $6::bigint[], $7::int[], $8::bigint[],"
     "                                $9::text[], $10::bigint[]) WITH ORDINALITY"
     "           AS t(type, payload, queue, priority, run_at, max_attempts, timeout_ms,"
     "                schedule, sched, ord)) "
     "INSERT INTO jobd.jobs (id, queue, type, payload, status, priority, run_at, attempt,"
     "                       attempt_floor, max_attempts, idempotency_key, schedule,"
     "                       scheduled_for, timeout_ms, created_at) "
     "SELECT nextval('jobd.job_id_seq'), t.queue, t.type, t.payload, 'pending', t.priority,"
     "       COALESCE(" PG_US_TS("t.run_at") ", " PG_NOW("$11") "), 0, 0, t.max_attempts,"
     "       NULL, t.schedule, " PG_US_TS("t.sched") ", t.timeout_ms, " PG_NOW("$11") " "
     "FROM (SELECT * FROM t ORDER BY ord) t "
     "WHERE $1::bigint[] IS NULL AND $12::text[] IS NULL "
     "RETURNING " PG_JOB_COLS(""));

/* ---- reads ---- */

STMT(st_get, "SELECT " PG_JOB_COLS("") " FROM jobd.all_jobs WHERE id = $1::bigint");

/* $1 status, $2 queue, $3 type, $4 schedule (NULL = any), $5 before_id (0 = none), $6 limit. */
STMT(st_list,
     "SELECT " PG_JOB_COLS("") " FROM jobd.all_jobs "
     "WHERE ($1::text IS NULL OR status = $1::text) AND ($2::text IS NULL OR queue = $2::text)"
     "  AND ($3::text IS NULL OR type = $3::text) AND ($4::text IS NULL OR schedule = $4::text)"
     "  AND ($5::bigint = 0 OR id < $5::bigint) "
     "ORDER BY id DESC LIMIT $6::int");

/* ---- claims ---- */

/*
 * $1 worker, $2 limit, $3 lease_ms, $4 types (NULL = any), $5 now, [$6 queues].
 * Without queues the ordered scan is jobs_claim_any; with queues, one ordered
 * scan of jobs_claim_queue per queue (LATERAL), merged and cut to the limit.
 * The returned rows are in no particular order: the caller sorts them.
 * `due` is MATERIALIZED so the locking LIMIT runs once (see st_reap), and
 * the rows are then found by primary key (= ANY(ARRAY(...))): joining the
 * CTE instead lets a generic plan guess 10% of the table and hash-join a
 * sequential scan of jobs.
 */
#define CLAIM_SET                                                                       \
    "UPDATE jobd.jobs j SET status = 'running', attempt = j.attempt + 1,"               \
    "       worker_id = $1::text, lease_expires_at = " PG_NOW("$5") " + " PG_MS("$3") "," \
    "       started_at = " PG_NOW("$5") " "                                             \
    "WHERE j.id = ANY(ARRAY(SELECT id FROM due)) "                                      \
    "RETURNING " PG_JOB_COLS("j.")

STMT(st_claim_any,
     "WITH due AS MATERIALIZED ("
     "  SELECT id FROM jobd.jobs"
     "   WHERE status = 'pending' AND run_at <= " PG_NOW("$5")
     "     AND ($4::text[] IS NULL OR type = ANY($4::text[]))"
     "     AND queue NOT IN (SELECT name FROM jobd.queues WHERE paused)"
     "   ORDER BY priority DESC, run_at, id LIMIT $2::int FOR UPDATE SKIP LOCKED) "
     CLAIM_SET);

STMT(st_claim_queues,
     "WITH due AS MATERIALIZED ("
     "  SELECT c.id FROM (SELECT DISTINCT unnest($6::text[]) AS name) qn"
     "  CROSS JOIN LATERAL ("
     "    SELECT id, priority, run_at FROM jobd.jobs"
     "     WHERE queue = qn.name AND status = 'pending' AND run_at <= " PG_NOW("$5")
     "       AND ($4::text[] IS NULL OR type = ANY($4::text[]))"
     "     ORDER BY priority DESC, run_at, id LIMIT $2::int FOR UPDATE SKIP LOCKED) c"
     "  WHERE NOT EXISTS (SELECT 1 FROM jobd.queues p WHERE p.name = qn.name AND p.paused)"
     "  ORDER BY c.priority DESC, c.run_at, c.id LIMIT $2::int) "
     CLAIM_SET);

/* ---- reports ---- */

/* $1 id, $2 attempt, $3 lease_ms, $4 now. */
STMT(st_heartbeat,
     "UPDATE jobd.jobs SET lease_expires_at = " PG_NOW("$4") " + " PG_MS("$3") " "
     "WHERE id = $1::bigint AND status = 'running' AND attempt = $2::int "
     "RETURNING " PG_TS_US("lease_expires_at") ", cancel_requested");

/* The columns of a row moved to jobs_done from CTE d, with status/result/error given. */
#define DONE_SELECT(status, result, error, now)                                         \
    "SELECT d.id, d.queue, d.type, d.payload, " status ", d.priority, d.run_at,"        \
    "       d.attempt, d.attempt_floor, d.max_attempts, d.idempotency_key, d.schedule,"  \
    "       d.scheduled_for, d.worker_id, NULL, d.timeout_ms, d.cancel_requested, "     \
    error ", " result ", d.created_at, d.started_at, " now " "

/* $1 id, $2 attempt, $3 result, $4 now. */
STMT(st_complete,
     "WITH d AS (DELETE FROM jobd.jobs WHERE id = $1::bigint AND status = 'running'"
     "           AND attempt = $2::int RETURNING *) "
     "INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     DONE_SELECT("'succeeded'", "$3::json", "d.last_error", PG_NOW("$4")) "FROM d "
     "RETURNING " PG_JOB_COLS(""));

/*
 * $1 ids, $2 attempts, $3 results, $4 now: returns the (id, attempt) pairs
 * that matched. Each row finds its item with array_position (a scan of the
 * id array in C), not by joining unnest(): a generic plan guesses 10 rows
 * for the unnest and nests the loop, which re-scans the whole function for
 * every row (500 x 500 at the completer's batch size, ~100 ms a statement).
 * Only right while every id occurs once with one attempt: otherwise
 * st_complete_batch_join.
 */
STMT(st_complete_batch,
     "WITH d AS (DELETE FROM jobd.jobs j WHERE j.id = ANY($1::bigint[])"
     "       AND j.status = 'running'"
     "       AND j.attempt = ($2::int[])[array_position($1::bigint[], j.id)]"
     "       RETURNING j.*, ($3::json[])[array_position($1::bigint[], j.id)] AS new_result) "
     "INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     DONE_SELECT("'succeeded'", "d.new_result", "d.last_error", PG_NOW("$4")) "FROM d "
     "RETURNING id, attempt");

/* The same by a join, for a batch in which one id comes with two attempts. */
STMT(st_complete_batch_join,
     "WITH c AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::json[])"
     "           AS c(id, attempt, result)),"
     " d AS (DELETE FROM jobd.jobs j USING c WHERE j.id = ANY($1::bigint[])"
     "       AND j.id = c.id AND j.attempt = c.attempt"
     "       AND j.status = 'running' RETURNING j.*, c.result AS new_result) "
     "INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     DONE_SELECT("'succeeded'", "d.new_result", "d.last_error", PG_NOW("$4")) "FROM d "
     "RETURNING id, attempt");

/*
 * The fate of a failed attempt, from the deleted row d: cancelled if asked,
 * pending while retryable with attempts left (counted since the last manual
 * retry), else dead. Pending rows go back into jobs in the same statement.
 */
#define FATE(retryable)                                                                 \
    "CASE WHEN d.cancel_requested THEN 'cancelled'"                                     \
    "     WHEN " retryable " AND d.attempt - d.attempt_floor < d.max_attempts"          \
    "     THEN 'pending' ELSE 'dead' END"
#define BACK_TO_PENDING(run_at, error)                                                  \
    "INSERT INTO jobd.jobs (" PG_JOB_TABLE_COLS ") "                                    \
    "SELECT d.id, d.queue, d.type, d.payload, 'pending', d.priority, " run_at ","        \
    "       d.attempt, d.attempt_floor, d.max_attempts, d.idempotency_key, d.schedule,"  \
    "       d.scheduled_for, NULL, NULL, d.timeout_ms, false, " error ", NULL,"         \
    "       d.created_at, d.started_at, NULL FROM x d WHERE d.fate = 'pending' "

/* $1 id, $2 attempt, $3 error, $4 retryable, $5 delay_ms, $6 now. */
STMT(st_fail,
     "WITH d0 AS (DELETE FROM jobd.jobs WHERE id = $1::bigint AND status = 'running'"
     "            AND attempt = $2::int RETURNING *),"
     " x AS (SELECT d.*, " FATE("$4::boolean") " AS fate FROM d0 d),"
     " back AS (" BACK_TO_PENDING(PG_NOW("$6") " + " PG_MS("$5"), "$3::text")
     "          RETURNING " PG_JOB_COLS("") "),"
     " done AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     DONE_SELECT("d.fate", "NULL", "$3::text", PG_NOW("$6"))
     "          FROM x d WHERE d.fate <> 'pending' RETURNING " PG_JOB_COLS("") ") "
     "SELECT * FROM back UNION ALL SELECT * FROM done");

/*
 * $1 limit, $2 base_ms, $3 cap_ms, $4 now. The locking sub-select is a
 * MATERIALIZED CTE so it runs exactly once: re-run on the inner side of a
 * join it would skip the rows this statement already deleted and hand out
 * more than the limit. Full-jitter backoff in SQL:
 * random() * LEAST(cap, base * 2^n), n = attempts since the last manual retry
 * (capped at 40 so 2^n stays a finite double).
 */
STMT(st_reap,
     "WITH due AS MATERIALIZED ("
     "   SELECT id FROM jobd.jobs WHERE status = 'running' AND lease_expires_at < " PG_NOW("$4")
     "    ORDER BY lease_expires_at LIMIT $1::int FOR UPDATE SKIP LOCKED),"
     " d0 AS (DELETE FROM jobd.jobs j WHERE j.id = ANY(ARRAY(SELECT id FROM due))"
     "            AND j.status = 'running' AND j.lease_expires_at < " PG_NOW("$4")
     "            RETURNING j.*),"
     " x AS (SELECT d.*, " FATE("true") " AS fate FROM d0 d),"
     " back AS (" BACK_TO_PENDING(PG_NOW("$4") " + random() * LEAST($3::float8,"
                                  " $2::float8 * power(2::float8,"
                                  " LEAST(d.attempt - d.attempt_floor, 40)))"
                                  " * interval '1 millisecond'", "'lease expired'")
     "          RETURNING 1),"
     " done AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     DONE_SELECT("d.fate", "NULL", "'lease expired'", PG_NOW("$4"))
     "          FROM x d WHERE d.fate <> 'pending' RETURNING 1) "
     "SELECT (SELECT count(*) FROM back), (SELECT count(*) FROM done)");

/* ---- operator actions ---- */

/* $1 id, $2 now: pending -> cancelled, or running -> cancel requested. */
STMT(st_cancel,
     "WITH d AS (DELETE FROM jobd.jobs WHERE id = $1::bigint AND status = 'pending'"
     "           RETURNING *),"
     " gone AS (INSERT INTO jobd.jobs_done (" PG_JOB_TABLE_COLS ") "
     DONE_SELECT("'cancelled'", "NULL", "d.last_error", PG_NOW("$2"))
     "          FROM d RETURNING " PG_JOB_COLS("") "),"
     " req AS (UPDATE jobd.jobs SET cancel_requested = true"
     "         WHERE id = $1::bigint AND status = 'running' RETURNING " PG_JOB_COLS("") ") "
     "SELECT * FROM gone UNION ALL SELECT * FROM req");

/* $1 id, $2 now: dead/cancelled -> pending with max_attempts fresh attempts. */
STMT(st_retry,
     "WITH d AS (DELETE FROM jobd.jobs_done WHERE id = $1::bigint"
     "           AND status IN ('dead', 'cancelled') RETURNING *) "
     "INSERT INTO jobd.jobs (" PG_JOB_TABLE_COLS ") "
     "SELECT d.id, d.queue, d.type, d.payload, 'pending', d.priority, " PG_NOW("$2") ","
     "       d.attempt, d.attempt, d.max_attempts, d.idempotency_key, d.schedule,"
     "       d.scheduled_for, NULL, NULL, d.timeout_ms, false, d.last_error, NULL,"
     "       d.created_at, NULL, NULL FROM d "
     "RETURNING " PG_JOB_COLS(""));

STMT(st_queue_pause,
     "INSERT INTO jobd.queues (name, paused) VALUES ($1::text, $2::boolean) "
     "ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused");

/* $1 now: (queue, paused, status, count, oldest due pending age in us), by queue. */
STMT(st_queue_stats,
     "SELECT s.name, COALESCE(q.paused, false), s.status, s.n, s.age_us FROM ("
     "  SELECT queue AS name, status, count(*) AS n,"
     "         " PG_TS_US(PG_NOW("$1")) " - "
     "         " PG_TS_US("min(run_at) FILTER (WHERE status = 'pending' AND run_at <= "
                          PG_NOW("$1") ")") " AS age_us"
     "    FROM jobd.jobs GROUP BY queue, status"
     "  UNION ALL SELECT queue, status, count(*), NULL FROM jobd.jobs_done"
     "    GROUP BY queue, status"
     "  UNION ALL SELECT name, NULL, 0, NULL FROM jobd.queues) s "
     "LEFT JOIN jobd.queues q ON q.name = s.name ORDER BY s.name");

/* $1 cutoff_us, $2 limit: deletes old terminal jobs and frees their keys. */
STMT(st_prune,
     "WITH d AS (DELETE FROM jobd.jobs_done WHERE id IN ("
     "             SELECT id FROM jobd.jobs_done WHERE finished_at < " PG_US_TS("$1")
     "              ORDER BY finished_at LIMIT $2::int)"
     "           RETURNING id, idempotency_key),"
     " k AS (DELETE FROM jobd.job_keys jk USING d"
     "       WHERE jk.idempotency_key = d.idempotency_key AND jk.job_id = d.id) "
     "SELECT count(*) FROM d");

/* $1 types, $2 queues (NULL = any). */
STMT(st_next_run_at,
     "SELECT " PG_TS_US("min(run_at)") " FROM jobd.jobs "
     "WHERE status = 'pending' AND ($1::text[] IS NULL OR type = ANY($1::text[]))"
     "  AND ($2::text[] IS NULL OR queue = ANY($2::text[]))"
     "  AND queue NOT IN (SELECT name FROM jobd.queues WHERE paused)");

static struct store_pg *
pgs(struct store *st)
{
    return (struct store_pg *)st;
}

/* ---- migrate, ping, close ---- */

/* An arbitrary fixed key for pg_advisory_xact_lock: "jobd" + "mig". */
#define MIGRATE_LOCK_KEY "6a6f6264006d6967"

static int
pg_migrate(struct store *st, struct jobd_error *err)
{
    static const struct pg_stmt st_mig_version = {
        "st_mig_version", "SELECT COALESCE(max(version), 0) FROM jobd.schema_migrations"};
    static const struct pg_stmt st_mig_insert = {
        "st_mig_insert", "INSERT INTO jobd.schema_migrations (version, name) "
                         "VALUES ($1::int, $2::text)"};
    struct store_pg *s = pgs(st);
    int rc = pg_exec_simple(s, "BEGIN", err);
    if (rc != JOBD_OK)
        return rc;
    rc = pg_exec_simple(s,
                        "SELECT pg_advisory_xact_lock(x'" MIGRATE_LOCK_KEY "'::bigint);"
                        "CREATE SCHEMA IF NOT EXISTS jobd;"
                        "CREATE TABLE IF NOT EXISTS jobd.schema_migrations ("
                        "  version int PRIMARY KEY, name text NOT NULL,"
                        "  applied_at timestamptz NOT NULL DEFAULT now())",
                        err);
    PGresult *r = NULL;
    if (rc == JOBD_OK)
        rc = pg_exec(s, &st_mig_version, 0, NULL, &r, err);
    int have = rc == JOBD_OK ? (int)pg_get_i64(r, 0, 0) : 0;
    PQclear(r);
    for (size_t i = 0; rc == JOBD_OK && i < pg_migrations_count; i++) {
        const struct pg_migration *m = &pg_migrations[i];
        if (m->version <= have)
            continue;
        rc = pg_exec_simple(s, m->sql, err);
        if (rc != JOBD_OK) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            rc = jobd_error_set(err, rc, "db", "migration %d (%s) failed: %s", m->version,
                                m->name, msg);
            break;
        }
        char v[24];
        const char *vals[2] = {pg_i64(v, m->version), m->name};
        rc = pg_exec(s, &st_mig_insert, 2, vals, &r, err);
        PQclear(r);
    }
    if (rc == JOBD_OK)
        return pg_exec_simple(s, "COMMIT", err);
    (void)pg_exec_simple(s, "ROLLBACK", NULL);
    return rc;
}

static int
pg_ping(struct store *st, struct jobd_error *err)
{
    return pg_exec_simple(pgs(st), "SELECT 1", err);
}

static void
pg_close(struct store *st)
{
    struct store_pg *s = pgs(st);
    PQfinish(s->conn);
    free(s);
}

/* ---- enqueue ---- */

/* Pointers into the spec with the defaults applied. */
struct spec_vals {
    const char *payload, *queue;
    int32_t max_attempts;
};

static struct spec_vals
spec_defaults(const struct job_spec *sp)
{
    return (struct spec_vals){
        .payload = sp->payload ? sp->payload : "{}",
        .queue = sp->queue ? sp->queue : JOB_DEFAULT_QUEUE,
        .max_attempts = sp->max_attempts > 0 ? sp->max_attempts : JOB_DEFAULT_MAX_ATTEMPTS,
    };
}

/* Enqueues one spec (on the current transaction, if any). */
static int
enqueue_one(struct store_pg *s, const struct job_spec *sp, const char *field, struct job *out,
            bool *replayed, struct jobd_error *err)
{
    struct spec_vals d = spec_defaults(sp);
    char b[7][24], nowb[24];
    const char *now = pg_now_param(s, nowb);
    const char *vals[11] = {
        sp->type, d.payload, d.queue, pg_i64(b[0], sp->priority),
        sp->run_at_us > 0 ? pg_i64(b[1], sp->run_at_us) : NULL,
        pg_i64(b[2], d.max_attempts), sp->idempotency_key,
        sp->timeout_ms > 0 ? pg_i64(b[3], sp->timeout_ms) : NULL, sp->schedule,
        sp->scheduled_for_us > 0 ? pg_i64(b[4], sp->scheduled_for_us) : NULL, now,
    };
    /* A key whose holder was pruned between our two statements is free again: retry. */
    for (int tries = 0; tries < 3; tries++) {
        PGresult *r = NULL;
        int rc = pg_exec(s, &st_enqueue, 11, vals, &r, err);
        if (rc != JOBD_OK)
            return rc;
        if (PQntuples(r) == 1) {
            rc = out ? pg_row_to_job(r, 0, 0, out) : JOBD_OK;
            PQclear(r);
            return rc;
        }
        PQclear(r);
        const char *kv[4] = {sp->idempotency_key, sp->type, d.queue, d.payload};
        rc = pg_exec(s, &st_key_holder, 4, kv, &r, err);
        if (rc != JOBD_OK)
            return rc;
        if (PQntuples(r) == 0) {
            PQclear(r);
            continue;
        }
        if (PQgetvalue(r, 0, PG_JOB_NCOLS)[0] != 't') {
            long long id = (long long)pg_get_i64(r, 0, 0);
            PQclear(r);
            return jobd_error_set(err, JOBD_E_CONFLICT, field,
                                  "idempotency key '%s' was already used for job %lld with a "
                                  "different type, queue or payload", sp->idempotency_key, id);
        }
        if (replayed != NULL)
            *replayed = true;
        rc = out ? pg_row_to_job(r, 0, 0, out) : JOBD_OK;
        PQclear(r);
        return rc;
    }
    return jobd_error_set(err, JOBD_E_STORE, field,
                          "idempotency key '%s' kept changing hands; try again",
                          sp->idempotency_key);
}

static int
pg_enqueue(struct store *st, const struct job_spec *spec, struct job *out, bool *replayed,
           struct jobd_error *err)
{
    return enqueue_one(pgs(st), spec, "idempotency_key", out, replayed, err);
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Fills the array parameters of st_enqueue_many ($1..$10 and $12) for specs. */
#define BATCH_ARRAYS 11
static int
batch_arrays(const struct job_spec *specs, size_t n, const int64_t *ids,
             struct pg_array *a, const char **vals)
{
    for (size_t i = 0; i < n; i++) {
        const struct job_spec *sp = &specs[i];
        struct spec_vals d = spec_defaults(sp);
        pg_array_add_i64(&a[0], ids[i], false);
        pg_array_add_str(&a[1], sp->type);
        pg_array_add_str(&a[2], d.payload);
        pg_array_add_str(&a[3], d.queue);
        pg_array_add_i64(&a[4], sp->priority, false);
        pg_array_add_i64(&a[5], sp->run_at_us, sp->run_at_us <= 0);
        pg_array_add_i64(&a[6], d.max_attempts, false);
        pg_array_add_i64(&a[7], sp->timeout_ms, sp->timeout_ms <= 0);
        pg_array_add_str(&a[8], sp->schedule);
        pg_array_add_i64(&a[9], sp->scheduled_for_us, sp->scheduled_for_us <= 0);
        pg_array_add_str(&a[10], sp->idempotency_key);
    }
    for (int k = 0; k < BATCH_ARRAYS; k++) {
        const char *v = pg_array_end(&a[k]);
        if (v == NULL)
            return JOBD_E_NOMEM;
        vals[k < 10 ? k : 11] = v; /* $11 is "now" */
    }
    return JOBD_OK;
}

/*
 * n jobs in one INSERT over arrays, all or nothing. Ids are allocated first
 * so result rows map back to items. With keys, the insert and the lookups
 * of taken keys (enqueue_one: replay, conflict, or a fresh insert if the
 * holder was pruned meanwhile) share one transaction.
 */
static int
enqueue_batch_arrays(struct store_pg *s, const struct job_spec *specs, size_t n, bool keyed,
                     struct job *out, bool *replayed, struct jobd_error *err)
{
    if (n > 100000)
        return jobd_error_set(err, JOBD_E_TOOBIG, "jobs", "a batch holds at most 100000 jobs");
    int64_t *ids = malloc(n * sizeof *ids);
    bool *got = calloc(n, sizeof *got);
    struct pg_array a[BATCH_ARRAYS];
    for (int k = 0; k < BATCH_ARRAYS; k++)
        pg_array_begin(&a[k]);
    PGresult *r = NULL;
    bool in_tx = false;
    int rc = JOBD_OK;
    char nb[24], nowb[24];
    const char *v1[1] = {pg_i64(nb, (int64_t)n)};
    const char *vals[12];
    if (ids == NULL || got == NULL) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
        goto out;
    }
    if (keyed) {
        if ((rc = pg_exec_simple(s, "BEGIN", err)) != JOBD_OK)
            goto out;
        in_tx = true;
    }
    if ((rc = pg_exec(s, &st_next_ids, 1, v1, &r, err)) != JOBD_OK)
        goto out;
    if ((size_t)PQntuples(r) != n) {
        rc = jobd_error_set(err, JOBD_E_INTERNAL, "jobs", "could not allocate job ids");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        ids[i] = pg_get_i64(r, (int)i, 0);
    PQclear(r);
    r = NULL;
    qsort(ids, n, sizeof *ids, cmp_i64);
    if (batch_arrays(specs, n, ids, a, vals) != JOBD_OK) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
        goto out;
    }
    vals[10] = pg_now_param(s, nowb);
    if ((rc = pg_exec(s, &st_enqueue_many, 12, vals, &r, err)) != JOBD_OK)
        goto out;
    for (int row = 0; row < PQntuples(r) && rc == JOBD_OK; row++) {
        int64_t id = pg_get_i64(r, row, 0);
        const int64_t *hit = bsearch(&id, ids, n, sizeof *ids, cmp_i64);
        if (hit == NULL) {
            rc = jobd_error_set(err, JOBD_E_INTERNAL, "jobs", "batch insert returned id %lld",
                                (long long)id);
            break;
        }
        got[hit - ids] = true;
        if (out != NULL && pg_row_to_job(r, row, 0, &out[hit - ids]) != JOBD_OK)
            rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
    }
    for (size_t i = 0; i < n && rc == JOBD_OK; i++) {
        if (got[i])
            continue;
        if (specs[i].idempotency_key == NULL) {
            rc = jobd_error_set(err, JOBD_E_INTERNAL, "jobs", "jobs[%zu] was not inserted", i);
            break;
        }
        char field[48];
        snprintf(field, sizeof field, "jobs[%zu].idempotency_key", i);
        rc = enqueue_one(s, &specs[i], field, out ? &out[i] : NULL,
                         replayed ? &replayed[i] : NULL, err);
    }
    if (rc == JOBD_OK && in_tx) {
        in_tx = false;
        rc = pg_exec_simple(s, "COMMIT", err);
    }
out:
    if (in_tx)
        (void)pg_exec_simple(s, "ROLLBACK", NULL);
    if (rc != JOBD_OK) {
        for (size_t i = 0; out != NULL && i < n; i++)
            job_fini(&out[i]);
        for (size_t i = 0; replayed != NULL && i < n; i++)
            replayed[i] = false;
    }
    PQclear(r);
    for (int k = 0; k < BATCH_ARRAYS; k++)
        pg_array_fini(&a[k]);
    free(ids);
    free(got);
    return rc;
}

struct id_row {
    int64_t id;
    int row;
};

static int
cmp_id_row(const void *a, const void *b)
{
    const struct id_row *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* A batch without keys: one statement, one round trip (st_enqueue_many_nokey). */
static int
enqueue_batch_nokey(struct store_pg *s, const struct job_spec *specs, size_t n,
                    struct job *out, bool *replayed, struct jobd_error *err)
{
    if (n > 100000)
        return jobd_error_set(err, JOBD_E_TOOBIG, "jobs", "a batch holds at most 100000 jobs");
    struct pg_array a[BATCH_ARRAYS];
    for (int k = 0; k < BATCH_ARRAYS; k++)
        pg_array_begin(&a[k]);
    int64_t *zeros = calloc(n, sizeof *zeros);
    struct id_row *rows = NULL;
    PGresult *r = NULL;
    char nowb[24];
    const char *vals[12];
    int rc = JOBD_OK;
    if (zeros == NULL || batch_arrays(specs, n, zeros, a, vals) != JOBD_OK) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
        goto out;
    }
    vals[0] = NULL;
    vals[11] = NULL;
    vals[10] = pg_now_param(s, nowb);
    if ((rc = pg_exec(s, &st_enqueue_many_nokey, 12, vals, &r, err)) != JOBD_OK)
        goto out;
    if ((size_t)PQntuples(r) != n) {
        rc = jobd_error_set(err, JOBD_E_INTERNAL, "jobs", "batch insert returned %d of %zu rows",
                            PQntuples(r), n);
        goto out;
    }
    if (out != NULL) {
        if ((rows = malloc(n * sizeof *rows)) == NULL) {
            rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            rows[i] = (struct id_row){pg_get_i64(r, (int)i, 0), (int)i};
        qsort(rows, n, sizeof *rows, cmp_id_row);
        for (size_t i = 0; i < n && rc == JOBD_OK; i++)
            if (pg_row_to_job(r, rows[i].row, 0, &out[i]) != JOBD_OK)
                rc = jobd_error_set(err, JOBD_E_NOMEM, "jobs", "out of memory");
    }
out:
    if (rc != JOBD_OK)
        for (size_t i = 0; out != NULL && i < n; i++)
            job_fini(&out[i]);
    for (size_t i = 0; replayed != NULL && i < n; i++)
        replayed[i] = false;
    PQclear(r);
    for (int k = 0; k < BATCH_ARRAYS; k++)
        pg_array_fini(&a[k]);
    free(zeros);
    free(rows);
    return rc;
}

static int
pg_enqueue_batch(struct store *st, const struct job_spec *specs, size_t n, struct job *out,
                 bool *replayed, struct jobd_error *err)
{
    bool keyed = false;
    for (size_t i = 0; i < n; i++)
        keyed = keyed || specs[i].idempotency_key != NULL;
    if (!keyed)
        return enqueue_batch_nokey(pgs(st), specs, n, out, replayed, err);
    return enqueue_batch_arrays(pgs(st), specs, n, keyed, out, replayed, err);
}

/* ---- reads ---- */

static int
pg_get(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    char b[24];
    const char *vals[1] = {pg_i64(b, id)};
    PGresult *r = NULL;
    int rc = pg_exec(pgs(st), &st_get, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0)
        rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no job with id %lld", (long long)id);
    else
        rc = pg_row_to_job(r, 0, 0, out);
    PQclear(r);
    return rc;
}

/* Appends the rows of r to out. */
static int
append_rows(const PGresult *r, struct job_list *out, struct jobd_error *err)
{
    for (int row = 0; row < PQntuples(r); row++) {
        struct job *j = job_list_push(out);
        if (j == NULL || pg_row_to_job(r, row, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    return JOBD_OK;
}

static int
pg_list(struct store *st, const struct job_filter *f, struct job_list *out,
        int64_t *next_cursor, struct jobd_error *err)
{
    int limit = f->limit > 0 ? f->limit : 100;
    char b[2][24];
    const char *vals[6] = {
        f->status == STORE_ANY ? NULL : job_status_name((enum job_status)f->status),
        f->queue, f->type, f->schedule, pg_i64(b[0], f->before_id > 0 ? f->before_id : 0),
        pg_i64(b[1], limit + 1),
    };
    PGresult *r = NULL;
    int rc = pg_exec(pgs(st), &st_list, 6, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    for (int row = 0; row < rows && row < limit && rc == JOBD_OK; row++) {
        struct job *j = job_list_push(out);
        if (j == NULL || pg_row_to_job(r, row, 0, j) != JOBD_OK) {
            if (j != NULL)
                out->n--;
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    if (rc == JOBD_OK && rows > limit)
        *next_cursor = out->v[out->n - 1].id;
    PQclear(r);
    return rc;
}

/* ---- claims ---- */

/* Claim order: priority DESC, run_at ASC, id ASC. */
static int
cmp_claim_order(const void *a, const void *b)
{
    const struct job *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->run_at_us != y->run_at_us)
        return x->run_at_us < y->run_at_us ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* A text[] literal of n names, or NULL (= any) when names is NULL or n is 0. */
static int
names_array(struct pg_array *a, const char *const *names, size_t n, const char **out)
{
    *out = NULL;
    pg_array_begin(a);
    if (names == NULL || n == 0)
        return JOBD_OK;
    for (size_t i = 0; i < n; i++)
        pg_array_add_str(a, names[i]);
    *out = pg_array_end(a);
    return *out ? JOBD_OK : JOBD_E_NOMEM;
}

static int
pg_claim(struct store *st, const struct claim_req *req, struct job_list *out,
         struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    char b[2][24], nowb[24];
    struct pg_array ta, qa;
    const char *types = NULL, *queues = NULL;
    int rc = names_array(&ta, req->types, req->n_types, &types);
    if (rc == JOBD_OK)
        rc = names_array(&qa, req->queues, req->n_queues, &queues);
    else
        pg_array_begin(&qa);
    if (rc != JOBD_OK) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    const char *vals[6] = {
        req->worker_id, pg_i64(b[0], req->limit),
        pg_i64(b[1], req->lease_ms > 0 ? req->lease_ms : JOB_DEFAULT_LEASE_MS),
        types, pg_now_param(s, nowb), queues,
    };
    PGresult *r = NULL;
    if (queues != NULL)
        rc = pg_exec(s, &st_claim_queues, 6, vals, &r, err);
    else
        rc = pg_exec(s, &st_claim_any, 5, vals, &r, err);
    if (rc != JOBD_OK)
        goto out;
    size_t first = out->n;
    rc = append_rows(r, out, err);
    PQclear(r);
    if (rc == JOBD_OK && out->n > first)
        qsort(out->v + first, out->n - first, sizeof *out->v, cmp_claim_order);
out:
    pg_array_fini(&ta);
    pg_array_fini(&qa);
    return rc;
}

/* ---- reports ---- */

static int
stale(struct jobd_error *err, int64_t id, int32_t attempt)
{
    return jobd_error_set(err, JOBD_E_STALE, "attempt",
                          "job %lld is not running with attempt %d", (long long)id,
                          (int)attempt);
}

static int
pg_heartbeat(struct store *st, int64_t id, int32_t attempt, int64_t lease_ms,
             int64_t *lease_expires_at_us, bool *cancel_requested, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    char b[3][24], nowb[24];
    const char *vals[4] = {pg_i64(b[0], id), pg_i64(b[1], attempt), pg_i64(b[2], lease_ms),
                           pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_heartbeat, 4, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        rc = stale(err, id, attempt);
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
report_result(PGresult *r, int64_t id, int32_t attempt, struct job *out,
              struct jobd_error *err)
{
    int rc = JOBD_OK;
    if (PQntuples(r) == 0)
        rc = stale(err, id, attempt);
    else if (out != NULL && pg_row_to_job(r, 0, 0, out) != JOBD_OK)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    PQclear(r);
    return rc;
}

static int
pg_complete(struct store *st, int64_t id, int32_t attempt, const char *result,
            struct job *out, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    char b[2][24], nowb[24];
    const char *vals[4] = {pg_i64(b[0], id), pg_i64(b[1], attempt), result,
                           pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_complete, 4, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    return report_result(r, id, attempt, out, err);
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

static int
pg_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                  struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
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
    bool *used = calloc(n, sizeof *used);
    int rc;
    if (vals[0] == NULL || vals[1] == NULL || vals[2] == NULL || used == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    else
        rc = pg_exec(s, mixed ? &st_complete_batch_join : &st_complete_batch, 4, vals, &r,
                     err);
    if (rc == JOBD_OK) {
        for (size_t i = 0; i < n; i++)
            outcome[i] = JOBD_E_STALE;
        /* Each matched (id, attempt) marks its first report; a duplicate report is stale. */
        for (int row = 0; row < PQntuples(r); row++) {
            int64_t id = pg_get_i64(r, row, 0);
            int32_t at = (int32_t)pg_get_i64(r, row, 1);
            for (size_t i = 0; i < n; i++) {
                if (!used[i] && c[i].id == id && c[i].attempt == at) {
                    used[i] = true;
                    outcome[i] = JOBD_OK;
                    break;
                }
            }
        }
    }
    PQclear(r);
    free(used);
    for (int k = 0; k < 3; k++)
        pg_array_fini(&a[k]);
    return rc;
}

/* The last JOB_ERROR_MAX bytes of e, starting on a UTF-8 character boundary. */
static const char *
error_tail(const char *e)
{
    if (e == NULL)
        return NULL;
    size_t n = strlen(e);
    if (n <= JOB_ERROR_MAX)
        return e;
    const char *p = e + n - JOB_ERROR_MAX;
    while (((unsigned char)*p & 0xC0) == 0x80)
        p++;
    return p;
}

static int
pg_fail(struct store *st, int64_t id, int32_t attempt, const char *error, bool retryable,
        int64_t retry_delay_ms, struct job *out, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    char b[3][24], nowb[24];
    const char *vals[6] = {pg_i64(b[0], id), pg_i64(b[1], attempt), error_tail(error),
                           retryable ? "true" : "false", pg_i64(b[2], retry_delay_ms),
                           pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_fail, 6, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    return report_result(r, id, attempt, out, err);
}

static int
pg_reap(struct store *st, int limit, const struct backoff_policy *bp, int *reaped,
        struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    int64_t base = bp && bp->base_ms > 0 ? bp->base_ms : JOB_DEFAULT_BACKOFF_BASE_MS;
    int64_t cap = bp && bp->cap_ms > 0 ? bp->cap_ms : JOB_DEFAULT_BACKOFF_CAP_MS;
    char b[3][24], nowb[24];
    const char *vals[4] = {pg_i64(b[0], limit > 0 ? limit : 1000), pg_i64(b[1], base),
                           pg_i64(b[2], cap), pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_reap, 4, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    *reaped = (int)(pg_get_i64(r, 0, 0) + pg_get_i64(r, 0, 1));
    PQclear(r);
    return JOBD_OK;
}

/* ---- operator actions ---- */

/* Why an action on job id matched nothing: it does not exist, or its status forbids it. */
static int
explain_miss(struct store_pg *s, int64_t id, const char *action, bool *transient,
             struct jobd_error *err)
{
    struct job j = {0};
    *transient = false;
    int rc = pg_get(&s->base, id, &j, err);
    if (rc != JOBD_OK)
        return rc;
    enum job_status status = j.status;
    job_fini(&j);
    if ((strcmp(action, "cancel") == 0 && !job_status_terminal(status)) ||
        (strcmp(action, "retry") == 0 && (status == JOB_DEAD || status == JOB_CANCELLED))) {
        *transient = true; /* it changed status under us: try again */
        return JOBD_E_STATE;
    }
    return jobd_error_set(err, JOBD_E_STATE, "status", "cannot %s job %lld: it is %s", action,
                          (long long)id, job_status_name(status));
}

static int
operator_action(struct store *st, const struct pg_stmt *stmt, const char *action, int64_t id,
                struct job *out, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    for (int tries = 0; tries < 5; tries++) {
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
    return jobd_error_set(err, JOBD_E_STATE, "status", "job %lld keeps changing status; "
                          "try again", (long long)id);
}

static int
pg_cancel(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return operator_action(st, &st_cancel, "cancel", id, out, err);
}

static int
pg_retry(struct store *st, int64_t id, struct job *out, struct jobd_error *err)
{
    return operator_action(st, &st_retry, "retry", id, out, err);
}

static int
pg_queue_pause(struct store *st, const char *queue, bool paused, struct jobd_error *err)
{
    const char *vals[2] = {queue, paused ? "true" : "false"};
    PGresult *r = NULL;
    int rc = pg_exec(pgs(st), &st_queue_pause, 2, vals, &r, err);
    PQclear(r);
    return rc;
}

static int
pg_queue_stats(struct store *st, struct queue_stat **out, size_t *n, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    char nowb[24];
    const char *vals[1] = {pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_queue_stats, 1, vals, &r, err);
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
        if (!PQgetisnull(r, row, 2) &&
            job_status_parse(PQgetvalue(r, row, 2), &status) == JOBD_OK)
            q->count[status] += pg_get_i64(r, row, 3);
        if (!PQgetisnull(r, row, 4))
            q->oldest_pending_age_s = (double)pg_get_i64(r, row, 4) / 1e6;
    }
    PQclear(r);
    *out = v;
    *n = k;
    return JOBD_OK;
}

static int
pg_prune(struct store *st, int64_t finished_before_us, int limit, int *deleted,
         struct jobd_error *err)
{
    char b[2][24];
    const char *vals[2] = {pg_i64(b[0], finished_before_us),
                           pg_i64(b[1], limit > 0 ? limit : 1000)};
    PGresult *r = NULL;
    int rc = pg_exec(pgs(st), &st_prune, 2, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    *deleted = (int)pg_get_i64(r, 0, 0);
    PQclear(r);
    return JOBD_OK;
}

/* ---- wake-ups ---- */

static int
pg_next_run_at(struct store *st, const struct claim_req *req, int64_t *run_at_us,
               struct jobd_error *err)
{
    struct pg_array ta, qa;
    const char *vals[2] = {NULL, NULL};
    int rc = names_array(&ta, req->types, req->n_types, &vals[0]);
    if (rc == JOBD_OK)
        rc = names_array(&qa, req->queues, req->n_queues, &vals[1]);
    else
        pg_array_begin(&qa);
    PGresult *r = NULL;
    if (rc != JOBD_OK)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    else
        rc = pg_exec(pgs(st), &st_next_run_at, 2, vals, &r, err);
    if (rc == JOBD_OK)
        *run_at_us = pg_get_i64(r, 0, 0);
    PQclear(r);
    pg_array_fini(&ta);
    pg_array_fini(&qa);
    return rc;
}

/* Consumes queued notifications; returns how many there were. */
static int
drain_notifies(PGconn *c)
{
    int n = 0;
    PGnotify *nt;
    while ((nt = PQnotifies(c)) != NULL) {
        PQfreemem(nt);
        n++;
    }
    return n;
}

static int
pg_wait(struct store *st, int timeout_ms, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    if (!s->listening) {
        int rc = pg_exec_simple(s, "LISTEN jobd_jobs", err);
        if (rc != JOBD_OK)
            return rc;
        s->listening = true;
    }
    int64_t deadline = clock_mono_now_us() + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000;
    for (;;) {
        if (PQconsumeInput(s->conn) == 0) {
            s->listening = false;
            return jobd_error_set(err, JOBD_E_UNAVAILABLE, "db",
                                  "PostgreSQL is unavailable: %s", PQerrorMessage(s->conn));
        }
        if (drain_notifies(s->conn) > 0)
            return 1;
        int64_t left_us = deadline - clock_mono_now_us();
        if (left_us <= 0)
            return 0;
        struct pollfd pfd = {.fd = PQsocket(s->conn), .events = POLLIN};
        int pr = poll(&pfd, 1, (int)((left_us + 999) / 1000));
        if (pr < 0 && errno != EINTR)
            return jobd_error_set(err, JOBD_E_IO, "db", "poll: %s", strerror(errno));
    }
}

/* LISTEN works on every PostgreSQL connection. */
static bool
pg_wait_ready(struct store *st)
{
    (void)st;
    return true;
}

static const struct store_ops pg_ops = {
    .name = "pg",
    .close = pg_close,
    .migrate = pg_migrate,
    .ping = pg_ping,
    .enqueue = pg_enqueue,
    .enqueue_batch = pg_enqueue_batch,
    .get = pg_get,
    .list = pg_list,
    .claim = pg_claim,
    .heartbeat = pg_heartbeat,
    .complete = pg_complete,
    .complete_batch = pg_complete_batch,
    .fail = pg_fail,
    .reap = pg_reap,
    .cancel = pg_cancel,
    .retry = pg_retry,
    .queue_pause = pg_queue_pause,
    .queue_stats = pg_queue_stats,
    .prune = pg_prune,
    .next_run_at = pg_next_run_at,
    .wait = pg_wait,
    .wait_ready = pg_wait_ready,
    .schedule_put = pg_op_schedule_put,
    .schedule_get = pg_op_schedule_get,
    .schedule_list = pg_op_schedule_list,
    .schedule_delete = pg_op_schedule_delete,
    .schedule_pause = pg_op_schedule_pause,
    .schedule_trigger = pg_op_schedule_trigger,
    .schedule_materialize = pg_op_schedule_materialize,
    .now = pg_op_now,
    .clock_went_back = pg_op_clock_went_back,
};

int
store_pg_open(const char *url, struct store **out, struct jobd_error *err)
{
    *out = NULL;
    struct store_pg *s = calloc(1, sizeof *s);
    if (s == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "db", "out of memory");
    int rc = pg_connect(url, &s->conn, err);
    if (rc != JOBD_OK) {
        free(s);
        return rc;
    }
    s->base.ops = &pg_ops;
    *out = &s->base;
    return JOBD_OK;
}
