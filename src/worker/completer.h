/*
 * completer.h — batched completions.
 *
 * Successful attempts are not written one by one: the worker loop gathers
 * them here while it waits on the store anyway, and writes them with one
 * store_complete_batch per flush (docs/WORKER.md, "How the loop works"). What
 * could not be written (the store is away) stays queued, in order, and is
 * written by a later flush; its fencing (attempt) makes a late write safe.
 * Not thread-safe: owned by the loop thread.
 */
#ifndef JOBD_WORKER_COMPLETER_H
#define JOBD_WORKER_COMPLETER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* The most attempts one store_complete_batch carries. */
#define COMPLETER_BATCH_MAX 500

struct completer {
    struct completion *v; /* v[i].result points into results[i] (owned) */
    size_t n, cap;
    size_t batch_max; /* COMPLETER_BATCH_MAX unless a test sets less */
    uint64_t written; /* attempts the store took */
    uint64_t stale;   /* attempts the store fenced off */
    uint64_t refused; /* attempts the store refused even without a result (dropped) */
    uint64_t batches; /* store_complete_batch calls that succeeded */
};

void completer_init(struct completer *c);
void completer_fini(struct completer *c);
/* Queues (id, attempt) with result (JSON or NULL; ownership passes). False on OOM. */
bool completer_add(struct completer *c, int64_t id, int32_t attempt, char *result);
/*
 * Writes everything queued, batch_max at a time. On a store outage
 * (store_error_is_outage) stops, keeps the unwritten ones and returns the
 * error (err set). Stale attempts are counted and dropped: their result
 * belongs to nobody now. A batch the store refuses for its content is
 * written one by one: a refused result is dropped, a refused attempt too
 * (counted in refused, logged); neither is ever retried.
 */
JOBD_MUST_USE int completer_flush(struct completer *c, struct store *st, struct jobd_error *err);

#endif
