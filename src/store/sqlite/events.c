/*
 * sqlite/events.c — store/events.h on SQLite: the tables events and
 * event_log (migrations 16, 23), written by triggers. Writers take turns, so
 * every id up to the highest visible is final, and `at` (the real clock's,
 * as the triggers' julianday('now')) grows with the id: the prune and the
 * check of a Last-Event-ID go by id, and events has no index on `at` for
 * its writers to keep (docs/DESIGN.md, Events). Ids are rowids: the prune
 * keeps the newest row, so the highest id never falls and none is given
 * twice. A row of a batch's claims or successes (sqlite/events_rows.c)
 * holds the events id - n + 1 .. id, one a job: an event's number is that,
 * not the row's id.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/events.h"
#include "store/sqlite/internal.h"
#include "util/clock.h"

#define SEQ "COALESCE((SELECT max(id) FROM events), 0)"
/* A row's events (migration 25): id - n + 1 .. id, n its jobs (1 when jobs
 * is NULL: one event, of job), at most 1024. */
#define SQ_EV_N "(CASE WHEN e.jobs IS NULL THEN 1 ELSE json_array_length(e.jobs) END)"
/* The first event under an hour old (?1 now, ?2 EVENTS_KEEP_US), or the
 * newest, which the prune keeps: a walk by id over the rows to prune. */
#define KEEP_FROM                                                                                  \
    "COALESCE((SELECT id FROM events WHERE at >= ?1 - ?2 ORDER BY id LIMIT 1),"                    \
    " (SELECT max(id) FROM events))"

static int
head(struct sqlite_store *s, struct events_head *h, struct jobd_error *err)
{
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s, "SELECT COALESCE(max(id), 0) FROM events", &stmt, err);
    if (rc != JOBD_OK || (rc = sq_step_row(s, stmt, "read the event log's head", err)) < 0)
        return rc;
    h->max_id = rc == 1 ? sqlite3_column_int64(stmt, 0) : 0;
    h->final = true;
    sq_reset(stmt);
    return JOBD_OK;
}

int
sq_op_events_listen(struct store *st, struct events_head *h, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    int64_t now = clock_real_now_us();
    /* Relaxed: a refresh lost with the machine only stops recording early. */
    int rc = sq_begin_relaxed(s, err);
    if (rc != JOBD_OK)
        return rc;
    /* Recording starts again after the highest id ever given (a gap
     * before it: older ids are not resumable); the prune raises since_id
     * past what it deletes, and keeps the newest event (the highest id). */
    static const char restart[] =
        "UPDATE event_log SET since_id = CASE WHEN listened_at > ?1 - ?2 THEN since_id"
        " ELSE " SEQ " + 1 END, listened_at = ?1";
    static const char pass_pruned[] =
        "UPDATE event_log SET since_id = max(since_id,"
        " COALESCE((SELECT max(id) FROM events WHERE id < " KEEP_FROM "), 0))";
    static const char prune[] = "DELETE FROM events WHERE id < " KEEP_FROM;
    const char *const sql[] = {restart, pass_pruned, prune};
    for (size_t i = 0; i < sizeof sql / sizeof sql[0]; i++) {
        sqlite3_stmt *stmt;
        if ((rc = sq_prepare(s, sql[i], &stmt, err)) != JOBD_OK)
            goto fail;
        sqlite3_bind_int64(stmt, 1, now);
        sqlite3_bind_int64(stmt, 2, EVENTS_KEEP_US);
        if ((rc = sq_step_done(s, stmt, "keep the event log", err)) != JOBD_OK)
            goto fail;
    }
    if ((rc = head(s, h, err)) != JOBD_OK)
        goto fail;
    return sq_commit(s, err);
fail:
    sq_rollback(s);
    return rc;
}

int
sq_op_events_head(struct store *st, struct events_head *h, struct jobd_error *err)
{
    return head(sq_of(st), h, err);
}

static void
copy(char *dst, size_t cap, const unsigned char *src)
{
    snprintf(dst, cap, "%s", src != NULL ? (const char *)src : "");
}

int
sq_op_events_read(struct store *st, int64_t after, int64_t upto, int limit,
                  struct store_event **out, size_t *n, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    /* The rows that can hold such events, each expanded into its events
     * (id - n + 1 + the index in jobs), the workflow read per job. */
    int rc = sq_prepare(
        s,
        "SELECT x.ev, x.job, x.queue, x.type, x.from_st, x.to_st, x.attempt, x.at, s.workflow"
        " FROM (SELECT e.id - e.n + 1 + j.key AS ev, j.value AS job, e.queue, e.type, e.from_st,"
        "         e.to_st, CASE WHEN e.jobs IS NULL THEN e.attempt"
        "                  ELSE json_extract(e.attempts, '$[' || j.key || ']') END AS attempt,"
        "         e.at"
        "       FROM (SELECT *, " SQ_EV_N " AS n FROM events e WHERE id > ?1 AND id <= ?2 + 1023"
        "             ORDER BY id LIMIT ?3) e,"
        "            json_each(COALESCE(e.jobs, json_array(e.job))) j) x"
        " LEFT JOIN workflow_steps s ON s.job_id = x.job"
        " WHERE x.ev > ?1 AND x.ev <= ?2 ORDER BY x.ev LIMIT ?3",
        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, after);
    sqlite3_bind_int64(stmt, 2, upto);
    sqlite3_bind_int(stmt, 3, limit);
    struct store_event *v = NULL;
    size_t k = 0, cap = 0;
    while ((rc = sq_step_row(s, stmt, "read the event log", err)) == 1) {
        if (k == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct store_event *nv = realloc(v, nc * sizeof *nv);
            if (nv == NULL) {
                sq_reset(stmt);
                free(v);
                return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
            }
            v = nv;
            cap = nc;
        }
        struct store_event *e = &v[k++];
        e->id = sqlite3_column_int64(stmt, 0);
        e->job = sqlite3_column_int64(stmt, 1);
        copy(e->queue, sizeof e->queue, sqlite3_column_text(stmt, 2));
        copy(e->type, sizeof e->type, sqlite3_column_text(stmt, 3));
        copy(e->from, sizeof e->from, sqlite3_column_text(stmt, 4));
        copy(e->to, sizeof e->to, sqlite3_column_text(stmt, 5));
        e->attempt = sqlite3_column_int(stmt, 6);
        e->at_us = sqlite3_column_int64(stmt, 7);
        e->workflow = sqlite3_column_int64(stmt, 8); /* NULL reads as 0 */
    }
    if (rc < 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return JOBD_OK;
}

int
sq_op_events_resumable(struct store *st, int64_t after, bool *ok, struct jobd_error *err)
{
    struct sqlite_store *s = sq_of(st);
    sqlite3_stmt *stmt;
    int rc = sq_prepare(s,
                        "SELECT ?1 >= since_id AND listened_at > ?2 - ?3"
                        " AND EXISTS (SELECT 1 FROM events e WHERE e.id >= ?1"
                        "  AND e.id < ?1 + 1024 AND e.id - " SQ_EV_N " < ?1)"
                        /* none after it over an hour old: the first after it */
                        " AND COALESCE((SELECT at FROM events WHERE id > ?1 ORDER BY id LIMIT 1)"
                        "              >= ?2 - ?3, 1)"
                        " FROM event_log",
                        &stmt, err);
    if (rc != JOBD_OK)
        return rc;
    sqlite3_bind_int64(stmt, 1, after);
    sqlite3_bind_int64(stmt, 2, clock_real_now_us());
    sqlite3_bind_int64(stmt, 3, EVENTS_KEEP_US);
    if ((rc = sq_step_row(s, stmt, "check an event id", err)) < 0)
        return rc;
    *ok = rc == 1 && sqlite3_column_int(stmt, 0) == 1;
    sq_reset(stmt);
    return JOBD_OK;
}
