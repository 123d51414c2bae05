/*
 * test_ops_stats.c — GET /v1/stats and the queue object's throughput_1m
 * through the real binary: a `jobd server` and a `jobd worker --db` run
 * jobs that succeed, fail once then die, and die at once; the series and
 * throughput_1m count exactly that, a second server on the same store
 * answers the same, and bad parameters are 400s that name the parameter.
 */
#include <sys/stat.h>

#include "apitest.h"

/* The sums of a GET /v1/stats answer: enqueued, succeeded, failed, dead. */
static void
series_sums(json_t *o, int64_t sums[4])
{
    static const char *const keys[4] = {"enqueued", "succeeded", "failed", "dead"};
    memset(sums, 0, 4 * sizeof *sums);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(o, "series"), i, p)
        for (int k = 0; k < 4; k++)
            sums[k] += json_integer_value(json_object_get(p, keys[k]));
}

/* GET path expecting 400 invalid_query naming field. */
static void
expect_bad(const struct srv *s, const char *path, const char *field)
{
    struct resp r;
    long st = req(s, "GET", path, NULL, &r);
    json_t *v = resp_json(&r);
    json_t *e = json_object_get(v, "error");
    if (st != 400)
        TEST_FAIL("GET %s: %ld, want 400: %.200s", path, st, r.body);
    ASSERT_STR_EQ(json_string_value(json_object_get(e, "code")), "invalid_query");
    ASSERT_STR_EQ(json_string_value(json_object_get(e, "field")), field);
    json_decref(v);
    resp_fini(&r);
}

/* The queue's object in GET /v1/queues (new reference), or NULL. */
static json_t *
queue_find(const struct srv *s, const char *name)
{
    json_t *o = get_json(s, "/v1/queues"), *found = NULL;
    size_t i;
    json_t *q;
    json_array_foreach(json_object_get(o, "queues"), i, q) {
        if (strcmp(json_string_value(json_object_get(q, "name")), name) == 0)
            found = json_incref(q);
    }
    json_decref(o);
    return found;
}

static json_t *
queue_obj(const struct srv *s, const char *name)
{
    json_t *q = queue_find(s, name);
    if (q == NULL)
        TEST_FAIL("queue %s is not listed", name);
    return q;
}

/* Waits until queue q has ok succeeded and dead dead jobs. */
static void
await_done(const struct srv *s, const char *q, int ok, int dead)
{
    for (int64_t end = apitest_now_ms() + 30000;; apitest_nap_ms(50)) {
        json_t *o = queue_find(s, q); /* PostgreSQL's counts may lag a few seconds */
        bool done = o != NULL && json_integer_value(json_object_get(o, "succeeded")) == ok &&
                    json_integer_value(json_object_get(o, "dead")) == dead;
        json_decref(o);
        if (done)
            return;
        if (apitest_now_ms() > end)
            TEST_FAIL("queue %s never reached %d succeeded, %d dead", q, ok, dead);
    }
}

static pid_t
start_db_worker(const struct srv *s)
{
    char die[600];
    snprintf(die, sizeof die, "%s", test_path("die.sh"));
    FILE *f = fopen(die, "w");
    fputs("#!/bin/sh\nexit 65\n", f); /* 65: a permanent failure */
    fclose(f);
    chmod(die, 0755);
    f = fopen(test_path("w.ini"), "w");
    fprintf(f,
            "[worker]\nconcurrency = 4\nqueues = sq\nbackoff_base = 50ms\n"
            "backoff_cap = 100ms\n[handler \"ok\"]\nexec = /bin/true\n"
            "[handler \"flaky\"]\nexec = /bin/false\n[handler \"die\"]\nexec = %s\n",
            die);
    fclose(f);
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s", test_path("w.ini"));
    char *argv[] = {getenv("JOBD_BIN"), "worker", "--db", (char *)s->db, "--config", cfg, NULL};
    return apitest_spawn(argv, test_path("w.log"), NULL);
}

BOTH(stats_and_throughput_count_what_ran)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    pid_t wp = start_db_worker(&s);
    struct resp r;
    ASSERT_EQ(
        req(&s, "POST", "/v1/jobs/batch",
            "{\"jobs\":[{\"type\":\"ok\",\"queue\":\"sq\"},{\"type\":\"ok\",\"queue\":\"sq\"},"
            "{\"type\":\"ok\",\"queue\":\"sq\"},{\"type\":\"ok\",\"queue\":\"sq\"},"
            "{\"type\":\"ok\",\"queue\":\"sq\"}]}",
            &r),
        201);
    resp_fini(&r);
    for (int i = 0; i < 3; i++) /* fails, then dies on its last attempt */
        create_job(&s, "{\"type\":\"flaky\",\"queue\":\"sq\",\"max_attempts\":2}");
    for (int i = 0; i < 2; i++) /* dies at once (exit 65) */
        create_job(&s, "{\"type\":\"die\",\"queue\":\"sq\"}");
    create_job(&s, "{\"type\":\"other\",\"queue\":\"elsewhere\"}");
    await_done(&s, "sq", 5, 5);

    int64_t sums[4];
    json_t *o = get_json(&s, "/v1/stats?since=1m&step=10s&queue=sq");
    ASSERT_EQ(json_integer_value(json_object_get(o, "step_s")), 10);
    ASSERT_EQ(json_array_size(json_object_get(o, "series")), 6);
    series_sums(o, sums);
    ASSERT_EQ(sums[0], 10);
    ASSERT_EQ(sums[1], 5);
    ASSERT_EQ(sums[2], 3);
    ASSERT_EQ(sums[3], 5);
    json_decref(o);
    o = get_json(&s, "/v1/stats"); /* defaults: an hour of minutes, every queue */
    ASSERT_EQ(json_integer_value(json_object_get(o, "step_s")), 60);
    ASSERT_EQ(json_array_size(json_object_get(o, "series")), 60);
    series_sums(o, sums);
    ASSERT_EQ(sums[0], 11);
    ASSERT_EQ(sums[1], 5);
    json_decref(o);

    json_t *q = queue_obj(&s, "sq"), *tp = json_object_get(q, "throughput_1m");
    ASSERT_EQ(json_integer_value(json_object_get(tp, "succeeded")), 5);
    ASSERT_EQ(json_integer_value(json_object_get(tp, "failed")), 3);
    ASSERT_EQ(json_integer_value(json_object_get(tp, "dead")), 5);
    json_decref(q);
    q = queue_obj(&s, "elsewhere");
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(q, "throughput_1m"), "dead")), 0);
    json_decref(q);

    /* the counters live in the store: a second server answers the same */
    struct srv s2;
    memset(&s2, 0, sizeof s2);
    memcpy(s2.db, s.db, sizeof s2.db);
    srv_start_db(&s2, NULL);
    struct resp a, b;
    ASSERT_EQ(req(&s, "GET", "/v1/stats?since=10m&step=1m", NULL, &a), 200);
    ASSERT_EQ(req(&s2, "GET", "/v1/stats?since=10m&step=1m", NULL, &b), 200);
    ASSERT_STR_EQ(a.body, b.body);
    resp_fini(&a);
    resp_fini(&b);
    srv_stop(&s2);

    expect_bad(&s, "/v1/stats?since=8d", "since");
    expect_bad(&s, "/v1/stats?since=soon", "since");
    expect_bad(&s, "/v1/stats?step=15s", "step");
    expect_bad(&s, "/v1/stats?step=5s", "step");
    expect_bad(&s, "/v1/stats?since=1m&step=1h", "step");
    expect_bad(&s, "/v1/stats?queue=a%20b", "queue");
    expect_bad(&s, "/v1/stats?limit=3", "limit");
    kill(wp, SIGTERM);
    waitpid(wp, NULL, 0);
    srv_stop(&s);
}
