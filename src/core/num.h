/*
 * num.h — the rounding jobd needs, without libm. Pure.
 *
 * libjobd does not link libm: loading it costs every process that maps it
 * ~0.3 MB of resident memory (its relocations and IFUNC resolvers touch its
 * pages), which a C worker on PostgreSQL would pay for four calls it never
 * makes (the API's JSON seconds, a time zone's transitions). SQLite, which
 * needs libm, is loaded on first use (util/lazylib.h). So the few roundings
 * are done here; tests/unit/test_num.c checks them against libm's.
 */
#ifndef JOBD_CORE_NUM_H
#define JOBD_CORE_NUM_H

#include <stdint.h>

/* round(3): to the nearest integer, halves away from zero, the sign of x
 * kept (round(-0.3) is -0.0); NaN and infinities come back as they are. */
static inline double
num_round(double x)
{
    /* 2^52: from there on every double is an integer already. */
    if (!(x > -4503599627370496.0 && x < 4503599627370496.0))
        return x;
    double t = (double)(int64_t)x; /* toward zero; exact below 2^52 */
    double f = x - t;              /* exact: the fraction */
    if (f >= 0.5)
        t += 1.0;
    else if (f <= -0.5)
        t -= 1.0;
    return __builtin_copysign(t, x);
}

/* floor(3) as an integer; x below -2^63 (or NaN) gives INT64_MIN, x at or
 * above 2^63 INT64_MAX. */
static inline int64_t
num_floor_i64(double x)
{
    if (!(x >= -9223372036854775808.0))
        return INT64_MIN;
    if (x >= 9223372036854775808.0)
        return INT64_MAX;
    int64_t i = (int64_t)x;           /* toward zero */
    return (double)i > x ? i - 1 : i; /* a negative x with a fraction */
}

#endif
