/*
 * test_num.c — core/num.h's libm-free rounding against libm's own (this
 * test links libm; libjobd does not): round(3) and floor(3) on halves,
 * signed zeros, values near 2^52 and 2^63, NaN and infinities, and a
 * million pseudo-random doubles of every magnitude.
 */
#include <math.h>

#include "core/num.h"
#include "test.h"

static void
same_round(double x)
{
    double want = round(x), got = num_round(x);
    if (isnan(want)) {
        ASSERT(isnan(got));
        return;
    }
    if (!(got == want && signbit(got) == signbit(want)))
        fprintf(stderr, "num_round(%a) = %a, round gives %a\n", x, got, want);
    ASSERT(got == want && signbit(got) == signbit(want));
}

static void
same_floor(double x)
{
    int64_t want;
    if (isnan(x) || x < -9223372036854775808.0)
        want = INT64_MIN;
    else if (x >= 9223372036854775808.0)
        want = INT64_MAX;
    else
        want = (int64_t)floor(x);
    int64_t got = num_floor_i64(x);
    if (got != want)
        fprintf(stderr, "num_floor_i64(%a) = %" PRId64 ", floor gives %" PRId64 "\n", x, got, want);
    ASSERT_EQ(got, want);
}

static const double edges[] = {
    0.0,
    -0.0,
    0.5,
    -0.5,
    0.49999999999999994,
    -0.49999999999999994,
    1.5,
    -1.5,
    2.5,
    -2.5,
    0.3,
    -0.3,
    0.7,
    -0.7,
    1e-300,
    -1e-300,
    4503599627370495.5,
    -4503599627370495.5,
    4503599627370496.0,
    -4503599627370496.0,
    4503599627370497.0,
    9007199254740993.0,
    9223372036854774784.0,
    -9223372036854775808.0,
    9223372036854775808.0,
    -9223372036854777856.0,
    1e300,
    -1e300,
    1699999999999.5,
    -1699999999999.5,
    7.0005,
    1234.4999999999998,
};

TEST(round_edges)
{
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        same_round(edges[i]);
    same_round(NAN);
    same_round(INFINITY);
    same_round(-INFINITY);
}

TEST(floor_edges)
{
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        same_floor(edges[i]);
    same_floor(NAN);
    same_floor(INFINITY);
    same_floor(-INFINITY);
}

/* xorshift64*: the same doubles on every run. */
static uint64_t
next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

TEST(random_doubles)
{
    uint64_t s = UINT64_C(0x9e3779b97f4a7c15);
    for (int i = 0; i < 1000000; i++) {
        uint64_t r = next(&s);
        /* A mantissa and a sign, with an exponent of at most 2^70, so that
         * most values have a fraction and some are past 2^52 and 2^63. */
        double m = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
        double x = ldexp(m, (int)(next(&s) % 71)) * ((r & 1) ? -1 : 1);
        same_round(x);
        same_floor(x);
        same_round(x + 0.5); /* halves, and the values just around them */
        same_floor(x + 0.5);
    }
}

TEST(milliseconds_of_seconds)
{
    /* jobjson's two uses: seconds to whole ms (llround before) and a value
     * in seconds rounded to the ms. */
    static const double secs[] = {0.0015, 0.0025, 2.5, 1.23456, 0.0005, 86400.0004999, 1e9};
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) {
        ASSERT_EQ((long long)num_round(secs[i] * 1000.0), llround(secs[i] * 1000.0));
        ASSERT(num_round(secs[i] * 1000.0) / 1000.0 == round(secs[i] * 1000.0) / 1000.0);
    }
}
