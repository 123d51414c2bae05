/*
 * test_schedule.c — schedule validation and the catch-up rule (once, all,
 * skip) of docs/CRON.md, "Schedules and catch-up", on a pure function with
 * "now" as a parameter.
 */
#include "core/err.h"
#include "core/schedule.h"
#include "cron_time.h"
#include "test.h"

static int64_t
at(const char *s)
{
    int64_t us;
    if (ct_parse(s, &us) != 0)
        TEST_FAIL("bad time %s", s);
    return us;
}

struct plan {
    int64_t f[SCHEDULE_CATCHUP_MAX];
    size_t n;
    int64_t next;
};

static struct plan
plan_grace(const char *expr, enum schedule_catchup c, const char *next_run_at, const char *now,
           int64_t grace_us)
{
    static struct plan p;
    struct cron_expr e;
    struct jobd_error err = {0};
    struct cron_zone *z = NULL;
    ASSERT_OK(cron_parse(expr, &e, &err), &err);
    ASSERT_OK(cron_zone_open("UTC", &z, &err), &err);
    ASSERT_OK(schedule_plan(&e, z, c, at(next_run_at), at(now), grace_us, p.f, SCHEDULE_CATCHUP_MAX,
                            &p.n, &p.next, &err),
              &err);
    cron_zone_free(z);
    return p;
}

static struct plan
plan(const char *expr, enum schedule_catchup c, const char *next_run_at, const char *now)
{
    return plan_grace(expr, c, next_run_at, now, 0);
}

TEST(not_due_makes_nothing)
{
    struct plan p =
        plan("0 * * * *", SCHEDULE_CATCHUP_ALL, "2026-01-01T10:00:00Z", "2026-01-01T09:59:59Z");
    ASSERT_EQ(p.n, 0);
    ASSERT_EQ(p.next, at("2026-01-01T10:00:00Z"));
}

TEST(on_time_firing_is_made_for_every_policy)
{
    for (int c = 0; c <= 2; c++) {
        struct plan p = plan("0 * * * *", (enum schedule_catchup)c, "2026-01-01T10:00:00Z",
                             "2026-01-01T10:00:00.300Z");
        ASSERT_EQ(p.n, 1);
        ASSERT_EQ(p.f[0], at("2026-01-01T10:00:00Z"));
        ASSERT_EQ(p.next, at("2026-01-01T11:00:00Z"));
    }
    /* half a second late is late, whatever the policy */
    struct plan p = plan("* * * * * *", SCHEDULE_CATCHUP_SKIP, "2026-01-01T10:00:00Z",
                         "2026-01-01T10:00:00.500Z");
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.next, at("2026-01-01T10:00:01Z"));
}

TEST(missed_means_more_than_one_second_overdue)
{
    /* exactly 1 s overdue: still late */
    struct plan p =
        plan("* * * * * *", SCHEDULE_CATCHUP_SKIP, "2026-01-01T10:00:00Z", "2026-01-01T10:00:01Z");
    ASSERT_EQ(p.n, 2);
    ASSERT_EQ(p.f[0], at("2026-01-01T10:00:00Z"));
    ASSERT_EQ(p.f[1], at("2026-01-01T10:00:01Z"));
    /* a millisecond more: missed, so skip drops it */
    p = plan("* * * * * *", SCHEDULE_CATCHUP_SKIP, "2026-01-01T10:00:00Z",
             "2026-01-01T10:00:01.001Z");
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.f[0], at("2026-01-01T10:00:01Z"));
    ASSERT_EQ(p.next, at("2026-01-01T10:00:02Z"));
}

TEST(a_late_pass_of_a_running_scheduler_misses_nothing)
{
    /* The plane's previous pass was 3.5 s ago (a loaded machine): it passes
     * that as the grace, so 10:00:01 ... 10:00:04 are late, not missed. */
    const char *next = "2026-01-01T10:00:01Z", *now = "2026-01-01T10:00:04.200Z";
    for (int c = 0; c <= 2; c++) {
        struct plan p = plan_grace("* * * * * *", (enum schedule_catchup)c, next, now, 3500000);
        ASSERT_EQ(p.n, 4);
        for (size_t i = 0; i < 4; i++)
            ASSERT_EQ(p.f[i], at(next) + (int64_t)i * 1000000);
        ASSERT_EQ(p.next, at("2026-01-01T10:00:05Z"));
    }
    /* beyond the grace it is missed as ever; a grace under 1 s counts as 1 s */
    struct plan p = plan_grace("* * * * * *", SCHEDULE_CATCHUP_SKIP, next, now, 2500000);
    ASSERT_EQ(p.n, 3);
    ASSERT_EQ(p.f[0], at("2026-01-01T10:00:02Z"));
    p = plan_grace("* * * * * *", SCHEDULE_CATCHUP_SKIP, next, now, 1);
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.f[0], at("2026-01-01T10:00:04Z"));
}

TEST(six_second_outage_every_second)
{
    /* last look at 10:00:00.5; every scheduler down until 10:00:06.2 */
    const char *next = "2026-01-01T10:00:01Z", *now = "2026-01-01T10:00:06.200Z";
    struct plan p = plan("* * * * * *", SCHEDULE_CATCHUP_SKIP, next, now);
    ASSERT_EQ(p.n, 1); /* only 10:00:06, 0.2 s late */
    ASSERT_EQ(p.f[0], at("2026-01-01T10:00:06Z"));
    ASSERT_EQ(p.next, at("2026-01-01T10:00:07Z"));
    p = plan("* * * * * *", SCHEDULE_CATCHUP_ONCE, next, now);
    ASSERT_EQ(p.n, 2); /* one for 01...05, then the late 06 */
    ASSERT_EQ(p.f[0], at("2026-01-01T10:00:01Z"));
    ASSERT_EQ(p.f[1], at("2026-01-01T10:00:06Z"));
    ASSERT_EQ(p.next, at("2026-01-01T10:00:07Z"));
    p = plan("* * * * * *", SCHEDULE_CATCHUP_ALL, next, now);
    ASSERT_EQ(p.n, 6);
    for (size_t i = 0; i < 6; i++)
        ASSERT_EQ(p.f[i], at("2026-01-01T10:00:01Z") + (int64_t)i * 1000000);
    ASSERT_EQ(p.next, at("2026-01-01T10:00:07Z"));
}

TEST(forward_clock_jump_is_an_outage)
{
    /* the host clock jumps from 12:00:30 to 13:00:30: once makes one job */
    struct plan p =
        plan("* * * * *", SCHEDULE_CATCHUP_ONCE, "2026-01-01T12:01:00Z", "2026-01-01T13:00:30Z");
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.f[0], at("2026-01-01T12:01:00Z"));
    ASSERT_EQ(p.next, at("2026-01-01T13:01:00Z"));
    p = plan("* * * * *", SCHEDULE_CATCHUP_SKIP, "2026-01-01T12:01:00Z", "2026-01-01T13:00:30Z");
    ASSERT_EQ(p.n, 0);
    ASSERT_EQ(p.next, at("2026-01-01T13:01:00Z"));
}

TEST(once_collapses_missed_firings)
{
    /* down from 10:00 to 15:20: firings 10:00 ... 15:00 were missed */
    struct plan p =
        plan("0 * * * *", SCHEDULE_CATCHUP_ONCE, "2026-01-01T10:00:00Z", "2026-01-01T15:20:00Z");
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.f[0], at("2026-01-01T10:00:00Z"));
    ASSERT_EQ(p.next, at("2026-01-01T16:00:00Z"));
    /* missed ones collapse, the on-time one is still its own job */
    p = plan("* * * * *", SCHEDULE_CATCHUP_ONCE, "2026-01-01T10:00:00Z",
             "2026-01-01T15:20:00.400Z");
    ASSERT_EQ(p.n, 2);
    ASSERT_EQ(p.f[0], at("2026-01-01T10:00:00Z"));
    ASSERT_EQ(p.f[1], at("2026-01-01T15:20:00Z"));
    ASSERT_EQ(p.next, at("2026-01-01T15:21:00Z"));
}

TEST(all_makes_one_job_per_missed_firing)
{
    struct plan p =
        plan("0 * * * *", SCHEDULE_CATCHUP_ALL, "2026-01-01T10:00:00Z", "2026-01-01T15:20:00Z");
    ASSERT_EQ(p.n, 6);
    for (size_t i = 0; i < 6; i++)
        ASSERT_EQ(p.f[i], at("2026-01-01T10:00:00Z") + (int64_t)i * 3600 * 1000000);
    ASSERT_EQ(p.next, at("2026-01-01T16:00:00Z"));
}

TEST(all_is_capped_at_1000)
{
    /* every minute for 30 days: 43,200 missed, 1,000 made (the oldest) */
    struct plan p =
        plan("* * * * *", SCHEDULE_CATCHUP_ALL, "2026-01-01T00:00:00Z", "2026-01-31T00:00:30Z");
    ASSERT_EQ(p.n, SCHEDULE_CATCHUP_MAX);
    ASSERT_EQ(p.f[0], at("2026-01-01T00:00:00Z"));
    ASSERT_EQ(p.f[999], at("2026-01-01T16:39:00Z"));
    ASSERT_EQ(p.next, at("2026-01-31T00:01:00Z"));
}

TEST(skip_drops_missed_firings)
{
    struct plan p =
        plan("0 * * * *", SCHEDULE_CATCHUP_SKIP, "2026-01-01T10:00:00Z", "2026-01-01T15:20:00Z");
    ASSERT_EQ(p.n, 0);
    ASSERT_EQ(p.next, at("2026-01-01T16:00:00Z"));
    p = plan("* * * * *", SCHEDULE_CATCHUP_SKIP, "2026-01-01T10:00:00Z",
             "2026-01-01T15:20:00.400Z");
    ASSERT_EQ(p.n, 1);
    ASSERT_EQ(p.f[0], at("2026-01-01T15:20:00Z"));
    /* 30 s after it, 15:20 was missed too */
    p = plan("* * * * *", SCHEDULE_CATCHUP_SKIP, "2026-01-01T10:00:00Z", "2026-01-01T15:20:30Z");
    ASSERT_EQ(p.n, 0);
    ASSERT_EQ(p.next, at("2026-01-01T15:21:00Z"));
}

TEST(catchup_names)
{
    enum schedule_catchup c;
    struct jobd_error err = {0};
    ASSERT_OK(schedule_catchup_parse("all", &c, &err), &err);
    ASSERT_EQ(c, SCHEDULE_CATCHUP_ALL);
    ASSERT_STR_EQ(schedule_catchup_name(SCHEDULE_CATCHUP_SKIP), "skip");
    ASSERT_EQ(schedule_catchup_parse("never", &c, &err), JOBD_E_INVALID);
    ASSERT_STR_EQ(err.field, "catchup");
    ASSERT_EQ(schedule_catchup_parse(NULL, &c, &err), JOBD_E_INVALID);
}

TEST(spec_validation_names_fields)
{
    struct jobd_error err = {0};
    struct schedule_spec s = {.name = "nightly", .cron = "0 3 * * *", .type = "report.build"};
    ASSERT_OK(schedule_spec_validate(&s, &err), &err);
    s.timezone = "Europe/Berlin";
    s.queue = "reports";
    ASSERT_OK(schedule_spec_validate(&s, &err), &err);

    struct {
        struct schedule_spec spec;
        const char *field;
    } bad[] = {
        {{.cron = "* * * * *", .type = "t"}, "name"},
        {{.name = "has space", .cron = "* * * * *", .type = "t"}, "name"},
        {{.name = "n", .type = "t"}, "cron"},
        {{.name = "n", .cron = "61 * * * *", .type = "t"}, "cron.minute"},
        {{.name = "n", .cron = "0 0 30 2 *", .type = "t"}, "cron.day-of-month"},
        {{.name = "n", .cron = "* * * * *", .type = "t", .timezone = "Moon/Base"}, "timezone"},
        {{.name = "n", .cron = "* * * * *"}, "type"},
        {{.name = "n", .cron = "* * * * *", .type = "t", .queue = "Bad Queue"}, "queue"},
        {{.name = "n", .cron = "* * * * *", .type = "t", .priority = 2000000}, "priority"},
        {{.name = "n", .cron = "* * * * *", .type = "t", .max_attempts = -1}, "max_attempts"},
        {{.name = "n", .cron = "* * * * *", .type = "t", .catchup = 7}, "catchup"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jobd_error_clear(&err);
        int rc = schedule_spec_validate(&bad[i].spec, &err);
        if (rc == 0 || strcmp(err.field, bad[i].field) != 0)
            TEST_FAIL("case %zu: rc %d field \"%s\", want field \"%s\"", i, rc, err.field,
                      bad[i].field);
    }
}

TEST(list_and_fini)
{
    struct schedule_list l = {0};
    for (int i = 0; i < 20; i++) {
        struct schedule *s = schedule_list_push(&l);
        ASSERT(s != NULL);
        s->name = strdup("x");
    }
    ASSERT_EQ(l.n, 20);
    schedule_list_fini(&l);
    ASSERT_EQ(l.n, 0);
    schedule_fini(NULL);
}
