/*
 * flusher.h — writes a worker's completions on a thread and a store
 * connection of its own, so that on PostgreSQL the completion of one batch
 * and the claim of the next run at the same time on two backends (two
 * cores) instead of one after the other on the loop's connection.
 *
 * The loop hands over everything its completer gathered (flusher_push, one
 * lock, no copy); the flusher thread writes it with completer_flush, as
 * much as arrived meanwhile per statement, and pokes the loop's wake-up
 * after each flush so a stopping loop sees the pending count fall. If its
 * store goes away it keeps the completions and reconnects with backoff;
 * fencing (attempt) makes a late write harmless. What is still unwritten at
 * flusher_stop is dropped: those leases run out (as in the loop).
 */
#ifndef JOBD_WORKER_FLUSHER_H
#define JOBD_WORKER_FLUSHER_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/wakeup.h"
#include "worker/completer.h"

struct flusher;

/* Opens a store connection for url (store_open). */
typedef int (*flusher_open_fn)(const char *url, struct store **out, struct jobd_error *err);

/*
 * Starts the flusher thread with its own connection to url (copied),
 * opened with open (the first connection is made here: its error is returned). notify
 * (borrowed, must outlive the flusher) is signalled after every flush.
 * *out is owned by the caller (flusher_stop).
 */
JOBD_MUST_USE int flusher_start(const char *url, flusher_open_fn open, struct wakeup *notify,
                                struct flusher **out, struct jobd_error *err);
/*
 * Moves every completion queued in from (which is left empty) to the
 * flusher. False on out-of-memory (from is then left as it was). Thread-safe.
 */
bool flusher_push(struct flusher *f, struct completer *from);
/* Completions handed over and not yet written or fenced off. Thread-safe. */
size_t flusher_pending(struct flusher *f);
/*
 * Adds the counts since the last call to *written, *stale and *batches
 * (attempts the store took, attempts fenced off, statements). Thread-safe.
 */
void flusher_take_counts(struct flusher *f, uint64_t *written, uint64_t *stale, uint64_t *batches);
/* Stops and joins the thread; drops what is unwritten; frees f. NULL-safe.
 * Not concurrently with flusher_push (the loop calls both). */
void flusher_stop(struct flusher *f);

#endif
