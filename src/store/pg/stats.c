/*
 * pg/stats.c — statistics (store/stats.h) on PostgreSQL: the table, its
 * readers and its prune. The writers are the job statements themselves:
 * each adds its counts with a PG_STATS_* CTE (stats_int.h), so the counts
 * commit or roll back with the jobs they count, at one upsert per
 * statement and queue.
 *
 * A bucket is spread over up to STATS_PG_SHARDS rows (pg_backend_pid() %
 * 16): with one row, every completion batch of every worker would update
 * the same tuple and wait for the previous one's commit, serialising the
 * fleet's completions on one lock. fillfactor 50 leaves room in each page
 * for HOT updates of the counters (no index column changes), so the
 * dead tuples they leave are pruned in place.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/stats_int.h"
#include "store/pg/internal.h"

/* Schema step 12 (pg/schema.c). The primary key serves every reader: a
 * range of t, optionally one queue within it; and the prune (t < cutoff). */
const char pg_step_stats[] =
    "CREATE TABLE jobd.stats_buckets (\n"
    "    t          bigint NOT NULL,\n"
    "    queue      text NOT NULL,\n"
    "    shard      int NOT NULL,\n"
    "    enqueued   bigint NOT NULL DEFAULT 0,\n"
    "    succeeded  bigint NOT NULL DEFAULT 0,\n"
    "    failed     bigint NOT NULL DEFAULT 0,\n"
    "    dead       bigint NOT NULL DEFAULT 0,\n"
    "    PRIMARY KEY (t, queue, shard)\n"
    ") WITH (fillfactor = 50);\n"
    "COMMENT ON TABLE jobd.stats_buckets IS 'jobs enqueued, succeeded, failed and dead per"
    " queue in 10-second buckets (t: start, epoch seconds); rows of one bucket and queue add"
    " up';\n";

/* $1 from, $2 to, $3 step, $4 queue or NULL: the sums per point of the series. */
PG_STMT(st_stats_series,
        "SELECT (t - $1::bigint) / $3::bigint, sum(enqueued), sum(succeeded), sum(failed),"
        "       sum(dead) FROM jobd.stats_buckets"
        " WHERE t >= $1::bigint AND t < $2::bigint AND ($4::text IS NULL OR queue = $4::text)"
        " GROUP BY 1");

/* $1 from: the sums per queue since then, by name in byte order (bsearch in stats.c). */
PG_STMT(
    st_stats_throughput,
    "SELECT queue, sum(enqueued), sum(succeeded), sum(failed), sum(dead)"
    " FROM jobd.stats_buckets WHERE t >= $1::bigint GROUP BY queue ORDER BY queue COLLATE \"C\"");

PG_STMT(st_stats_prune,
        "WITH d AS (DELETE FROM jobd.stats_buckets WHERE t < $1::bigint RETURNING 1)"
        " SELECT count(*) FROM d");

int
pg_op_stats_series(struct store *st, int64_t from_s, int64_t step_s, size_t n, const char *queue,
                   struct stats_point *points, struct jobd_error *err)
{
    char b[3][24];
    const char *vals[4] = {pg_i64(b[0], from_s), pg_i64(b[1], from_s + (int64_t)n * step_s),
                           pg_i64(b[2], step_s), queue};
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, &st_stats_series, 4, vals, &r, err);
    for (int row = 0; rc == JOBD_OK && row < PQntuples(r); row++) {
        int64_t i = pg_get_i64(r, row, 0);
        for (int k = 0; i >= 0 && (size_t)i < n && k < STATS_KINDS; k++)
            points[i].n[k] += pg_get_i64(r, row, 1 + k);
    }
    PQclear(r);
    return rc;
}

int
pg_op_stats_throughput(struct store *st, int64_t from_s, struct stats_queue **out, size_t *n,
                       struct jobd_error *err)
{
    char b[24];
    const char *vals[1] = {pg_i64(b, from_s)};
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, &st_stats_throughput, 1, vals, &r, err);
    int rows = rc == JOBD_OK ? PQntuples(r) : 0;
    if (rows > 0 && (*out = calloc((size_t)rows, sizeof **out)) == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (int row = 0; rc == JOBD_OK && row < rows; row++) {
        struct stats_queue *q = &(*out)[row];
        const char *name = PQgetvalue(r, row, 0);
        size_t len = strlen(name);
        memcpy(q->name, name, len < JOB_QUEUE_MAX ? len : JOB_QUEUE_MAX);
        for (int k = 0; k < STATS_KINDS; k++)
            q->n[k] = pg_get_i64(r, row, 1 + k);
        *n = (size_t)row + 1;
    }
    PQclear(r);
    return rc;
}

int
pg_op_stats_prune(struct store *st, int64_t before_s, int *deleted, struct jobd_error *err)
{
    char b[24];
    const char *vals[1] = {pg_i64(b, before_s)};
    PGresult *r = NULL;
    int rc = pg_exec((struct store_pg *)st, &st_stats_prune, 1, vals, &r, err);
    if (rc == JOBD_OK)
        *deleted = (int)pg_get_i64(r, 0, 0);
    PQclear(r);
    return rc;
}
