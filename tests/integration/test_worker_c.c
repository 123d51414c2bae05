/*
 * test_worker_c.c — C handlers through libjobd's embedded worker
 * (jobd_worker_* / jobd_run_* in include/jobd.h) on a real SQLite file:
 * results, retries, dead, cooperative timeouts and a graceful stop from
 * another thread while a handler runs; a job's traceparent, given through
 * jobd_enqueue, reaches its handler (jobd_run_traceparent).
 */
#include "test.h"
#include "workertest.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/job.h"
#include "jobd.h"
#include "store/progress.h"
#include "store/store.h"
#include "util/clock.h"

static char db_url[700];
static atomic_int entered;
static atomic_bool progress_go;

static int
ok_handler(jobd_run *run, void *ctx)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"ctx\":\"%s\",\"id\":%lld,\"attempt\":%d,\"key\":\"%s\","
             "\"type\":\"%s\",\"queue\":\"%s\",\"payload\":%s}",
             (const char *)ctx, (long long)jobd_run_id(run), jobd_run_attempt(run),
             jobd_run_idempotency_key(run), jobd_run_type(run), jobd_run_queue(run),
             jobd_run_payload(run));
    return jobd_run_set_result(run, buf) == JOBD_OK ? JOBD_HANDLER_OK : JOBD_HANDLER_DEAD;
}

/* Returns its parents (jobd_run_parents) as its result, or {"none":true}. */
static int
parents_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    const char *p = jobd_run_parents(run);
    return jobd_run_set_result(run, p ? p : "{\"none\":true}") == JOBD_OK ? JOBD_HANDLER_OK
                                                                          : JOBD_HANDLER_DEAD;
}

/* Returns the job's traceparent (docs/WORKER.md, Trace context) as its result. */
static int
trace_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    const char *tp = jobd_run_traceparent(run);
    char buf[128];
    if (tp != NULL)
        snprintf(buf, sizeof buf, "{\"tp\":\"%s\"}", tp);
    else
        snprintf(buf, sizeof buf, "{\"tp\":null}");
    return jobd_run_set_result(run, buf) == JOBD_OK ? JOBD_HANDLER_OK : JOBD_HANDLER_DEAD;
}

static int
flaky_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    if (jobd_run_attempt(run) < 2) {
        jobd_run_set_error(run, "first attempt fails");
        return JOBD_HANDLER_RETRY;
    }
    ASSERT_EQ(jobd_run_set_result(run, "not json"), JOBD_E_INVALID);
    return JOBD_HANDLER_OK;
}

static int
dead_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    jobd_run_set_error(run, "never");
    return JOBD_HANDLER_DEAD;
}

/* Runs until asked to stop (timeout, cancel or shutdown). */
static int
patient_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&entered, 1);
    while (!jobd_run_should_stop(run))
        usleep(2000);
    return JOBD_HANDLER_RETRY;
}

/* Takes 300 ms, then succeeds: a drain must wait for it. */
static int
slow_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&entered, 1);
    usleep(300000);
    return JOBD_HANDLER_OK;
}

/* Reports a burst of progress (docs/WORKER.md, Progress), then waits for progress_go. */
static int
progress_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    ASSERT_EQ(jobd_progress(run, 101, NULL, NULL), JOBD_E_INVALID);
    ASSERT_EQ(jobd_progress(run, 10, NULL, "not json"), JOBD_E_INVALID);
    for (int i = 0; i < 1000; i++)
        ASSERT_OK(jobd_progress(run, i / 20.0, "counting", NULL), NULL);
    ASSERT_OK(jobd_progress(run, 50, "half way", "{\"k\":1}"), NULL);
    while (!atomic_load(&progress_go) && !jobd_run_should_stop(run))
        usleep(2000);
    return JOBD_HANDLER_OK;
}

static jobd_worker *
new_worker(void)
{
    snprintf(db_url, sizeof db_url, "sqlite:%s/c.db", test_tmpdir);
    jobd_worker *w = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(jobd_worker_new(db_url, NULL, &w, &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "backoff_base", "10ms", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "backoff_cap", "20ms", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "poll_interval", "20ms", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "heartbeat", "100ms", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "lease", "2s", &err), &err);
    ASSERT_EQ(jobd_worker_set_option(w, "nope", "1", &err), JOBD_E_INVALID);
    ASSERT_OK(jobd_worker_register(w, "c.ok", ok_handler, "my-ctx"), NULL);
    ASSERT_OK(jobd_worker_register(w, "c.flaky", flaky_handler, NULL), NULL);
    ASSERT_OK(jobd_worker_register(w, "c.dead", dead_handler, NULL), NULL);
    ASSERT_OK(jobd_worker_register(w, "c.patient", patient_handler, NULL), NULL);
    ASSERT_OK(jobd_worker_register(w, "c.slow", slow_handler, NULL), NULL);
    ASSERT_OK(jobd_worker_register(w, "c.progress", progress_handler, NULL), NULL);
    ASSERT_OK(jobd_worker_register(w, "c.parents", parents_handler, NULL), NULL);
    ASSERT_OK(jobd_worker_register(w, "c.trace", trace_handler, NULL), NULL);
    ASSERT_EQ(jobd_worker_register(w, "bad type", ok_handler, NULL), JOBD_E_INVALID);
    return w;
}

static int64_t
enqueue(struct store *st, const char *type, int max_attempts, int64_t timeout_ms)
{
    struct job_spec spec = {.type = type,
                            .payload = "{\"x\":1}",
                            .max_attempts = max_attempts,
                            .timeout_ms = timeout_ms};
    struct job j = {0};
    struct jobd_error err = {0};
    ASSERT_OK(store_enqueue(st, &spec, &j, NULL, &err), &err);
    int64_t id = j.id;
    job_fini(&j);
    return id;
}

static void
wait_status(struct store *st, int64_t id, enum job_status want, struct job *out)
{
    int64_t dl = clock_mono_now_us() + 15000000;
    for (;;) {
        struct jobd_error err = {0};
        job_fini(out);
        ASSERT_OK(store_get(st, id, out, &err), &err);
        if (out->status == want)
            return;
        if (clock_mono_now_us() > dl)
            TEST_FAIL("job %lld is %s (last_error %s), want %s", (long long)id,
                      job_status_name(out->status), out->last_error ? out->last_error : "-",
                      job_status_name(want));
        usleep(2000);
    }
}

TEST(c_handlers_outcomes_and_timeout)
{
    jobd_worker *w = new_worker();
    struct store *st = test_store_open(db_url);
    int64_t ok = enqueue(st, "c.ok", 0, 0);
    int64_t flaky = enqueue(st, "c.flaky", 5, 0);
    int64_t dead = enqueue(st, "c.dead", 5, 0);
    int64_t patient = enqueue(st, "c.patient", 1, 200);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, test_worker_run_thread, w), 0);
    struct job j = {0};
    wait_status(st, ok, JOB_SUCCEEDED, &j);
    char want[512];
    snprintf(want, sizeof want,
             "{\"attempt\":1,\"ctx\":\"my-ctx\",\"id\":%lld,"
             "\"key\":\"job-%lld\",\"payload\":{\"x\":1},\"queue\":\"default\","
             "\"type\":\"c.ok\"}",
             (long long)ok, (long long)ok);
    ASSERT_STR_EQ(j.result, want);
    wait_status(st, flaky, JOB_SUCCEEDED, &j);
    ASSERT_EQ(j.attempt, 2);
    ASSERT_NULL(j.result);
    wait_status(st, dead, JOB_DEAD, &j);
    ASSERT_EQ(j.attempt, 1);
    ASSERT_STR_EQ(j.last_error, "never");
    wait_status(st, patient, JOB_DEAD, &j); /* its 200 ms timeout raised the stop flag */
    ASSERT(strstr(j.last_error, "timed out") != NULL);
    job_fini(&j);
    jobd_worker_stop(w);
    void *rc = NULL;
    pthread_join(t, &rc);
    ASSERT_EQ((intptr_t)rc, 0);
    jobd_worker_free(w);
    store_close(st);
}

/* docs/WORKER.md, Parents: a C handler reads its parents with jobd_run_parents. */
TEST(c_handlers_parents)
{
    jobd_worker *w = new_worker();
    struct store *st = test_store_open(db_url);
    int64_t p = enqueue(st, "c.parents", 0, 0);
    struct job_spec spec = {.type = "c.parents", .depends_on = &p, .n_depends_on = 1};
    struct job j = {0};
    struct jobd_error err = {0};
    ASSERT_OK(store_enqueue(st, &spec, &j, NULL, &err), &err);
    int64_t c = j.id;
    ASSERT_EQ(j.status, JOB_WAITING);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, test_worker_run_thread, w), 0);
    wait_status(st, p, JOB_SUCCEEDED, &j);
    ASSERT_STR_EQ(j.result, "{\"none\":true}");
    wait_status(st, c, JOB_SUCCEEDED, &j);
    char want[256];
    snprintf(want, sizeof want,
             "[{\"id\":%lld,\"result\":{\"none\":true},\"status\":\"succeeded\","
             "\"step\":null,\"type\":\"c.parents\"}]",
             (long long)p);
    ASSERT_STR_EQ(j.result, want); /* canonical: keys sorted */
    job_fini(&j);
    jobd_worker_stop(w);
    void *rc = NULL;
    pthread_join(t, &rc);
    ASSERT_EQ((intptr_t)rc, 0);
    jobd_worker_free(w);
    store_close(st);
}

TEST(c_handlers_traceparent)
{
    jobd_worker *w = new_worker();
    struct store *st = test_store_open(db_url);
    jobd_client *c = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(jobd_client_open(db_url, &c, &err), &err);
    const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    struct jobd_job_opts o[2] = {{.type = "c.trace", .traceparent = tp}, {.type = "c.trace"}};
    int64_t ids[2];
    ASSERT_OK(jobd_enqueue_batch(c, o, 2, ids, &err), &err);
    struct jobd_job_opts bad = {.type = "c.trace", .traceparent = "00-nope"};
    ASSERT_EQ(jobd_enqueue(c, &bad, NULL, &err), JOBD_E_INVALID);
    ASSERT_STR_EQ(err.field, "traceparent");
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, test_worker_run_thread, w), 0);
    struct job j = {0};
    wait_status(st, ids[0], JOB_SUCCEEDED, &j);
    ASSERT_STR_EQ(j.result, "{\"tp\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"}");
    wait_status(st, ids[1], JOB_SUCCEEDED, &j);
    ASSERT_STR_EQ(j.result, "{\"tp\":null}");
    job_fini(&j);
    jobd_worker_stop(w);
    void *rc = NULL;
    pthread_join(t, &rc);
    ASSERT_EQ((intptr_t)rc, 0);
    jobd_worker_free(w);
    jobd_client_close(c);
    store_close(st);
}

TEST(c_handlers_progress)
{
    jobd_worker *w = new_worker();
    struct store *st = test_store_open(db_url);
    int64_t id = enqueue(st, "c.progress", 0, 0);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, test_worker_run_thread, w), 0);
    struct job j = {0};
    int64_t dl = clock_mono_now_us() + 15000000;
    for (;;) { /* the last report lands while the handler still runs */
        struct jobd_error err = {0};
        job_fini(&j);
        ASSERT_OK(store_get(st, id, &j, &err), &err);
        ASSERT_OK(store_progress_attach(st, &j, 1, &err), &err);
        if (j.progress != NULL && j.progress->message != NULL &&
            strcmp(j.progress->message, "half way") == 0)
            break;
        if (clock_mono_now_us() > dl)
            TEST_FAIL("job %lld shows no 'half way' progress (status %s)", (long long)id,
                      job_status_name(j.status));
        usleep(5000);
    }
    ASSERT_EQ(j.status, JOB_RUNNING);
    ASSERT(j.progress->has_percent && j.progress->percent == 50);
    ASSERT_STR_EQ(j.progress->data, "{\"k\":1}");
    atomic_store(&progress_go, true);
    wait_status(st, id, JOB_SUCCEEDED, &j);
    job_fini(&j);
    jobd_worker_stop(w);
    void *rc = NULL;
    pthread_join(t, &rc);
    ASSERT_EQ((intptr_t)rc, 0);
    jobd_worker_free(w);
    store_close(st);
}

TEST(c_handlers_cancel_and_graceful_stop)
{
    jobd_worker *w = new_worker();
    struct store *st = test_store_open(db_url);
    int64_t patient = enqueue(st, "c.patient", 0, 0);
    int64_t slow = enqueue(st, "c.slow", 0, 0);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, test_worker_run_thread, w), 0);
    struct job j = {0};
    wait_status(st, patient, JOB_RUNNING, &j);
    while (atomic_load(&entered) < 2)
        usleep(1000);
    struct jobd_error err = {0};
    ASSERT_OK(store_cancel(st, patient, &j, &err), &err);
    wait_status(st, patient, JOB_CANCELLED, &j);
    jobd_worker_stop(w); /* the slow one is still running: it must finish */
    void *rc = NULL;
    pthread_join(t, &rc);
    ASSERT_EQ((intptr_t)rc, 0);
    job_fini(&j);
    ASSERT_OK(store_get(st, slow, &j, &err), &err);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    job_fini(&j);
    jobd_worker_free(w);
    store_close(st);
}

TEST(run_refuses_bad_setups)
{
    jobd_worker *w = NULL;
    struct jobd_error err = {0};
    snprintf(db_url, sizeof db_url, "sqlite:%s/c.db", test_tmpdir);
    ASSERT_OK(jobd_worker_new(db_url, NULL, &w, &err), &err);
    ASSERT_EQ(jobd_worker_run(w, &err), JOBD_E_INVALID); /* no handlers */
    ASSERT(strstr(err.msg, "handler") != NULL);
    jobd_worker_free(w);
    ASSERT_EQ(jobd_worker_new(db_url, test_path("missing.ini"), &w, &err), JOBD_E_IO);
    ASSERT_NULL(w);
}
