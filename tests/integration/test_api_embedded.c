/*
 * test_api_embedded.c — `jobd server` as one process with everything: the
 * scheduling plane (its reaper hands an abandoned lease back) and, with
 * --worker-config, an embedded worker that runs jobs submitted through the
 * API, woken in memory, and whose runs show in the server's /metrics. Real processes, real HTTP; waits poll a condition
 * with a deadline.
 */
#include "apitest.h"

/* Polls GET /v1/jobs/{id} until its status is want (or fails after ms). */
static void
await_status(const struct srv *s, int64_t id, const char *want, int ms, json_t **out)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    int64_t deadline = apitest_now_ms() + ms;
    for (;;) {
        json_t *j = get_json(s, path);
        const char *st = json_string_value(json_object_get(j, "status"));
        if (st && strcmp(st, want) == 0) {
            if (out)
                *out = j;
            else
                json_decref(j);
            return;
        }
        if (apitest_now_ms() > deadline)
            TEST_FAIL("job %lld is %s, not %s, after %d ms", (long long)id, st, want, ms);
        json_decref(j);
        apitest_nap_ms(20);
    }
}

BOTH(embedded_worker_runs_jobs)
{
    FILE *f = fopen(test_path("worker.ini"), "w");
    fprintf(f, "[worker]\nconcurrency = 2\n\n[handler \"echo\"]\nexec = /bin/cat\n"
               "timeout = 10s\n\n[handler \"bad\"]\nexec = /bin/sh -c \"exit 65\"\n");
    fclose(f);
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s", test_path("worker.ini"));
    const char *extra[] = {"--worker-config", cfg, NULL};
    struct srv s;
    srv_start(&s, backend, extra);
    int64_t id = create_job(&s, "{\"type\":\"echo\",\"payload\":{\"hello\":\"world\"}}");
    json_t *j = NULL;
    await_status(&s, id, "succeeded", 20000, &j);
    /* The handler echoed its stdin (the payload): that is the result. */
    ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(j, "result"), "hello")),
                  "world");
    json_decref(j);
    int64_t bad = create_job(&s, "{\"type\":\"bad\"}");
    await_status(&s, bad, "dead", 20000, NULL);
    /* The embedded worker's runs show in the server's /metrics. Successes
     * are counted once their completion is written, which may follow the
     * status the API already shows by a moment: poll. */
    int64_t deadline = apitest_now_ms() + 10000;
    for (;;) {
        struct resp r;
        ASSERT_EQ(req(&s, "GET", "/metrics", NULL, &r), 200);
        bool ok = strstr(r.body, "jobd_jobs_finished_total{outcome=\"succeeded\"} 1\n") &&
                  strstr(r.body, "jobd_jobs_finished_total{outcome=\"dead\"} 1\n") &&
                  strstr(r.body, "jobd_job_lateness_seconds_count{queue=\"default\"} 2\n") &&
                  strstr(r.body, "jobd_job_duration_seconds_count{queue=\"default\"} 2\n");
        if (ok || apitest_now_ms() > deadline) {
            if (!ok)
                TEST_FAIL("the embedded worker's runs are not in /metrics:\n%s", r.body);
            resp_fini(&r);
            break;
        }
        resp_fini(&r);
        apitest_nap_ms(50);
    }
    srv_stop(&s);
}

BOTH(plane_reaps_abandoned_lease)
{
    const char *extra[] = {"--reap-interval", "200ms", NULL};
    struct srv s;
    srv_start(&s, backend, extra);
    int64_t id = create_job(&s, "{\"type\":\"lost\",\"max_attempts\":5}");
    struct resp r;
    /* A remote worker claims with a 1 s lease and disappears. */
    ASSERT_EQ(req(&s, "POST", "/v1/claim",
                  "{\"worker_id\":\"ghost\",\"types\":[\"lost\"],\"lease_s\":1}", &r),
              200);
    resp_fini(&r);
    await_status(&s, id, "running", 1000, NULL);
    json_t *j = NULL;
    await_status(&s, id, "pending", 20000, &j);
    ASSERT_EQ(json_integer_value(json_object_get(j, "attempt")), 1);
    ASSERT(json_is_string(json_object_get(j, "last_error")));
    json_decref(j);
    /* The ghost's late report is fenced. */
    char p[64];
    snprintf(p, sizeof p, "/v1/jobs/%lld/complete", (long long)id);
    EXPECT(&s, "POST", p, "{\"attempt\":1}", 409, "stale_attempt");
    /* The reaper's work shows in /metrics. */
    ASSERT_EQ(req(&s, "GET", "/metrics", NULL, &r), 200);
    ASSERT(strstr(r.body, "\njobd_jobs_reaped_total 1\n") != NULL);
    resp_fini(&r);
    srv_stop(&s);
}

TEST(bad_worker_config)
{
    FILE *f = fopen(test_path("bad.ini"), "w");
    fprintf(f, "[worker]\nconcurrency = lots\n");
    fclose(f);
    char db[700], cfg[600];
    snprintf(db, sizeof db, "sqlite:%s", test_path("j.db"));
    snprintf(cfg, sizeof cfg, "%s", test_path("bad.ini"));
    char *argv[] = {getenv("JOBD_BIN"), "server",          "--db", db,  "--listen",
                    "127.0.0.1:0",      "--worker-config", cfg,    NULL};
    pid_t pid = apitest_spawn(argv, test_path("bad.log"), NULL);
    int st;
    waitpid(pid, &st, 0);
    ASSERT(WIFEXITED(st));
    ASSERT_EQ(WEXITSTATUS(st), 2);
}
