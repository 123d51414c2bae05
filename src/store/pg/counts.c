/*
 * pg/counts.c — the queue counts of PostgreSQL: jobd.queue_counts, a cache
 * every server shares (migration 4), read by requests (st_queue_stats) and
 * refreshed in the background by each server's counts thread
 * (src/api/countsd.c), at most once per max age over all servers.
 *
 * Why the recount is cut in pieces. Finished jobs are the bulk of a store
 * (kept 7 days by default), and a count of all of them in one statement
 * holds one snapshot for as long as it reads them: 3.4 s at 11 million
 * finished jobs in the soak of 2026-12-07 (docs/BENCHMARKS.md, Soak). While
 * a snapshot that old is open, VACUUM cannot remove the row versions that
 * claims and completions leave dead in jobd.jobs, so the hot table's
 * indexes grew in steps with each long count. So a refresh counts the hot
 * tables (their size is the backlog) in one statement, jobs_done in ranges
 * of heap blocks (a TID range scan of each partition, each range its own
 * statement and snapshot), and writes the sums in one short transaction.
 * The pieces are not one snapshot: a job that ends while they run can be
 * counted twice or not at all until the next refresh, which the cache's
 * age allows anyway (docs/API.md, GET /v1/queues). Only the first fill of a
 * cache that was never filled is one statement in one transaction, once,
 * on the request path if no counts thread has filled it yet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/rules.h"
#include "store/operator_int.h"
#include "store/pg/internal.h"

#define PG_COUNTS_LOCK "7316048275123" /* advisory lock key: one first fill at a time */

/* $1 now, $2 max age in ms: whether the cache is older than that. */
PG_STMT(st_counts_stale,
        "SELECT computed_at <= " PG_NOW("$1") " - " PG_MS("$2") " FROM jobd.queue_counts_meta");

/* $1 now, $2 max age in ms: in the first fill's transaction, true if this server should fill. */
PG_STMT(st_counts_claim,
        "SELECT pg_try_advisory_xact_lock(" PG_COUNTS_LOCK
        ") AND computed_at <= " PG_NOW("$1") " - " PG_MS("$2") " FROM jobd.queue_counts_meta");

PG_STMT(st_counts_clear, "DELETE FROM jobd.queue_counts");

/* $1 now: the first fill, in one statement. */
/* clang-format off */
PG_STMT(st_counts_fill,
     "WITH f AS (INSERT INTO jobd.queue_counts (queue, status, n, oldest)"
     "  SELECT queue, status, sum(n), min(oldest) FROM ("
     "    SELECT queue, status, count(*) AS n,"
     "           min(run_at) FILTER (WHERE status = 'pending') AS oldest"
     "      FROM jobd.jobs GROUP BY queue, status"
     "    UNION ALL SELECT queue, status, count(*), NULL FROM jobd.jobs_done"
     "      GROUP BY queue, status"
     "    UNION ALL SELECT queue, status, count(*), NULL FROM jobd.jobs_waiting"
     "      GROUP BY queue, status) c GROUP BY queue, status RETURNING 1) "
     "UPDATE jobd.queue_counts_meta SET computed_at = " PG_NOW("$1"));

/*
 * $1 now, $2 max age in ms: takes the refresh of a filled cache for this
 * server (one row back) by marking it fresh now, so that every other server
 * finds it fresh and leaves it; a refresh that then fails leaves the old
 * counts one more period.
 */
PG_STMT(st_counts_take,
     "UPDATE jobd.queue_counts_meta SET computed_at = " PG_NOW("$1")
     " WHERE computed_at <= " PG_NOW("$1") " - " PG_MS("$2")
     "   AND computed_at > '-infinity' RETURNING 1");

/* The hot tables: (queue, status, count, oldest pending run_at in us or NULL). */
PG_STMT(st_counts_hot,
     "SELECT queue, status, count(*),"
     "       " PG_TS_US("min(run_at) FILTER (WHERE status = 'pending')")
     "  FROM jobd.jobs GROUP BY queue, status"
     " UNION ALL SELECT queue, status, count(*), NULL FROM jobd.jobs_waiting"
     "  GROUP BY queue, status");

/* The heap blocks of jobs_done's largest partition: how far the ranges go. */
PG_STMT(st_counts_blocks,
     "SELECT coalesce(max(pg_relation_size(relid)), 0) / current_setting('block_size')::bigint"
     "  FROM pg_partition_tree('jobd.jobs_done') WHERE isleaf");

/*
 * $1, $2 heap block numbers: jobs_done's rows in blocks [$1, $2) of every
 * partition, by queue and status (a TID range scan of each; a partition
 * the planner believes empty may be read whole, still counted once).
 */
PG_STMT(st_counts_done_range,
     "SELECT queue, status, count(*), NULL FROM jobd.jobs_done"
     " WHERE ctid >= format('(%s,0)', $1::bigint)::tid"
     "   AND ctid < format('(%s,0)', $2::bigint)::tid"
     " GROUP BY queue, status");

/* $1 queues, $2 statuses, $3 counts, $4 oldest pending in us: the pieces, summed. */
PG_STMT(st_counts_put,
     "INSERT INTO jobd.queue_counts (queue, status, n, oldest)"
     " SELECT q, st, sum(n), min(" PG_US_TS("o") ")"
     "   FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS c(q, st, n, o)"
     "  GROUP BY q, st");
/* clang-format on */

/* $1 now: (queue, paused, status, count, oldest due pending age in us), by queue. */
PG_STMT(st_queue_stats,
        "SELECT s.name, COALESCE(q.paused, false), s.status, s.n, s.age_us FROM ("
        "  SELECT queue AS name, status, n,"
        "         CASE WHEN oldest <= " PG_NOW(
            "$1") " THEN"
                  "           " PG_TS_US(PG_NOW("$1")) " - " PG_TS_US(
                      "oldest") " END AS age_us"
                                "    FROM jobd.queue_counts WHERE n > 0"
                                "  UNION ALL SELECT name, NULL, 0, NULL FROM jobd.queues) s "
                                "LEFT JOIN jobd.queues q ON q.name = s.name ORDER BY s.name");

/* Whether the cache is older than vals' max age ($2). */
static int
counts_stale(struct store_pg *s, const char *const *vals, bool *stale, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_counts_stale, 2, vals, &r, err);
    *stale = rc == JOBD_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return rc;
}

/* Fills a cache never filled, in one transaction, unless another server is doing it now. */
static int
first_fill(struct store_pg *s, const char *const *vals, bool *mine, struct jobd_error *err)
{
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    PGresult *r = NULL;
    rc = pg_exec(s, &st_counts_claim, 2, vals, &r, err);
    *mine = rc == JOBD_OK && PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (rc == JOBD_OK && *mine &&
        (rc = pg_exec(s, &st_counts_clear, 0, NULL, &r, err)) == JOBD_OK) {
        PQclear(r);
        if ((rc = pg_exec(s, &st_counts_fill, 1, vals, &r, err)) == JOBD_OK)
            PQclear(r);
    }
    if (rc != JOBD_OK)
        *mine = false;
    return pg_tx_end(s, rc, err);
}

/* The counted pieces, one array per column of st_counts_put. */
struct pieces {
    struct pg_array q, st, n, oldest;
};

/* Appends r's rows (queue, status, count, oldest in us or NULL) to p. */
static void
pieces_add(struct pieces *p, const PGresult *r)
{
    for (int row = 0; row < PQntuples(r); row++) {
        pg_array_add_str(&p->q, PQgetvalue(r, row, 0));
        pg_array_add_str(&p->st, PQgetvalue(r, row, 1));
        pg_array_add_i64(&p->n, pg_get_i64(r, row, 2), false);
        bool none = PQgetisnull(r, row, 3);
        pg_array_add_i64(&p->oldest, none ? 0 : pg_get_i64(r, row, 3), none);
    }
}

/* Runs stmt with vals and adds its rows to p. */
static int
count_into(struct store_pg *s, const struct pg_stmt *stmt, int n, const char *const *vals,
           struct pieces *p, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, stmt, n, vals, &r, err);
    if (rc == JOBD_OK) {
        pieces_add(p, r);
        PQclear(r);
    }
    return rc;
}

/* Counts jobs_done by ranges of PG_COUNTS_CHUNK_BLOCKS heap blocks into p. */
static int
count_done(struct store_pg *s, struct pieces *p, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_counts_blocks, 0, NULL, &r, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t blocks = pg_get_i64(r, 0, 0);
    PQclear(r);
    for (int64_t b = 0; rc == JOBD_OK && b < blocks; b += PG_COUNTS_CHUNK_BLOCKS) {
        char lo[24], hi[24];
        /* the last range is open-ended: the partition may have grown since */
        int64_t end = b + PG_COUNTS_CHUNK_BLOCKS < blocks ? b + PG_COUNTS_CHUNK_BLOCKS : INT32_MAX;
        const char *vals[2] = {pg_i64(lo, b), pg_i64(hi, end)};
        rc = count_into(s, &st_counts_done_range, 2, vals, p, err);
    }
    return rc;
}

/* Replaces the cache's rows by the sums of p, in one short transaction. */
static int
put_counts(struct store_pg *s, struct pieces *p, struct jobd_error *err)
{
    const char *vals[4] = {pg_array_end(&p->q), pg_array_end(&p->st), pg_array_end(&p->n),
                           pg_array_end(&p->oldest)};
    for (int i = 0; i < 4; i++)
        if (vals[i] == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    int rc = pg_tx_begin(s, err);
    if (rc != JOBD_OK)
        return rc;
    PGresult *r = NULL;
    if ((rc = pg_exec(s, &st_counts_clear, 0, NULL, &r, err)) == JOBD_OK) {
        PQclear(r);
        if ((rc = pg_exec(s, &st_counts_put, 4, vals, &r, err)) == JOBD_OK)
            PQclear(r);
    }
    return pg_tx_end(s, rc, err);
}

/* Refreshes a filled cache in pieces (the file's comment), unless another server took it. */
static int
refresh(struct store_pg *s, const char *const *vals, bool *mine, struct jobd_error *err)
{
    PGresult *r = NULL;
    int rc = pg_exec(s, &st_counts_take, 2, vals, &r, err);
    *mine = rc == JOBD_OK && PQntuples(r) == 1;
    PQclear(r);
    if (!*mine)
        return rc;
    struct pieces p;
    pg_array_begin(&p.q);
    pg_array_begin(&p.st);
    pg_array_begin(&p.n);
    pg_array_begin(&p.oldest);
    rc = count_into(s, &st_counts_hot, 0, NULL, &p, err);
    if (rc == JOBD_OK)
        rc = count_done(s, &p, err);
    if (rc == JOBD_OK)
        rc = put_counts(s, &p, err);
    pg_array_fini(&p.q);
    pg_array_fini(&p.st);
    pg_array_fini(&p.n);
    pg_array_fini(&p.oldest);
    if (rc != JOBD_OK)
        *mine = false;
    return rc;
}

int
pg_op_counts_refresh(struct store *st, int64_t max_age_ms, bool *recounted, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char nowb[24], ageb[24], foreverb[24];
    const char *vals[2] = {pg_now_param(s, nowb), pg_i64(ageb, max_age_ms > 0 ? max_age_ms : 0)};
    /* An age no cache has but one never filled ('-infinity'). */
    const char *never_vals[2] = {vals[0], pg_i64(foreverb, 1000LL * 3600 * 24 * 365 * 1000)};
    bool stale = false, never = false;
    *recounted = false;
    int rc = counts_stale(s, vals, &stale, err);
    if (rc == JOBD_OK && stale)
        rc = counts_stale(s, never_vals, &never, err);
    if (rc == JOBD_OK && stale)
        rc = never ? first_fill(s, vals, recounted, err) : refresh(s, vals, recounted, err);
    return rc;
}

int
pg_op_queue_stats(struct store *st, struct queue_stat **out, size_t *n, struct jobd_error *err)
{
    struct store_pg *s = pg_of(st);
    char nowb[24], ageb[24];
    /* An age no cache has but one never filled ('-infinity'): filled here, once. */
    const char *vals[2] = {pg_now_param(s, nowb), pg_i64(ageb, 1000LL * 3600 * 24 * 365 * 1000)};
    bool never = false, mine = false;
    PGresult *r = NULL;
    int rc = counts_stale(s, vals, &never, err);
    if (rc == JOBD_OK && never)
        rc = first_fill(s, vals, &mine, err);
    if (rc == JOBD_OK)
        rc = pg_exec(s, &st_queue_stats, 1, vals, &r, err);
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
        if (!PQgetisnull(r, row, 2) && job_status_parse(PQgetvalue(r, row, 2), &status) == JOBD_OK)
            q->count[status] += pg_get_i64(r, row, 3);
        if (!PQgetisnull(r, row, 4)) { /* NULL: none due (st_queue_stats) */
            q->any_due = true;
            q->oldest_pending_age_s = (double)pg_get_i64(r, row, 4) / 1e6;
        }
    }
    PQclear(r);
    if ((rc = pg_qlimits_fill(s, v, k, err)) != JOBD_OK) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return JOBD_OK;
}
