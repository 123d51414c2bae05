/*
 * test_ops_attempts.c — attempt history through the real binary: a server
 * with an embedded worker runs a job that fails at its first attempt and
 * succeeds at its second; GET /v1/jobs/{id}/attempts and `jobd job
 * attempts` show both, `jobd job show` piped stays the job's JSON.
 */
#include "apitest.h"

/* Polls GET /v1/jobs/{id} until its status is want. */
static void
await_status(const struct srv *s, int64_t id, const char *want, int ms)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    int64_t deadline = apitest_now_ms() + ms;
    for (;;) {
        json_t *j = get_json(s, path);
        const char *st = json_string_value(json_object_get(j, "status"));
        bool done = st && strcmp(st, want) == 0;
        if (!done && apitest_now_ms() > deadline)
            TEST_FAIL("job %lld is %s, not %s, after %d ms", (long long)id, st, want, ms);
        json_decref(j);
        if (done)
            return;
        apitest_nap_ms(20);
    }
}

static const char *
outcome_at(json_t *arr, size_t i)
{
    return json_string_value(json_object_get(json_array_get(arr, i), "outcome"));
}

BOTH(attempt_history_through_server_and_cli)
{
    FILE *f = fopen(test_path("worker.ini"), "w");
    fprintf(f, "[worker]\nconcurrency = 2\nbackoff_base = 10ms\nbackoff_cap = 50ms\n\n"
               "[handler \"flaky\"]\n"
               "exec = /bin/sh -c \"test $JOBD_ATTEMPT -ge 2 || { echo first-try-fails >&2;"
               " exit 1; }\"\ntimeout = 10s\n");
    fclose(f);
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s", test_path("worker.ini"));
    const char *extra[] = {"--worker-config", cfg, NULL};
    struct srv s;
    srv_start(&s, backend, extra);
    int64_t id = create_job(&s, "{\"type\":\"flaky\"}");
    await_status(&s, id, "succeeded", 20000);

    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld/attempts", (long long)id);
    json_t *o = get_json(&s, path);
    json_t *arr = json_object_get(o, "attempts");
    ASSERT_EQ(json_array_size(arr), 2);
    ASSERT_STR_EQ(outcome_at(arr, 0), "failed");
    ASSERT_STR_EQ(outcome_at(arr, 1), "succeeded");
    json_t *a0 = json_array_get(arr, 0);
    ASSERT_EQ(json_integer_value(json_object_get(a0, "attempt")), 1);
    ASSERT(strstr(json_string_value(json_object_get(a0, "error")), "first-try-fails"));
    ASSERT(json_is_string(json_object_get(a0, "worker_id")));
    ASSERT(json_is_number(json_object_get(json_array_get(arr, 1), "duration_s")));
    ASSERT(json_is_null(json_object_get(json_array_get(arr, 1), "error")));
    json_decref(o);

    struct resp r;
    ASSERT_EQ(req(&s, "GET", "/v1/jobs/999999/attempts", NULL, &r), 404);
    resp_fini(&r);

    char envs[128], ids[32], out[65536];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    snprintf(ids, sizeof ids, "%lld", (long long)id);
    const char *env[] = {envs, NULL};
    /* piped: one JSON attempt a line, oldest first */
    const char *att[] = {"job", "attempts", ids, NULL};
    ASSERT_EQ(cli_run(env, att, out, sizeof out), 0);
    char *nl = strchr(out, '\n');
    ASSERT(nl != NULL);
    *nl = '\0';
    json_t *first = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(first, "outcome")), "failed");
    json_decref(first);
    json_t *second = cli_parse_json(nl + 1);
    ASSERT_STR_EQ(json_string_value(json_object_get(second, "outcome")), "succeeded");
    json_decref(second);
    /* job show piped: still the job object */
    const char *show[] = {"job", "show", ids, NULL};
    ASSERT_EQ(cli_run(env, show, out, sizeof out), 0);
    json_t *j = cli_parse_json(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "succeeded");
    ASSERT_EQ(json_integer_value(json_object_get(j, "attempt")), 2);
    json_decref(j);
    const char *missing[] = {"job", "attempts", "999999", NULL};
    ASSERT_EQ(cli_run(env, missing, out, sizeof out), 1);
    srv_stop(&s);
}
