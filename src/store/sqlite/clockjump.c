/*
 * sqlite/clockjump.c — store_clock_went_back on the SQLite backend.
 *
 * Due times are stored as wall-clock instants. After the clock went back,
 * what was due would otherwise wait for the clock to pass it again (an hour
 * after a -1 h jump), so the plane calls this once per jump it notices. It
 * is one BEGIN IMMEDIATE transaction: the jobs part uses the pending and
 * lease indexes (jobs_next_run, jobs_lease), the schedule part reads every
 * unpaused schedule, which is cheap and happens only after a jump or when
 * the plane starts.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/schedule.h"
#include "store/sqlite/internal.h"

/* Pending jobs due by the old clock become due now; running leases shrink by back. */
static int
jobs_went_back(struct sqlite_store *s, int64_t now, int64_t back, int *jobs, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "UPDATE jobs SET run_at = ?1 "
                        "WHERE status = 'pending' AND run_at > ?1 AND run_at <= ?1 + ?2",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, now);
    sqlite3_bind_int64(stmt, 2, back);
    if ((rc = sq_step_done(s, stmt, "make due jobs due again", err)) != JOBD_OK)
        return rc;
    *jobs = sqlite3_changes(s->db);
    rc = sq_prepare(s,
                    "UPDATE jobs SET lease_expires_at = max(?1, lease_expires_at - ?2) "
                    "WHERE status = 'running' AND lease_expires_at > ?1",
                    &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, now);
    sqlite3_bind_int64(stmt, 2, back);
    return sq_step_done(s, stmt, "shorten leases", err);
}

/* Reads name, cron, timezone and next_run_at of every unpaused schedule. */
static int
load_unpaused(struct sqlite_store *s, struct schedule_list *out, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT name, cron, timezone, next_run_at FROM schedules "
                        "WHERE paused = 0",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    while ((rc = sq_step_row(s, stmt, "read schedules", err)) == 1) {
        struct schedule *sc = schedule_list_push(out);
        int oom = sc == NULL;
        if (sc != NULL) {
            sc->name = sq_col_strdup(stmt, 0, &oom);
            sc->cron = sq_col_strdup(stmt, 1, &oom);
            sc->timezone = sq_col_strdup(stmt, 2, &oom);
            sc->next_run_at_us = sqlite3_column_int64(stmt, 3);
        }
        if (oom) {
            sq_reset(stmt);
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        }
    }
    return rc < 0 ? rc : JOBD_OK;
}

/* Moves next_run_at back to the first firing after now where it lies beyond it. */
static int
schedules_went_back(struct sqlite_store *s, int64_t now, int *changed, struct jobd_error *err)
{
    struct schedule_list l = {0};
    int rc = load_unpaused(s, &l, err);
    for (size_t i = 0; i < l.n && rc == JOBD_OK; i++) {
        int64_t first;
        /* A zone gone from the tz data must not block the others. */
        if (schedule_first_after(l.v[i].cron, l.v[i].timezone, now, &first, NULL) != JOBD_OK ||
            first >= l.v[i].next_run_at_us)
            continue;
        sqlite3_stmt *stmt;
        rc = sq_prepare(s,
                        "UPDATE schedules SET next_run_at = ?3 "
                        "WHERE name = ?1 AND next_run_at = ?2",
                        &stmt, err);
        if (rc != JOBD_OK)
            break;
        sq_bind_text(stmt, 1, l.v[i].name);
        sqlite3_bind_int64(stmt, 2, l.v[i].next_run_at_us);
        sqlite3_bind_int64(stmt, 3, first);
        if ((rc = sq_step_done(s, stmt, "move a schedule back", err)) == JOBD_OK)
            *changed += sqlite3_changes(s->db);
    }
    schedule_list_fini(&l);
    return rc;
}

int
sq_op_clock_went_back(struct store *st, int64_t back_us, int *jobs, int *schedules,
                      struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int rc = sq_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t now = sq_now(s);
    if (back_us > 0)
        rc = jobs_went_back(s, now, back_us, jobs, err);
    if (rc == JOBD_OK)
        rc = schedules_went_back(s, now, schedules, err);
    if (rc != JOBD_OK) {
        sq_rollback(s);
        return rc;
    }
    return sq_commit(s, err);
}
