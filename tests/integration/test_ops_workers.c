/*
 * test_ops_workers.c — GET /v1/workers and `jobd workers` through the real
 * binary: a server's own worker and a `jobd worker --db` process announce
 * themselves; the second holds a running job, shows `draining` during its
 * shutdown grace and is gone from the list once it stopped; a worker killed
 * with SIGKILL turns `gone` after three missed presence intervals. A
 * `jobd worker --server` does the same through the presence routes.
 */
#include <sys/stat.h>

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
        json_array_foreach(types, k, t)
            if (strcmp(json_string_value(t), type) == 0)
                found = w;
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

/* Waits until the worker with handler type is active with pid: announced.
 * A worker that talks to a server is listed from its first claim (a claim
 * is presence, docs/API.md), before its own announce names its pid. */
static json_t *
await_announced(const struct srv *s, const char *type, pid_t pid, int ms)
{
    int64_t deadline = apitest_now_ms() + ms;
    for (;;) {
        json_t *w = await_worker(s, type, "active", ms);
        if (json_integer_value(json_object_get(w, "pid")) == pid)
            return w;
        if (apitest_now_ms() > deadline)
            TEST_FAIL("worker of %s never listed with pid %d", type, (int)pid);
        json_decref(w);
        apitest_nap_ms(50);
    }
}

static pid_t
start_worker(const struct srv *s, const char *cfg, const char *log)
{
    char *argv[] = {getenv("JOBD_BIN"), "worker",    "--db", (char *)s->db,
                    "--config",         (char *)cfg, NULL};
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

    /* a --db worker holding a job that runs until the test lets it end
     * (the file "go" exists), with a long shutdown grace: it stays
     * draining while the test looks, however slow the machine */
    char hold[600], go[600];
    snprintf(go, sizeof go, "%s", test_path("go"));
    snprintf(hold, sizeof hold, "%s", test_path("hold.sh"));
    f = fopen(hold, "w");
    fprintf(f, "#!/bin/sh\nwhile [ ! -e '%s' ]; do sleep 0.05; done\n", go);
    fclose(f);
    ASSERT_EQ(chmod(hold, 0755), 0);
    f = fopen(test_path("slow.ini"), "w");
    fprintf(f,
            "[worker]\nconcurrency = 2\nqueues = slowq\nshutdown_grace = 60s\n"
            "heartbeat = 200ms\nlease = 10s\n[handler \"slow\"]\nexec = %s\n",
            hold);
    fclose(f);
    snprintf(slow, sizeof slow, "%s", test_path("slow.ini"));
    pid_t wp = start_worker(&s, slow, test_path("slow.log"));
    int64_t id = create_job(&s, "{\"type\":\"slow\",\"queue\":\"slowq\"}");
    int64_t deadline = apitest_now_ms() + 20000;
    for (;;) {
        w = await_worker(&s, "slow", "active", 20000);
        json_t *run = json_object_get(w, "running");
        bool holds = json_array_size(run) == 1 && json_integer_value(json_array_get(run, 0)) == id;
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
    f = fopen(go, "w");
    fclose(f);
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


/* Waits until the worker of type holds exactly job id in state. */
static void
await_holding(const struct srv *s, const char *type, const char *state, int64_t id)
{
    int64_t deadline = apitest_now_ms() + 20000;
    for (;;) {
        json_t *w = await_worker(s, type, state, 20000);
        json_t *run = json_object_get(w, "running");
        bool holds = json_array_size(run) == 1 && json_integer_value(json_array_get(run, 0)) == id;
        json_decref(w);
        if (holds)
            return;
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the %s worker never showed job %lld as running while %s", type,
                      (long long)id, state);
        apitest_nap_ms(50);
    }
}

static pid_t
start_remote(const struct srv *s, const char *type, const char *ini)
{
    char cfg[600], log[600];
    snprintf(cfg, sizeof cfg, "%s", test_path(type));
    snprintf(log, sizeof log, "%s.log", cfg);
    FILE *f = fopen(cfg, "w");
    fputs(ini, f);
    fclose(f);
    char *argv[] = {getenv("JOBD_BIN"), "worker", "--server", (char *)s->base,
                    "--config",         cfg,      NULL};
    return apitest_spawn(argv, log, NULL);
}

BOTH(remote_worker_presence)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    /* An idle remote worker sits in long polls of up to (lease - heartbeat) / 4
     * = 4.75 s, longer than 3 presence intervals of 1 s: its presence must
     * not wait for the loop. The interval is no shorter, so a loaded
     * machine's late presence post (seen at 300 ms) is not taken for a death. */
    /* Its handler runs until the test lets it end (the file "go" exists):
     * it is still running while the test looks at the draining worker,
     * however slow the machine, and ends as soon as the test has seen it. */
    char ini[1400], started[600], go[600];
    snprintf(started, sizeof started, "%s", test_path("started"));
    snprintf(go, sizeof go, "%s", test_path("go"));
    FILE *f = fopen(test_path("slow.sh"), "w");
    fprintf(f, "#!/bin/sh\ntouch '%s'\nwhile [ ! -e '%s' ]; do sleep 0.05; done\n", started, go);
    fclose(f);
    chmod(test_path("slow.sh"), 0755);
    snprintf(ini, sizeof ini,
             "[worker]\nconcurrency = 2\nqueues = remq\nheartbeat = 1s\nlease = 20s\n"
             "shutdown_grace = 20s\n[handler \"remote\"]\nexec = %s\n",
             test_path("slow.sh"));
    pid_t wp = start_remote(&s, "remote", ini);
    json_t *w = await_announced(&s, "remote", wp, 20000);
    ASSERT_EQ(json_integer_value(json_object_get(w, "concurrency")), 2);
    ASSERT_EQ(json_integer_value(json_object_get(w, "pid")), wp);
    ASSERT_STR_EQ(json_string_value(json_array_get(json_object_get(w, "queues"), 0)), "remq");
    json_decref(w);
    for (int i = 0; i < 12; i++) { /* stays active while idle, 6 s = 6 intervals */
        json_decref(await_worker(&s, "remote", "active", 1));
        apitest_nap_ms(500);
    }
    int64_t id = create_job(&s, "{\"type\":\"remote\",\"queue\":\"remq\"}");
    await_holding(&s, "remote", "active", id);
    /* Stop it only once its handler runs: a stop while a claim's answer is
     * on its way abandons the claim to its lease. */
    for (int64_t end = apitest_now_ms() + 20000; access(started, F_OK) != 0;) {
        if (apitest_now_ms() > end)
            TEST_FAIL("the handler of job %lld never started", (long long)id);
        apitest_nap_ms(20);
    }
    kill(wp, SIGTERM);
    await_holding(&s, "remote", "draining", id);
    f = fopen(go, "w");
    fclose(f);
    int st = 0;
    ASSERT_EQ(waitpid(wp, &st, 0), wp);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    await_worker(&s, "remote", NULL, 5000); /* withdrawn */
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    json_t *j = get_json(&s, path);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "succeeded");
    json_decref(j);

    /* killed: gone after 3 missed intervals */
    wp = start_remote(&s, "rfast",
                      "[worker]\nheartbeat = 200ms\nlease = 5s\n"
                      "[handler \"rfast\"]\nexec = /bin/true\n");
    json_decref(await_announced(&s, "rfast", wp, 20000)); /* its 200 ms interval holds */
    kill(wp, SIGKILL);
    waitpid(wp, &st, 0);
    json_decref(await_worker(&s, "rfast", "gone", 10000));

    EXPECT(&s, "POST", "/v1/workers/nobody/presence", "{}", 404, "not_found");
    EXPECT(&s, "POST", "/v1/workers", "{\"id\":\"x\"}", 400, NULL);
    EXPECT(&s, "POST", "/v1/workers", "{\"id\":\"x\",\"heartbeat_ms\":1000,\"queues\":[1]}", 400,
           NULL);
    EXPECT(&s, "POST", "/v1/workers/nobody/withdraw", "{}", 200, NULL);
    srv_stop(&s);
}
