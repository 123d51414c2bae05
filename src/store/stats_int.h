/*
 * stats_int.h — the backends' halves of store/stats.h: the pieces the job
 * statements of each backend call to count what they do (a CTE for
 * PostgreSQL, a counter of the open transaction for SQLite), the schema
 * steps, and the operations behind the wrappers. Not for use outside
 * src/store.
 */
#ifndef JOBD_STORE_STATS_INT_H
#define JOBD_STORE_STATS_INT_H

#include <stdbool.h>

#include "store/stats.h"

/* ---- PostgreSQL ---- */

/* Counter rows per bucket and queue (see stats.h). */
#define STATS_PG_SHARDS 16

/* The start of the bucket of timestamptz expression now, as epoch seconds. */
#define PG_STATS_T(now) "(floor(extract(epoch from " now ") / 10) * 10)::bigint"
/*
 * A CTE named stats_add (put it after the CTE it reads) adding to the
 * bucket of now the counts of sel, a query of rows (queue, enqueued,
 * succeeded, failed, dead) with one row per queue. Its statement must not
 * touch jobd.stats_buckets otherwise (an upsert may not change a row twice).
 */
/* clang-format off */
#define PG_STATS_CTE(now, sel)                                                          \
    " stats_add AS (INSERT INTO jobd.stats_buckets AS b"                                \
    "  (t, queue, shard, enqueued, succeeded, failed, dead)"                            \
    "  SELECT " PG_STATS_T(now) ", c.queue, pg_backend_pid() % 16, c.e, c.s, c.f, c.d"   \
    "  FROM (" sel ") c(queue, e, s, f, d) WHERE c.e + c.s + c.f + c.d > 0"             \
    "  ON CONFLICT (t, queue, shard) DO UPDATE SET enqueued = b.enqueued + excluded.enqueued," \
    "  succeeded = b.succeeded + excluded.succeeded, failed = b.failed + excluded.failed," \
    "  dead = b.dead + excluded.dead) "
/* The rows of from (a CTE of job rows) as enqueued / succeeded. */
#define PG_STATS_ENQUEUED(now, from)                                                    \
    PG_STATS_CTE(now, "SELECT queue, count(*), 0, 0, 0 FROM " from " GROUP BY queue")
#define PG_STATS_SUCCEEDED(now, from)                                                   \
    PG_STATS_CTE(now, "SELECT queue, 0, count(*), 0, 0 FROM " from " GROUP BY queue")
/* The rows of from (with a column fate: pending, dead or cancelled) as failed / dead. */
#define PG_STATS_FATES(now, from)                                                       \
    PG_STATS_CTE(now, "SELECT queue, 0, 0, count(*) FILTER (WHERE fate = 'pending'),"   \
                      " count(*) FILTER (WHERE fate = 'dead') FROM " from " GROUP BY queue")
/* clang-format on */

/* Schema step: the table jobd.stats_buckets (pg/schema.c). */
extern const char pg_step_stats[];

/* ---- SQLite ---- */

struct sqlite_store;
/* One (bucket, queue) of the open transaction. */
struct sq_stats_row {
    int64_t t;
    char queue[JOB_QUEUE_MAX + 1];
    int64_t n[STATS_KINDS];
};
/* The counts of a connection's open transaction (struct sqlite_store). */
struct sq_stats {
    struct sq_stats_row *v;
    size_t n, cap;
    bool oom; /* a count was lost: the flush fails the transaction */
};
/* Schema step: the table stats_buckets (sqlite/schema.c). */
extern const char sq_step_stats[];
/*
 * Counts one job of queue as kind at now_us, in the open write
 * transaction: kept in memory until sq_stats_flush. Out of memory is
 * remembered and fails the flush (so the transaction), never a lost count.
 */
void sq_stats_count(struct sqlite_store *s, const char *queue, enum stats_kind kind,
                    int64_t now_us);
/* Writes the transaction's counts (one upsert per bucket and queue); before COMMIT. */
int sq_stats_flush(struct sqlite_store *s, struct jobd_error *err);
/* Forgets the transaction's counts (it rolled back). */
void sq_stats_reset(struct sqlite_store *s);
/* Frees the counter of s (at close). */
void sq_stats_free(struct sqlite_store *s);

/*
 * ---- the operations (operator vtable) ----
 * stats_series adds the counts of [from_s, from_s + n * step_s) of queue
 * (NULL = all) into points[0..n) (zeroed, t_s set by the caller), bucket b
 * into point (b - from_s) / step_s. stats_throughput: the counts since
 * from_s per queue, by name (malloc'd; the caller's). All times in seconds.
 */

int pg_op_stats_series(struct store *st, int64_t from_s, int64_t step_s, size_t n,
                       const char *queue, struct stats_point *points, struct jobd_error *err);
int sq_op_stats_series(struct store *st, int64_t from_s, int64_t step_s, size_t n,
                       const char *queue, struct stats_point *points, struct jobd_error *err);
int pg_op_stats_throughput(struct store *st, int64_t from_s, struct stats_queue **out, size_t *n,
                           struct jobd_error *err);
int sq_op_stats_throughput(struct store *st, int64_t from_s, struct stats_queue **out, size_t *n,
                           struct jobd_error *err);
int pg_op_stats_prune(struct store *st, int64_t before_s, int *deleted, struct jobd_error *err);
int sq_op_stats_prune(struct store *st, int64_t before_s, int *deleted, struct jobd_error *err);

#endif
