/*
 * sqlite/sched.c — schedules on the SQLite backend (store.h, "schedules").
 *
 * Every operation is one BEGIN IMMEDIATE transaction: SQLite serializes
 * writers, so reading a schedule and writing what follows from it inside
 * the transaction is atomic, and the materializer needs no lock skipping.
 * The jobs a schedule makes are inserted in the same transaction that
 * advances its next_run_at; the unique index jobs(schedule, scheduled_for)
 * backs the at-most-once rule up.
 */
#include <stdlib.h>
#include <string.h>

#include "core/cron.h"
#include "core/err.h"
#include "core/schedule.h"
#include "store/sqlite/internal.h"
#include "util/clock.h"

#define SQ_SCHED_COLS                                                                              \
    "name, cron, timezone, type, payload, queue, priority, max_attempts, catchup, "                \
    "paused, next_run_at, last_fired_at, created_at"

/* Reads SQ_SCHED_COLS (from column 0) into out (zeroed). JOBD_E_NOMEM. */
static int
row_schedule(sqlite3_stmt *stmt, struct schedule *out)
{
    int oom = 0;
    out->name = sq_col_strdup(stmt, 0, &oom);
    out->cron = sq_col_strdup(stmt, 1, &oom);
    out->timezone = sq_col_strdup(stmt, 2, &oom);
    out->type = sq_col_strdup(stmt, 3, &oom);
    out->payload = sq_col_strdup(stmt, 4, &oom);
    out->queue = sq_col_strdup(stmt, 5, &oom);
    out->priority = sqlite3_column_int(stmt, 6);
    out->max_attempts = sqlite3_column_int(stmt, 7);
    const unsigned char *c = sqlite3_column_text(stmt, 8);
    if (c == NULL || schedule_catchup_parse((const char *)c, &out->catchup, NULL) != 0)
        out->catchup = SCHEDULE_CATCHUP_ONCE;
    out->paused = sqlite3_column_int(stmt, 9) != 0;
    out->next_run_at_us = sqlite3_column_int64(stmt, 10);
    out->last_fired_at_us = sqlite3_column_int64(stmt, 11);
    out->created_at_us = sqlite3_column_int64(stmt, 12);
    if (oom) {
        schedule_fini(out);
        return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}

/* Loads one schedule inside the open transaction. JOBD_E_NOTFOUND. */
static int
load(struct sqlite_store *s, const char *name, struct schedule *out, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT " SQ_SCHED_COLS " FROM schedules WHERE name = ?1", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, name);
    if ((rc = sq_step_row(s, stmt, "read schedule", err)) < 0)
        return rc;
    if (rc == 0)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "name", "no schedule named '%s'", name);
    rc = row_schedule(stmt, out);
    sq_reset(stmt);
    if (rc != JOBD_OK)
        return jobd_error_set(err, rc, NULL, "out of memory");
    return JOBD_OK;
}

/* Ends the transaction: commit if rc is OK, else roll back; returns the outcome. */
static int
finish(struct sqlite_store *s, int rc, struct jobd_error *err)
{
    if (rc != JOBD_OK) {
        sq_rollback(s);
        return rc;
    }
    return sq_commit(s, err);
}

/* Refuses a new schedule while max (> 0) exist; inside the open transaction. */
static int
check_cap(struct sqlite_store *s, int64_t max, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT count(*) FROM schedules", &stmt, err);
    if (rc != JOBD_OK || (rc = sq_step_row(s, stmt, "count schedules", err)) < 0)
        return rc;
    int64_t n = sqlite3_column_int64(stmt, 0);
    sq_reset(stmt);
    if (n >= max)
        return jobd_error_set(err, JOBD_E_CONFLICT, "max_schedules",
                              "this server keeps at most %lld schedules (--max-schedules): "
                              "delete one first",
                              (long long)max);
    return JOBD_OK;
}

static int
put_in_txn(struct sqlite_store *s, const struct schedule_spec *spec, bool replace, int64_t max,
           struct schedule *out, bool *created, struct jobd_error *err)
{
    const char *tz = spec->timezone ? spec->timezone : "UTC";
    int64_t now = sq_now(s), next;
    int rc = schedule_first_after(spec->cron, tz, now, &next, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    if ((rc = sq_prepare(s, "SELECT 1 FROM schedules WHERE name = ?1", &stmt, err)) != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, spec->name);
    if ((rc = sq_step_row(s, stmt, "look up schedule", err)) < 0)
        return rc;
    bool exists = rc == 1;
    sq_reset(stmt);
    if (exists && !replace)
        return jobd_error_set(err, JOBD_E_CONFLICT, "name", "schedule '%s' already exists",
                              spec->name);
    if (!exists && max > 0 && (rc = check_cap(s, max, err)) != JOBD_OK)
        return rc;
    static const char upsert[] =
        "INSERT INTO schedules (" SQ_SCHED_COLS ") "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, ?10, NULL, ?11) "
        "ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, timezone = excluded.timezone,"
        "  type = excluded.type, payload = excluded.payload, queue = excluded.queue,"
        "  priority = excluded.priority, max_attempts = excluded.max_attempts,"
        "  catchup = excluded.catchup,"
        "  next_run_at = CASE WHEN cron = excluded.cron AND timezone = excluded.timezone"
        "    THEN next_run_at ELSE excluded.next_run_at END "
        "RETURNING " SQ_SCHED_COLS;
    if ((rc = sq_prepare(s, upsert, &stmt, err)) != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, spec->name);
    sq_bind_text(stmt, 2, spec->cron);
    sq_bind_text(stmt, 3, tz);
    sq_bind_text(stmt, 4, spec->type);
    sq_bind_text(stmt, 5, spec->payload ? spec->payload : "{}");
    sq_bind_text(stmt, 6, spec->queue ? spec->queue : JOB_DEFAULT_QUEUE);
    sqlite3_bind_int(stmt, 7, spec->priority);
    sqlite3_bind_int(stmt, 8,
                     spec->max_attempts > 0 ? spec->max_attempts : JOB_DEFAULT_MAX_ATTEMPTS);
    sq_bind_text(stmt, 9, schedule_catchup_name(spec->catchup));
    sqlite3_bind_int64(stmt, 10, next);
    sqlite3_bind_int64(stmt, 11, now);
    if ((rc = sq_step_row(s, stmt, "write schedule", err)) < 0)
        return rc;
    if (rc == 0)
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "upsert returned no row");
    rc = out != NULL ? row_schedule(stmt, out) : JOBD_OK;
    sq_reset(stmt);
    if (rc != JOBD_OK)
        return jobd_error_set(err, rc, NULL, "out of memory");
    *created = !exists;
    return JOBD_OK;
}

int
sq_op_schedule_put(struct store *st, const struct schedule_spec *spec, bool replace,
                   int64_t max_schedules, struct schedule *out, bool *created,
                   struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = finish(s, put_in_txn(s, spec, replace, max_schedules, out, created, err), err);
    if (rc != JOBD_OK)
        schedule_fini(out);
    return rc;
}

int
sq_op_schedule_get(struct store *st, const char *name, struct schedule *out, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    return load(s, name, out, err);
}

int
sq_op_schedule_list(struct store *st, const struct name_page *pg, struct schedule_list *out,
                    struct jobd_error *err)
{
    /* SQ_SCHED_COLS with the payload read only when asked for; names compare
     * bytewise (BINARY), as the cursor does. */
    static const char sql[] =
        "SELECT name, cron, timezone, type, CASE WHEN ?3 THEN payload END, queue, priority,"
        "  max_attempts, catchup, paused, next_run_at, last_fired_at, created_at"
        " FROM schedules WHERE ?1 IS NULL OR name > ?1 ORDER BY name LIMIT ?2";
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, sql, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, pg->after);
    sqlite3_bind_int(stmt, 2, pg->limit > 0 ? pg->limit : -1);
    sqlite3_bind_int(stmt, 3, pg->payload);
    while ((rc = sq_step_row(s, stmt, "list schedules", err)) == 1) {
        struct schedule *sc = schedule_list_push(out);
        if (sc == NULL || row_schedule(stmt, sc) != JOBD_OK) {
            if (sc != NULL)
                out->n--;
            sq_reset(stmt);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    return rc < 0 ? rc : JOBD_OK;
}

int
sq_op_schedule_delete(struct store *st, const char *name, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "DELETE FROM schedules WHERE name = ?1", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, name);
    if ((rc = sq_step_done(s, stmt, "delete schedule", err)) != JOBD_OK)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "name", "no schedule named '%s'", name);
    return JOBD_OK;
}

static int
pause_in_txn(struct sqlite_store *s, const char *name, bool paused, struct schedule *out,
             struct jobd_error *err)
{
    struct schedule cur = {0};
    int rc = load(s, name, &cur, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t next = cur.next_run_at_us;
    /* Resuming starts from now: firings while paused are not caught up. */
    if (cur.paused && !paused)
        rc = schedule_first_after(cur.cron, cur.timezone, sq_now(s), &next, err);
    schedule_fini(&cur);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    rc = sq_prepare(s,
                    "UPDATE schedules SET paused = ?2, next_run_at = ?3 WHERE name = ?1 "
                    "RETURNING " SQ_SCHED_COLS,
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, name);
    sqlite3_bind_int(stmt, 2, paused ? 1 : 0);
    sqlite3_bind_int64(stmt, 3, next);
    if ((rc = sq_step_row(s, stmt, "pause schedule", err)) < 0)
        return rc;
    rc = rc == 1 && out != NULL ? row_schedule(stmt, out) : JOBD_OK;
    sq_reset(stmt);
    if (rc != JOBD_OK)
        return jobd_error_set(err, rc, NULL, "out of memory");
    return JOBD_OK;
}

int
sq_op_schedule_pause(struct store *st, const char *name, bool paused, struct schedule *out,
                     struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = finish(s, pause_in_txn(s, name, paused, out, err), err);
    if (rc != JOBD_OK)
        schedule_fini(out);
    return rc;
}

/*
 * Inserts the job of one firing of sc, due at the firing (which is now or
 * past). *inserted is false when the unique (schedule, scheduled_for) index
 * already had it. out (may be NULL) receives the job.
 */
static int
insert_firing(struct sqlite_store *s, const struct schedule *sc, int64_t scheduled_for, int64_t now,
              struct job *out, bool *inserted, struct jobd_error *err)
{
    static const char ins[] =
        "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts, "
        "  schedule, scheduled_for, created_at) "
        "VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9) "
        "ON CONFLICT (schedule, scheduled_for) WHERE schedule IS NOT NULL DO NOTHING "
        "RETURNING " SQ_JOB_COLS;
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, ins, &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, sc->queue);
    sq_bind_text(stmt, 2, sc->type);
    sq_bind_text(stmt, 3, sc->payload);
    sqlite3_bind_int(stmt, 4, sc->priority);
    sqlite3_bind_int64(stmt, 5, scheduled_for);
    sqlite3_bind_int(stmt, 6, sc->max_attempts);
    sq_bind_text(stmt, 7, sc->name);
    sqlite3_bind_int64(stmt, 8, scheduled_for);
    sqlite3_bind_int64(stmt, 9, now);
    if ((rc = sq_step_row(s, stmt, "insert scheduled job", err)) < 0)
        return rc;
    *inserted = rc == 1;
    if (*inserted) /* store/stats.h */
        sq_stats_count(s, sc->queue, STATS_ENQUEUED, now);
    rc = *inserted && out != NULL ? sq_row_job(stmt, 0, out) : JOBD_OK;
    sq_reset(stmt);
    if (rc != JOBD_OK)
        return jobd_error_set(err, rc, NULL, "out of memory");
    return JOBD_OK;
}

static int
trigger_in_txn(struct sqlite_store *s, const char *name, struct job *out, struct jobd_error *err)
{
    struct schedule sc = {0};
    int rc = load(s, name, &sc, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    bool inserted = false;
    rc = insert_firing(s, &sc, now, now, out, &inserted, err);
    if (rc == JOBD_OK && !inserted)
        rc = jobd_error_set(err, JOBD_E_CONFLICT, "name",
                            "schedule '%s' already has a job for this instant", name);
    schedule_fini(&sc);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    rc = sq_prepare(s,
                    "UPDATE schedules SET last_fired_at = max(coalesce(last_fired_at, 0), ?2) "
                    "WHERE name = ?1",
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, name);
    sqlite3_bind_int64(stmt, 2, now);
    return sq_step_done(s, stmt, "record trigger", err);
}

int
sq_op_schedule_trigger(struct store *st, const char *name, struct job *out, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    rc = finish(s, trigger_in_txn(s, name, out, err), err);
    if (rc != JOBD_OK)
        job_fini(out);
    return rc;
}

/*
 * Applies the catch-up plan of one due schedule: its jobs, then the new
 * next_run_at, guarded by the old one (a compare-and-set, so even a writer
 * that did not see this transaction could not advance it twice).
 */
static int
materialize_one(struct sqlite_store *s, const struct schedule *sc, int64_t now, int64_t grace_us,
                int64_t *firings, int *made, struct jobd_error *err)
{
    size_t n = 0;
    int64_t next = 0;
    int rc = schedule_plan_stored(sc, now, grace_us, firings, &n, &next, err);
    if (rc != JOBD_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        bool inserted = false;
        if ((rc = insert_firing(s, sc, firings[i], now, NULL, &inserted, err)) != JOBD_OK)
            return rc;
        *made += inserted;
    }
    sqlite3_stmt *stmt;
    rc = sq_prepare(s,
                    "UPDATE schedules SET next_run_at = ?3, "
                    "  last_fired_at = coalesce(?4, last_fired_at) "
                    "WHERE name = ?1 AND next_run_at = ?2",
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sq_bind_text(stmt, 1, sc->name);
    sqlite3_bind_int64(stmt, 2, sc->next_run_at_us);
    sqlite3_bind_int64(stmt, 3, next);
    sq_bind_opt(stmt, 4, n > 0 ? firings[n - 1] : 0);
    return sq_step_done(s, stmt, "advance schedule", err);
}

static int
materialize_in_txn(struct sqlite_store *s, int limit, int64_t grace_us, int64_t called_mono,
                   int *made, struct jobd_error *err)
{
    int64_t now = sq_now(s);
    if (grace_us > 0) /* a running plane: its wait for the write lock is no outage */
        grace_us += clock_mono_now_us() - called_mono;
    struct schedule_list due = {0};
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT " SQ_SCHED_COLS " FROM schedules "
                        "WHERE paused = 0 AND next_run_at <= ?1 ORDER BY next_run_at LIMIT ?2",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, now);
    sqlite3_bind_int(stmt, 2, limit);
    while ((rc = sq_step_row(s, stmt, "find due schedules", err)) == 1) {
        struct schedule *sc = schedule_list_push(&due);
        if (sc == NULL || row_schedule(stmt, sc) != JOBD_OK) {
            if (sc != NULL)
                due.n--;
            sq_reset(stmt);
            schedule_list_fini(&due);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    if (rc < 0) {
        schedule_list_fini(&due);
        return rc;
    }
    int64_t *firings = malloc(SCHEDULE_CATCHUP_MAX * sizeof *firings);
    if (firings == NULL) {
        schedule_list_fini(&due);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    rc = JOBD_OK;
    for (size_t i = 0; i < due.n && rc == JOBD_OK; i++) {
        rc = materialize_one(s, &due.v[i], now, grace_us, firings, made, err);
        /*
         * An expression or zone that no longer parses (validated when the
         * schedule was written, so only a zone dropped from the tz data)
         * must not block the others; that schedule stays due.
         */
        if (rc == JOBD_E_INVALID)
            rc = JOBD_OK;
    }
    free(firings);
    schedule_list_fini(&due);
    return rc;
}

int
sq_op_schedule_materialize(struct store *st, int limit, int64_t grace_us, int *made,
                           int64_t *soonest_us, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int64_t called = clock_mono_now_us();
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    if ((rc = finish(s, materialize_in_txn(s, limit, grace_us, called, made, err), err)) != JOBD_OK)
        return rc;
    sqlite3_stmt *stmt;
    rc = sq_prepare(s, "SELECT min(next_run_at) FROM schedules WHERE paused = 0", &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    if ((rc = sq_step_row(s, stmt, "find the next schedule", err)) < 0)
        return rc;
    *soonest_us = rc == 1 ? sqlite3_column_int64(stmt, 0) : 0;
    sq_reset(stmt);
    return JOBD_OK;
}
