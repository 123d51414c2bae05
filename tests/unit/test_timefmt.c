/*
 * test_timefmt.c — RFC 3339 in and out (docs/MODEL.md, "Durations, times,
 * ids"): offsets, fraction digits 0..9, the calendar (leap years, month
 * lengths), every refusal, the exact output form, and the civil-day algorithm
 * against a naive day count.
 */
#include "core/err.h"
#include "core/timefmt.h"
#include "test.h"

#define T_2026 INT64_C(1796220197120000) /* 2026-12-02T14:03:17.120Z */

TEST(parse_valid)
{
    static const struct {
        const char *in;
        int64_t us;
    } cases[] = {
        {"2026-12-02T14:03:17.120Z", T_2026},
        {"2026-12-02T14:03:17.12Z", T_2026},
        {"2026-12-02T14:03:17.120000000Z", T_2026},
        {"2026-12-02T15:03:17.120+01:00", T_2026},
        {"2026-12-02T19:48:17.120+05:45", T_2026},
        {"2026-12-02T14:03:17.120-00:00", T_2026},
        {"2026-12-02T14:03:17.120+00:00", T_2026},
        {"2026-12-02T08:18:17.120-05:45", T_2026},
        {"2026-12-02t14:03:17.120z", T_2026},
        {"2026-12-02 14:03:17.120Z", T_2026},
        {"2026-12-02T00:00:00-23:59", INT64_C(1796255940000000)},
        {"2026-12-02T14:03:17.123456Z", INT64_C(1796220197123456)},
        {"2000-02-29T00:00:00Z", INT64_C(951782400000000)},
        {"2024-02-29T23:59:59.999999Z", INT64_C(1709251199999999)},
        {"2100-03-01T00:00:00Z", INT64_C(4107542400000000)},
        {"1970-01-01T00:00:00Z", 0},
        {"1970-01-01T05:30:00+05:30", 0},
        {"9999-12-31T23:59:59.999999Z", INT64_C(253402300799999999)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct jobd_error e = {0};
        int64_t us = -1;
        ASSERT_OK(time_parse_rfc3339(cases[i].in, &us, "run_at", &e), &e);
        if (us != cases[i].us)
            TEST_FAIL("%s: got %lld, want %lld", cases[i].in, (long long)us,
                      (long long)cases[i].us);
    }
}

TEST(fraction_digits_0_to_9)
{
    /* "17", "17.1", "17.12", ... "17.123456789": kept to microseconds,
     * truncated beyond. */
    static const int64_t want_frac[10] = {0,      100000, 120000, 123000, 123400,
                                          123450, 123456, 123456, 123456, 123456};
    const char *digits = "123456789";
    for (int n = 0; n <= 9; n++) {
        char s[64];
        if (n == 0)
            snprintf(s, sizeof s, "2026-12-02T14:03:17Z");
        else
            snprintf(s, sizeof s, "2026-12-02T14:03:17.%.*sZ", n, digits);
        struct jobd_error e = {0};
        int64_t us = -1;
        ASSERT_OK(time_parse_rfc3339(s, &us, "t", &e), &e);
        ASSERT_EQ(us, T_2026 - 120000 + want_frac[n]);
    }
    /* Truncation never carries into the next second. */
    struct jobd_error e = {0};
    int64_t us = -1;
    ASSERT_OK(time_parse_rfc3339("2026-12-02T14:03:17.9999999999Z", &us, "t", &e), &e);
    ASSERT_EQ(us, T_2026 - 120000 + 999999);
}

TEST(parse_refusals_name_the_field)
{
    static const char *const bad[] = {
        "",
        "2026-12-02",           /* no time */
        "2026-12-02T14:03Z",    /* no seconds */
        "2026-12-02T14:03:17",  /* no offset */
        "2026-12-02T24:00:00Z", /* 24:00 refused */
        "2026-12-02T23:60:00Z",
        "2026-12-02T23:59:60Z", /* leap second */
        "2026-13-01T00:00:00Z",
        "2026-00-01T00:00:00Z",
        "2026-12-00T00:00:00Z",
        "2026-12-32T00:00:00Z",
        "2026-02-29T00:00:00Z", /* not a leap year */
        "2100-02-29T00:00:00Z", /* century, not a leap year */
        "2026-04-31T00:00:00Z",
        "2026-12-02T14:03:17.Z", /* point without digits */
        "2026-12-02T14:03:17,5Z",
        "2026-12-02T14:03:17+0100", /* offset without colon */
        "2026-12-02T14:03:17+01",
        "2026-12-02T14:03:17+24:00", /* offset out of range */
        "2026-12-02T14:03:17+01:60",
        "2026-12-02T14:03:17Zjunk",
        "2026-12-02T14:03:17Z ",
        " 2026-12-02T14:03:17Z",
        "26-12-02T14:03:17Z",
        "2026-1-02T14:03:17Z",
        "2026-12-02X14:03:17Z",
        "2026-12-02T1:03:17Z",
        "+2026-12-02T14:03:17Z",
        "1969-12-31T23:59:59.999Z", /* before 1970 */
        "1970-01-01T00:00:00+00:01",
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59-00:01", /* after 9999 in UTC: would print as year 10000 */
        "9999-12-31T01:00:00-23:00",
        "now",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jobd_error e = {0};
        int64_t us = 4242;
        if (time_parse_rfc3339(bad[i], &us, "run_at", &e) != JOBD_E_INVALID)
            TEST_FAIL("'%s' accepted as %lld", bad[i], (long long)us);
        ASSERT_STR_EQ(e.field, "run_at");
        ASSERT(strstr(e.msg, "run_at") != NULL);
        ASSERT_EQ(us, 4242);
    }
    struct jobd_error e = {0};
    int64_t us;
    ASSERT_EQ(time_parse_rfc3339(NULL, &us, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "time");
    ASSERT_EQ(time_parse_rfc3339("2026-12-02T24:00:00Z", &us, "at", &e), JOBD_E_INVALID);
    ASSERT(strstr(e.msg, "hour") != NULL);
    ASSERT_EQ(time_parse_rfc3339("2026-02-29T00:00:00Z", &us, "at", &e), JOBD_E_INVALID);
    ASSERT(strstr(e.msg, "day does not exist") != NULL);
    /* Found by fuzz_time: the latest instants still read, the next is refused by name. */
    ASSERT_OK(time_parse_rfc3339("9999-12-31T23:59:59.999999Z", &us, "at", &e), &e);
    ASSERT_EQ(us, TIME_MAX_US);
    ASSERT_OK(time_parse_rfc3339("9999-12-31T23:59:59+00:00", &us, "at", &e), &e);
    ASSERT_EQ(time_parse_rfc3339("9999-12-31T23:30:00-01:00", &us, "at", &e), JOBD_E_INVALID);
    ASSERT(strstr(e.msg, "after 9999-12-31") != NULL);
}

TEST(format_utc_millis)
{
    static const struct {
        int64_t us;
        const char *out;
    } cases[] = {
        {T_2026, "2026-12-02T14:03:17.120Z"},
        {T_2026 + 999, "2026-12-02T14:03:17.120Z"}, /* truncated, not rounded */
        {0, "1970-01-01T00:00:00.000Z"},
        {1, "1970-01-01T00:00:00.000Z"},
        {1000, "1970-01-01T00:00:00.001Z"},
        {-1, "1969-12-31T23:59:59.999Z"},
        {INT64_C(951782400000000), "2000-02-29T00:00:00.000Z"},
        {INT64_C(1709251199999999), "2024-02-29T23:59:59.999Z"},
        {INT64_C(253402300799999999), "9999-12-31T23:59:59.999Z"},
        /* Either side of the years written by hand (0..9999) */
        {INT64_C(-62135596800000000), "0001-01-01T00:00:00.000Z"},
        {INT64_C(-62167219200000000), "0000-01-01T00:00:00.000Z"},
        {INT64_C(-62167219200000001), "-001-12-31T23:59:59.999Z"},
        {INT64_C(253402300800000000), "10000-01-01T00:00:00.000Z"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[TIME_RFC3339_LEN];
        ASSERT_STR_EQ(time_format_rfc3339(cases[i].us, buf, sizeof buf), cases[i].out);
    }
    /* The extremes must not crash or overflow. */
    char buf[TIME_RFC3339_LEN];
    ASSERT(time_format_rfc3339(INT64_MAX, buf, sizeof buf)[0] != '\0');
    ASSERT(time_format_rfc3339(INT64_MIN, buf, sizeof buf)[0] != '\0');
    ASSERT(strlen(buf) < TIME_RFC3339_LEN);
    char small[8];
    time_format_rfc3339(T_2026, small, sizeof small);
    ASSERT_STR_EQ(small, "2026-12");
}

TEST(round_trip_over_the_years)
{
    /* Every ~13.7 days over 1970..2400, plus odd milliseconds. */
    int64_t step = INT64_C(1183200123) * 1000;
    for (int64_t us = 0; us < INT64_C(13569465600000000); us += step) {
        int64_t ms_us = us / 1000 * 1000;
        char buf[TIME_RFC3339_LEN];
        time_format_rfc3339(ms_us, buf, sizeof buf);
        ASSERT_EQ(strlen(buf), 24);
        struct jobd_error e = {0};
        int64_t back = -1;
        ASSERT_OK(time_parse_rfc3339(buf, &back, "t", &e), &e);
        ASSERT_EQ(back, ms_us);
    }
}

static int
naive_is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

TEST(civil_days_against_naive_count)
{
    /* Walk day by day from 1600-01-01 to 2500-12-31 and compare. */
    static const unsigned dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t days = time_days_from_civil(1600, 1, 1);
    ASSERT_EQ(time_days_from_civil(1970, 1, 1), 0);
    ASSERT_EQ(time_days_from_civil(2000, 3, 1), 11017);
    ASSERT_EQ(time_days_from_civil(1969, 12, 31), -1);
    for (int64_t y = 1600; y <= 2500; y++) {
        for (unsigned m = 1; m <= 12; m++) {
            unsigned n = dim[m - 1] + (m == 2 && naive_is_leap(y));
            for (unsigned d = 1; d <= n; d++) {
                if (time_days_from_civil(y, m, d) != days)
                    TEST_FAIL("%lld-%u-%u: %lld != %lld", (long long)y, m, d,
                              (long long)time_days_from_civil(y, m, d), (long long)days);
                int64_t yy;
                unsigned mm, dd;
                time_civil_from_days(days, &yy, &mm, &dd);
                if (yy != y || mm != m || dd != d)
                    TEST_FAIL("day %lld: %lld-%u-%u, want %lld-%u-%u", (long long)days,
                              (long long)yy, mm, dd, (long long)y, m, d);
                days++;
            }
        }
    }
}

TEST(leap_day_lengths)
{
    static const struct {
        int y;
        int leap;
    } years[] = {{1900, 0}, {1996, 1}, {2000, 1}, {2023, 0}, {2024, 1}, {2100, 0}, {2400, 1}};
    for (size_t i = 0; i < sizeof years / sizeof years[0]; i++) {
        char s[40];
        snprintf(s, sizeof s, "%04d-02-29T12:00:00Z", years[i].y);
        int64_t us;
        int rc = time_parse_rfc3339(s, &us, "t", NULL);
        if (years[i].y < 1970) {
            ASSERT_EQ(rc, JOBD_E_INVALID); /* before the epoch either way */
            continue;
        }
        ASSERT_EQ(rc, years[i].leap ? JOBD_OK : JOBD_E_INVALID);
        int64_t d = time_days_from_civil(years[i].y, 3, 1) - time_days_from_civil(years[i].y, 2, 1);
        ASSERT_EQ(d, 28 + years[i].leap);
    }
}
