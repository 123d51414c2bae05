/*
 * backoff.h — "full jitter" retry delays (docs/MODEL.md, "Backoff"):
 *   delay = random(0, min(cap, base * 2^attempt))
 * The random source is injected so tests are deterministic. Pure.
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
int64_t backoff_delay_ms(int32_t attempt, int64_t base_ms, int64_t cap_ms,
                         backoff_rand_fn rnd, void *ctx);

/* The upper bound min(cap, base * 2^attempt) itself, for tests and docs. */
int64_t backoff_ceiling_ms(int32_t attempt, int64_t base_ms, int64_t cap_ms);

/*
 * A small PRNG (splitmix64) usable as backoff_rand_fn with state = a
 * uint64_t * seed/state that it advances. Unbiased over [0, bound]. Not for
 * cryptography; one state per thread.
 */
uint64_t backoff_rand_splitmix(void *state, uint64_t bound);

#endif
