/*
 * events.h — the event log behind GET /v1/events (docs/API.md, GET /v1/events;
 * docs/DESIGN.md, Events).
 *
 * Triggers in the store write each status change of a job into a table of
 * events (id increasing; a batch's claims, or successes, share one row per
 * queue and type, which the backends' reads expand into one event a job,
 * each with an id of its own: docs/DESIGN.md, Events), but only while some
 * server has had a client of
 * the stream within the last hour: store_events_listen says one has, and
 * prunes events over an hour old. Readers ask for the head of the log,
 * then read a range of it. On PostgreSQL ids come from a sequence, so a
 * row with a smaller id may commit after one with a larger: the head says
 * which snapshot it was read in, and a reader serves ids up to the head
 * of a snapshot only once every transaction running at that snapshot has
 * ended (api/events.c). SQLite's writers take turns: its head is final.
 */
#ifndef JOBD_STORE_EVENTS_H
#define JOBD_STORE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/job.h"
#include "store/store.h"

/* How long events are kept, and how long recording goes on after the last client. */
#define EVENTS_KEEP_US (3600LL * 1000000)

/* One event: a job's status changed. */
struct store_event {
    int64_t id;
    int64_t job;
    char queue[JOB_QUEUE_MAX + 1];
    char type[JOB_NAME_MAX + 1];
    char from[16]; /* "" when unknown: a new job, or a change older than the log */
    char to[16];
    int32_t attempt;
    int64_t at_us;
    int64_t workflow; /* the workflow the job is a step of, as read (0: none) */
};

/* The head of the log, as one snapshot saw it. */
struct events_head {
    int64_t max_id; /* the highest id visible (0: none) */
    bool final;     /* every id up to max_id is visible and no other will come */
    /* !final (PostgreSQL): the snapshot's xmin and xmax. Ids up to max_id
     * are final once a later head's xmin reaches this one's xmax. */
    uint64_t xmin, xmax;
};

/*
 * A server has a client of the stream: recording goes on (or starts again,
 * the log then starting after the highest id ever given), and events over
 * an hour old are pruned. *head: the head at this moment (where a new
 * client starts). JOBD_E_INVALID on a backend without events.
 */
JOBD_MUST_USE int store_events_listen(struct store *st, struct events_head *head,
                                      struct jobd_error *err);

/* The head of the log now. */
JOBD_MUST_USE int store_events_head(struct store *st, struct events_head *head,
                                    struct jobd_error *err);

/*
 * Events with after < id <= upto, in id order, at most limit, into *out
 * (malloc'd, the caller's; NULL when none) and *n. Each carries the
 * workflow its job is a step of when read (docs/MODEL.md, Workflows): a
 * workflow deleted since leaves it 0.
 */
JOBD_MUST_USE int store_events_read(struct store *st, int64_t after, int64_t upto, int limit,
                                    struct store_event **out, size_t *n, struct jobd_error *err);

/*
 * Whether a client that saw event `after` can be given every event since:
 * that event is still in the log, the log has every one after it
 * (recording went on since, none pruned) and none is over an hour old.
 */
JOBD_MUST_USE int store_events_resumable(struct store *st, int64_t after, bool *ok,
                                         struct jobd_error *err);

#endif
