/*
 * test_ops_workers.c — GET /v1/workers and `jobd workers` through the real
 * binary: a server's own worker and a `jobd worker --db` process announce
 * themselves; the second holds a running job, shows `draining` during its
 * shutdown grace and is gone from the list once it stopped; a worker killed
 * with SIGKILL turns `gone` after three missed presence intervals.
 */
#include "apitest.h"

/* The worker whose id starts with prefix in GET /v1/workers (new ref), or NULL. */
static json_t *
find_worker(const struct srv *s, const char *type)
{
    json_t *o = get_json(s, "/v1/workers");
    json_t *found = NULL;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(o, "workers"), i, w) {
        json_t *types = json_object_get(w, "types");
        size_t k;
        json_t *t;
        json_array_foreach(types, k, t) if (strcmp(json_string_value(t), type) == 0) found = w;
    }
    json_incref(found);
    json_decref(o);
    return found;
}

/* Waits until the worker with handler type is in state (NULL = not listed). */
static json_t *
await_worker(const struct srv *s, const char *type, const char *state, int ms)
{
    int64_t deadline = apitest_now_ms() + ms;
    for (;;) {
        json_t *w = find_worker(s, type);
        const char *st = w ? json_string_value(json_object_get(w, "state")) : NULL;
        if ((state == NULL && w == NULL) || (state && st && strcmp(st, state) == 0))
            return w;
        if (apitest_now_ms() > deadline)
            TEST_FAIL("worker of %s is %s, not %s, after %d ms", type, st ? st : "absent",
                      state ? state : "absent", ms);
        json_decref(w);
        apitest_nap_ms(50);
    }
}

static pid_t
start_worker(const struct srv *s, const char *cfg, const char *log)
{
    char *argv[] = {getenv("JOBD_BIN"), "worker", "--db", (char *)s->db, "--config",
                    (char *)cfg, NULL};
    return apitest_spawn(argv, log, NULL);
}

BOTH(workers_listed_with_state_and_jobs)
{
    FILE *f = fopen(test_path("own.ini"), "w");
    fprintf(f, "[worker]\nconcurrency = 3\n[handler \"own\"]\nexec = /bin/true\n");
    fclose(f);
    char own[600], slow[600], fast[600];
    snprintf(own, sizeof own, "%s", test_path("own.ini"));
    const char *extra[] = {"--worker-config", own, NULL};
    struct srv s;
    srv_start(&s, backend, extra);
    json_t *w = await_worker(&s, "own", "active", 20000);
    ASSERT_EQ(json_integer_value(json_object_get(w, "concurrency")), 3);
    ASSERT_EQ(json_integer_value(json_object_get(w, "pid")), s.pid);
    json_decref(w);

    /* a --db worker holding a long job, with a long shutdown grace */
    f = fopen(test_path("slow.ini"), "w");
    fprintf(f, "[worker]\nconcurrency = 2\nqueues = slowq\nshutdown_grace = 20s\n"
               "heartbeat = 200ms\nlease = 5s\n[handler \"slow\"]\nexec = /bin/sleep 2\n");
    fclose(f);
    snprintf(slow, sizeof slow, "%s", test_path("slow.ini"));
    pid_t wp = start_worker(&s, slow, test_path("slow.log"));
    int64_t id = create_job(&s, "{\"type\":\"slow\",\"queue\":\"slowq\"}");
    int64_t deadline = apitest_now_ms() + 20000;
    for (;;) {
        w = await_worker(&s, "slow", "active", 20000);
        json_t *run = json_object_get(w, "running");
        bool holds = json_array_size(run) == 1 &&
                     json_integer_value(json_array_get(run, 0)) == id;
        if (holds)
            ASSERT_STR_EQ(json_string_value(json_array_get(json_object_get(w, "queues"), 0)),
                          "slowq");
        json_decref(w);
        if (holds)
            break;
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the slow worker never showed job %lld as running", (long long)id);
        apitest_nap_ms(50);
    }
    kill(wp, SIGTERM);
    json_decref(await_worker(&s, "slow", "draining", 10000));
    /* piped `jobd workers`: one JSON object a line */
    char envs[128], out[8192];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    const char *env[] = {envs, NULL};
    const char *ls[] = {"workers", NULL};
    ASSERT_EQ(cli_run(env, ls, out, sizeof out), 0);
    ASSERT(strstr(out, "\"state\":\"draining\"") != NULL);
    int st = 0;
    ASSERT_EQ(waitpid(wp, &st, 0), wp);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    await_worker(&s, "slow", NULL, 5000); /* withdrawn */

    /* killed: gone after 3 missed intervals of 200 ms */
    f = fopen(test_path("fast.ini"), "w");
    fprintf(f, "[worker]\nheartbeat = 200ms\nlease = 5s\n[handler \"fast\"]\nexec = /bin/true\n");
    fclose(f);
    snprintf(fast, sizeof fast, "%s", test_path("fast.ini"));
    wp = start_worker(&s, fast, test_path("fast.log"));
    json_decref(await_worker(&s, "fast", "active", 20000));
    kill(wp, SIGKILL);
    waitpid(wp, &st, 0);
    json_decref(await_worker(&s, "fast", "gone", 10000));
    srv_stop(&s);
}

