/*
 * test_retry_delay.c — one retry-delay rule on every path that fails an
 * attempt without a Retry-After: the backoff counts the attempts since the
 * job's last manual retry (attempt - attempt_floor, job_retry_delay_ms), so a
 * job retried by hand starts over from the base delay. Here through the real
 * binaries, on both stores: the API's default delay for POST …/fail, and a
 * `jobd worker --server` (whose claims must say the floor). The store's own
 * paths (the reaper, claims of limited queues) are in tests/store; the
 * server's own --backoff-base and --backoff-cap (…/fail and the reaper) here.
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

/*
 * An attempt's history entry (0-based index i, attempt number want) of the
 * job at path/attempts, or NULL; *v owns it (json_decref).
 */
static json_t *
attempt_entry(const struct srv *s, const char *jobpath, size_t i, int64_t want, json_t **v)
{
    char path[96];
    snprintf(path, sizeof path, "%s/attempts", jobpath);
    *v = get_json(s, path);
    json_t *a = json_array_get(json_object_get(*v, "attempts"), i);
    if (a == NULL || json_integer_value(json_object_get(a, "attempt")) != want)
        TEST_FAIL("%s: attempt %lld is not entry %zu", path, (long long)want, i);
    return a;
}

/*
 * A remote worker's delay (backoff_base 1s): at most 2 s after a manual
 * retry. The job is pending between its two failures for only random(0,
 * 2 s), too short to catch on a loaded machine, so the delay is read from
 * the attempt history once the job is dead (max_attempts 2): the second
 * attempt starts after the first one's report, at its run_at. Counting
 * every attempt the delay would be random(0, 2048 s), and a worker that
 * late leaves the job pending past the test's deadline.
 */
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
    int64_t deadline = apitest_now_ms() + 30000;
    for (int k = 0; k < NJOBS; k++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)ids[k]);
        for (;;) {
            json_t *j = get_json(&s, path);
            char st[16];
            const char *sv = json_string_value(json_object_get(j, "status"));
            snprintf(st, sizeof st, "%s", sv != NULL ? sv : "?");
            int done = strcmp(st, "dead") == 0;
            if (done)
                ASSERT_EQ(json_integer_value(json_object_get(j, "attempt")), ROUNDS + 2);
            json_decref(j);
            if (done)
                break;
            if (apitest_now_ms() > deadline) {
                char tail[2048] = "";
                FILE *lf = fopen(wlog, "r");
                size_t got = lf != NULL ? fread(tail, 1, sizeof tail - 1, lf) : 0;
                if (lf != NULL)
                    fclose(lf);
                tail[got] = '\0';
                TEST_FAIL("job %lld did not fail twice through the worker (status %s); its "
                          "log: %s",
                          (long long)ids[k], st, tail);
            }
            apitest_nap_ms(20);
        }
        json_t *v1 = NULL, *v2 = NULL;
        json_t *first = attempt_entry(&s, path, ROUNDS, ROUNDS + 1, &v1);
        json_t *second = attempt_entry(&s, path, ROUNDS + 1, ROUNDS + 2, &v2);
        ASSERT_STR_EQ(json_string_value(json_object_get(first, "outcome")), "failed");
        int64_t delay = time_of(second, "started_at") - time_of(first, "finished_at");
        /* 1 s * 2^1, and time for the worker to claim it when due */
        if (delay < 0 || delay > 5 * 1000000LL)
            TEST_FAIL("job %lld retried %lld ms after its failure, want <= 2 s", (long long)ids[k],
                      (long long)(delay / 1000));
        json_decref(v1);
        json_decref(v2);
    }
    kill(w, SIGTERM);
    int wst = 0;
    waitpid(w, &wst, 0);
    ASSERT(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    srv_stop(&s);
}

/* One fresh job of type claimed with lease_s; returns its id. */
static int64_t
claimed_job(const struct srv *s, const char *type, int lease_s)
{
    char body[160];
    snprintf(body, sizeof body, "{\"type\":\"%s\",\"max_attempts\":5}", type);
    int64_t id = create_job(s, body);
    snprintf(body, sizeof body, "{\"worker_id\":\"t\",\"types\":[\"%s\"],\"lease_s\":%d}", type,
             lease_s);
    struct resp r;
    if (req(s, "POST", "/v1/claim", body, &r) != 200)
        TEST_FAIL("claim: %ld %s", r.status, r.body);
    json_t *v = resp_json(&r);
    resp_fini(&r);
    ASSERT_EQ(json_array_size(json_object_get(v, "jobs")), 1);
    json_decref(v);
    return id;
}

/*
 * How long after now the job is due again, once it is pending (waits up to
 * 20 s for the reaper). Counted from when it is seen pending, not from the
 * claim: however slow the machine, a delay at most D then shows at most D.
 */
static int64_t
pending_delay_us(const struct srv *s, int64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    int64_t deadline = apitest_now_ms() + 20000;
    for (;;) {
        json_t *j = get_json(s, path);
        const char *st = json_string_value(json_object_get(j, "status"));
        if (st != NULL && strcmp(st, "pending") == 0) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            int64_t d = time_of(j, "run_at") - (now.tv_sec * 1000000LL + now.tv_nsec / 1000);
            json_decref(j);
            return d;
        }
        json_decref(j);
        if (apitest_now_ms() > deadline)
            TEST_FAIL("job %lld did not go back to pending", (long long)id);
        apitest_nap_ms(50);
    }
}

/*
 * The server's --backoff-base and --backoff-cap (here both 1 h) set the
 * delays it decides itself: POST …/fail without retry_in_s, and a reaped
 * lease. With the built-in 5 s base, the first failure's delay is at most
 * 10 s; with a 1 h base it is drawn from up to an hour, so NJOBS delays all
 * at most 12 s would be a one-in-ten-million chance.
 */
BOTH(server_backoff_settings_set_its_own_delays)
{
    static const char *const extra[] = {
        "--backoff-base", "1h", "--backoff-cap", "1h", "--reap-interval", "250ms", NULL};
    struct srv s;
    srv_start(&s, backend, extra);
    int64_t failed_max = 0, reaped_max = 0, reaped[NJOBS];
    /* The leases of 1 s run out together, while the failures are reported. */
    for (int k = 0; k < NJOBS; k++) {
        char type[16];
        snprintf(type, sizeof type, "r%d", k);
        reaped[k] = claimed_job(&s, type, 1);
    }
    for (int k = 0; k < NJOBS; k++) {
        char type[16], path[96];
        snprintf(type, sizeof type, "f%d", k);
        int64_t id = claimed_job(&s, type, 60);
        snprintf(path, sizeof path, "/v1/jobs/%lld/fail", (long long)id);
        EXPECT(&s, "POST", path, "{\"attempt\":1,\"error\":\"x\"}", 200, NULL);
        int64_t d = pending_delay_us(&s, id);
        ASSERT(d <= 3600 * 1000000LL);
        failed_max = d > failed_max ? d : failed_max;
    }
    for (int k = 0; k < NJOBS; k++) {
        int64_t d = pending_delay_us(&s, reaped[k]); /* its lease ran out */
        ASSERT(d <= 3600 * 1000000LL);
        reaped_max = d > reaped_max ? d : reaped_max;
    }
    fprintf(stderr, "longest delays: fail %lld s, reaped %lld s\n",
            (long long)(failed_max / 1000000), (long long)(reaped_max / 1000000));
    if (failed_max <= 12 * 1000000LL)
        TEST_FAIL("…/fail without retry_in_s ignores --backoff-base 1h: %lld ms at most",
                  (long long)(failed_max / 1000));
    if (reaped_max <= 12 * 1000000LL)
        TEST_FAIL("the reaper ignores --backoff-base 1h: %lld ms at most",
                  (long long)(reaped_max / 1000));
    srv_stop(&s);
}
