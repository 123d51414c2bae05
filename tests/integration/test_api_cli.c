/*
 * test_api_cli.c — the client commands of docs/CLI.md through the real binary
 * against a real server: submit, job show|cancel|retry, jobs, queues;
 * --server, $JOBD_SERVER and $JOBD_TOKEN; exit statuses 0/1/2/3; --help
 * everywhere.
 */
#include "apitest.h"

/* submit with every option (the same key again: the same job), show,
 * cancel (twice: 1 the second time), retry, show of a missing job. */
static void
cli_submit_show_cancel_retry(const char *const *env)
{
    char out[65536];
    const char *sub[] = {"submit",
                         "email.send",
                         "--payload",
                         "{\"to\":\"a@b.c\"}",
                         "--priority",
                         "5",
                         "--queue",
                         "mail",
                         "--max-attempts",
                         "3",
                         "--key",
                         "k1",
                         "--timeout",
                         "30s",
                         "--in",
                         "1h",
                         NULL};
    ASSERT_EQ(cli_run(env, sub, out, sizeof out), 0);
    json_t *j = cli_parse_json(out);
    int64_t id = json_integer_value(json_object_get(j, "id"));
    ASSERT(id > 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "queue")), "mail");
    ASSERT_EQ(json_integer_value(json_object_get(j, "priority")), 5);
    ASSERT_EQ(json_integer_value(json_object_get(j, "max_attempts")), 3);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "idempotency_key")), "k1");
    json_decref(j);
    /* The same key again: the same job. */
    ASSERT_EQ(cli_run(env, sub, out, sizeof out), 0);
    j = cli_parse_json(out);
    ASSERT_EQ(json_integer_value(json_object_get(j, "id")), id);
    json_decref(j);

    char ids[32];
    snprintf(ids, sizeof ids, "%lld", (long long)id);
    const char *show[] = {"job", "show", ids, NULL};
    ASSERT_EQ(cli_run(env, show, out, sizeof out), 0);
    j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "type")), "email.send");
    json_decref(j);
    const char *cancel[] = {"job", "cancel", ids, NULL};
    ASSERT_EQ(cli_run(env, cancel, out, sizeof out), 0);
    j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "cancelled");
    json_decref(j);
    ASSERT_EQ(cli_run(env, cancel, out, sizeof out), 1); /* already finished */
    const char *retry[] = {"job", "retry", ids, NULL};
    ASSERT_EQ(cli_run(env, retry, out, sizeof out), 0);
    const char *missing[] = {"job", "show", "777777", NULL};
    ASSERT_EQ(cli_run(env, missing, out, sizeof out), 1);
}

/* submit --server and --at; jobs piped (one JSON object a line, newest
 * first, across pages) and filtered; queues. */
static void
cli_jobs_and_queues(const char *const *env, const char *base)
{
    char out[65536];
    /* --server overrides the environment; --at. */
    const char *sub2[] = {"submit", "other", "--server", base, "--at", "2030-01-01T00:00:00Z",
                          NULL};
    ASSERT_EQ(cli_run(NULL, sub2, out, sizeof out), 0);
    for (int i = 0; i < 3; i++) {
        const char *sub3[] = {"submit", "bulk", NULL};
        ASSERT_EQ(cli_run(env, sub3, out, sizeof out), 0);
    }
    /* Piped: one JSON object a line, newest first, across pages. */
    const char *jobs[] = {"jobs", "--limit", "4", NULL};
    ASSERT_EQ(cli_run(env, jobs, out, sizeof out), 0);
    int lines = 0;
    int64_t prev = INT64_MAX;
    char *save = NULL;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = cli_parse_json(line);
        int64_t lid = json_integer_value(json_object_get(j, "id"));
        ASSERT(lid < prev);
        prev = lid;
        json_decref(j);
        lines++;
    }
    ASSERT_EQ(lines, 4);
    const char *jobs2[] = {"jobs", "--type", "bulk", "--status", "pending", NULL};
    ASSERT_EQ(cli_run(env, jobs2, out, sizeof out), 0);
    lines = 0;
    for (char *p = out; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    ASSERT_EQ(lines, 3);
    const char *jobs3[] = {"jobs", "--status", "bogus", NULL};
    ASSERT_EQ(cli_run(env, jobs3, out, sizeof out), 2); /* the server's 400 */
    const char *queues[] = {"queues", NULL};
    ASSERT_EQ(cli_run(env, queues, out, sizeof out), 0);
    ASSERT(strstr(out, "\"name\":\"mail\"") != NULL);
}

/* Usage errors (2), a bad argument refused by the server (400: 2 as well),
 * --help on every command (0). */
static void
cli_usage_refusals_help(const char *const *env)
{
    char out[65536];
    /* Usage errors: 2. */
    const char *u1[] = {"submit", NULL};
    ASSERT_EQ(cli_run(env, u1, out, sizeof out), 2);
    const char *u2[] = {"submit", "x", "--payload", "{bad", NULL};
    ASSERT_EQ(cli_run(env, u2, out, sizeof out), 2);
    const char *u3[] = {"submit", "x", "--in", "1m", "--at", "2030-01-01T00:00:00Z", NULL};
    ASSERT_EQ(cli_run(env, u3, out, sizeof out), 2);
    const char *u4[] = {"job", "show", "abc", NULL};
    ASSERT_EQ(cli_run(env, u4, out, sizeof out), 2);
    const char *u5[] = {"jobs", "--limit", "x", NULL};
    ASSERT_EQ(cli_run(env, u5, out, sizeof out), 2);
    const char *u6[] = {"submit", "x", "--priority", NULL};
    ASSERT_EQ(cli_run(env, u6, out, sizeof out), 2);
    /* Refused by the server with 400: 2 too (the server names the field). */
    const char *f1[] = {"submit", "bad type", NULL};
    ASSERT_EQ(cli_run(env, f1, out, sizeof out), 2);
    /* --help on every command: 0. */
    const char *cmds[] = {"submit", "job", "jobs", "queues", "server"};
    for (size_t i = 0; i < 5; i++) {
        const char *h[] = {cmds[i], "--help", NULL};
        ASSERT_EQ(cli_run(env, h, out, sizeof out), 0);
        ASSERT(strstr(out, "usage: jobd") != NULL);
    }
}

TEST(cli_commands)
{
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    char envs[128];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    const char *env[] = {envs, NULL};
    char out[65536];
    cli_submit_show_cancel_retry(env);
    cli_jobs_and_queues(env, s.base);
    cli_usage_refusals_help(env);
    srv_stop(&s);
    /* The server is gone: 3. */
    const char *sub4[] = {"submit", "x", NULL};
    ASSERT_EQ(cli_run(env, sub4, out, sizeof out), 3);
    const char *show2[] = {"job", "show", "1", NULL};
    ASSERT_EQ(cli_run(env, show2, out, sizeof out), 3);
}

TEST(cli_token)
{
    FILE *f = fopen(test_path("tokens"), "w");
    fputs("tok-123-0123456789\n", f);
    fclose(f);
    char tokpath[600];
    snprintf(tokpath, sizeof tokpath, "%s", test_path("tokens"));
    const char *extra[] = {"--tokens", tokpath, NULL};
    struct srv s;
    srv_start(&s, "sqlite", extra);
    char envs[128];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    char out[8192];
    const char *sub[] = {"submit", "x", NULL};
    const char *noenv[] = {envs, NULL};
    ASSERT_EQ(cli_run(noenv, sub, out, sizeof out), 1);
    const char *badenv[] = {envs, "JOBD_TOKEN=nope", NULL};
    ASSERT_EQ(cli_run(badenv, sub, out, sizeof out), 1);
    const char *goodenv[] = {envs, "JOBD_TOKEN=tok-123-0123456789", NULL};
    ASSERT_EQ(cli_run(goodenv, sub, out, sizeof out), 0);
    const char *jobs[] = {"jobs", NULL};
    ASSERT_EQ(cli_run(goodenv, jobs, out, sizeof out), 0);
    ASSERT(strstr(out, "\"type\":\"x\"") != NULL);
    srv_stop(&s);
}

TEST(cli_schedule)
{
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    char envs[128];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    const char *env[] = {envs, NULL};
    char out[16384];
    const char *add[] = {"schedule",  "add",       "nightly",       "0 3 * * *",
                         "report",    "--tz",      "Europe/Berlin", "--payload",
                         "{\"k\":1}", "--queue",   "reports",       "--priority",
                         "2",         "--catchup", "skip",          NULL};
    ASSERT_EQ(cli_run(env, add, out, sizeof out), 0);
    json_t *j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "timezone")), "Europe/Berlin");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "catchup")), "skip");
    json_decref(j);
    /* add again replaces. */
    const char *add2[] = {"schedule", "add", "nightly", "0 4 * * *", "report", NULL};
    ASSERT_EQ(cli_run(env, add2, out, sizeof out), 0);
    const char *ls[] = {"schedule", "ls", NULL};
    ASSERT_EQ(cli_run(env, ls, out, sizeof out), 0);
    ASSERT(strstr(out, "\"cron\":\"0 4 * * *\"") != NULL);
    const char *pause[] = {"schedule", "pause", "nightly", NULL};
    ASSERT_EQ(cli_run(env, pause, out, sizeof out), 0);
    ASSERT(strstr(out, "\"paused\":true") != NULL);
    const char *resume[] = {"schedule", "resume", "nightly", NULL};
    ASSERT_EQ(cli_run(env, resume, out, sizeof out), 0);
    const char *trig[] = {"schedule", "trigger", "nightly", NULL};
    ASSERT_EQ(cli_run(env, trig, out, sizeof out), 0);
    j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schedule")), "nightly");
    json_decref(j);
    const char *rm[] = {"schedule", "rm", "nightly", NULL};
    ASSERT_EQ(cli_run(env, rm, out, sizeof out), 0);
    ASSERT_EQ(cli_run(env, rm, out, sizeof out), 1); /* gone */
    const char *badcron[] = {"schedule", "add", "x", "61 * * * *", "t", NULL};
    ASSERT_EQ(cli_run(env, badcron, out, sizeof out), 2); /* the server's 400 */
    const char *u1[] = {"schedule", NULL};
    ASSERT_EQ(cli_run(env, u1, out, sizeof out), 2);
    const char *u2[] = {"schedule", "add", "x", "@daily", NULL};
    ASSERT_EQ(cli_run(env, u2, out, sizeof out), 2);
    const char *u3[] = {"schedule", "fly", "x", NULL};
    ASSERT_EQ(cli_run(env, u3, out, sizeof out), 2);
    const char *h[] = {"schedule", "--help", NULL};
    ASSERT_EQ(cli_run(env, h, out, sizeof out), 0);
    srv_stop(&s);
}
