/*
 * test_clock_deadline.c — clock_deadline_in (util/clock.h), the one place a
 * delay becomes a pthread_cond_timedwait deadline: tv_nsec stays in
 * [0, 1e9) whatever the delay, the sum is right to the microsecond, and a
 * negative delay counts as 0.
 */
#include "util/clock.h"

#include "test.h"

static int64_t
us_of(struct timespec ts)
{
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t
now_us(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return us_of(ts);
}

TEST(normalised_and_summed)
{
    static const int64_t delays[] = {
        0, 1, 999, 999999, 1000000, 1000001, 1999999, 2500000, 86400LL * 1000000 + 123456};
    clockid_t clocks[] = {CLOCK_MONOTONIC, CLOCK_REALTIME};
    for (size_t c = 0; c < 2; c++) {
        for (size_t i = 0; i < sizeof delays / sizeof delays[0]; i++) {
            int64_t before = now_us(clocks[c]);
            struct timespec ts = clock_deadline_in(clocks[c], delays[i]);
            int64_t after = now_us(clocks[c]);
            ASSERT(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
            ASSERT(us_of(ts) >= before + delays[i]);
            ASSERT(us_of(ts) <= after + delays[i]);
        }
    }
}

TEST(negative_is_now)
{
    int64_t before = now_us(CLOCK_MONOTONIC);
    struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, -5000000);
    ASSERT(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
    ASSERT(us_of(ts) >= before && us_of(ts) <= now_us(CLOCK_MONOTONIC));
}
