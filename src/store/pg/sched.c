/*
 * pg/sched.c — schedules on the PostgreSQL backend (store.h, "schedules").
 *
 * Any number of jobd servers run the materializer against one database
 * without a leader: each claims due schedule rows with FOR UPDATE SKIP
 * LOCKED, inserts their jobs and advances next_run_at in the same
 * transaction, so a row is worked by one process at a time and a firing,
 * once committed, is never due again. The unique index
 * jobs(schedule, scheduled_for) backs that up (ON CONFLICT DO NOTHING).
 * Next firings are computed in C (core/cron.c) from the server's now(),
 * or the store's clock when one is set.
 */
#include <stdlib.h>
#include <string.h>

#include "core/cron.h"
#include "core/err.h"
#include "core/schedule.h"
#include "store/stats_int.h"
#include "store/pg/internal.h"
#include "util/clock.h"

#define STMT(n, s) static const struct pg_stmt n = {#n, s}

/* clang-format off */
#define PG_SCHED_COLS PG_SCHED_COLS_P("payload::text")
/* The columns with payload read as p (NULL: left out of a list). */
#define PG_SCHED_COLS_P(p)                                                              \
    "name, cron, timezone, type, " p " AS payload, queue, priority, "                   \
    "max_attempts, catchup, paused, " PG_TS_US("next_run_at") " AS next_run_at_us, "    \
    PG_TS_US("last_fired_at") " AS last_fired_at_us, "                                  \
    PG_TS_US("created_at") " AS created_at_us"
/* clang-format on */
#define PG_SCHED_NCOLS 13

/* $1 now: the instant next firings are computed from. */
STMT(st_sched_now, "SELECT " PG_TS_US(PG_NOW("$1")));

/*
 * $1 name ... $9 catchup, $10 next_run_at, $11 now, $12 replace. Without
 * replace an existing name returns no row. created tells insert from update.
 */
STMT(st_sched_put,
     "INSERT INTO jobd.schedules (name, cron, timezone, type, payload, queue, priority,"
     "                            max_attempts, catchup, next_run_at, created_at) "
     "VALUES ($1::text, $2::text, $3::text, $4::text, $5::json, $6::text, $7::int, $8::int,"
     "        $9::text, " PG_US_TS("$10") ", " PG_NOW(
         "$11") ") "
                "ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, timezone = "
                "excluded.timezone,"
                "  type = excluded.type, payload = excluded.payload, queue = excluded.queue,"
                "  priority = excluded.priority, max_attempts = excluded.max_attempts,"
                "  catchup = excluded.catchup,"
                "  next_run_at = CASE WHEN schedules.cron = excluded.cron"
                "    AND schedules.timezone = excluded.timezone"
                "    THEN schedules.next_run_at ELSE excluded.next_run_at END "
                "  WHERE $12::boolean "
                "RETURNING " PG_SCHED_COLS ", (xmax = 0) AS created");

STMT(st_sched_get, "SELECT " PG_SCHED_COLS " FROM jobd.schedules WHERE name = $1::text");

/* $1 name, $2 now: the row locked for this transaction, and now. */
STMT(st_sched_lock,
     "SELECT " PG_SCHED_COLS
     ", " PG_TS_US(PG_NOW("$2")) " AS now_us "
                                 "FROM jobd.schedules WHERE name = $1::text FOR UPDATE");

/* $1 after (NULL = from the first), $2 limit (NULL = all), $3 with payloads. Bytewise
 * ("C") order, as the cursor compares. */
/* clang-format off */
STMT(st_sched_list,
     "SELECT " PG_SCHED_COLS_P("CASE WHEN $3::boolean THEN payload::text END") " "
     "FROM jobd.schedules WHERE $1::text IS NULL OR name COLLATE \"C\" > $1::text "
     "ORDER BY name COLLATE \"C\" LIMIT $2::int");
/* clang-format on */

/*
 * Capped puts take this transaction-scoped advisory lock first, so the count
 * that follows (a statement of its own, hence a snapshot taken after the
 * lock) sees every schedule another capped put committed.
 */
STMT(st_sched_cap_lock, "SELECT pg_advisory_xact_lock(hashtext('jobd.schedules.cap'))");
/* $1 name: how many schedules exist, and whether this name is one of them. */
STMT(st_sched_cap_count,
     "SELECT count(*), coalesce(bool_or(name = $1::text), false) FROM jobd.schedules");

STMT(st_sched_delete, "DELETE FROM jobd.schedules WHERE name = $1::text RETURNING name");

/* $1 name, $2 paused, $3 next_run_at. */
STMT(st_sched_pause, "UPDATE jobd.schedules SET paused = $2::boolean, next_run_at = " PG_US_TS(
                         "$3") " "
                               "WHERE name = $1::text RETURNING " PG_SCHED_COLS);

/*
 * The jobs of firings $7 (bigint[] of microseconds) of schedule $6, due at
 * their firing. $1 queue, $2 type, $3 payload, $4 priority, $5 max_attempts,
 * $8 now. A firing that already has a job is skipped.
 */
/* clang-format off */
STMT(st_sched_insert_jobs,
     "WITH ins AS (INSERT INTO jobd.jobs (queue, type, payload, status, priority, run_at,"
     "                       max_attempts,"
     "                       schedule, scheduled_for, created_at) "
     "SELECT $1::text, $2::text, $3::json, 'pending', $4::int, " PG_US_TS("f.us") ","
     "       $5::int, $6::text, " PG_US_TS("f.us") ", " PG_NOW("$8") " "
     "FROM unnest($7::bigint[]) AS f(us) "
     "ON CONFLICT (schedule, scheduled_for) WHERE schedule IS NOT NULL DO NOTHING "
     "RETURNING *), " PG_STATS_ENQUEUED(PG_NOW("$8"), "ins")
     "SELECT " PG_JOB_COLS("") " FROM ins");
/* clang-format on */

/* $1 name, $2 fired at (NULL = unchanged): a manual trigger's mark. */
STMT(st_sched_mark_fired,
     "UPDATE jobd.schedules SET last_fired_at = GREATEST(last_fired_at, " PG_US_TS(
         "$2") ") "
               "WHERE name = $1::text");

/* $1 now, $2 limit: due schedules no other materializer holds, and now. */
STMT(st_sched_due,
     "SELECT " PG_SCHED_COLS ", " PG_TS_US(
         PG_NOW("$1")) " AS now_us "
                       "FROM jobd.schedules WHERE NOT paused AND next_run_at <= " PG_NOW(
                           "$1") " "
                                 "ORDER BY next_run_at LIMIT $2::int FOR UPDATE SKIP LOCKED");

/* $1 name, $2 new next_run_at, $3 last firing made (NULL = none). */
STMT(st_sched_advance, "UPDATE jobd.schedules SET next_run_at = " PG_US_TS(
                           "$2") ","
                                 "  last_fired_at = COALESCE(" PG_US_TS(
                                     "$3") ", last_fired_at) WHERE name = $1::text");

STMT(st_sched_soonest,
     "SELECT " PG_TS_US("min(next_run_at)") " FROM jobd.schedules WHERE NOT paused");

static struct store_pg *
pgs(struct store *st)
{
    return (struct store_pg *)st;
}

/* Decodes PG_SCHED_COLS of row into out (zeroed). JOBD_E_NOMEM. */
static int
row_schedule(const PGresult *r, int row, struct schedule *out)
{
    bool oom = false;
    out->name = pg_get_str(r, row, 0, &oom);
    out->cron = pg_get_str(r, row, 1, &oom);
    out->timezone = pg_get_str(r, row, 2, &oom);
    out->type = pg_get_str(r, row, 3, &oom);
    out->payload = pg_get_str(r, row, 4, &oom);
    out->queue = pg_get_str(r, row, 5, &oom);
    out->priority = (int32_t)pg_get_i64(r, row, 6);
    out->max_attempts = (int32_t)pg_get_i64(r, row, 7);
    if (schedule_catchup_parse(PQgetvalue(r, row, 8), &out->catchup, NULL) != 0)
        out->catchup = SCHEDULE_CATCHUP_ONCE;
    out->paused = PQgetvalue(r, row, 9)[0] == 't';
    out->next_run_at_us = pg_get_i64(r, row, 10);
    out->last_fired_at_us = pg_get_i64(r, row, 11);
    out->created_at_us = pg_get_i64(r, row, 12);
    if (oom) {
        schedule_fini(out);
        return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}

static int
nomem(struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
}

static int
not_found(const char *name, struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_NOTFOUND, "name", "no schedule named '%s'", name);
}

/* Ends a transaction: COMMIT if rc is OK, else ROLLBACK; returns the outcome (pg_tx_end). */
static int
finish(struct store_pg *s, int rc, struct jobd_error *err)
{
    return pg_tx_end(s, rc, err);
}

/* The upsert of a put, one statement (its own transaction unless one is open). */
static int
put_stmt(struct store_pg *s, const struct schedule_spec *spec, bool replace, struct schedule *out,
         bool *created, struct jobd_error *err)
{
    const char *tz = spec->timezone ? spec->timezone : "UTC";
    char nowb[24], nextb[24], prio[24], maxa[24];
    const char *v_now[1] = {pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_sched_now, 1, v_now, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = pg_get_i64(r, 0, 0), next;
    PQclear(r);
    if ((rc = schedule_first_after(spec->cron, tz, now, &next, err)) != JOBD_OK)
        return rc;
    const char *v[12] = {
        spec->name,
        spec->cron,
        tz,
        spec->type,
        spec->payload ? spec->payload : "{}",
        spec->queue ? spec->queue : JOB_DEFAULT_QUEUE,
        pg_i64(prio, spec->priority),
        pg_i64(maxa, spec->max_attempts > 0 ? spec->max_attempts : JOB_DEFAULT_MAX_ATTEMPTS),
        schedule_catchup_name(spec->catchup),
        pg_i64(nextb, next),
        v_now[0],
        replace ? "true" : "false",
    };
    if ((rc = pg_exec(s, &st_sched_put, 12, v, &r, err)) != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return jobd_error_set(err, JOBD_E_CONFLICT, "name", "schedule '%s' already exists",
                              spec->name);
    }
    *created = PQgetvalue(r, 0, PG_SCHED_NCOLS)[0] == 't';
    rc = out != NULL ? row_schedule(r, 0, out) : JOBD_OK;
    PQclear(r);
    return rc == JOBD_OK ? JOBD_OK : nomem(err);
}

/* Inside the open transaction: refuses a new name while max schedules exist. */
static int
check_cap(struct store_pg *s, const char *name, int64_t max, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_sched_cap_lock, 0, NULL, &r, err);
    PQclear(r);
    r = NULL;
    if (rc != JOBD_OK || (rc = pg_exec(s, &st_sched_cap_count, 1, &name, &r, err)) != JOBD_OK)
        return rc;
    int64_t n = pg_get_i64(r, 0, 0);
    bool exists = PQgetvalue(r, 0, 1)[0] == 't';
    PQclear(r);
    if (!exists && n >= max)
        return jobd_error_set(err, JOBD_E_CONFLICT, "max_schedules",
                              "this server keeps at most %lld schedules (--max-schedules): "
                              "delete one first",
                              (long long)max);
    return JOBD_OK;
}

int
pg_op_schedule_put(struct store *st, const struct schedule_spec *spec, bool replace,
                   int64_t max_schedules, struct schedule *out, bool *created,
                   struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    if (max_schedules == 0)
        return put_stmt(s, spec, replace, out, created, err);
    /* pg_tx_*: a COMMIT whose answer is lost is asked about (pg/tx.c). */
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = check_cap(s, spec->name, max_schedules, err);
    if (rc == JOBD_OK)
        rc = put_stmt(s, spec, replace, out, created, err);
    rc = finish(s, rc, err);
    if (rc != JOBD_OK)
        schedule_fini(out);
    return rc;
}

int
pg_op_schedule_get(struct store *st, const char *name, struct schedule *out, struct jobd_error *err)
{
    const char *v[1] = {name};
    PGresult *r = NULL;
    int rc = pg_exec(pgs(st), &st_sched_get, 1, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return not_found(name, err);
    }
    rc = row_schedule(r, 0, out);
    PQclear(r);
    return rc == JOBD_OK ? JOBD_OK : nomem(err);
}

int
pg_op_schedule_list(struct store *st, const struct name_page *pg, struct schedule_list *out,
                    struct jobd_error *err)
{
    char lim[24];
    const char *v[3] = {pg->after, pg->limit > 0 ? pg_i64(lim, pg->limit) : NULL,
                        pg->payload ? "true" : "false"};
    PGresult *r = NULL;
    int rc = pg_exec(pgs(st), &st_sched_list, 3, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    for (int i = 0; i < PQntuples(r); i++) {
        struct schedule *sc = schedule_list_push(out);
        if (sc == NULL || row_schedule(r, i, sc) != JOBD_OK) {
            if (sc != NULL)
                out->n--;
            PQclear(r);
            return nomem(err);
        }
    }
    PQclear(r);
    return JOBD_OK;
}

int
pg_op_schedule_delete(struct store *st, const char *name, struct jobd_error *err)
{
    const char *v[1] = {name};
    PGresult *r = NULL;
    int rc = pg_exec(pgs(st), &st_sched_delete, 1, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int n = PQntuples(r);
    PQclear(r);
    return n == 0 ? not_found(name, err) : JOBD_OK;
}

/* Locks the schedule row for this transaction; *now_us is the transaction's now. */
static int
lock_schedule(struct store_pg *s, const char *name, struct schedule *sc, int64_t *now_us,
              struct jobd_error *err)
{
    char nowb[24];
    const char *v[2] = {name, pg_now_param(s, nowb)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_sched_lock, 2, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return not_found(name, err);
    }
    *now_us = pg_get_i64(r, 0, PG_SCHED_NCOLS);
    rc = row_schedule(r, 0, sc);
    PQclear(r);
    return rc == JOBD_OK ? JOBD_OK : nomem(err);
}

static int
pause_in_txn(struct store_pg *s, const char *name, bool paused, struct schedule *out,
             struct jobd_error *err)
{
    struct schedule cur = {0};
    int64_t now = 0;
    int rc = lock_schedule(s, name, &cur, &now, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t next = cur.next_run_at_us;
    /* Resuming starts from now: firings while paused are not caught up. */
    if (cur.paused && !paused)
        rc = schedule_first_after(cur.cron, cur.timezone, now, &next, err);
    schedule_fini(&cur);
    if (rc != JOBD_OK)
        return rc;
    char nextb[24];
    const char *v[3] = {name, paused ? "true" : "false", pg_i64(nextb, next)};
    PGresult *r = NULL;
    if ((rc = pg_exec(s, &st_sched_pause, 3, v, &r, err)) != JOBD_OK)
        return rc;
    rc = out != NULL && PQntuples(r) == 1 ? row_schedule(r, 0, out) : JOBD_OK;
    PQclear(r);
    return rc == JOBD_OK ? JOBD_OK : nomem(err);
}

int
pg_op_schedule_pause(struct store *st, const char *name, bool paused, struct schedule *out,
                     struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = finish(s, pause_in_txn(s, name, paused, out, err), err);
    if (rc != JOBD_OK)
        schedule_fini(out);
    return rc;
}

/*
 * Inserts the jobs of n firings of sc; *r (caller PQclear()s) returns the
 * jobs actually inserted (firings that had one already are skipped).
 */
static int
insert_firings(struct store_pg *s, const struct schedule *sc, const int64_t *firings, size_t n,
               PGresult **r, struct jobd_error *err)
{
    struct pg_array arr;
    pg_array_begin(&arr);
    for (size_t i = 0; i < n; i++)
        pg_array_add_i64(&arr, firings[i], false);
    const char *lit = pg_array_end(&arr);
    if (lit == NULL) {
        pg_array_fini(&arr);
        return nomem(err);
    }
    char prio[24], maxa[24], nowb[24];
    const char *v[8] = {sc->queue,
                        sc->type,
                        sc->payload,
                        pg_i64(prio, sc->priority),
                        pg_i64(maxa, sc->max_attempts),
                        sc->name,
                        lit,
                        pg_now_param(s, nowb)};
    int rc = pg_exec(s, &st_sched_insert_jobs, 8, v, r, err);
    pg_array_fini(&arr);
    return rc;
}

static int
trigger_in_txn(struct store_pg *s, const char *name, struct job *out, struct jobd_error *err)
{
    struct schedule sc = {0};
    int64_t now = 0;
    int rc = lock_schedule(s, name, &sc, &now, err);
    if (rc != JOBD_OK)
        return rc;
    PGresult *r = NULL;
    rc = insert_firings(s, &sc, &now, 1, &r, err);
    schedule_fini(&sc);
    if (rc != JOBD_OK)
        return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return jobd_error_set(err, JOBD_E_CONFLICT, "name",
                              "schedule '%s' already has a job for this instant", name);
    }
    rc = out != NULL ? pg_row_to_job(r, 0, 0, out) : JOBD_OK;
    PQclear(r);
    if (rc != JOBD_OK)
        return nomem(err);
    char nowb[24];
    const char *v[2] = {name, pg_i64(nowb, now)};
    if ((rc = pg_exec(s, &st_sched_mark_fired, 2, v, &r, err)) != JOBD_OK)
        return rc;
    PQclear(r);
    return JOBD_OK;
}

int
pg_op_schedule_trigger(struct store *st, const char *name, struct job *out, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = finish(s, trigger_in_txn(s, name, out, err), err);
    if (rc != JOBD_OK)
        job_fini(out);
    return rc;
}

/* Applies the catch-up plan of one claimed schedule: its jobs, then next_run_at. */
static int
materialize_one(struct store_pg *s, const struct schedule *sc, int64_t now, int64_t grace_us,
                int64_t *firings, int *made, struct jobd_error *err)
{
    size_t n = 0;
    int64_t next = 0;
    int rc = schedule_plan_stored(sc, now, grace_us, firings, &n, &next, err);
    if (rc != JOBD_OK)
        return rc;
    PGresult *r = NULL;
    if (n > 0) {
        if ((rc = insert_firings(s, sc, firings, n, &r, err)) != JOBD_OK)
            return rc;
        *made += PQntuples(r);
        PQclear(r);
    }
    char nextb[24], lastb[24];
    const char *v[3] = {sc->name, pg_i64(nextb, next),
                        n > 0 ? pg_i64(lastb, firings[n - 1]) : NULL};
    if ((rc = pg_exec(s, &st_sched_advance, 3, v, &r, err)) != JOBD_OK)
        return rc;
    PQclear(r);
    return JOBD_OK;
}

static int
materialize_in_txn(struct store_pg *s, int limit, int64_t grace_us, int64_t called_mono, int *made,
                   struct jobd_error *err)
{
    char nowb[24], limb[24];
    const char *v[2] = {pg_now_param(s, nowb), pg_i64(limb, limit)};
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_sched_due, 2, v, &r, err);
    if (rc != JOBD_OK)
        return rc;
    if (grace_us > 0) /* a running plane: its waits before now was read are no outage */
        grace_us += clock_mono_now_us() - called_mono;
    int64_t *firings = malloc(SCHEDULE_CATCHUP_MAX * sizeof *firings);
    if (firings == NULL) {
        PQclear(r);
        return nomem(err);
    }
    for (int i = 0; i < PQntuples(r) && rc == JOBD_OK; i++) {
        struct schedule sc = {0};
        if (row_schedule(r, i, &sc) != JOBD_OK) {
            rc = nomem(err);
            break;
        }
        int64_t now = pg_get_i64(r, i, PG_SCHED_NCOLS);
        rc = materialize_one(s, &sc, now, grace_us, firings, made, err);
        /*
         * An expression or zone that no longer parses (validated when the
         * schedule was written, so only a zone dropped from the tz data)
         * must not block the others; that schedule stays due.
         */
        if (rc == JOBD_E_INVALID)
            rc = JOBD_OK;
        schedule_fini(&sc);
    }
    free(firings);
    PQclear(r);
    return rc;
}

int
pg_op_schedule_materialize(struct store *st, int limit, int64_t grace_us, int *made,
                           int64_t *soonest_us, struct jobd_error *err)
{
    struct store_pg *s = pgs(st);
    int64_t called = clock_mono_now_us();
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    int m = 0;
    if ((rc = finish(s, materialize_in_txn(s, limit, grace_us, called, &m, err), err)) != JOBD_OK)
        return rc;
    *made = m;
    PGresult *r = NULL;
    if ((rc = pg_exec(s, &st_sched_soonest, 0, NULL, &r, err)) != JOBD_OK)
        return rc;
    *soonest_us = PQntuples(r) == 1 ? pg_get_i64(r, 0, 0) : 0;
    PQclear(r);
    return JOBD_OK;
}
