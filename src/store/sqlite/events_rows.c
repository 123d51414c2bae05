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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A row of the batch: its queue and type (owned), its jobs and their
 * attempts as JSON arrays being built. */
struct sq_tell_row {
    char *queue, *type;
    char *ids, *atts;
    size_t n, ids_len, ids_cap, atts_len, atts_cap;
};

/* Appends the number v and a comma to the buffer *b (length *len, capacity *cap). */
static bool
put_num(char **b, size_t *len, size_t *cap, long long v)
{
    if (*len + 24 > *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        char *nb = realloc(*b, nc);
        if (nb == NULL)
            return false;
        *b = nb;
        *cap = nc;
    }
    *len += (size_t)snprintf(*b + *len, *cap - *len, "%lld,", v);
    return true;
}

void
sq_tell_add(struct sq_tell *t, int64_t id, int32_t attempt, const char *queue, const char *type)
{
    if (t->oom)
        return;
    struct sq_tell_row *r = NULL;
    for (size_t i = t->n; i > 0 && r == NULL; i--) {
        struct sq_tell_row *c = &t->v[i - 1];
        if (c->n < SQ_TELL_ROW_MAX && strcmp(c->queue, queue) == 0 && strcmp(c->type, type) == 0)
            r = c;
    }
    if (r == NULL) {
        struct sq_tell_row *nv = realloc(t->v, (t->n + 1) * sizeof *nv);
        if (nv == NULL) {
            t->oom = true;
            return;
        }
        t->v = nv;
        r = &t->v[t->n++];
        *r = (struct sq_tell_row){.queue = strdup(queue), .type = strdup(type)};
        if (r->queue == NULL || r->type == NULL) {
            t->oom = true;
            return;
        }
    }
    if (!put_num(&r->ids, &r->ids_len, &r->ids_cap, id) ||
        !put_num(&r->atts, &r->atts_len, &r->atts_cap, attempt)) {
        t->oom = true;
        return;
    }
    r->n++;
}

void
sq_tell_fini(struct sq_tell *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].queue);
        free(t->v[i].type);
        free(t->v[i].ids);
        free(t->v[i].atts);
    }
    free(t->v);
    *t = (struct sq_tell){0};
}

/* "[a,b,c" with its last comma made "]": the JSON array of the buffer. */
static void
close_array(char *b, size_t len)
{
    b[len - 1] = ']';
}

int
sq_events_tell(struct sqlite_store *s, bool successes, struct sq_tell *t, struct jobd_error *err)
{
    /* Its ids follow the highest (the prune keeps it: none is given twice),
     * as many as it holds jobs. */
    static const char row[] =
        "INSERT INTO events (id, job, queue, type, from_st, to_st, attempt, at, jobs, attempts)"
        " VALUES ((SELECT COALESCE(max(id), 0) FROM events) + ?1, 0, ?2, ?3, ?4, ?5, 0, " SQ_EV_NOW
        ", '[' || ?6, '[' || ?7)";
    int rc = t->oom ? jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory") : JOBD_OK;
    for (size_t i = 0; rc == JOBD_OK && i < t->n; i++) {
        struct sq_tell_row *r = &t->v[i];
        sqlite3_stmt *stmt;
        if ((rc = sq_prepare(s, row, &stmt, err)) != JOBD_OK)
            break;
        close_array(r->ids, r->ids_len);
        close_array(r->atts, r->atts_len);
        sqlite3_bind_int64(stmt, 1, (sqlite3_int64)r->n);
        sq_bind_text(stmt, 2, r->queue);
        sq_bind_text(stmt, 3, r->type);
        sq_bind_text(stmt, 4, successes ? "running" : "pending");
        sq_bind_text(stmt, 5, successes ? "succeeded" : "running");
        sqlite3_bind_text(stmt, 6, r->ids, (int)r->ids_len, SQLITE_TRANSIENT);
        sqlite3_bind_text(stmt, 7, r->atts, (int)r->atts_len, SQLITE_TRANSIENT);
        rc = sq_step_done(s, stmt, "write the batch's events", err);
    }
    sq_tell_fini(t);
    sqlite3_stmt *stmt;
    if (rc != JOBD_OK ||
        (rc = sq_prepare(s, "UPDATE event_log SET told = 0", &stmt, err)) != JOBD_OK)
        return rc;
    return sq_step_done(s, stmt, "mark the event log", err);
}
