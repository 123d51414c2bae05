/*
 * test_retry_delay.c — one retry-delay rule on every path that fails an
 * attempt without a Retry-After: the backoff counts the attempts since the
 * job's last manual retry (attempt - attempt_floor, job_retry_delay_ms), so a
 * job retried by hand starts over from the base delay. Here through the real
 * binaries, on both stores: the API's default delay for POST …/fail, and a
 * `jobd worker --server` (whose claims must say the floor). The store's own
 * paths (the reaper, claims of limited queues) are in tests/store.
 *
 * Each job is first taken through ROUNDS claims, each ended dead and retried
 * by hand, so attempt = attempt_floor = ROUNDS. Counting every attempt, the
 * next failure's delay would be drawn from up to min(cap, base * 2^11); from
 * the floor it is at most base * 2. Three jobs all landing within the small
 * bound by chance is a one-in-a-million event, so the checks cannot pass
 * without the rule.
 */
#include "apitest.h"

#include "core/err.h"
#include "core/timefmt.h"

#define ROUNDS 10
#define NJOBS 3

/* A JSON field of o as microseconds (an RFC 3339 time). */
static int64_t
time_of(json_t *o, const char *field)
{
    int64_t us = 0;
    struct jobd_error e = {0};
    const char *s = json_string_value(json_object_get(o, field));
    if (s == NULL || time_parse_rfc3339(s, &us, field, &e) != JOBD_OK)
        TEST_FAIL("%s is not a time: %s", field, s ? s : "null");
    return us;
}

/* Claims one job of type through the API and returns its attempt (1 job expected). */
static int64_t
claim_attempt(const struct srv *s, const char *type, int64_t want_id, int64_t *floor)
{
    char body[160];
    snprintf(body, sizeof body, "{\"worker_id\":\"t\",\"types\":[\"%s\"]}", type);
    struct resp r;
    if (req(s, "POST", "/v1/claim", body, &r) != 200)
        TEST_FAIL("claim: %ld %s", r.status, r.body);
    json_t *v = resp_json(&r);
    resp_fini(&r);
    json_t *j = json_array_get(json_object_get(v, "jobs"), 0);
    if (j == NULL || json_integer_value(json_object_get(j, "id")) != want_id)
        TEST_FAIL("claim of %s did not give job %lld", type, (long long)want_id);
    int64_t a = json_integer_value(json_object_get(j, "attempt"));
    if (floor != NULL)
        *floor = json_integer_value(json_object_get(j, "attempt_floor"));
    json_decref(v);
    return a;
}

/* A job of type taken through ROUNDS claims, each failed for good and retried by hand. */
static int64_t
worn_job(const struct srv *s, const char *type)
{
    char body[160], path[96];
    snprintf(body, sizeof body, "{\"type\":\"%s\",\"max_attempts\":2}", type);
    int64_t id = create_job(s, body);
    for (int i = 1; i <= ROUNDS; i++) {
        int64_t floor = -1;
        ASSERT_EQ(claim_attempt(s, type, id, &floor), i);
        ASSERT_EQ(floor, i - 1); /* the claim says it */
        snprintf(path, sizeof path, "/v1/jobs/%lld/fail", (long long)id);
        snprintf(body, sizeof body, "{\"attempt\":%d,\"error\":\"x\",\"retryable\":false}", i);
        EXPECT(s, "POST", path, body, 200, NULL);
        snprintf(path, sizeof path, "/v1/jobs/%lld/retry", (long long)id);
        EXPECT(s, "POST", path, NULL, 200, NULL);
    }
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    json_t *j = get_json(s, path);
    ASSERT_EQ(json_integer_value(json_object_get(j, "attempt")), ROUNDS);
    ASSERT_EQ(json_integer_value(json_object_get(j, "attempt_floor")), ROUNDS);
    json_decref(j);
    return id;
}

/* The API's default delay (no retry_in_s): base 5 s, so at most 10 s after a retry. */
BOTH(fail_default_delay_restarts_after_manual_retry)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    for (int k = 0; k < NJOBS; k++) {
        char type[16], path[96], body[96];
        snprintf(type, sizeof type, "x%d", k);
        int64_t id = worn_job(&s, type);
        ASSERT_EQ(claim_attempt(&s, type, id, NULL), ROUNDS + 1);
        snprintf(path, sizeof path, "/v1/jobs/%lld/fail", (long long)id);
        snprintf(body, sizeof body, "{\"attempt\":%d,\"error\":\"again\"}", ROUNDS + 1);
        struct resp r;
        if (req(&s, "POST", path, body, &r) != 200)
            TEST_FAIL("fail: %ld %s", r.status, r.body);
        json_t *j = resp_json(&r);
        resp_fini(&r);
        ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
        int64_t delay = time_of(j, "run_at") - time_of(j, "started_at");
        if (delay < 0 || delay > 12 * 1000000LL) /* 5 s * 2^1, and time for the requests */
            TEST_FAIL("job %lld retries %lld ms after its claim, want <= 10 s", (long long)id,
                      (long long)(delay / 1000));
        json_decref(j);
    }
    srv_stop(&s);
}

/* A remote worker's delay (backoff_base 1s): at most 2 s after a manual retry. */
BOTH(server_worker_delay_restarts_after_manual_retry)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t ids[NJOBS];
    char ini[1024] = "[worker]\nconcurrency = 3\nbackoff_base = 1s\nbackoff_cap = 1h\n";
    for (int k = 0; k < NJOBS; k++) {
        char type[16];
        snprintf(type, sizeof type, "x%d", k);
        ids[k] = worn_job(&s, type);
        size_t n = strlen(ini);
        snprintf(ini + n, sizeof ini - n, "[handler \"%s\"]\nexec = /bin/false\n", type);
    }
    FILE *f = fopen(test_path("worker.ini"), "w");
    ASSERT(f != NULL);
    fputs(ini, f);
    fclose(f);
    char cfg[600], wlog[600]; /* test_path's buffer is reused */
    snprintf(cfg, sizeof cfg, "%s", test_path("worker.ini"));
    snprintf(wlog, sizeof wlog, "%s", test_path("worker.log"));
    char *argv[] = {getenv("JOBD_BIN"), "worker", "--server", s.base, "--config", cfg, NULL};
    pid_t w = apitest_spawn(argv, wlog, NULL);
    for (int k = 0; k < NJOBS; k++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)ids[k]);
        json_t *j = NULL;
        int64_t deadline = apitest_now_ms() + 20000;
        for (;;) {
            j = get_json(&s, path);
            const char *st = json_string_value(json_object_get(j, "status"));
            if (json_integer_value(json_object_get(j, "attempt")) == ROUNDS + 1 && st != NULL &&
                strcmp(st, "pending") == 0)
                break;
            json_decref(j);
            if (apitest_now_ms() > deadline) {
                char tail[2048] = "";
                FILE *lf = fopen(wlog, "r");
                size_t got = lf != NULL ? fread(tail, 1, sizeof tail - 1, lf) : 0;
                if (lf != NULL)
                    fclose(lf);
                tail[got] = '\0';
                TEST_FAIL("job %lld did not fail through the worker; its log: %s",
                          (long long)ids[k], tail);
            }
            apitest_nap_ms(20);
        }
        int64_t delay = time_of(j, "run_at") - time_of(j, "started_at");
        if (delay < 0 || delay > 5 * 1000000LL) /* 1 s * 2^1, and time to run /bin/false */
            TEST_FAIL("job %lld retries %lld ms after its claim, want <= 2 s", (long long)ids[k],
                      (long long)(delay / 1000));
        json_decref(j);
    }
    kill(w, SIGTERM);
    int wst = 0;
    waitpid(w, &wst, 0);
    ASSERT(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    srv_stop(&s);
}
