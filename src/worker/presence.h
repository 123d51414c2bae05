/*
 * presence.h — a worker's presence in the store (GET /v1/workers): it
 * announces itself when it starts, refreshes its presence at every
 * heartbeat interval, says so while it drains, and withdraws when it stops.
 *
 * Kept apart from the worker loop so the loop only calls presence_tick and
 * presence_withdraw. Presence is advice for operators: a failure to write it
 * never stops or slows the worker (it is retried at the next interval).
 * Loop thread only.
 */
#ifndef JOBD_WORKER_PRESENCE_H
#define JOBD_WORKER_PRESENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "store/operator.h"
#include "worker/config.h"

struct presence {
    struct worker_info info; /* owned strings (presence_fini) */
    int64_t next_us;         /* monotonic time of the next refresh; 0 = announce now */
    bool announced;
    bool draining; /* what the store was last told */
    bool off;      /* the store keeps no presence */
};

/* Describes the worker (id, queues, handler types, concurrency, interval). */
void presence_init(struct presence *p, const struct worker_config *cfg, const char *id,
                   const char *const *types, size_t n_types);
/* Announces, refreshes when due, or reports draining (at once when it starts). */
void presence_tick(struct presence *p, struct store *st, int64_t now_mono_us, bool draining);
/* The monotonic time of the next refresh (for the loop's sleep); 0 if none. */
int64_t presence_next_us(const struct presence *p);
/* Withdraws the worker from the store (it stops). st may be NULL. */
void presence_withdraw(struct presence *p, struct store *st);
void presence_fini(struct presence *p);

#endif
