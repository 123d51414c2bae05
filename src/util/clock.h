/*
 * clock.h — the source of "now", injectable so tests control time.
 *
 * Production code reads time through a struct jobd_clock; tests hand in a
 * manual clock and move it forward, so no test sleeps for time to pass.
 * A clock is a function pointer plus context: no globals.
 */
#ifndef JOBD_UTIL_CLOCK_H
#define JOBD_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

struct jobd_clock {
    /* Microseconds since the Unix epoch. Must be thread-safe. */
    int64_t (*now_us)(const struct jobd_clock *self);
    void *ctx;
};

/* The system's real-time clock (CLOCK_REALTIME). Static, never freed. */
const struct jobd_clock *clock_real(void);

/* Real time now, in microseconds since the epoch. */
int64_t clock_real_now_us(void);
/* Monotonic time now, in microseconds (for timeouts and intervals). */
int64_t clock_mono_now_us(void);

/*
 * The absolute time delay_us from now on clock_id (CLOCK_MONOTONIC, or
 * CLOCK_REALTIME for a condition variable left on its default clock), as
 * pthread_cond_timedwait takes it: tv_nsec normalised to [0, 1e9). A
 * negative delay counts as 0. The one place this sum is written.
 */
struct timespec clock_deadline_in(clockid_t clock_id, int64_t delay_us);

/*
 * The clock `jobd server` runs on: NULL (each store's own clock) except in a
 * build with JOBD_TEST_HOOKS (the sanitizer build of `make test`) started
 * with $JOBD_TEST_CLOCK_FILE set. Then it is real time plus the offset that
 * file holds (decimal seconds, may be negative; a missing or unreadable file
 * reads as 0), re-read at most every CLOCK_TEST_REREAD_MS, so a test through
 * the real binary can jump the server's wall clock forward or back while it
 * runs. A file holding "@US" instead stops the clock at that instant (Unix
 * microseconds), re-read at every reading while it does. Static, never freed; *path (may be NULL) receives the file's name.
 */
#define CLOCK_TEST_REREAD_MS 50
const struct jobd_clock *clock_for_server(const char **path);

/* A manual clock for tests: reads *(int64_t *)ctx atomically. */
struct manual_clock {
    struct jobd_clock clock;
    _Atomic int64_t now_us;
};
void manual_clock_init(struct manual_clock *mc, int64_t start_us);
void manual_clock_advance(struct manual_clock *mc, int64_t delta_us);
void manual_clock_set(struct manual_clock *mc, int64_t now_us);

static inline int64_t
clock_now_us(const struct jobd_clock *c)
{
    return c->now_us(c);
}

#endif
