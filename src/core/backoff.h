/*
 * backoff.h — "full jitter" retry delays (docs/MODEL.md, "Backoff"):
 *   delay = random(0, min(cap, base * 2^attempt))
 * The random source is injected so tests are deterministic. Pure.
 * Also the one "double, capped" step (backoff_next) and the reconnect
 * backoff with its one reset rule (struct backoff_conn).
 */
#ifndef JOBD_CORE_BACKOFF_H
#define JOBD_CORE_BACKOFF_H

#include <stdint.h>

/* Returns a uniformly distributed value in [0, bound] (inclusive). */
typedef uint64_t (*backoff_rand_fn)(void *ctx, uint64_t bound);

/*
 * The delay in ms before retrying after attempt (1-based). base_ms/cap_ms of
 * 0 (or less) take the defaults (5s, 15m); a base above the cap gives the
 * cap. Never overflows (2^attempt saturates at cap) for any int32 attempt; a
 * negative attempt counts as 0. rnd(ctx, ceiling) picks the delay; a result
 * above the ceiling is clamped; rnd NULL returns the ceiling itself.
 * Thread-safe if rnd is (ctx is only handed to rnd).
 */
int64_t backoff_delay_ms(int32_t attempt, int64_t base_ms, int64_t cap_ms, backoff_rand_fn rnd,
                         void *ctx);

/* The upper bound min(cap, base * 2^attempt) itself, for tests and docs. */
int64_t backoff_ceiling_ms(int32_t attempt, int64_t base_ms, int64_t cap_ms);

/*
 * A small PRNG (splitmix64) usable as backoff_rand_fn with state = a
 * uint64_t * seed/state that it advances. Unbiased over [0, bound]. Not for
 * cryptography; one state per thread.
 */
uint64_t backoff_rand_splitmix(void *state, uint64_t bound);

/*
 * One backoff step, the only place "double, capped" is written: the delay
 * after delay_ms failed again. delay_ms <= 0 (not backing off yet) gives
 * min_ms; otherwise twice delay_ms, capped at max_ms, never overflowing.
 * min_ms <= 0 counts as 1; max_ms below min_ms counts as min_ms. Pure.
 */
int64_t backoff_next(int64_t delay_ms, int64_t min_ms, int64_t max_ms);

/*
 * A reconnect backoff with jobd's one reset rule (docs/WORKER.md, How the
 * loop works): every failure (an open refused, or a connection that broke)
 * doubles the delay, and the delay starts over at min_ms only when the
 * connection that broke had lasted healthy_ms. A store that accepts and then
 * fails at once is therefore not retried at the minimum pace for ever.
 *
 * The caller owns the struct and reads its own monotonic clock (core has no
 * clock); now_ms only has to be monotonic. Not thread-safe: one per loop.
 */
struct backoff_conn {
    int64_t min_ms, max_ms, healthy_ms;
    int64_t delay_ms;  /* the last delay handed out; 0 = none since the reset */
    int64_t opened_ms; /* when the connection opened; -1 = not open */
};

/* Sets the bounds; no delay yet, not open. */
void backoff_conn_init(struct backoff_conn *b, int64_t min_ms, int64_t max_ms, int64_t healthy_ms);

/* A connection opened at now_ms. Does not reset the delay: only lasting does. */
void backoff_conn_opened(struct backoff_conn *b, int64_t now_ms);

/*
 * An open failed, or the open connection failed, at now_ms: returns the
 * delay to wait before the next open (min_ms if the connection had lasted
 * healthy_ms, else the next step) and marks the connection closed.
 */
int64_t backoff_conn_failed(struct backoff_conn *b, int64_t now_ms);

#endif
