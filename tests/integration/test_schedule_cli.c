/*
 * test_schedule_cli.c — `jobd schedule add|ls|rm|pause|resume|trigger`
 * through the real binary against a real `jobd server`, and the end-to-end
 * proof of the scheduling plane: an every-second schedule created with the
 * CLI on a running server fires on time (consecutive seconds, none twice,
 * materialized within 1.5 s), pause stops it, resume restarts it, trigger
 * makes a job due now — on SQLite and on PostgreSQL.
 */
#include "apitest.h"

/* "2026-12-02T14:03:17.120Z" -> ms since the epoch; fails the test otherwise. */
static int64_t
ts_ms(const char *s)
{
    struct tm tm = {0};
    int ms = 0;
    if (s == NULL || sscanf(s, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                            &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
        TEST_FAIL("not an RFC 3339 UTC time: %s", s ? s : "(null)");
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000 + ms;
}

static int64_t
wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* add: every option reaches the schedule; add again replaces it (--server
 * instead of the environment). */
static void
cli_add_and_replace(const char *const *env, const char *base)
{
    char out[65536];
    const char *add[] = {
        "schedule",  "add",           "nightly",   "30 2 * * *",     "report.build",
        "--tz",      "Europe/Berlin", "--payload", "{\"k\":[1,2]}",  "--queue",
        "reports",   "--priority",    "7",         "--max-attempts", "4",
        "--catchup", "all",           NULL};
    ASSERT_EQ(cli_run(env, add, out, sizeof out), 0);
    json_t *j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "name")), "nightly");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "cron")), "30 2 * * *");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "timezone")), "Europe/Berlin");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "type")), "report.build");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "queue")), "reports");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "catchup")), "all");
    ASSERT_EQ(json_integer_value(json_object_get(j, "priority")), 7);
    ASSERT_EQ(json_integer_value(json_object_get(j, "max_attempts")), 4);
    ASSERT_EQ(
        json_integer_value(json_array_get(json_object_get(json_object_get(j, "payload"), "k"), 1)),
        2);
    /* 02:30 Berlin is 00:30 or 01:30 UTC. */
    const char *nr = json_string_value(json_object_get(j, "next_run_at"));
    ASSERT(nr != NULL && (strstr(nr, "T00:30:00.000Z") || strstr(nr, "T01:30:00.000Z")));
    json_decref(j);

    /* add again replaces (--server instead of the environment). */
    const char *repl[] = {"schedule",     "add",      "nightly", "@hourly",
                          "report.build", "--server", base,      NULL};
    ASSERT_EQ(cli_run(NULL, repl, out, sizeof out), 0);
    j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "cron")), "@hourly");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "timezone")), "UTC");
    json_decref(j);
    const char *add2[] = {"schedule", "add", "a.first", "0 0 1 1 *", "t", NULL};
    ASSERT_EQ(cli_run(env, add2, out, sizeof out), 0);
}

/* ls piped (one JSON object a line, by name), pause, resume, trigger, rm;
 * then rm, pause and trigger of the schedule gone: 1 with a reason. */
static void
cli_ls_pause_trigger_rm(const char *const *env, const struct srv *s)
{
    char out[65536], err[4096];
    /* ls piped: one JSON object a line, by name. */
    const char *ls[] = {"schedule", "ls", NULL};
    ASSERT_EQ(cli_run(env, ls, out, sizeof out), 0);
    char *nl = strchr(out, '\n');
    ASSERT(nl != NULL);
    *nl = '\0';
    json_t *j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "name")), "a.first");
    json_decref(j);
    j = cli_parse_json(nl + 1);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "name")), "nightly");
    json_decref(j);

    const char *pause[] = {"schedule", "pause", "nightly", NULL};
    ASSERT_EQ(cli_run(env, pause, out, sizeof out), 0);
    j = cli_parse_json(out);
    ASSERT(json_is_true(json_object_get(j, "paused")));
    json_decref(j);
    const char *resume[] = {"schedule", "resume", "nightly", NULL};
    ASSERT_EQ(cli_run(env, resume, out, sizeof out), 0);
    j = cli_parse_json(out);
    ASSERT(json_is_false(json_object_get(j, "paused")));
    json_decref(j);
    const char *trig[] = {"schedule", "trigger", "nightly", NULL};
    ASSERT_EQ(cli_run(env, trig, out, sizeof out), 0);
    j = cli_parse_json(out);
    ASSERT(json_integer_value(json_object_get(j, "id")) > 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schedule")), "nightly");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
    json_decref(j);
    const char *rm[] = {"schedule", "rm", "nightly", NULL};
    ASSERT_EQ(cli_run(env, rm, out, sizeof out), 0);
    ASSERT_STR_EQ(out, "");
    /* Gone: 1 with a reason. */
    ASSERT_EQ(cli_run(env, rm, out, sizeof out), 1);
    ASSERT(strstr(cli_last_err(err, sizeof err), "nightly") != NULL);
    ASSERT_EQ(cli_run(env, pause, out, sizeof out), 1);
    ASSERT_EQ(cli_run(env, trig, out, sizeof out), 1);
    /* The job trigger made stays. */
    json_t *jl = get_json(s, "/v1/jobs?schedule=nightly");
    ASSERT_EQ(json_array_size(json_object_get(jl, "jobs")), 1);
    json_decref(jl);
}

/* What the server refuses (400: exit 2 as a usage error, the message names
 * the field or the zone) and usage errors the CLI finds (2). */
static void
cli_refusals(const char *const *env)
{
    char out[65536], err[4096];
    /* Refused by the server (400): 2, the message names the field / the zone. */
    const char *bad1[] = {"schedule", "add", "x", "61 * * * *", "t", NULL};
    ASSERT_EQ(cli_run(env, bad1, out, sizeof out), 2);
    ASSERT(strstr(cli_last_err(err, sizeof err), "minute") != NULL);
    const char *bad2[] = {"schedule", "add", "x", "* * * * * * *", "t", NULL};
    ASSERT_EQ(cli_run(env, bad2, out, sizeof out), 2);
    const char *bad3[] = {"schedule", "add", "x", "0 25 * * *", "t", NULL};
    ASSERT_EQ(cli_run(env, bad3, out, sizeof out), 2);
    ASSERT(strstr(cli_last_err(err, sizeof err), "hour") != NULL);
    const char *bad4[] = {"schedule", "add", "x", "* * * * *", "t", "--tz", "Mars/Olympus", NULL};
    ASSERT_EQ(cli_run(env, bad4, out, sizeof out), 2);
    ASSERT(strstr(cli_last_err(err, sizeof err), "timezone") != NULL);
    const char *bad5[] = {"schedule", "add", "bad name", "* * * * *", "t", NULL};
    ASSERT_EQ(cli_run(env, bad5, out, sizeof out), 2);

    /* Usage errors: 2. */
    const char *u[][8] = {
        {"schedule", NULL},
        {"schedule", "frob", NULL},
        {"schedule", "add", "x", "* * * * *", NULL},
        {"schedule", "add", "x", "* * * * *", "t", "extra", NULL},
        {"schedule", "add", "x", "* * * * *", "t", "--payload", "{bad", NULL},
        {"schedule", "add", "x", "* * * * *", "t", "--catchup", "some", NULL},
        {"schedule", "add", "x", "* * * * *", "t", "--priority", "high", NULL},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        ASSERT_EQ(cli_run(env, u[i], out, sizeof out), 2);
    const char *u3[] = {"schedule", "add", "x", "* * * * *", "t", "--max-attempts", "0", NULL};
    ASSERT_EQ(cli_run(env, u3, out, sizeof out), 2);
    const char *u4[] = {"schedule", "add", "x", "* * * * *", "t", "--tz", NULL};
    ASSERT_EQ(cli_run(env, u4, out, sizeof out), 2);
    const char *u5[] = {"schedule", "rm", NULL};
    ASSERT_EQ(cli_run(env, u5, out, sizeof out), 2);
    const char *u6[] = {"schedule", "pause", "a", "b", NULL};
    ASSERT_EQ(cli_run(env, u6, out, sizeof out), 2);
    const char *u7[] = {"schedule", "ls", "--queue", "q", NULL};
    ASSERT_EQ(cli_run(env, u7, out, sizeof out), 2);
    const char *u8[] = {"schedule", "trigger", "x", "--bogus", NULL};
    ASSERT_EQ(cli_run(env, u8, out, sizeof out), 2);
}

/* --help for every form: 0, usage on stdout. */
static void
cli_help(const char *const *env)
{
    char out[65536];
    /* --help for every form: 0, usage on stdout. */
    const char *acts[] = {"add", "ls", "rm", "pause", "resume", "trigger"};
    for (size_t i = 0; i < 6; i++) {
        const char *h[] = {"schedule", acts[i], "--help", NULL};
        ASSERT_EQ(cli_run(env, h, out, sizeof out), 0);
        ASSERT(strstr(out, "usage: jobd schedule") != NULL);
    }
    const char *h0[] = {"schedule", "--help", NULL};
    ASSERT_EQ(cli_run(env, h0, out, sizeof out), 0);
    ASSERT(strstr(out, "usage: jobd schedule") != NULL);
}

TEST(schedule_cli_commands)
{
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    char envs[128];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    const char *env[] = {envs, NULL};
    char out[65536];
    cli_add_and_replace(env, s.base);
    cli_ls_pause_trigger_rm(env, &s);
    cli_refusals(env);
    cli_help(env);
    srv_stop(&s);

    /* The server is gone: 3 for every form. */
    const char *gone[][7] = {
        {"schedule", "add", "x", "* * * * *", "t", NULL},
        {"schedule", "ls", NULL},
        {"schedule", "rm", "x", NULL},
        {"schedule", "pause", "x", NULL},
        {"schedule", "resume", "x", NULL},
        {"schedule", "trigger", "x", NULL},
    };
    for (size_t i = 0; i < 6; i++)
        ASSERT_EQ(cli_run(env, gone[i], out, sizeof out), 3);
}

/*
 * The schedule's jobs not made by trigger, oldest first: fills sf[] with
 * their scheduled_for (ms), checks each was created within 1.5 s of it.
 * Returns the count.
 */
static size_t
fired(const struct srv *s, const char *name, int64_t *sf, size_t cap)
{
    char path[256];
    snprintf(path, sizeof path, "/v1/jobs?schedule=%s&limit=1000", name);
    json_t *o = get_json(s, path);
    json_t *arr = json_object_get(o, "jobs");
    size_t n = 0;
    /* The list is newest first. */
    for (size_t i = json_array_size(arr); i-- > 0;) {
        json_t *j = json_array_get(arr, i);
        ASSERT_STR_EQ(json_string_value(json_object_get(j, "schedule")), name);
        int64_t f = ts_ms(json_string_value(json_object_get(j, "scheduled_for")));
        int64_t c = ts_ms(json_string_value(json_object_get(j, "created_at")));
        if (f % 1000 != 0) /* a trigger: due "now", not on a second */
            continue;
        if (c - f > 1500 || c - f < -50)
            TEST_FAIL("job for %s created %lld ms after its firing", name, (long long)(c - f));
        if (n < cap)
            sf[n] = f;
        n++;
    }
    json_decref(o);
    return n;
}

/* Polls until the schedule has at least want firings (15 s deadline); returns the count. */
static size_t
wait_fired(const struct srv *s, const char *name, size_t want, int64_t *sf, size_t cap)
{
    int64_t deadline = apitest_now_ms() + 15000;
    size_t n;
    while ((n = fired(s, name, sf, cap)) < want) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("%s fired %zu times, want %zu", name, n, want);
        apitest_nap_ms(100);
    }
    return n;
}

BOTH(schedule_fires)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    char envs[128];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    const char *env[] = {envs, NULL};
    char out[65536];
    int64_t sf[256];

    const char *add[] = {"schedule", "add", "tick", "* * * * * *", "tick.job", NULL};
    ASSERT_EQ(cli_run(env, add, out, sizeof out), 0);
    size_t n = wait_fired(&s, "tick", 3, sf, 256);
    /* Consecutive seconds, none twice. */
    for (size_t i = 1; i < n && i < 256; i++)
        if (sf[i] != sf[i - 1] + 1000)
            TEST_FAIL("firing %zu at %lld follows %lld", i, (long long)sf[i], (long long)sf[i - 1]);

    const char *pause[] = {"schedule", "pause", "tick", NULL};
    ASSERT_EQ(cli_run(env, pause, out, sizeof out), 0);
    int64_t paused_at = wall_ms();
    size_t before = fired(&s, "tick", sf, 256);
    /* Nothing may fire while paused: watch for 2.5 s (several would-be firings). */
    int64_t until = apitest_now_ms() + 2500;
    while (apitest_now_ms() < until)
        apitest_nap_ms(250);
    n = fired(&s, "tick", sf, 256);
    ASSERT(n <= 256);
    for (size_t i = 0; i < n; i++)
        if (sf[i] > paused_at)
            TEST_FAIL("a firing at %lld after pause at %lld", (long long)sf[i],
                      (long long)paused_at);
    ASSERT_EQ(n, before);

    const char *resume[] = {"schedule", "resume", "tick", NULL};
    ASSERT_EQ(cli_run(env, resume, out, sizeof out), 0);
    size_t m = wait_fired(&s, "tick", n + 2, sf, 256);
    ASSERT(m <= 256);
    /* The new firings are after the resume and again consecutive; no duplicates anywhere. */
    ASSERT(sf[m - 1] > paused_at + 2000);
    ASSERT_EQ(sf[m - 1] - sf[m - 2], 1000);
    for (size_t i = 1; i < m; i++)
        ASSERT(sf[i] > sf[i - 1]);

    const char *trig[] = {"schedule", "trigger", "tick", NULL};
    ASSERT_EQ(cli_run(env, pause, out, sizeof out), 0);
    int64_t t0 = wall_ms();
    ASSERT_EQ(cli_run(env, trig, out, sizeof out), 0);
    int64_t t1 = wall_ms();
    json_t *j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schedule")), "tick");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
    int64_t due = ts_ms(json_string_value(json_object_get(j, "run_at")));
    int64_t tsf = ts_ms(json_string_value(json_object_get(j, "scheduled_for")));
    ASSERT(due >= t0 - 50 && due <= t1 + 50);
    ASSERT(tsf >= t0 - 50 && tsf <= t1 + 50);
    json_decref(j);
    srv_stop(&s);
#ifdef APITEST_HAVE_PGTEST
    if (strcmp(backend, "pg") == 0)
        pgtest_drop_db(s.db);
#endif
}
