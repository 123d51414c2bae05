/*
 * backoff.c — full-jitter retry delays (the AWS architecture blog's "full
 * jitter": spreading retries uniformly over [0, ceiling] avoids the
 * thundering herd that plain exponential backoff produces).
 *
 * The ceiling doubles per attempt but saturates at the cap before anything
 * can overflow, so attempt may be anything up to INT32_MAX. The random
 * source is a parameter: no globals, and tests are deterministic. Pure.
 */
#include "core/backoff.h"

#include <stdbool.h>

#include "core/job.h"

int64_t
backoff_ceiling_ms(int32_t attempt, int64_t base_ms, int64_t cap_ms)
{
    if (base_ms <= 0)
        base_ms = JOB_DEFAULT_BACKOFF_BASE_MS;
    if (cap_ms <= 0)
        cap_ms = JOB_DEFAULT_BACKOFF_CAP_MS;
    if (attempt < 0)
        attempt = 0;
    if (base_ms >= cap_ms)
        return cap_ms;
    /* base * 2^attempt <= cap  <=>  base <= cap >> attempt (for attempt < 63);
     * beyond 62 doublings any positive base exceeds every int64 cap. */
    if (attempt >= 63 || base_ms > (cap_ms >> attempt))
        return cap_ms;
    return base_ms << attempt;
}

int64_t
backoff_delay_ms(int32_t attempt, int64_t base_ms, int64_t cap_ms, backoff_rand_fn rnd, void *ctx)
{
    int64_t ceiling = backoff_ceiling_ms(attempt, base_ms, cap_ms);
    if (rnd == NULL)
        return ceiling;
    uint64_t r = rnd(ctx, (uint64_t)ceiling);
    /* A misbehaving source must not push the delay past the ceiling. */
    return r > (uint64_t)ceiling ? ceiling : (int64_t)r;
}

static uint64_t
splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t
backoff_rand_splitmix(void *state, uint64_t bound)
{
    uint64_t *s = state;
    if (bound == UINT64_MAX)
        return splitmix64(s);
    /* Rejection sampling: drop the low values that would make the modulo
     * favour small results, so every value in [0, bound] is equally likely. */
    uint64_t range = bound + 1;
    uint64_t threshold = (0 - range) % range;
    for (;;) {
        uint64_t x = splitmix64(s);
        if (x >= threshold)
            return x % range;
    }
}

int64_t
backoff_next(int64_t delay_ms, int64_t min_ms, int64_t max_ms)
{
    if (min_ms <= 0)
        min_ms = 1;
    if (max_ms < min_ms)
        max_ms = min_ms;
    if (delay_ms <= 0 || delay_ms < min_ms)
        return min_ms;
    /* delay * 2 > max  <=>  delay > max / 2 (no overflow for any int64). */
    return delay_ms > max_ms / 2 ? max_ms : delay_ms * 2;
}

void
backoff_conn_init(struct backoff_conn *b, int64_t min_ms, int64_t max_ms, int64_t healthy_ms)
{
    b->min_ms = min_ms;
    b->max_ms = max_ms;
    b->healthy_ms = healthy_ms;
    b->delay_ms = 0;
    b->opened_ms = -1;
}

void
backoff_conn_opened(struct backoff_conn *b, int64_t now_ms)
{
    b->opened_ms = now_ms;
}

int64_t
backoff_conn_failed(struct backoff_conn *b, int64_t now_ms)
{
    bool lasted = b->opened_ms >= 0 && now_ms - b->opened_ms >= b->healthy_ms;
    b->opened_ms = -1;
    b->delay_ms = lasted ? backoff_next(0, b->min_ms, b->max_ms)
                         : backoff_next(b->delay_ms, b->min_ms, b->max_ms);
    return b->delay_ms;
}
