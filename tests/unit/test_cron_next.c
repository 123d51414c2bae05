/*
 * test_cron_next.c — next firings, table-driven: calendar corners (leap
 * years, L, both day-field rules, six fields) and the two DST rules of
 * docs/CRON.md in America/New_York, Europe/Berlin and Australia/Lord_Howe
 * (whose DST shift is 30 minutes). Expected instants were worked out by hand
 * from the zones' 2026 transitions, written in UTC.
 */
#include <pthread.h>
#include <time.h>

#include "core/cron.h"
#include "core/err.h"
#include "cron_time.h"
#include "test.h"

struct next_case {
    const char *expr;
    const char *tz;
    const char *from;
    const char *want[6]; /* NULL-terminated */
};

static void
run_cases(const struct next_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct next_case *c = &cases[i];
        struct cron_expr e;
        struct jobd_error err = {0};
        struct cron_zone *z = NULL;
        int64_t at;
        if (cron_parse(c->expr, &e, &err) != 0)
            TEST_FAIL("case %zu \"%s\": parse: %s", i, c->expr, err.msg);
        if (cron_zone_open(c->tz, &z, &err) != 0)
            TEST_FAIL("case %zu: zone %s: %s", i, c->tz, err.msg);
        if (ct_parse(c->from, &at) != 0)
            TEST_FAIL("case %zu: bad from %s", i, c->from);
        for (int k = 0; c->want[k] != NULL; k++) {
            char got[40];
            if (cron_next_in(&e, z, at, &at, &err) != 0)
                TEST_FAIL("case %zu \"%s\" %s #%d: %s", i, c->expr, c->tz, k, err.msg);
            ct_format(at, got, sizeof got);
            if (strcmp(got, c->want[k]) != 0)
                TEST_FAIL("case %zu \"%s\" in %s from %s, firing #%d: got %s, want %s", i, c->expr,
                          c->tz, c->from, k, got, c->want[k]);
            /* The one-shot API agrees with the zone-handle API. */
            int64_t prev = 0, again = 0;
            if (k == 0) {
                ct_parse(c->from, &prev);
                if (cron_next(&e, c->tz, prev, &again, &err) != 0 || again != at)
                    TEST_FAIL("case %zu: cron_next disagrees with cron_next_in", i);
            }
        }
        cron_zone_free(z);
    }
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

TEST(utc_basics)
{
    static const struct next_case cases[] = {
        {"*/15 * * * *",
         "UTC",
         "2026-12-02T14:03:17.120Z",
         {"2026-12-02T14:15:00.000Z", "2026-12-02T14:30:00.000Z", "2026-12-02T14:45:00.000Z",
          "2026-12-02T15:00:00.000Z", NULL}},
        /* strictly after: a firing instant itself is not returned */
        {"* * * * *", "UTC", "2026-01-01T00:01:00.000Z", {"2026-01-01T00:02:00.000Z", NULL}},
        {"* * * * *", "UTC", "2026-01-01T00:00:59.999Z", {"2026-01-01T00:01:00.000Z", NULL}},
        {"0 0 1 1 *",
         "UTC",
         "2026-12-31T23:59:59.000Z",
         {"2027-01-01T00:00:00.000Z", "2028-01-01T00:00:00.000Z", NULL}},
        {"10-40/15 9-17 * * MON-FRI",
         "UTC",
         "2026-12-04T16:50:00.000Z",
         {"2026-12-04T17:10:00.000Z", "2026-12-04T17:25:00.000Z", "2026-12-04T17:40:00.000Z",
          "2026-12-07T09:10:00.000Z", NULL}},
        {"@hourly",
         NULL,
         "2026-06-30T23:30:00.000Z",
         {"2026-07-01T00:00:00.000Z", "2026-07-01T01:00:00.000Z", NULL}},
        {"@weekly",
         "Etc/UTC",
         "2026-01-01T00:00:00.000Z",
         {"2026-01-04T00:00:00.000Z", "2026-01-11T00:00:00.000Z", NULL}},
        {"0 0 * * 7", "UTC", "2026-01-01T00:00:00.000Z", {"2026-01-04T00:00:00.000Z", NULL}},
        {"0 12 * DEC *",
         "UTC",
         "2026-01-15T00:00:00.000Z",
         {"2026-12-01T12:00:00.000Z", "2026-12-02T12:00:00.000Z", NULL}},
    };
    run_cases(cases, N(cases));
}

TEST(leap_years_and_last_day)
{
    static const struct next_case cases[] = {
        {"0 0 29 2 *",
         "UTC",
         "2026-01-01T00:00:00.000Z",
         {"2028-02-29T00:00:00.000Z", "2032-02-29T00:00:00.000Z", "2036-02-29T00:00:00.000Z",
          NULL}},
        /* 2100 is not a leap year */
        {"0 0 29 2 *", "UTC", "2096-03-01T00:00:00.000Z", {"2104-02-29T00:00:00.000Z", NULL}},
        {"0 0 L * *",
         "UTC",
         "2027-12-15T00:00:00.000Z",
         {"2027-12-31T00:00:00.000Z", "2028-01-31T00:00:00.000Z", "2028-02-29T00:00:00.000Z",
          "2028-03-31T00:00:00.000Z", "2028-04-30T00:00:00.000Z", NULL}},
        {"0 0 L 2 *",
         "UTC",
         "2099-01-01T00:00:00.000Z",
         {"2099-02-28T00:00:00.000Z", "2100-02-28T00:00:00.000Z", "2101-02-28T00:00:00.000Z",
          "2102-02-28T00:00:00.000Z", "2103-02-28T00:00:00.000Z", NULL}},
        {"0 0 15,L * *",
         "UTC",
         "2026-02-14T00:00:00.000Z",
         {"2026-02-15T00:00:00.000Z", "2026-02-28T00:00:00.000Z", "2026-03-15T00:00:00.000Z",
          "2026-03-31T00:00:00.000Z", NULL}},
        {"0 0 31 * *",
         "UTC",
         "2026-01-31T00:00:00.000Z",
         {"2026-03-31T00:00:00.000Z", "2026-05-31T00:00:00.000Z", "2026-07-31T00:00:00.000Z",
          "2026-08-31T00:00:00.000Z", NULL}},
        /* Feb 29 that is a Sunday (day-of-week starts with '*': both must match) */
        {"0 0 29 2 */7",
         "UTC",
         "2005-01-01T00:00:00.000Z",
         {"2032-02-29T00:00:00.000Z", "2060-02-29T00:00:00.000Z", "2088-02-29T00:00:00.000Z",
          "2128-02-29T00:00:00.000Z", NULL}},
    };
    run_cases(cases, N(cases));
}

TEST(day_field_rules)
{
    // clang-format off
    static const struct next_case cases[] = {
        /* both restricted: either matches (2026-01-02 is a Friday) */
        {"0 0 13 * 5", "UTC", "2026-01-01T00:00:00.000Z",
         {"2026-01-02T00:00:00.000Z", "2026-01-09T00:00:00.000Z", "2026-01-13T00:00:00.000Z",
          "2026-01-16T00:00:00.000Z", NULL}},
        /* docs/CRON.md's example: odd days that are Mondays */
        {"0 0 */2 * 1", "UTC", "2026-01-01T00:00:00.000Z",
         {"2026-01-05T00:00:00.000Z", "2026-01-19T00:00:00.000Z", "2026-02-09T00:00:00.000Z",
          "2026-02-23T00:00:00.000Z", NULL}},
        /* day-of-week starts with '*': 1st of the month on Sun, Wed or Sat */
        {"0 0 1 * */3", "UTC", "2026-01-01T00:00:00.000Z",
         {"2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z", "2026-04-01T00:00:00.000Z",
          "2026-07-01T00:00:00.000Z", NULL}},
        /* 1-31 is not '*': OR with Monday gives every day */
        {"0 0 1-31 * 1", "UTC", "2026-01-01T00:00:00.000Z",
         {"2026-01-02T00:00:00.000Z", "2026-01-03T00:00:00.000Z", NULL}},
        /* L or Friday */
        {"0 0 L * FRI", "UTC", "2026-01-24T00:00:00.000Z",
         {"2026-01-30T00:00:00.000Z", "2026-01-31T00:00:00.000Z", "2026-02-06T00:00:00.000Z",
          NULL}},
        /* 30 Feb never exists, but Mondays in Feb do (OR rule) */
        {"0 0 30 2 1", "UTC", "2026-01-01T00:00:00.000Z",
         {"2026-02-02T00:00:00.000Z", "2026-02-09T00:00:00.000Z", NULL}},
    };
    // clang-format on
    run_cases(cases, N(cases));
}

TEST(six_fields)
{
    static const struct next_case cases[] = {
        {"*/20 * * * * *",
         "UTC",
         "2026-01-01T00:00:00.000Z",
         {"2026-01-01T00:00:20.000Z", "2026-01-01T00:00:40.000Z", "2026-01-01T00:01:00.000Z",
          NULL}},
        {"30 15 10 * * *", "UTC", "2026-01-01T10:15:30.000Z", {"2026-01-02T10:15:30.000Z", NULL}},
        {"0-2 0 0 1 1 *",
         "UTC",
         "2026-06-01T00:00:00.000Z",
         {"2027-01-01T00:00:00.000Z", "2027-01-01T00:00:01.000Z", "2027-01-01T00:00:02.000Z",
          "2028-01-01T00:00:00.000Z", NULL}},
        {"59 59 23 31 12 *", "UTC", "2026-01-01T00:00:00.000Z", {"2026-12-31T23:59:59.000Z", NULL}},
        /* six fields in a DST zone, hour wildcard: 1:59:30 twice on fall-back night */
        {"30 59 1 1 11 *",
         "America/New_York",
         "2026-10-01T00:00:00.000Z",
         {"2026-11-01T05:59:30.000Z", "2027-11-01T05:59:30.000Z", NULL}},
        {"30 59 * 1 11 *",
         "America/New_York",
         "2026-11-01T05:00:00.000Z",
         {"2026-11-01T05:59:30.000Z", "2026-11-01T06:59:30.000Z", "2026-11-01T07:59:30.000Z",
          NULL}},
    };
    run_cases(cases, N(cases));
}

/* 2026: spring forward Mar 8 02:00 EST (07:00Z); fall back Nov 1 02:00 EDT (06:00Z). */
TEST(dst_new_york)
{
    static const struct next_case cases[] = {
        /* fixed hour, skipped: 02:30 fires once at the end of the gap (03:00 EDT) */
        {"30 2 * * *",
         "America/New_York",
         "2026-03-07T00:00:00.000Z",
         {"2026-03-07T07:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-09T06:30:00.000Z",
          NULL}},
        /* several skipped wall times in one gap still fire once */
        {"0,30 2 * * *",
         "America/New_York",
         "2026-03-07T12:00:00.000Z",
         {"2026-03-08T07:00:00.000Z", "2026-03-09T06:00:00.000Z", "2026-03-09T06:30:00.000Z",
          NULL}},
        /* the end of the gap matching on its own is one firing, not two */
        {"0 2,3 * * *",
         "America/New_York",
         "2026-03-07T12:00:00.000Z",
         {"2026-03-08T07:00:00.000Z", "2026-03-09T06:00:00.000Z", NULL}},
        /* fixed hour, repeated: 01:30 fires at its first occurrence only */
        {"30 1 * * *",
         "America/New_York",
         "2026-10-31T04:00:00.000Z",
         {"2026-10-31T05:30:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z",
          NULL}},
        /* from inside the repeated hour, after the first 01:30 */
        {"30 1 * * *",
         "America/New_York",
         "2026-11-01T06:10:00.000Z",
         {"2026-11-02T06:30:00.000Z", NULL}},
        {"0 2 * * *",
         "America/New_York",
         "2026-11-01T06:30:00.000Z",
         {"2026-11-01T07:00:00.000Z", NULL}},
        {"*/20 1 * * *",
         "America/New_York",
         "2026-11-01T05:30:00.000Z",
         {"2026-11-01T05:40:00.000Z", "2026-11-02T06:00:00.000Z", NULL}},
        /* wildcard hour: every real instant; repeated wall times fire twice */
        {"30 * * * *",
         "America/New_York",
         "2026-11-01T04:00:00.000Z",
         {"2026-11-01T04:30:00.000Z", "2026-11-01T05:30:00.000Z", "2026-11-01T06:30:00.000Z",
          "2026-11-01T07:30:00.000Z", NULL}},
        /* wildcard hour: skipped wall times never fire */
        {"*/30 * * * *",
         "America/New_York",
         "2026-03-08T06:00:00.000Z",
         {"2026-03-08T06:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-08T07:30:00.000Z",
          NULL}},
        {"0 */2 * * *",
         "America/New_York",
         "2026-03-08T05:00:00.000Z",
         {"2026-03-08T08:00:00.000Z", "2026-03-08T10:00:00.000Z", NULL}},
        {"0 */2 * * *",
         "America/New_York",
         "2026-11-01T04:00:00.000Z",
         {"2026-11-01T07:00:00.000Z", "2026-11-01T09:00:00.000Z", NULL}},
        {"0 1-23/2 * * *",
         "America/New_York",
         "2026-11-01T04:30:00.000Z",
         {"2026-11-01T05:00:00.000Z", "2026-11-01T06:00:00.000Z", "2026-11-01T08:00:00.000Z",
          NULL}},
        /* far from any transition the offset is simply applied */
        {"0 9 * * MON-FRI",
         "America/New_York",
         "2026-07-03T12:00:00.000Z",
         {"2026-07-03T13:00:00.000Z", "2026-07-06T13:00:00.000Z", NULL}},
    };
    run_cases(cases, N(cases));
}

/* 2026: spring forward Mar 29 02:00 CET (01:00Z); fall back Oct 25 03:00 CEST (01:00Z). */
TEST(dst_berlin)
{
    static const struct next_case cases[] = {
        {"30 2 * * *",
         "Europe/Berlin",
         "2026-03-28T00:00:00.000Z",
         {"2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z",
          NULL}},
        {"30 2 * * *",
         "Europe/Berlin",
         "2026-10-24T12:00:00.000Z",
         {"2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z", NULL}},
        {"*/20 2 * * *",
         "Europe/Berlin",
         "2026-03-29T00:00:00.000Z",
         {"2026-03-29T01:00:00.000Z", "2026-03-30T00:00:00.000Z", NULL}},
        {"*/20 2 * * *",
         "Europe/Berlin",
         "2026-10-25T00:00:00.000Z",
         {"2026-10-25T00:20:00.000Z", "2026-10-25T00:40:00.000Z", "2026-10-26T01:00:00.000Z",
          NULL}},
        {"30 * * * *",
         "Europe/Berlin",
         "2026-10-25T00:00:00.000Z",
         {"2026-10-25T00:30:00.000Z", "2026-10-25T01:30:00.000Z", "2026-10-25T02:30:00.000Z",
          NULL}},
        {"30 * * * *",
         "Europe/Berlin",
         "2026-03-29T00:00:00.000Z",
         {"2026-03-29T00:30:00.000Z", "2026-03-29T01:30:00.000Z", NULL}},
        {"@daily",
         "Europe/Berlin",
         "2026-03-28T00:00:00.000Z",
         {"2026-03-28T23:00:00.000Z", "2026-03-29T22:00:00.000Z", NULL}},
    };
    run_cases(cases, N(cases));
}

/*
 * Lord Howe: +10:30 standard, +11 in summer. 2026: DST ends Apr 5 02:00 LHDT
 * (Apr 4 15:00Z; wall time back to 01:30), starts Oct 4 02:00 LHST (Oct 3
 * 15:30Z; wall time jumps to 02:30).
 */
TEST(dst_lord_howe_half_hour)
{
    static const struct next_case cases[] = {
        {"15 2 * * *",
         "Australia/Lord_Howe",
         "2026-10-03T00:00:00.000Z",
         {"2026-10-03T15:30:00.000Z", "2026-10-04T15:15:00.000Z", NULL}},
        {"45 2 * * *",
         "Australia/Lord_Howe",
         "2026-10-03T00:00:00.000Z",
         {"2026-10-03T15:45:00.000Z", NULL}},
        {"45 1 * * *",
         "Australia/Lord_Howe",
         "2026-04-04T00:00:00.000Z",
         {"2026-04-04T14:45:00.000Z", "2026-04-05T15:15:00.000Z", NULL}},
        {"45 * * * *",
         "Australia/Lord_Howe",
         "2026-04-04T14:00:00.000Z",
         {"2026-04-04T14:45:00.000Z", "2026-04-04T15:15:00.000Z", "2026-04-04T16:15:00.000Z",
          NULL}},
        {"0,30 * * * *",
         "Australia/Lord_Howe",
         "2026-10-03T14:00:00.000Z",
         {"2026-10-03T14:30:00.000Z", "2026-10-03T15:00:00.000Z", "2026-10-03T15:30:00.000Z",
          "2026-10-03T16:00:00.000Z", NULL}},
        /* 01:30-01:59 happens twice in April: wildcard hour fires 01:40 twice */
        {"40 * * * *",
         "Australia/Lord_Howe",
         "2026-04-04T14:30:00.000Z",
         {"2026-04-04T14:40:00.000Z", "2026-04-04T15:10:00.000Z", "2026-04-04T16:10:00.000Z",
          NULL}},
    };
    run_cases(cases, N(cases));
}

TEST(zones_without_dst)
{
    static const struct next_case cases[] = {
        {"0 9 * * *",
         "Asia/Kolkata",
         "2026-01-01T00:00:00.000Z",
         {"2026-01-01T03:30:00.000Z", "2026-01-02T03:30:00.000Z", NULL}},
        {"0 0 * * *",
         "Asia/Kathmandu",
         "2026-01-01T00:00:00.000Z",
         {"2026-01-01T18:15:00.000Z", NULL}},
        {"0 0 1 1 *",
         "Pacific/Kiritimati",
         "2026-01-01T00:00:00.000Z",
         {"2026-12-31T10:00:00.000Z", NULL}},
    };
    run_cases(cases, N(cases));
}

TEST(errors)
{
    struct cron_expr e;
    struct jobd_error err = {0};
    int64_t next, from;
    ASSERT_OK(cron_parse("0 0 1 1 *", &e, &err), &err);
    ASSERT_EQ(ct_parse("9999-06-01T00:00:00Z", &from), 0);
    ASSERT_EQ(cron_next(&e, "UTC", from, &next, &err), JOBD_E_INVALID);
    ASSERT(strstr(err.msg, "no firing") != NULL);
    ASSERT_EQ(cron_next(&e, "America/New_York", from, &next, &err), JOBD_E_INVALID);
    /* 10000-01-01 in Berlin is still 9999 in UTC */
    ASSERT_OK(cron_next(&e, "Europe/Berlin", from, &next, &err), &err);
    ASSERT_EQ(cron_next(&e, "Nowhere/City", 0, &next, &err), JOBD_E_INVALID);
    ASSERT_STR_EQ(err.field, "timezone");
    ASSERT_EQ(cron_next(&e, "UTC", INT64_MIN, &next, &err), JOBD_E_INVALID);
    ASSERT_EQ(cron_next(&e, "UTC", INT64_MAX, &next, &err), JOBD_E_INVALID);
    ASSERT_STR_EQ(err.field, "after");
    cron_zone_free(NULL);
}

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Sparse expressions jump field by field: 2,000 searches that each skip
 * years must take far less than a second even under ASan. The bound is
 * loose on purpose (a step-by-minute search would need minutes).
 */
TEST(sparse_expressions_are_fast)
{
    const char *exprs[] = {"0 0 29 2 *", "0 0 29 2 */7", "59 59 23 31 12 *", "0 0 L 2 *"};
    const char *zones[] = {"UTC", "America/New_York"};
    for (size_t zi = 0; zi < 2; zi++) {
        struct cron_zone *z = NULL;
        struct jobd_error err = {0};
        ASSERT_OK(cron_zone_open(zones[zi], &z, &err), &err);
        double t0 = now_s();
        for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
            struct cron_expr e;
            ASSERT_OK(cron_parse(exprs[i], &e, &err), &err);
            int64_t at = 0;
            for (int k = 0; k < 250; k++) {
                int64_t from = at;
                ASSERT_OK(cron_next_in(&e, z, from, &at, &err), &err);
                ASSERT(at > from);
                if (at > (int64_t)253402300799 * 1000000 - (int64_t)200 * 31622400 * 1000000)
                    at = 0;
            }
        }
        double dt = now_s() - t0;
        fprintf(stderr, "%s: 1000 sparse searches in %.3f s\n", zones[zi], dt);
        ASSERT(dt < 5.0);
        cron_zone_free(z);
    }
}

struct thread_arg {
    const char *tz;
    int64_t result;
    int rc;
};

static void *
thread_main(void *p)
{
    struct thread_arg *a = p;
    struct cron_expr e;
    struct jobd_error err = {0};
    a->rc = cron_parse("30 2 * * *", &e, &err);
    int64_t at = 1767225600000000; /* 2026-01-01 */
    for (int i = 0; a->rc == 0 && i < 400; i++)
        a->rc = cron_next(&e, a->tz, at, &at, &err);
    a->result = at;
    return NULL;
}

/* No process-wide state: threads in different zones get the same answers as alone. */
TEST(thread_safe)
{
    const char *zones[] = {"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "UTC"};
    struct thread_arg solo[4], par[8];
    for (int i = 0; i < 4; i++) {
        solo[i].tz = zones[i];
        thread_main(&solo[i]);
        ASSERT_EQ(solo[i].rc, 0);
    }
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        par[i].tz = zones[i % 4];
        ASSERT_EQ(pthread_create(&th[i], NULL, thread_main, &par[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        ASSERT_EQ(par[i].rc, 0);
        ASSERT_EQ(par[i].result, solo[i % 4].result);
    }
}
