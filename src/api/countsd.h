/*
 * countsd.h — the server's counts thread. On a store whose queue counts are
 * a cache (store_counts_cached: PostgreSQL), it recounts them in the
 * background, so GET /v1/queues, the answers of pause and resume, and /metrics only
 * read the cache and cost the same at 10 jobs or 10 million. The cache is
 * shared by every server on the database and recounted by one of them at a
 * time; its age stays under about COUNTSD_MIN_MS, or about 5x the time a
 * recount takes when that is longer (docs/API.md, "GET /v1/queues").
 * On SQLite, whose counts are exact, the thread ends at once.
 */
#ifndef JOBD_API_COUNTSD_H
#define JOBD_API_COUNTSD_H

#include "api/storepool.h"
#include "jobd.h"

/* Recount at most this often (ms): the cache's usual age. */
#define COUNTSD_MIN_MS 1000
/* ...and no more often than this many times the last recount's duration, so
 * a huge store costs its database at most 1/COUNTSD_SPREAD of one core. */
#define COUNTSD_SPREAD 4

struct countsd;

/*
 * Starts the thread; it borrows a connection from pool for each pass (pool
 * must outlive it). On success *out is owned by the caller (countsd_stop).
 */
int countsd_start(struct store_pool *pool, struct countsd **out, struct jobd_error *err);
/* Stops the thread (after its current pass) and frees. NULL-safe. */
void countsd_stop(struct countsd *c);

#endif
