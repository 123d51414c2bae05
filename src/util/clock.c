/*
 * clock.c — real and manual clocks, and the test build's offset clock (see
 * clock.h). The offset clock exists so that clock jumps of the host can be
 * tested through the real binary without changing the host's clock; it is
 * compiled only into test builds so no production server can be misled by
 * a stray environment variable.
 */
#include "util/clock.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int64_t
clock_real_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
clock_mono_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct timespec
clock_deadline_in(clockid_t clock_id, int64_t delay_us)
{
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    if (delay_us < 0)
        delay_us = 0;
    int64_t ns = ts.tv_nsec + (delay_us % 1000000) * 1000;
    ts.tv_sec += (time_t)(delay_us / 1000000 + ns / 1000000000);
    ts.tv_nsec = (long)(ns % 1000000000);
    return ts;
}

static int64_t
real_now(const struct jobd_clock *self)
{
    (void)self;
    return clock_real_now_us();
}

static const struct jobd_clock real_clock = {real_now, NULL};

const struct jobd_clock *
clock_real(void)
{
    return &real_clock;
}

static int64_t
manual_now(const struct jobd_clock *self)
{
    const struct manual_clock *mc = (const struct manual_clock *)self;
    return atomic_load(&mc->now_us);
}

void
manual_clock_init(struct manual_clock *mc, int64_t start_us)
{
    mc->clock.now_us = manual_now;
    mc->clock.ctx = mc;
    atomic_store(&mc->now_us, start_us);
}

void
manual_clock_advance(struct manual_clock *mc, int64_t delta_us)
{
    atomic_fetch_add(&mc->now_us, delta_us);
}

void
manual_clock_set(struct manual_clock *mc, int64_t now_us)
{
    atomic_store(&mc->now_us, now_us);
}

#ifdef JOBD_TEST_HOOKS
static const char *offset_path;
static _Atomic int64_t offset_us;
static _Atomic int64_t offset_read_mono_us; /* 0 = never read */

static _Atomic int64_t frozen_us; /* 0 = not frozen */

/*
 * Re-reads the offset file when the last read is older than
 * CLOCK_TEST_REREAD_MS, or at every call once it held "@US" (a frozen
 * instant: the store conformance suite's remote runs keep the server on
 * their manual clock, which moves between two requests).
 */
static int64_t
offset_now(const struct jobd_clock *self)
{
    (void)self;
    int64_t mono = clock_mono_now_us(), last = atomic_load(&offset_read_mono_us);
    if (last == 0 || atomic_load(&frozen_us) != 0 || mono - last >= CLOCK_TEST_REREAD_MS * 1000LL) {
        double sec = 0;
        long long at = 0;
        FILE *f = fopen(offset_path, "r");
        if (f != NULL) {
            if (fscanf(f, "@%lld", &at) != 1 && fscanf(f, "%lf", &sec) != 1)
                sec = 0;
            fclose(f);
        }
        atomic_store(&frozen_us, (int64_t)at);
        atomic_store(&offset_us, (int64_t)(sec * 1e6));
        atomic_store(&offset_read_mono_us, mono);
    }
    int64_t at = atomic_load(&frozen_us);
    return at != 0 ? at : clock_real_now_us() + atomic_load(&offset_us);
}

static const struct jobd_clock offset_clock = {offset_now, NULL};
#endif

const struct jobd_clock *
clock_for_server(const char **path)
{
    if (path != NULL)
        *path = NULL;
#ifdef JOBD_TEST_HOOKS
    const char *file = getenv("JOBD_TEST_CLOCK_FILE");
    if (file != NULL && *file != '\0') {
        offset_path = file;
        if (path != NULL)
            *path = file;
        return &offset_clock;
    }
#endif
    return NULL;
}
