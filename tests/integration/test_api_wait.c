/*
 * test_api_wait.c — waiting for a result (docs/API.md, Waiting for a
 * result) through real `jobd server` processes on both stores:
 * `GET /v1/jobs/{id}?wait=` and `POST /v1/jobs?wait=` answer as soon as the
 * job ends, whoever ends it — a remote worker's report to the same server,
 * a cancel, a `jobd worker --db` process (the store's signal: NOTIFY on
 * PostgreSQL, the WAL watch on SQLite), another server on the same
 * PostgreSQL — or with the job as it is when the wait is over; bad waits
 * are 400 naming `wait`; --max-waits bounds the parked waits (429); and a
 * parked wait holds no store connection (the smallest pool still serves
 * other requests). A wake-up path that is missing leaves a wait parked
 * until its deadline (30 s here), so every "promptly" below is PROMPT_MS.
 * On PostgreSQL ends are announced only while a server has waits (its
 * listener row in jobd.result_listeners).
 */
#include <pthread.h>

#include "apitest.h"

#define PROMPT_MS 3000
#define LONG_WAIT "30s"

struct waiter {
    const struct srv *s;
    char method[8];
    char path[128];
    char body[256];
    long status;
    char job_status[16];
    bool replayed;
    int64_t id;
    int64_t sent_ms, answered_ms;
    pthread_t th;
};

static void *
waiter_thread(void *a)
{
    struct waiter *w = a;
    struct resp r;
    w->sent_ms = apitest_now_ms();
    http_req(w->s, w->method, w->path, w->body[0] ? w->body : NULL, strlen(w->body), NULL, &r);
    w->answered_ms = apitest_now_ms();
    w->status = r.status;
    w->replayed = strstr(r.headers, "Idempotent-Replayed: true") != NULL;
    json_t *j = resp_json(&r);
    const char *st = json_string_value(json_object_get(j, "status"));
    snprintf(w->job_status, sizeof w->job_status, "%s", st ? st : "");
    w->id = json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    resp_fini(&r);
    return NULL;
}

/* Starts a waiting request (body NULL for a GET) and returns once it is parked. */
static void
start_wait(struct waiter *w, const struct srv *s, const char *method, const char *path,
           const char *body, double parked_before)
{
    memset(w, 0, sizeof *w);
    w->s = s;
    snprintf(w->method, sizeof w->method, "%s", method);
    snprintf(w->path, sizeof w->path, "%s", path);
    snprintf(w->body, sizeof w->body, "%s", body ? body : "");
    pthread_create(&w->th, NULL, waiter_thread, w);
    srv_await_metric(s, "jobd_results_waiting", parked_before + 1);
}

/* Joins w; it must have been answered with status and job status within PROMPT_MS of since_ms. */
static void
expect_answer(struct waiter *w, int64_t since_ms, long status, const char *job_status,
              const char *what)
{
    pthread_join(w->th, NULL);
    int64_t late = w->answered_ms - since_ms;
    fprintf(stderr, "%s: answered %ld %s %lld ms after\n", what, w->status, w->job_status,
            (long long)late);
    if (w->status != status || strcmp(w->job_status, job_status) != 0)
        TEST_FAIL("%s: answered %ld %s, want %ld %s", what, w->status, w->job_status, status,
                  job_status);
    if (late > PROMPT_MS)
        TEST_FAIL("%s: answered %lld ms after, want <= %d", what, (long long)late, PROMPT_MS);
}

/* Claims the job of type on s as a remote worker and reports it: "complete" or "fail". */
static void
finish_remote(const struct srv *s, const char *type, const char *how)
{
    char body[512];
    snprintf(body, sizeof body, "{\"worker_id\":\"tw\",\"types\":[\"%s\"],\"limit\":1}", type);
    struct resp r;
    if (req(s, "POST", "/v1/claim", body, &r) != 200)
        TEST_FAIL("claim: %ld %s", r.status, r.body);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    json_t *job = json_array_get(json_object_get(j, "jobs"), 0);
    if (job == NULL)
        TEST_FAIL("claim of %s found no job", type);
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%lld/%s",
             (long long)json_integer_value(json_object_get(job, "id")), how);
    snprintf(body, sizeof body,
             strcmp(how, "complete") == 0
                 ? "{\"attempt\":%lld,\"lease_token\":\"%s\",\"result\":{\"ok\":true}}"
                 : "{\"attempt\":%lld,\"lease_token\":\"%s\",\"error\":\"no\",\"retryable\":false}",
             (long long)json_integer_value(json_object_get(job, "attempt")),
             json_string_value(json_object_get(job, "lease_token")));
    json_decref(j);
    EXPECT(s, "POST", path, body, 200, NULL);
}

static int64_t
enqueue(const struct srv *s, const char *type)
{
    char body[128];
    snprintf(body, sizeof body, "{\"type\":\"%s\"}", type);
    return create_job(s, body);
}

static int64_t
job_count(const struct srv *s)
{
    json_t *v = get_json(s, "/v1/jobs?limit=1000");
    int64_t n = (int64_t)json_array_size(json_object_get(v, "jobs"));
    json_decref(v);
    return n;
}

BOTH(get_wait_answers_when_the_job_ends)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t a = enqueue(&s, "a");
    char path[128];
    /* Bad waits: 400 naming wait, and nothing written for an enqueue. */
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=61s", (long long)a);
    EXPECT(&s, "GET", path, NULL, 400, "invalid_query");
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=soon", (long long)a);
    struct resp r;
    ASSERT_EQ(req(&s, "GET", path, NULL, &r), 400);
    ASSERT(strstr(r.body, "\"field\":\"wait\"") != NULL);
    resp_fini(&r);
    EXPECT(&s, "POST", "/v1/jobs?wait=2m", "{\"type\":\"a\"}", 400, "invalid_query");
    ASSERT_EQ(job_count(&s), 1);

    /* Nothing ends it: the job as it is when the wait is over. */
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=1s", (long long)a);
    int64_t t0 = apitest_now_ms();
    json_t *j = get_json(&s, path);
    ASSERT(apitest_now_ms() - t0 >= 900);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
    json_decref(j);

    /* A remote worker's completion on this server. */
    struct waiter w;
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)a);
    start_wait(&w, &s, "GET", path, NULL, 0);
    finish_remote(&s, "a", "complete");
    expect_answer(&w, apitest_now_ms(), 200, "succeeded", "completed by a remote worker");

    /* A permanent failure, and a cancel. */
    int64_t b = enqueue(&s, "b");
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)b);
    start_wait(&w, &s, "GET", path, NULL, 0);
    finish_remote(&s, "b", "fail");
    expect_answer(&w, apitest_now_ms(), 200, "dead", "failed for good");
    int64_t c = enqueue(&s, "c");
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)c);
    start_wait(&w, &s, "GET", path, NULL, 0);
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)c);
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    expect_answer(&w, apitest_now_ms(), 200, "cancelled", "cancelled");

    /* Terminal already, or no such job: at once. */
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)a);
    t0 = apitest_now_ms();
    EXPECT(&s, "GET", path, NULL, 200, NULL);
    EXPECT(&s, "GET", "/v1/jobs/99999?wait=" LONG_WAIT, NULL, 404, "not_found");
    ASSERT(apitest_now_ms() - t0 < PROMPT_MS);

    /* A wait still parked when the server stops is answered with the job as it is. */
    int64_t d = enqueue(&s, "d");
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)d);
    start_wait(&w, &s, "GET", path, NULL, 0);
    int64_t stop_ms = apitest_now_ms();
    srv_stop(&s);
    expect_answer(&w, stop_ms, 200, "pending", "answered at shutdown");
}

BOTH(post_wait_enqueues_and_waits)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    /* No worker: 202 with the job as it is when the wait is over. */
    int64_t t0 = apitest_now_ms();
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/jobs?wait=1s", "{\"type\":\"idle\"}", &r), 202);
    ASSERT(apitest_now_ms() - t0 >= 900);
    ASSERT(strstr(r.body, "\"status\":\"pending\"") != NULL);
    resp_fini(&r);

    /* Completed while it waits: 201 with the finished job. */
    struct waiter w;
    start_wait(&w, &s, "POST", "/v1/jobs?wait=" LONG_WAIT,
               "{\"type\":\"p\",\"idempotency_key\":\"k1\"}", 0);
    finish_remote(&s, "p", "complete");
    expect_answer(&w, apitest_now_ms(), 201, "succeeded", "enqueued and completed");
    ASSERT(!w.replayed);

    /* A replay of a finished job: 200 and the header, at once. */
    t0 = apitest_now_ms();
    ASSERT_EQ(req(&s, "POST", "/v1/jobs?wait=" LONG_WAIT,
                  "{\"type\":\"p\",\"idempotency_key\":\"k1\"}", &r),
              200);
    ASSERT(strstr(r.headers, "Idempotent-Replayed: true") != NULL);
    ASSERT(strstr(r.body, "\"status\":\"succeeded\"") != NULL);
    ASSERT(apitest_now_ms() - t0 < PROMPT_MS);
    resp_fini(&r);

    /* A replay of an unfinished job waits the same way: 202 with the header. */
    ASSERT_EQ(
        req(&s, "POST", "/v1/jobs?wait=500ms", "{\"type\":\"q\",\"idempotency_key\":\"k2\"}", &r),
        202);
    ASSERT(strstr(r.headers, "Idempotent-Replayed") == NULL);
    resp_fini(&r);
    start_wait(&w, &s, "POST", "/v1/jobs?wait=" LONG_WAIT,
               "{\"type\":\"q\",\"idempotency_key\":\"k2\"}", 0);
    finish_remote(&s, "q", "fail");
    expect_answer(&w, apitest_now_ms(), 200, "dead", "a replay that waited");
    ASSERT(w.replayed);
    srv_stop(&s);
}

/* Writes a worker config whose handler of type succeeds; returns its path (static). */
static const char *
worker_ini(const char *type)
{
    static char path[600];
    snprintf(path, sizeof path, "%s", test_path("worker.ini"));
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fprintf(f, "[worker]\nconcurrency = 1\n[handler \"%s\"]\nexec = /bin/true\n", type);
    fclose(f);
    return path;
}

/*
 * Ends that another process commits: a `jobd worker --db` on the same
 * store (both stores), and on PostgreSQL a remote worker of another server.
 * Nothing in the waiting server's process knows of them.
 */
BOTH(wait_hears_other_processes)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t id = enqueue(&s, "w");
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)id);
    struct waiter g, p;
    start_wait(&g, &s, "GET", path, NULL, 0);
    start_wait(&p, &s, "POST", "/v1/jobs?wait=" LONG_WAIT, "{\"type\":\"w\"}", 1);
    char cfg[600], wlog[600];
    snprintf(cfg, sizeof cfg, "%s", worker_ini("w"));
    snprintf(wlog, sizeof wlog, "%s", test_path("worker.log"));
    char *argv[] = {getenv("JOBD_BIN"), "worker", "--db", s.db, "--config", cfg, NULL};
    pid_t wpid = apitest_spawn(argv, wlog, NULL);
    /* Counted from when each job finished (the worker's start is no part of it). */
    pthread_join(g.th, NULL);
    pthread_join(p.th, NULL);
    kill(wpid, SIGTERM);
    waitpid(wpid, NULL, 0);
    ASSERT_EQ(g.status, 200);
    ASSERT_STR_EQ(g.job_status, "succeeded");
    ASSERT_EQ(p.status, 201);
    ASSERT_STR_EQ(p.job_status, "succeeded");
    for (int k = 0; k < 2; k++) {
        struct waiter *w = k ? &p : &g;
        snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)w->id);
        json_t *j = get_json(&s, path);
        /* finished_at against the clock now: both are this machine's real time */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int64_t since_answer_ms = apitest_now_ms() - w->answered_ms;
        const char *fin = json_string_value(json_object_get(j, "finished_at"));
        struct tm tm = {0};
        int ms = 0;
        ASSERT(fin != NULL && sscanf(fin, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon,
                                     &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) == 7);
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        int64_t fin_ms = (int64_t)timegm(&tm) * 1000 + ms;
        int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
        int64_t late = now_ms - since_answer_ms - fin_ms;
        fprintf(stderr, "%s answered %lld ms after the worker finished the job\n",
                k ? "POST" : "GET", (long long)late);
        ASSERT(late <= PROMPT_MS);
        json_decref(j);
    }
    if (strcmp(backend, "pg") == 0) {
        /* Another server on the same database ends it. */
        struct srv b;
        memset(&b, 0, sizeof b);
        snprintf(b.db, sizeof b.db, "%s", s.db);
        srv_start_db(&b, NULL);
        int64_t x = enqueue(&b, "x");
        snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)x);
        start_wait(&g, &s, "GET", path, NULL, 0);
        finish_remote(&b, "x", "complete");
        expect_answer(&g, apitest_now_ms(), 200, "succeeded", "completed through another server");
        start_wait(&p, &s, "POST", "/v1/jobs?wait=" LONG_WAIT, "{\"type\":\"y\"}", 0);
        finish_remote(&b, "y", "fail");
        expect_answer(&p, apitest_now_ms(), 201, "dead", "POST ended on another server");
        srv_stop(&b);
    }
    srv_stop(&s);
}

/*
 * A parked wait holds no store connection: with the smallest budget (one
 * connection for requests), 20 parked waits leave other requests served
 * at once (a request that finds no connection waits 10 s, then 503).
 */
BOTH(parked_waits_hold_no_store_connection)
{
    struct srv s;
    const char *extra[] = {"--db-connections", "7", "--threads", "2", NULL};
    srv_start(&s, backend, extra);
    enum { N = 20 };
    static struct waiter w[N];
    int64_t ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = enqueue(&s, "h");
        char path[128];
        snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)ids[i]);
        start_wait(&w[i], &s, "GET", path, NULL, i);
    }
    int64_t t0 = apitest_now_ms();
    for (int i = 0; i < 10; i++) {
        enqueue(&s, "other");
        json_t *j = get_json(&s, "/v1/queues");
        json_decref(j);
    }
    int64_t took = apitest_now_ms() - t0;
    fprintf(stderr, "20 requests beside 20 parked waits: %lld ms\n", (long long)took);
    ASSERT(took < 8000);
    for (int i = 0; i < N; i++) {
        char path[128];
        snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)ids[i]);
        EXPECT(&s, "POST", path, NULL, 200, NULL);
    }
    int64_t since = apitest_now_ms();
    for (int i = 0; i < N; i++)
        expect_answer(&w[i], since, 200, "cancelled", "cancelled beside others");
    srv_stop(&s);
}

BOTH(max_waits_bounds_parked_waits)
{
    struct srv s;
    const char *extra[] = {"--max-waits", "2", NULL};
    srv_start(&s, backend, extra);
    int64_t a = enqueue(&s, "m");
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)a);
    struct waiter w1, w2;
    start_wait(&w1, &s, "GET", path, NULL, 0);
    start_wait(&w2, &s, "GET", path, NULL, 1);
    struct resp r;
    ASSERT_EQ(req(&s, "GET", path, NULL, &r), 429);
    ASSERT(strstr(r.body, "too_many_waits") != NULL);
    ASSERT(strstr(r.headers, "Retry-After: 1") != NULL);
    resp_fini(&r);
    /* Refused before anything is written. */
    int64_t n = job_count(&s);
    ASSERT_EQ(req(&s, "POST", "/v1/jobs?wait=" LONG_WAIT, "{\"type\":\"m\"}", &r), 429);
    resp_fini(&r);
    ASSERT_EQ(job_count(&s), n);
    ASSERT(srv_metric(&s, "jobd_waits_refused_total") >= 2);
    /* Without wait it is served as ever. */
    EXPECT(&s, "GET", "/v1/jobs/1", NULL, 200, NULL);
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)a);
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    int64_t since = apitest_now_ms();
    expect_answer(&w1, since, 200, "cancelled", "first");
    expect_answer(&w2, since, 200, "cancelled", "second");
    /* Their places are free again. */
    int64_t b = enqueue(&s, "m");
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=200ms", (long long)b);
    EXPECT(&s, "GET", path, NULL, 200, NULL);
    srv_stop(&s);
}

/* Writes an executable script at name in the test's dir; returns its path (static). */
static const char *
script(const char *name, const char *body)
{
    static char path[600];
    snprintf(path, sizeof path, "%s", test_path(name));
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    ASSERT(chmod(path, 0755) == 0);
    return path;
}

/*
 * `jobd submit --wait[=DUR]` on a server with an embedded worker: the
 * result on stdout and exit 0 when the job succeeded; exit 1 with the
 * reason when it went dead, or when DUR is over first.
 */
BOTH(submit_wait_prints_the_result)
{
    char ini[2048], ok[600];
    snprintf(ok, sizeof ok, "%s", script("ok.sh", "echo '{\"n\": 42}'"));
    snprintf(
        ini, sizeof ini,
        "[worker]\nconcurrency = 2\n[handler \"ok\"]\nexec = %s\n[handler \"bad\"]\nexec = %s\n",
        ok, script("bad.sh", "echo broken >&2; exit 65"));
    char cfg[600];
    snprintf(cfg, sizeof cfg, "%s", test_path("embedded.ini"));
    FILE *f = fopen(cfg, "w");
    ASSERT(f != NULL);
    fputs(ini, f);
    fclose(f);
    struct srv s;
    const char *extra[] = {"--worker-config", cfg, NULL};
    srv_start(&s, backend, extra);
    char out[4096], err[4096];
    int64_t t0 = apitest_now_ms();
    const char *a1[] = {"submit", "ok", "--wait", "--server", s.base, NULL};
    int rc = cli_run(NULL, a1, out, sizeof out);
    fprintf(stderr, "submit --wait: %lld ms\n", (long long)(apitest_now_ms() - t0));
    if (rc != 0)
        TEST_FAIL("submit ok --wait: exit %d: %s", rc, cli_last_err(err, sizeof err));
    ASSERT_STR_EQ(out, "{\"n\":42}\n");
    ASSERT(apitest_now_ms() - t0 < 10000);
    const char *a2[] = {"submit", "bad", "--wait=30s", "--server", s.base, NULL};
    ASSERT_EQ(cli_run(NULL, a2, out, sizeof out), 1);
    ASSERT_STR_EQ(out, "null\n");
    ASSERT(strstr(cli_last_err(err, sizeof err), " dead: broken") != NULL);
    const char *a3[] = {"submit", "nobody", "--wait=500ms", "--server", s.base, NULL};
    ASSERT_EQ(cli_run(NULL, a3, out, sizeof out), 1);
    ASSERT_STR_EQ(out, "");
    ASSERT(strstr(cli_last_err(err, sizeof err), "still pending after 500ms") != NULL);
    const char *a4[] = {"submit", "ok", "--wait=0s", "--server", s.base, NULL};
    ASSERT_EQ(cli_run(NULL, a4, out, sizeof out), 2);
    srv_stop(&s);
}

/* SELECT count(*) on c, the test's own connection to the server's database
 * (one for the whole test: not a new backend for each look of the loops). */
static long
pg_count(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    long n = PQresultStatus(r) == PGRES_TUPLES_OK ? atol(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return n;
}

/*
 * On PostgreSQL ends of jobs are announced (NOTIFY, which costs the
 * writers) only while a server has waits: its listener's row in
 * jobd.result_listeners comes with the first wait and goes some 10 s
 * after the last one.
 */
TEST(pg_ends_are_announced_only_while_waits_are_used)
{
    if (!apitest_backend_ok("pg"))
        return;
    struct srv s;
    srv_start(&s, "pg", NULL);
    PGconn *c = PQconnectdb(s.db);
    ASSERT_EQ(PQstatus(c), CONNECTION_OK);
    const char *q = "SELECT count(*) FROM jobd.result_listeners";
    ASSERT_EQ(pg_count(c, q), 0);
    int64_t id = enqueue(&s, "l");
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=" LONG_WAIT, (long long)id);
    struct waiter w;
    start_wait(&w, &s, "GET", path, NULL, 0);
    int64_t deadline = apitest_now_ms() + 10000;
    while (pg_count(c, q) != 1) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("no listener row while a wait is parked");
        apitest_nap_ms(20);
    }
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)id);
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    expect_answer(&w, apitest_now_ms(), 200, "cancelled", "cancelled");
    int64_t t0 = apitest_now_ms();
    while (pg_count(c, q) != 0) {
        if (apitest_now_ms() - t0 > 30000)
            TEST_FAIL("the listener row stayed 30 s after the last wait");
        apitest_nap_ms(200);
    }
    fprintf(stderr, "listener row gone %lld ms after the last wait\n",
            (long long)(apitest_now_ms() - t0));
    PQfinish(c);
    srv_stop(&s);
}
