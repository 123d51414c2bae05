/*
 * clock.c — real and manual clocks (see clock.h).
 */
#include "util/clock.h"

#include <stdatomic.h>
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
