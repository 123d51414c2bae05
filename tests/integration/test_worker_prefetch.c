/*
 * test_worker_prefetch.c — jobs a C-handler worker claims ahead of its
 * threads ([worker] prefetch, docs/WORKER.md) on a real SQLite file:
 * they are under lease from their claim, so they must be heartbeated while
 * they wait (a reaper pass after several leases takes none of them), they
 * go back at once — retryable, due now, never started — when SIGTERM asks
 * the worker to drain while a running job holds its thread, and a job's
 * timeout counts from when a thread takes it, not from the claim.
 */
#include "test.h"
#include "workertest.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "core/job.h"
#include "jobd.h"
#include "store/store.h"
#include "util/clock.h"

static char db_url[700];
static atomic_int entered;
static atomic_bool release_hold;
static jobd_worker *g_worker;

/* Holds its thread until the test releases it; then succeeds. */
static int
hold_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    (void)run;
    atomic_fetch_add(&entered, 1);
    while (!atomic_load(&release_hold))
        usleep(2000);
    return JOBD_HANDLER_OK;
}

/* Works 100 ms, checking the stop flag; fails if it was raised. */
static int
short_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&entered, 1);
    for (int i = 0; i < 50; i++) {
        if (jobd_run_should_stop(run))
            return JOBD_HANDLER_RETRY;
        usleep(2000);
    }
    return JOBD_HANDLER_OK;
}

/* 800 ms of work: the job behind it waits that long in the prefetch queue. */
static int
slow_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    (void)run;
    atomic_fetch_add(&entered, 1);
    usleep(800000);
    return JOBD_HANDLER_OK;
}

static void
on_sigterm(int sig)
{
    (void)sig;
    jobd_worker_stop(g_worker); /* async-signal-safe (include/jobd.h) */
}

/* concurrency 1 and prefetch 2: one job runs, two wait claimed. */
static jobd_worker *
new_worker(const char *db, const char *lease, const char *heartbeat)
{
    snprintf(db_url, sizeof db_url, "sqlite:%s/%s", test_tmpdir, db);
    jobd_worker *w = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(jobd_worker_new(db_url, NULL, &w, &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "concurrency", "1", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "prefetch", "2", &err), &err);
    ASSERT_EQ(jobd_worker_set_option(w, "prefetch", "-1", &err), JOBD_E_INVALID);
    ASSERT(strstr(err.msg, "from 0 to") != NULL);
    ASSERT_OK(jobd_worker_set_option(w, "poll_interval", "20ms", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "lease", lease, &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "heartbeat", heartbeat, &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "backoff_base", "1h", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "backoff_cap", "2h", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "shutdown_grace", "30s", &err), &err);
    ASSERT_OK(jobd_worker_register(w, "p.hold", hold_handler, NULL), NULL);
    ASSERT_OK(jobd_worker_register(w, "p.short", short_handler, NULL), NULL);
    ASSERT_OK(jobd_worker_register(w, "p.slow", slow_handler, NULL), NULL);
    return w;
}

static int64_t
enqueue(struct store *st, const char *type, int64_t timeout_ms)
{
    struct job_spec spec = {
        .type = type, .payload = "{}", .max_attempts = 5, .timeout_ms = timeout_ms};
    struct job j = {0};
    struct jobd_error err = {0};
    ASSERT_OK(store_enqueue(st, &spec, &j, NULL, &err), &err);
    int64_t id = j.id;
    job_fini(&j);
    return id;
}

static enum job_status
status_of(struct store *st, int64_t id, struct job *out)
{
    struct jobd_error err = {0};
    job_fini(out);
    ASSERT_OK(store_get(st, id, out, &err), &err);
    return out->status;
}

static void
wait_status(struct store *st, int64_t id, enum job_status want, int64_t within_ms)
{
    int64_t dl = clock_mono_now_us() + within_ms * 1000;
    struct job j = {0};
    while (status_of(st, id, &j) != want) {
        if (clock_mono_now_us() > dl)
            TEST_FAIL("job %lld is %s (last_error %s), want %s within %lld ms", (long long)id,
                      job_status_name(j.status), j.last_error ? j.last_error : "-",
                      job_status_name(want), (long long)within_ms);
        usleep(2000);
    }
    job_fini(&j);
}

TEST(prefetched_jobs_are_heartbeated_and_handed_back_on_sigterm)
{
    atomic_store(&entered, 0);
    atomic_store(&release_hold, false);
    jobd_worker *w = new_worker("hb.db", "1s", "100ms");
    struct store *st = test_store_open(db_url);
    int64_t held = enqueue(st, "p.hold", 0);
    int64_t q1 = enqueue(st, "p.hold", 0);
    int64_t q2 = enqueue(st, "p.hold", 0);
    g_worker = w;
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_sigterm;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGTERM, &sa, &old), 0);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, test_worker_run_thread, w), 0);

    /* One thread: the first job runs, the other two are claimed and wait. */
    wait_status(st, held, JOB_RUNNING, 10000);
    wait_status(st, q1, JOB_RUNNING, 10000);
    wait_status(st, q2, JOB_RUNNING, 10000);
    /* Claimed is not yet started: wait for the thread to enter the handler. */
    for (int i = 0; i < 5000 && atomic_load(&entered) == 0; i++)
        usleep(2000);
    ASSERT_EQ(atomic_load(&entered), 1);

    /* Three leases later nothing was lost: the waiting jobs' leases were
     * renewed, so a reaper finds nothing to take. */
    usleep(3000000);
    struct jobd_error err = {0};
    int reaped = -1;
    struct backoff_policy bp = {0};
    ASSERT_OK(store_reap(st, 100, &bp, &reaped, &err), &err);
    ASSERT_EQ(reaped, 0);
    struct job j = {0};
    int64_t ids[] = {held, q1, q2};
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(status_of(st, ids[i], &j), JOB_RUNNING);
        ASSERT_EQ(j.attempt, 1);
        ASSERT(j.lease_expires_at_us > clock_real_now_us());
    }
    ASSERT_EQ(atomic_load(&entered), 1);

    /* SIGTERM: the two waiting jobs go back at once — due now, not after a
     * backoff (1 h here) — while the running one keeps its thread. */
    ASSERT_EQ(kill(getpid(), SIGTERM), 0);
    wait_status(st, q1, JOB_PENDING, 5000); /* well inside the 30 s grace */
    wait_status(st, q2, JOB_PENDING, 5000);
    for (int i = 1; i < 3; i++) {
        ASSERT_EQ(status_of(st, ids[i], &j), JOB_PENDING);
        ASSERT_EQ(j.attempt, 1);
        ASSERT(j.run_at_us <= clock_real_now_us());
        ASSERT(j.last_error != NULL);
    }
    ASSERT_EQ(status_of(st, held, &j), JOB_RUNNING);
    atomic_store(&release_hold, true);
    void *rc = NULL;
    pthread_join(t, &rc);
    ASSERT_EQ((intptr_t)rc, 0);
    ASSERT_EQ(status_of(st, held, &j), JOB_SUCCEEDED);
    ASSERT_EQ(atomic_load(&entered), 1); /* the handed-back jobs never started */
    job_fini(&j);
    ASSERT_EQ(sigaction(SIGTERM, &old, NULL), 0);
    jobd_worker_free(w);
    store_close(st);
}

TEST(a_timeout_counts_from_the_start_not_the_claim)
{
    atomic_store(&entered, 0);
    jobd_worker *w = new_worker("timeout.db", "10s", "1s");
    struct store *st = test_store_open(db_url);
    int64_t slow = enqueue(st, "p.slow", 0);
    /* Waits ~800 ms in the queue, then needs 100 ms of its 600 ms: counted
     * from the claim, the timeout would have passed before it started. */
    int64_t quick = enqueue(st, "p.short", 600);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, test_worker_run_thread, w), 0);
    wait_status(st, slow, JOB_SUCCEEDED, 10000);
    wait_status(st, quick, JOB_SUCCEEDED, 10000);
    struct job j = {0};
    ASSERT_EQ(status_of(st, quick, &j), JOB_SUCCEEDED);
    ASSERT_EQ(j.attempt, 1);
    job_fini(&j);
    jobd_worker_stop(w);
    void *rc = NULL;
    pthread_join(t, &rc);
    ASSERT_EQ((intptr_t)rc, 0);
    jobd_worker_free(w);
    store_close(st);
}
