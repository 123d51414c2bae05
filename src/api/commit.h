/*
 * commit.h — group commit for POST /v1/jobs. Under load, one fsync (SQLite)
 * or one WAL flush (PostgreSQL) per request caps throughput at the disk's
 * flush rate; instead, concurrent single-job requests queue here and one
 * committer thread (with its own store connection) writes everything that
 * is waiting in one transaction, then answers each request. A lone request
 * on an idle server pays no extra latency: the committer takes it at once;
 * right after a commit it waits briefly for the requests it just answered
 * to come back (at most as long as that commit took, see commit.c).
 *
 * A batch is all or nothing in the store, but one bad item must fail only
 * its own request: items are validated before they queue, and if the batch
 * still fails for a reason other than an unreachable store, the committer
 * retries the items one by one. Every item of a batch gets the batch's true
 * outcome: when the connection breaks at COMMIT the store learns whether it
 * took effect before answering (JOBD_OK, or JOBD_E_UNAVAILABLE: not
 * written), and if it cannot, every item gets JOBD_E_COMMIT_UNKNOWN and
 * none is retried (docs/API.md, Errors). Thread-safe.
 */
#ifndef JOBD_API_COMMIT_H
#define JOBD_API_COMMIT_H

#include <stdbool.h>

#include "api/storepool.h"
#include "core/job.h"
#include "util/wakeup.h"

struct committer;
struct api_metrics;

/*
 * One enqueue on its way through the committer. For committer_submit the
 * caller fills spec (borrowed until done_fn runs), out (may be NULL),
 * done_fn and done_arg, and zeroes the rest; the committer sets rc, err and
 * replayed, then calls done_fn(done_arg) once, from its own thread, after
 * which it never touches the item again.
 */
struct commit_item {
    const struct job_spec *spec;
    struct job *out;
    bool replayed;
    int rc;
    struct jobd_error err;
    void (*done_fn)(void *arg); /* NULL: a committer_enqueue caller waits instead */
    void *done_arg;
    bool done;                /* the committer's */
    struct commit_item *next; /* the committer's */
};

/* Most items written in one transaction. */
#define COMMIT_BATCH_MAX 512

/*
 * Starts the committer thread. pool, wake (may be NULL; signalled after each
 * commit that wrote something) and metrics (may be NULL; counts
 * transactions) are borrowed and must outlive it.
 */
int committer_start(struct store_pool *pool, struct wakeup *wake, struct api_metrics *metrics,
                    struct committer **out, struct jobd_error *err);
/*
 * Stops taking work and joins the thread after it wrote what was queued, so
 * every submitted item's done_fn has run (a deferred HTTP request is
 * resumed) when this returns; later submits fail at once with
 * JOBD_E_UNAVAILABLE. c stays valid until committer_stop. Thread-safe,
 * idempotent, NULL-safe.
 */
void committer_quiesce(struct committer *c);
/* committer_quiesce, then frees c: no other thread may use c any more. NULL-safe. */
void committer_stop(struct committer *c);
/*
 * Enqueues spec (borrowed; already validated) through the next group commit
 * and waits for it. Same results as store_enqueue.
 */
int committer_enqueue(struct committer *c, const struct job_spec *spec, struct job *out,
                      bool *replayed, struct jobd_error *err);
/*
 * The same without waiting: queues it (borrowed until it->done_fn runs) for
 * the next group commit. The HTTP layer uses it so that a request waiting
 * for its commit holds no thread: any number of concurrent requests, even
 * on one HTTP thread, share a transaction. If the committer is stopping,
 * it->rc is JOBD_E_UNAVAILABLE and done_fn runs before this returns.
 * Thread-safe; not after committer_stop.
 */
void committer_submit(struct committer *c, struct commit_item *it);

#endif
