/*
 * test_duration.c — the duration grammar of docs/MODEL.md, "Durations, times,
 * ids": every accepted form, every refusal (with the field named), overflow
 * bounds, and the canonical formatting round trip.
 */
#include "core/duration.h"
#include "core/err.h"
#include "test.h"

TEST(valid_durations)
{
    static const struct {
        const char *in;
        int64_t ms;
    } cases[] = {
        {"0s", 0},
        {"0ms", 0},
        {"250ms", 250},
        {"2s", 2000},
        {"5m", 300000},
        {"1h", 3600000},
        {"1d", 86400000},
        {"1h30m", 5400000},
        {"1d2h3m4s5ms", 86400000 + 7200000 + 180000 + 4000 + 5},
        {"1m1ms", 60001},
        {"90s", 90000},
        {"007s", 7000},
        {"1500ms", 1500},
        {"2h0m", 7200000},
        {"106751991167d", INT64_C(106751991167) * 86400000},
        {"9223372036854775807ms", INT64_MAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct jobd_error e = {0};
        int64_t ms = -1;
        ASSERT_OK(duration_parse_ms(cases[i].in, &ms, "timeout", &e), &e);
        if (ms != cases[i].ms)
            TEST_FAIL("%s: got %lld, want %lld", cases[i].in, (long long)ms,
                      (long long)cases[i].ms);
    }
}

TEST(invalid_durations_name_the_field)
{
    static const char *const bad[] = {
        "",    /* empty */
        "5",   /* bare number */
        "s",   /* unit without number */
        "-5s", /* sign */
        "+5s",
        " 5s", /* spaces */
        "5s ",
        "5 s",
        "5sec", /* unknown unit */
        "5x",
        "1.5s",  /* fraction */
        "30m1h", /* wrong order */
        "1s1s",  /* unit twice */
        "1ms1s",
        "1h30", /* trailing number */
        "1hm",
        "5S", /* units are lowercase */
        "1w",
        "9223372036854775808ms", /* past INT64_MAX */
        "106751991168d",         /* past INT64_MAX in ms */
        "106751991167d1d",
        "99999999999999999999s",
        "9223372036854775807ms1s" /* unit order wrong anyway */,
        "106751991167d23h59m59s999ms", /* sum past INT64_MAX */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jobd_error e = {0};
        int64_t ms = 12345;
        int rc = duration_parse_ms(bad[i], &ms, "lease", &e);
        if (rc != JOBD_E_INVALID)
            TEST_FAIL("'%s' accepted (ms=%lld)", bad[i], (long long)ms);
        ASSERT_STR_EQ(e.field, "lease");
        ASSERT(strstr(e.msg, "lease") != NULL);
        ASSERT_EQ(ms, 12345); /* untouched on error */
    }
}

TEST(messages_say_what_is_wrong)
{
    struct jobd_error e = {0};
    int64_t ms;
    ASSERT_EQ(duration_parse_ms("30", &ms, "timeout", &e), JOBD_E_INVALID);
    ASSERT(strstr(e.msg, "needs a unit") != NULL);
    ASSERT_EQ(duration_parse_ms("30m1h", &ms, "timeout", &e), JOBD_E_INVALID);
    ASSERT(strstr(e.msg, "largest first") != NULL);
    ASSERT_EQ(duration_parse_ms("5q", &ms, "timeout", &e), JOBD_E_INVALID);
    ASSERT(strstr(e.msg, "unknown unit") != NULL);
    ASSERT_EQ(duration_parse_ms("99999999999999999999s", &ms, "timeout", &e), JOBD_E_INVALID);
    ASSERT(strstr(e.msg, "too large") != NULL);
    ASSERT_EQ(duration_parse_ms(NULL, &ms, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "duration");
    /* err may be NULL */
    ASSERT_EQ(duration_parse_ms("x", &ms, "f", NULL), JOBD_E_INVALID);
}

TEST(format_is_canonical)
{
    static const struct {
        int64_t ms;
        const char *out;
    } cases[] = {
        {0, "0s"},           {1, "1ms"},
        {250, "250ms"},      {1000, "1s"},
        {1500, "1s500ms"},   {60000, "1m"},
        {90000, "1m30s"},    {5400000, "1h30m"},
        {86400000, "1d"},    {86400000 + 1, "1d1ms"},
        {-1500, "-1s500ms"}, {INT64_MAX, "106751991167d7h12m55s807ms"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        ASSERT_STR_EQ(duration_format_ms(cases[i].ms, buf, sizeof buf), cases[i].out);
    }
    char buf[64];
    ASSERT_STR_EQ(duration_format_ms(INT64_MIN, buf, sizeof buf), "-106751991167d7h12m55s808ms");
    /* A short buffer truncates, never overflows. */
    char small[4];
    duration_format_ms(5400000, small, sizeof small);
    ASSERT_EQ(strlen(small), 3);
    duration_format_ms(5400000, small, 1);
    ASSERT_EQ(small[0], '\0');
}

TEST(format_parse_round_trip)
{
    /* A spread of values, including every unit boundary. */
    int64_t v = 1;
    for (int i = 0; i < 200; i++) {
        int64_t vals[3] = {v - 1, v, v + 1};
        for (int k = 0; k < 3; k++) {
            if (vals[k] < 0)
                continue;
            char buf[64];
            struct jobd_error e = {0};
            int64_t back = -1;
            duration_format_ms(vals[k], buf, sizeof buf);
            ASSERT_OK(duration_parse_ms(buf, &back, "d", &e), &e);
            ASSERT_EQ(back, vals[k]);
        }
        if (v > INT64_MAX / 8)
            break;
        v = v * 7 / 3 + 11;
    }
}
