/*
 * sqlite/events_rows.c — the event rows a batch of claims or of successes
 * writes itself (migration 25; docs/DESIGN.md, Events): one row per queue
 * and type holding every job of the batch, where the row triggers wrote one
 * row per job. Apart from sqlite/events.c, the log's reader: this is the
 * hot path's writer.
 *
 * Inside the batch's write transaction, sq_events_hold sets event_log.told
 * when the log records; the triggers then leave the batch's changes to it;
 * sq_events_tell writes the rows and clears told before the commit (a
 * rollback clears it too). Writers take turns, so no other connection ever
 * sees told set. While nobody listens the hold is skipped for a second
 * after it found the log off: the triggers, which look for themselves,
 * record anything that happens meanwhile, so the hint is never wrong in a
 * way that loses an event.
 */
#include <sqlite3.h>

#include "core/err.h"
#include "store/events.h"
#include "store/sqlite/internal.h"
#include "util/clock.h"

/* How long a hold that found the log off is skipped. */
#define SQ_EVENTS_OFF_RECHECK_US 1000000

int
sq_events_hold(struct sqlite_store *s, bool *told, struct jobd_error *err)
{
    *told = false;
    int64_t mono = clock_mono_now_us();
    if (!s->events_on && s->events_checked_us != 0 &&
        mono - s->events_checked_us < SQ_EVENTS_OFF_RECHECK_US)
        return JOBD_OK;
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "UPDATE event_log SET told = 1 WHERE listened_at > " SQ_EV_NOW " - ?1",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, EVENTS_KEEP_US);
    if ((rc = sq_step_done(s, stmt, "mark the event log", err)) != JOBD_OK)
        return rc;
    *told = sqlite3_changes(s->db) > 0;
    s->events_on = *told;
    s->events_checked_us = mono;
    return JOBD_OK;
}

/* The rows of the jobs ?1 (a JSON array) read from table t, from ?2 to ?3,
 * one per queue, type and id / 1024 (at most 1,024 jobs: the readers look
 * for an event's row among the 1,024 ids from it, sqlite/events.c). Ids
 * follow the highest (the prune keeps it: none is given twice), a row
 * taking as many as it holds jobs. */
#define SQ_EVENTS_ROWS(t)                                                                          \
    "INSERT INTO events (id, job, queue, type, from_st, to_st, attempt, at, jobs, attempts)"       \
    " SELECT (SELECT COALESCE(max(id), 0) FROM events) + sum(n) OVER (ORDER BY queue, type, k),"   \
    "  0, queue, type, ?2, ?3, 0, " SQ_EV_NOW ", jobs, attempts"                                   \
    " FROM (SELECT t.queue, t.type, t.id / 1024 AS k, count(*) AS n,"                              \
    "         json_group_array(t.id) AS jobs, json_group_array(t.attempt) AS attempts"             \
    "       FROM " t " t WHERE t.id IN (SELECT value FROM json_each(?1))"                          \
    "       GROUP BY t.queue, t.type, k)"

int
sq_events_tell(struct sqlite_store *s, bool successes, const char *ids, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = JOBD_OK;
    if (ids != NULL) {
        rc = sq_prepare(s, successes ? SQ_EVENTS_ROWS("jobs_done") : SQ_EVENTS_ROWS("jobs"), &stmt,
                        err);
        if (rc != JOBD_OK)
            return rc;
        sq_bind_text(stmt, 1, ids);
        sq_bind_text(stmt, 2, successes ? "running" : "pending");
        sq_bind_text(stmt, 3, successes ? "succeeded" : "running");
        if ((rc = sq_step_done(s, stmt, "write the batch's events", err)) != JOBD_OK)
            return rc;
    }
    if ((rc = sq_prepare(s, "UPDATE event_log SET told = 0", &stmt, err)) != JOBD_OK)
        return rc;
    return sq_step_done(s, stmt, "mark the event log", err);
}
