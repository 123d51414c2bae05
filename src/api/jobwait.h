/*
 * jobwait.h — requests waiting for a job to end: `GET /v1/jobs/{id}?wait=`
 * and `POST /v1/jobs?wait=` (docs/API.md, Waiting for a result).
 *
 * A waiting request must cost neither an HTTP thread nor a store
 * connection, and nothing may poll the store for it: the HTTP layer
 * suspends its connection (an api_deferred) and parks it here, and one
 * thread with a connection of its own (outside the request pool) answers
 * the parked waits when their jobs may have ended. It learns that from the
 * wake-up paths jobd already has: in-process (jobwait_signal, after this
 * server's own reports, cancels and deletes), and across processes from
 * the store (store_wait_ends: PostgreSQL NOTIFY jobd_done, the SQLite WAL
 * watch). On a wake-up it asks, in one query, for the states of every job
 * waited for, and resumes the waits whose job is terminal or gone; a wait
 * whose time is up, or whose client has left, is resumed too. Resuming is
 * all it does: the request's own thread then reads the job and answers.
 *
 * Memory per parked wait is one struct jw_entry inside the request's
 * deferred answer, besides libmicrohttpd's connection; how many may be
 * parked at once is bounded (jobwait_reserve). Thread-safe.
 */
#ifndef JOBD_API_JOBWAIT_H
#define JOBD_API_JOBWAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobd.h"
#include "util/clock.h"

struct jobwait;
struct api_metrics;

/* The longest wait a request may ask for (docs/API.md, Waiting for a result). */
#define JOBWAIT_MAX_MS 60000
/* Waits parked at once, by default (jobd server --max-waits). */
#define JOBWAIT_DEFAULT_MAX 10000

/*
 * One parked wait: embedded in the request's state, owned by it; the
 * thread uses it from jobwait_park until it calls resume, and never after.
 */
struct jw_entry {
    int64_t job_id;
    int64_t deadline_mono_us;
    void (*resume)(void *arg); /* called once, from the thread */
    bool (*alive)(void *arg);  /* NULL, or false once the client has gone */
    void *arg;
    bool fresh; /* parked since the last pass: its state not yet read */
    struct jw_entry *prev, *next;
};

/*
 * Starts the thread. url: the store it opens its own connection to (a
 * direct one where the pool goes through a transaction pooler: LISTEN);
 * copied. clock (may be NULL) and metrics (may be NULL) are borrowed.
 * max: waits parked at once, > 0.
 */
int jobwait_start(const char *url, const struct jobd_clock *clock, size_t max,
                  struct api_metrics *metrics, struct jobwait **out, struct jobd_error *err);
/*
 * Takes a place for one wait; false when max waits are parked or placed
 * already (the caller answers 429 too_many_waits). A place is given back
 * by the thread once the wait it was parked for is resumed, or with
 * jobwait_unreserve if it is never parked.
 */
bool jobwait_reserve(struct jobwait *jw);
void jobwait_unreserve(struct jobwait *jw);
/*
 * Parks e (its fields above set by the caller: job_id, deadline_mono_us,
 * resume, alive, arg) on a place taken with jobwait_reserve. resume(arg)
 * is called exactly once, from the thread (or from here, when stopping):
 * once the job is terminal or no longer exists, its deadline has passed,
 * alive said the client has gone, or the thread stops.
 */
void jobwait_park(struct jobwait *jw, struct jw_entry *e);
/* A job may have ended in this process (a report, a cancel): look now. NULL-safe. */
void jobwait_signal(struct jobwait *jw);
/* Waits parked now. */
size_t jobwait_parked(struct jobwait *jw);
/* Resumes every parked wait and joins the thread; later parks resume at
 * once. NULL-safe, idempotent. */
void jobwait_stop(struct jobwait *jw);
/* jobwait_stop, then frees: no HTTP thread may use jw any more. NULL-safe. */
void jobwait_free(struct jobwait *jw);

#endif
