/*
 * pg/events.c — store/events.h on PostgreSQL: jobd.events and
 * jobd.event_log (migration 23), written by statement triggers. Ids come
 * from a sequence, so they are not in commit order: the head carries its
 * snapshot's xmin and xmax (api/events.c serves up to a head only once
 * every transaction running at it has ended). A row holds the events
 * id - n + 1 .. id (migration 36: a statement's claims or successes of one
 * queue and type share a row), so an event's number is that, not the row's
 * id. Times are the server's now().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/events.h"
#include "store/pg/internal.h"

#define PG_KEEP "interval '1 hour'" /* EVENTS_KEEP_US */
#define PG_SEQ_LAST "(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM jobd.event_id_seq)"

/*
 * Recording goes on, or starts again after the highest id ever given (a
 * gap before it: older ids are not resumable); events over an hour old go,
 * and since_id passes them.
 */
PG_STMT(st_events_listen,
        "WITH p AS (DELETE FROM jobd.events WHERE at < now() - " PG_KEEP " RETURNING id) "
        "UPDATE jobd.event_log SET since_id = GREATEST("
        "  CASE WHEN listened_at > now() - " PG_KEEP " THEN since_id ELSE " PG_SEQ_LAST " + 1 END,"
        "  COALESCE((SELECT max(id) FROM p), 0)), listened_at = now()");

PG_STMT(st_events_head, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint,"
                        " pg_snapshot_xmax(pg_current_snapshot())::text::bigint,"
                        " COALESCE((SELECT max(id) FROM jobd.events), 0)");

/* The events of a row (migration 36): id - n + 1 .. id, n its jobs (1 when
 * jobs is NULL: one event, of job), at most 1024. */
#define PG_EV_N "COALESCE(cardinality(e.jobs), 1)"

/* $1 after, $2 upto, $3 limit: the rows that can hold such events, each
 * expanded into its events, the workflow read per job. */
PG_STMT(st_events_read,
        "SELECT x.ev, x.job, e.queue, e.type, e.from_st, e.to_st, x.attempt, " PG_TS_US(
            "e.at") ", s.workflow"
                    " FROM (SELECT * FROM jobd.events WHERE id > $1::bigint"
                    "        AND id <= $2::bigint + 1023 ORDER BY id LIMIT $3::int) e"
                    " CROSS JOIN LATERAL (SELECT e.id - " PG_EV_N " + u.k AS ev, u.job, u.attempt"
                    "  FROM unnest(COALESCE(e.jobs, ARRAY[e.job]),"
                    "              COALESCE(e.attempts, ARRAY[e.attempt]))"
                    "       WITH ORDINALITY AS u(job, attempt, k)) x"
                    " LEFT JOIN jobd.workflow_steps s ON s.job_id = x.job"
                    " WHERE x.ev > $1::bigint AND x.ev <= $2::bigint ORDER BY x.ev LIMIT $3::int");

/* $1 after: an event still in the log (an unlogged table: empty after a crash). */
PG_STMT(st_events_resumable,
        "SELECT $1::bigint >= since_id AND listened_at > now() - " PG_KEEP
        " AND EXISTS (SELECT 1 FROM jobd.events e WHERE e.id >= $1::bigint"
        "  AND e.id < $1::bigint + 1024 AND e.id - " PG_EV_N " < $1::bigint)"
        " AND NOT EXISTS (SELECT 1 FROM jobd.events"
        "  WHERE id > $1::bigint AND at < now() - " PG_KEEP ") FROM jobd.event_log");

int
pg_op_events_head(struct store *st, struct events_head *h, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_events_head, 0, NULL, &r, err);
    if (rc != JOBD_OK)
        return rc;
    h->xmin = (uint64_t)pg_get_i64(r, 0, 0);
    h->xmax = (uint64_t)pg_get_i64(r, 0, 1);
    h->max_id = pg_get_i64(r, 0, 2);
    h->final = false;
    PQclear(r);
    return JOBD_OK;
}

int
pg_op_events_listen(struct store *st, struct events_head *h, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_events_listen, 0, NULL, &r, err);
    if (rc != JOBD_OK)
        return rc;
    PQclear(r);
    return pg_op_events_head(st, h, err);
}

static void
copy(char *dst, size_t cap, const PGresult *r, int row, int col)
{
    snprintf(dst, cap, "%s", PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

int
pg_op_events_read(struct store *st, int64_t after, int64_t upto, int limit,
                  struct store_event **out, size_t *n, struct jobd_error *err)
{
    char b[3][24];
    const char *vals[3] = {pg_i64(b[0], after), pg_i64(b[1], upto), pg_i64(b[2], limit)};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_events_read, 3, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int rows = PQntuples(r);
    if (rows > 0 && (*out = calloc((size_t)rows, sizeof **out)) == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (int i = 0; rc == JOBD_OK && i < rows; i++) {
        struct store_event *e = &(*out)[i];
        e->id = pg_get_i64(r, i, 0);
        e->job = pg_get_i64(r, i, 1);
        copy(e->queue, sizeof e->queue, r, i, 2);
        copy(e->type, sizeof e->type, r, i, 3);
        copy(e->from, sizeof e->from, r, i, 4);
        copy(e->to, sizeof e->to, r, i, 5);
        e->attempt = (int32_t)pg_get_i64(r, i, 6);
        e->at_us = pg_get_i64(r, i, 7);
        e->workflow = PQgetisnull(r, i, 8) ? 0 : pg_get_i64(r, i, 8);
        *n = (size_t)i + 1;
    }
    PQclear(r);
    return rc;
}

int
pg_op_events_resumable(struct store *st, int64_t after, bool *ok, struct jobd_error *err)
{
    char b[24];
    const char *vals[1] = {pg_i64(b, after)};
    PGresult *r = NULL;
    int rc = pg_exec(pg_of(st), &st_events_resumable, 1, vals, &r, err);
    if (rc != JOBD_OK)
        return rc;
    *ok = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    return JOBD_OK;
}
