/*
 * test_backoff.c — full jitter (docs/MODEL.md, "Backoff"): the ceiling
 * min(cap, base * 2^attempt) for every attempt up to INT32_MAX without
 * overflow, the defaults, the delay bounds, and the distribution with a fixed
 * seed.
 */
#include "core/backoff.h"
#include "core/job.h"
#include "test.h"

TEST(ceiling_table)
{
    static const struct {
        int32_t attempt;
        int64_t base, cap, want;
    } cases[] = {
        {0, 0, 0, 5000}, /* defaults: 5s, 15m */
        {1, 0, 0, 10000},
        {2, 0, 0, 20000},
        {7, 0, 0, 640000},
        {8, 0, 0, 900000}, /* 1,280,000 capped at 15m */
        {25, 0, 0, 900000},
        {-5, 0, 0, 5000}, /* negative attempt counts as 0 */
        {1, 1, 1000, 2},
        {9, 1, 1000, 512},
        {10, 1, 1000, 1000},
        {10, 1, 1024, 1024},
        {62, 1, INT64_MAX, INT64_C(1) << 62},
        {63, 1, INT64_MAX, INT64_MAX},
        {64, 1, INT64_MAX, INT64_MAX},
        {1000, 1, INT64_MAX, INT64_MAX},
        {INT32_MAX, 0, 0, 900000},
        {INT32_MAX, 1, INT64_MAX, INT64_MAX},
        {INT32_MAX, INT64_MAX, INT64_MAX, INT64_MAX},
        {3, 2000, 1000, 1000}, /* base above cap gives the cap */
        {1, -7, -7, 10000},    /* negative base/cap take defaults */
        {30, INT64_MAX / 2, INT64_MAX, INT64_MAX},
        {1, INT64_MAX / 2, INT64_MAX, INT64_MAX - 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t got = backoff_ceiling_ms(cases[i].attempt, cases[i].base, cases[i].cap);
        if (got != cases[i].want)
            TEST_FAIL("case %zu: attempt %d base %lld cap %lld: %lld, want %lld", i,
                      cases[i].attempt, (long long)cases[i].base, (long long)cases[i].cap,
                      (long long)got, (long long)cases[i].want);
    }
}

TEST(ceiling_monotone_for_every_attempt_shift)
{
    int64_t prev = 0;
    for (int32_t a = 0; a < 200; a++) {
        int64_t c = backoff_ceiling_ms(a, 3, INT64_MAX / 3);
        ASSERT(c >= prev);
        ASSERT(c <= INT64_MAX / 3);
        prev = c;
    }
    for (int32_t a = INT32_MAX - 100; a > 0 && a <= INT32_MAX - 1; a++)
        ASSERT_EQ(backoff_ceiling_ms(a, 5000, 900000), 900000);
}

static uint64_t
always_max(void *ctx, uint64_t bound)
{
    (void)ctx;
    return bound;
}

static uint64_t
always_zero(void *ctx, uint64_t bound)
{
    (void)ctx;
    (void)bound;
    return 0;
}

static uint64_t
too_big(void *ctx, uint64_t bound)
{
    (void)ctx;
    return bound + 12345;
}

static uint64_t
record_bound(void *ctx, uint64_t bound)
{
    *(uint64_t *)ctx = bound;
    return bound / 2;
}

TEST(delay_uses_the_source_within_bounds)
{
    ASSERT_EQ(backoff_delay_ms(3, 0, 0, always_max, NULL), 40000);
    ASSERT_EQ(backoff_delay_ms(3, 0, 0, always_zero, NULL), 0);
    ASSERT_EQ(backoff_delay_ms(3, 0, 0, too_big, NULL), 40000); /* clamped */
    ASSERT_EQ(backoff_delay_ms(3, 0, 0, NULL, NULL), 40000);
    uint64_t seen = 0;
    ASSERT_EQ(backoff_delay_ms(INT32_MAX, 0, 0, record_bound, &seen), 450000);
    ASSERT_EQ(seen, 900000);
    ASSERT_EQ(backoff_delay_ms(INT32_MAX, 1, INT64_MAX, always_max, NULL), INT64_MAX);
}

TEST(splitmix_is_deterministic_and_in_range)
{
    uint64_t s1 = 42, s2 = 42, s3 = 43;
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t a = backoff_rand_splitmix(&s1, 999);
        uint64_t b = backoff_rand_splitmix(&s2, 999);
        uint64_t c = backoff_rand_splitmix(&s3, 999);
        ASSERT_EQ(a, b);
        ASSERT(a <= 999 && c <= 999);
        differ += a != c;
    }
    ASSERT(differ > 900);
    uint64_t s = 7;
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(backoff_rand_splitmix(&s, 0), 0);
    /* Full range and a bound just under it work. */
    uint64_t x = backoff_rand_splitmix(&s, UINT64_MAX);
    uint64_t y = backoff_rand_splitmix(&s, UINT64_MAX - 1);
    ASSERT(x != y);
    ASSERT(y <= UINT64_MAX - 1);
}

TEST(distribution_is_uniform_with_fixed_seed)
{
    /* 20,000 delays for attempt 2 (ceiling 20,000 ms): ten equal buckets
     * each get 10% +- 1.5%, the mean is ceiling/2 +- 2%, and both ends of
     * the interval are reached closely. */
    enum { N = 20000, BUCKETS = 10 };
    uint64_t seed = 20261202;
    int64_t ceiling = backoff_ceiling_ms(2, 0, 0);
    ASSERT_EQ(ceiling, 20000);
    int count[BUCKETS] = {0};
    int64_t min = INT64_MAX, max = -1;
    double sum = 0;
    for (int i = 0; i < N; i++) {
        int64_t d = backoff_delay_ms(2, 0, 0, backoff_rand_splitmix, &seed);
        ASSERT(d >= 0 && d <= ceiling);
        int b = (int)(d * BUCKETS / (ceiling + 1));
        count[b]++;
        sum += (double)d;
        if (d < min)
            min = d;
        if (d > max)
            max = d;
    }
    for (int b = 0; b < BUCKETS; b++)
        if (count[b] < N / BUCKETS * 85 / 100 || count[b] > N / BUCKETS * 115 / 100)
            TEST_FAIL("bucket %d has %d of %d", b, count[b], N);
    double mean = sum / N;
    ASSERT(mean > ceiling / 2.0 * 0.98 && mean < ceiling / 2.0 * 1.02);
    ASSERT(min < 50);
    ASSERT(max > ceiling - 50);
}

TEST(small_bound_hits_every_value)
{
    uint64_t seed = 1;
    int seen[4] = {0};
    for (int i = 0; i < 400; i++)
        seen[backoff_rand_splitmix(&seed, 3)]++;
    for (int v = 0; v < 4; v++)
        ASSERT(seen[v] > 60);
}

/* The one "double, capped" step: first min, then doubling up to the cap. */
TEST(next_doubles_from_min_to_cap)
{
    ASSERT_EQ(backoff_next(0, 100, 5000), 100);
    ASSERT_EQ(backoff_next(-3, 100, 5000), 100);
    ASSERT_EQ(backoff_next(100, 100, 5000), 200);
    ASSERT_EQ(backoff_next(2500, 100, 5000), 5000);
    ASSERT_EQ(backoff_next(3000, 100, 5000), 5000);
    ASSERT_EQ(backoff_next(5000, 100, 5000), 5000);
    ASSERT_EQ(backoff_next(50, 100, 5000), 100); /* below min: min */
    ASSERT_EQ(backoff_next(1, 1, 1), 1);
    ASSERT_EQ(backoff_next(4, 1, 0), 1);  /* cap below min: min */
    ASSERT_EQ(backoff_next(0, 0, 10), 1); /* min 0 counts as 1 */
    ASSERT_EQ(backoff_next(INT64_MAX, 1, INT64_MAX), INT64_MAX);
    ASSERT_EQ(backoff_next(INT64_MAX / 2, 1, INT64_MAX), INT64_MAX - 1);
    ASSERT_EQ(backoff_next(INT64_MAX / 2 + 1, 1, INT64_MAX), INT64_MAX);
    int64_t d = 0;
    int steps = 0;
    while (d != 5000) {
        d = backoff_next(d, 100, 5000);
        steps++;
    }
    ASSERT_EQ(steps, 7); /* 100 200 400 800 1600 3200 5000 */
}

/* Refused opens double the delay; a connection that opens does not reset it. */
TEST(conn_open_does_not_reset)
{
    struct backoff_conn b;
    backoff_conn_init(&b, 100, 5000, 10000);
    ASSERT_EQ(backoff_conn_failed(&b, 0), 100);
    ASSERT_EQ(backoff_conn_failed(&b, 100), 200);
    ASSERT_EQ(backoff_conn_failed(&b, 300), 400);
    /* It opens and fails at once (a listener whose LISTEN fails, a store
     * that accepts and errors): still backing off, not back to 100 ms. */
    backoff_conn_opened(&b, 700);
    ASSERT_EQ(backoff_conn_failed(&b, 750), 800);
    backoff_conn_opened(&b, 1550);
    ASSERT_EQ(backoff_conn_failed(&b, 1550 + 9999), 1600);
    for (int i = 0; i < 10; i++) {
        backoff_conn_opened(&b, 20000 + i);
        ASSERT(backoff_conn_failed(&b, 20000 + i) <= 5000);
    }
    ASSERT_EQ(b.delay_ms, 5000);
}

/* Only a connection that lasted healthy_ms starts the backoff over. */
TEST(conn_lasting_resets)
{
    struct backoff_conn b;
    backoff_conn_init(&b, 100, 5000, 10000);
    for (int i = 0; i < 8; i++)
        backoff_conn_failed(&b, i);
    ASSERT_EQ(b.delay_ms, 5000);
    backoff_conn_opened(&b, 50000);
    ASSERT_EQ(backoff_conn_failed(&b, 60000), 100); /* lasted exactly 10 s */
    ASSERT_EQ(backoff_conn_failed(&b, 60100), 200); /* the next open was refused */
    backoff_conn_opened(&b, 60300);
    ASSERT_EQ(backoff_conn_failed(&b, 90000), 100);
    /* A failure with no connection open never resets, however late. */
    ASSERT_EQ(backoff_conn_failed(&b, 999999), 200);
}
