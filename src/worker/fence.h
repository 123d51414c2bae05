/*
 * fence.h — the lease watchdog: a thread that stops a run when its lease
 * ends by the worker's own clock, whatever the loop thread is doing.
 *
 * The loop thread owns the slots and makes every store call; a call into a
 * silent network (packets dropped, no RST) can block it for as long as the
 * partition lasts, and a lease check on that thread would wait with it
 * while the handler works on under a lease that may already be someone
 * else's. So the lease ends are published here, one entry per slot, under
 * this module's own mutex, and a separate thread fires the stop.
 *
 * Handoff (race-free by one rule: whoever takes an armed entry owns the
 * stop): the loop arms an entry once the run is handed to its runner,
 * extends it after each answered heartbeat and disarms it when the slot
 * ends. The watchdog, when an armed entry's lease end passes, disarms it,
 * marks it fired and calls fire() — outside the lock — which stops the run
 * by (id, attempt), so a stop that arrives after the slot was reused hits
 * nothing. fence_extend and fence_disarm report "already fired", so the
 * loop learns that the run is being stopped and its result is nobody's.
 * Thread-safe; fire() runs on the watchdog thread.
 */
#ifndef JOBD_WORKER_FENCE_H
#define JOBD_WORKER_FENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"

/* How soon the fence thread tries again when it could not allocate its list
 * of due entries: 100 ms is late enough not to spin and early enough that a
 * lease end is still caught well inside the fence margin. */
#define FENCE_OOM_RETRY_US 100000

struct fence;

/* Called on the watchdog thread when a lease ran out; tag is what fence_arm got. */
typedef void (*fence_fire_fn)(void *arg, int64_t id, int32_t attempt, const void *tag);

/*
 * Starts the watchdog for n entries (slots 0..n-1). *out is owned by the
 * caller (fence_free). JOBD_E_NOMEM / JOBD_E_IO with err set.
 */
JOBD_MUST_USE int fence_new(int n, fence_fire_fn fire, void *arg, struct fence **out,
                            struct jobd_error *err);
/* Stops the watchdog thread and frees f (NULL is fine). Nothing fires after it returns. */
void fence_free(struct fence *f);

/*
 * Watches slot: the run (id, attempt) must be stopped at lease_end_us
 * (clock_mono_now_us scale). tag (borrowed, must outlive the entry) is
 * handed to fire(). Replaces whatever the entry held.
 */
void fence_arm(struct fence *f, int slot, int64_t id, int32_t attempt, int64_t lease_end_us,
               const void *tag);
/*
 * Moves slot's lease end to lease_end_us (a renewal was answered). False
 * if the entry fired already (the run is being stopped) or is not armed.
 */
bool fence_extend(struct fence *f, int slot, int64_t lease_end_us);
/* Stops watching slot. True if the entry fired (and was not re-armed since). */
bool fence_disarm(struct fence *f, int slot);
/* True if slot's entry fired (the run is being stopped by the watchdog). */
bool fence_fired(struct fence *f, int slot);
/*
 * How many entries have fired since fence_new, without taking the lock: a
 * loop that saw the same count last time need not ask fence_fired of
 * every slot (an entry that fires after the read raises the count again).
 */
uint64_t fence_fired_count(struct fence *f);
/* How many times the watchdog has looked at its entries (for tests). */
uint64_t fence_scans(struct fence *f);

#endif
