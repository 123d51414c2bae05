/*
 * stats.h — statistics from the store (GET /v1/stats, the queue object's
 * throughput_1m): how many jobs were enqueued, succeeded, failed (a
 * retryable failure, timeout or reaped lease that went back to pending) and
 * went dead (a permanent failure, or the last attempt, reaped or not), per
 * queue, in 10-second buckets.
 *
 * The counters live in the store, not in a server's memory, so every server
 * on one store answers the same. They cost at most one extra write per
 * batch, not one per job: the statement or transaction that enqueues,
 * completes, fails or reaps a batch of jobs also adds that batch's counts
 * to the bucket of its "now" (one upsert of the stats_buckets table per
 * queue in the batch). Being part of that transaction, the counts are exact:
 * a batch that rolls back (and is retried) counted nothing.
 *
 * PostgreSQL spreads each bucket over up to STATS_PG_SHARDS rows (chosen by
 * the writing connection's backend pid), so completion batches of different
 * workers do not queue behind one counter row's lock until they commit;
 * SQLite has one writer at a time and keeps one row per (bucket, queue).
 * Buckets older than STATS_KEEP_S are deleted by the scheduling plane's
 * prune pass (store_stats_prune).
 *
 * Not counted: cancels, manual retries, released attempts, deletions, and
 * jobs that applications enqueue with the SQL function jobd.enqueue inside
 * their own transactions (PostgreSQL only).
 *
 * Ownership as in store.h: out-structs are the caller's; arrays placed in
 * them are heap-owned by the caller afterwards (free()).
 */
#ifndef JOBD_STORE_STATS_H
#define JOBD_STORE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* The width of a bucket: every step is a multiple of it. */
#define STATS_BUCKET_S 10
/* How far back statistics go (and the longest `since`). */
#define STATS_KEEP_S (7 * 86400)
/* The window of throughput_1m. */
#define STATS_THROUGHPUT_S 60

/* What a bucket counts. */
enum stats_kind { STATS_ENQUEUED = 0, STATS_SUCCEEDED, STATS_FAILED, STATS_DEAD };
#define STATS_KINDS 4

/* One point of a series: the counts of [t_s, t_s + step). */
struct stats_point {
    int64_t t_s;            /* start, seconds since the epoch, a multiple of the step */
    int64_t n[STATS_KINDS]; /* indexed by enum stats_kind */
};

/* A series, oldest first; free(points) when done. */
struct stats_series {
    int64_t step_s;
    struct stats_point *points;
    size_t n;
};

/* One queue's counts over a window (store_stats_throughput). */
struct stats_queue {
    char name[JOB_QUEUE_MAX + 1];
    int64_t n[STATS_KINDS];
};

/*
 * The counts of the last since_s seconds in points of step_s seconds, of
 * queue (NULL = every queue), oldest first: ceil(since_s / step_s) points
 * aligned to multiples of step_s since the epoch, the last one holding now
 * (so it is still filling). Points with no events have zeros.
 * JOBD_E_INVALID naming "since" (not in 1 s .. STATS_KEEP_S) or "step"
 * (not a multiple of STATS_BUCKET_S, or longer than since). On success
 * *out (zeroed by the caller) is the caller's: free(out->points).
 */
JOBD_MUST_USE int store_stats_series(struct store *st, int64_t since_s, int64_t step_s,
                                     const char *queue, struct stats_series *out,
                                     struct jobd_error *err);
/*
 * Every queue's counts over the last window_s seconds (the buckets that
 * start after now - window_s, the current one included), by name. *out is a
 * malloc'd array of *n, the caller's (free()).
 */
JOBD_MUST_USE int store_stats_throughput(struct store *st, int64_t window_s,
                                         struct stats_queue **out, size_t *n,
                                         struct jobd_error *err);
/* Deletes the buckets that start before before_s. *deleted = how many rows. */
JOBD_MUST_USE int store_stats_prune(struct store *st, int64_t before_s, int *deleted,
                                    struct jobd_error *err);
/*
 * Fills each qs[i].throughput_1m from store_stats_throughput (zeros for a
 * queue without counts, or when the store keeps no statistics).
 */
JOBD_MUST_USE int store_stats_fill_queues(struct store *st, struct queue_stat *qs, size_t n,
                                          struct jobd_error *err);

#endif
