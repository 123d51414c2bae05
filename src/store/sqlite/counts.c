/*
 * sqlite/counts.c — counting statistics (store/stats.h) on SQLite, in
 * the transactions that change jobs; sqlite/stats.c reads them.
 *
 * The statements that enqueue, complete, fail or reap jobs call
 * sq_stats_count for each job they change; the counts wait in memory, on
 * the connection, until the transaction commits: sq_commit writes them with
 * one upsert per (bucket, queue) just before COMMIT, and sq_rollback drops
 * them. So a batch of 500 completions costs one extra row write, and a
 * transaction that fails counted nothing. SQLite has one writer at a time,
 * so one row per (bucket, queue) is never contended.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/stats_int.h"
#include "store/sqlite/internal.h"

/* Schema step (sqlite/schema.c); t is the bucket's start in epoch seconds. */
const char sq_step_stats[] = "CREATE TABLE stats_buckets ("
                             "  t INTEGER NOT NULL,"
                             "  queue TEXT NOT NULL,"
                             "  enqueued INTEGER NOT NULL DEFAULT 0,"
                             "  succeeded INTEGER NOT NULL DEFAULT 0,"
                             "  failed INTEGER NOT NULL DEFAULT 0,"
                             "  dead INTEGER NOT NULL DEFAULT 0,"
                             "  PRIMARY KEY (t, queue)"
                             ") WITHOUT ROWID;";

/* Floor of us / 1e6 / STATS_BUCKET_S * STATS_BUCKET_S, also before 1970. */
static int64_t
bucket_of(int64_t now_us)
{
    int64_t w = (int64_t)STATS_BUCKET_S * 1000000;
    int64_t q = now_us / w - (now_us % w != 0 && now_us < 0);
    return q * STATS_BUCKET_S;
}

/* The row of (t, queue) in the counter, added if new; NULL when out of memory. */
static struct sq_stats_row *
row_of(struct sq_stats *c, int64_t t, const char *queue)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].t == t && strcmp(c->v[i].queue, queue) == 0)
            return &c->v[i];
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 4;
        struct sq_stats_row *nv = realloc(c->v, ncap * sizeof *nv);
        if (nv == NULL)
            return NULL;
        c->v = nv;
        c->cap = ncap;
    }
    struct sq_stats_row *r = &c->v[c->n++];
    memset(r, 0, sizeof *r);
    r->t = t;
    size_t len = strlen(queue);
    memcpy(r->queue, queue, len < JOB_QUEUE_MAX ? len : JOB_QUEUE_MAX);
    return r;
}

void
sq_stats_count(struct sqlite_store *s, const char *queue, enum stats_kind kind, int64_t now_us)
{
    struct sq_stats_row *r = queue != NULL ? row_of(&s->stats, bucket_of(now_us), queue) : NULL;
    if (r == NULL)
        s->stats.oom = true;
    else
        r->n[kind]++;
}

void
sq_stats_reset(struct sqlite_store *s)
{
    s->stats.n = 0;
    s->stats.oom = false;
}

void
sq_stats_free(struct sqlite_store *s)
{
    free(s->stats.v);
    memset(&s->stats, 0, sizeof s->stats);
}

int
sq_stats_flush(struct sqlite_store *s, struct jobd_error *err)
{
    struct sq_stats *c = &s->stats;
    if (c->n == 0 && !c->oom)
        return JOBD_OK;
    int rc = JOBD_OK;
    if (c->oom)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory counting statistics");
    for (size_t i = 0; rc == JOBD_OK && i < c->n; i++) {
        sqlite3_stmt *stmt;
        rc = sq_prepare(s,
                        "INSERT INTO stats_buckets (t, queue, enqueued, succeeded, failed, dead)"
                        " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (t, queue) DO UPDATE SET"
                        " enqueued = enqueued + excluded.enqueued,"
                        " succeeded = succeeded + excluded.succeeded,"
                        " failed = failed + excluded.failed, dead = dead + excluded.dead",
                        &stmt, err);
        if (rc != JOBD_OK)
            break;
        sqlite3_bind_int64(stmt, 1, c->v[i].t);
        sq_bind_text(stmt, 2, c->v[i].queue);
        for (int k = 0; k < STATS_KINDS; k++)
            sqlite3_bind_int64(stmt, 3 + k, c->v[i].n[k]);
        rc = sq_step_done(s, stmt, "count statistics", err);
    }
    sq_stats_reset(s);
    return rc;
}
