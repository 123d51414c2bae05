/*
 * cancelwait.h — parked requests of remote workers waiting to hear of a
 * cancel: `GET /v1/cancels?jobs=&wait=` (docs/API.md, Hearing of a cancel;
 * docs/WORKER.md, Cancellation).
 *
 * A `jobd worker --server` keeps one such request open while it holds
 * jobs; it must be answered within a second of a cancel of one of them,
 * holding no HTTP thread and no store connection meanwhile, and without
 * polling the store. So the request parks here as an api_deferred (its
 * connection suspended), and one thread wakes every parked request when a
 * cancel may have been requested: in-process (the cancel routes'
 * wakeup_signal_cancel), or from the store on a connection of its own
 * (store_wait's STORE_WAKE_CANCEL: PostgreSQL NOTIFY jobd_cancel, the
 * SQLite WAL watch). Waking all on any cancel is what a --db worker does
 * too (each heartbeats every job it holds): a cancel is rare, and each
 * woken request then reads its own jobs' state once (store_cancels_requested)
 * on its own thread. A request whose time is up, or whose client left, is
 * resumed as well.
 *
 * A request reads its jobs before it parks; a cancel heard in between
 * bumps the generation it took before the read, and park then resumes it
 * at once. Thread-safe.
 */
#ifndef JOBD_API_CANCELWAIT_H
#define JOBD_API_CANCELWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobd.h"
#include "util/wakeup.h"

struct cancelwait;

/* Requests parked at once at most; the next is answered at once. */
#define CANCELWAIT_MAX 10000

/* One parked request: inside the request's state, owned by it; the thread
 * uses it from cancelwait_park until it calls resume, and never after. */
struct cw_entry {
    int64_t deadline_mono_us;
    void (*resume)(void *arg); /* called once, from the thread (or park) */
    bool (*alive)(void *arg);  /* NULL, or false once the client has gone */
    void *arg;
    struct cw_entry *prev, *next;
};

/*
 * Starts the thread. url: the store it opens its own connection to while
 * requests are parked (a direct one where the pool goes through a
 * transaction pooler: LISTEN); copied. wake (borrowed, may be NULL): the
 * server's in-process signal, whose cancel count it watches.
 */
int cancelwait_start(const char *url, struct wakeup *wake, struct cancelwait **out,
                     struct jobd_error *err);
/* The generation of cancels heard so far: taken before a request reads its jobs. */
uint64_t cancelwait_gen(struct cancelwait *cw);
/*
 * Parks e (deadline_mono_us, resume, alive, arg set by the caller). False,
 * without parking, when CANCELWAIT_MAX are parked or the thread stops: the
 * caller answers at once. Otherwise resume(arg) is called exactly once:
 * here, at once, if a cancel was heard since gen; else from the thread on
 * the next cancel, at the deadline, when the client has gone, or at stop.
 */
bool cancelwait_park(struct cancelwait *cw, struct cw_entry *e, uint64_t gen);
/* Requests parked now. */
size_t cancelwait_parked(struct cancelwait *cw);
/* Resumes every parked request and joins the thread; later parks are
 * refused. NULL-safe, idempotent. */
void cancelwait_stop(struct cancelwait *cw);
/* cancelwait_stop, then frees. NULL-safe. */
void cancelwait_free(struct cancelwait *cw);

#endif
