/*
 * commit.h — group commit for POST /v1/jobs. Under load, one fsync (SQLite)
 * or one WAL flush (PostgreSQL) per request caps throughput at the disk's
 * flush rate; instead, concurrent single-job requests queue here and one
 * committer thread (with its own store connection) writes everything that
 * is waiting in one transaction, then answers each request. A lone request
 * pays no extra latency: the committer takes it at once.
 *
 * A batch is all or nothing in the store, but one bad item must fail only
 * its own request: items are validated before they queue, and if the batch
 * still fails for a reason other than an unreachable store, the committer
 * retries the items one by one. Thread-safe.
 */
#ifndef JOBD_API_COMMIT_H
#define JOBD_API_COMMIT_H

#include <stdbool.h>

#include "api/storepool.h"
#include "core/job.h"
#include "util/wakeup.h"

struct committer;
struct api_metrics;

/* Most items written in one transaction. */
#define COMMIT_BATCH_MAX 512

/*
 * Starts the committer thread. pool, wake (may be NULL; signalled after each
 * commit that wrote something) and metrics (may be NULL; counts
 * transactions) are borrowed and must outlive it.
 */
int committer_start(struct store_pool *pool, struct wakeup *wake, struct api_metrics *metrics,
                    struct committer **out, struct jobd_error *err);
/* Writes what is queued, stops the thread, frees. NULL-safe. */
void committer_stop(struct committer *c);
/*
 * Enqueues spec (borrowed; already validated) through the next group commit
 * and waits for it. Same results as store_enqueue.
 */
int committer_enqueue(struct committer *c, const struct job_spec *spec, struct job *out,
                      bool *replayed, struct jobd_error *err);

#endif
