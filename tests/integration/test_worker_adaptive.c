/*
 * test_worker_adaptive.c — the default ("auto") prefetch of C-handler
 * workers, with two real worker processes on one SQLite file: while
 * handlers finish at once each claim carries many jobs (600 no-op jobs
 * need far fewer claims than the 150 a fixed queue of concurrency would),
 * and long jobs among them are not hoarded — the worker whose threads are
 * all busy with long runs hands back what it claimed ahead, so the idle
 * worker runs the rest of the long jobs.
 *
 * Claims are counted from the store: every job of one claim gets the same
 * started_at, so distinct (worker, started_at) pairs are claims.
 */
#include "test.h"
#include "workertest.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/job.h"
#include "jobd.h"
#include "store/operator.h"
#include "store/store.h"
#include "util/clock.h"

#define N_NOOP 600
#define N_LONG 4
#define LONG_MS 5000 /* the idle worker has ~4 s to take what the busy one hands back */

static jobd_worker *g_worker;

static int
noop_handler(jobd_run *run, void *ctx)
{
    (void)run;
    (void)ctx;
    return JOBD_HANDLER_OK;
}

static int
long_handler(jobd_run *run, void *ctx)
{
    (void)ctx;
    int64_t end = clock_mono_now_us() + LONG_MS * 1000LL;
    while (clock_mono_now_us() < end && !jobd_run_should_stop(run))
        usleep(10000);
    return JOBD_HANDLER_OK;
}

static void
on_sigterm(int sig)
{
    (void)sig;
    jobd_worker_stop(g_worker);
}

/* The child: one worker process, concurrency 2, prefetch at its default. */
static void
worker_process(const char *url, const char *id)
{
    struct jobd_error err = {0};
    if (jobd_worker_new(url, NULL, &g_worker, &err) != JOBD_OK ||
        jobd_worker_set_option(g_worker, "concurrency", "2", &err) != JOBD_OK ||
        jobd_worker_set_option(g_worker, "id", id, &err) != JOBD_OK ||
        jobd_worker_set_option(g_worker, "poll_interval", "200ms", &err) != JOBD_OK ||
        jobd_worker_register(g_worker, "a.noop", noop_handler, NULL) != JOBD_OK ||
        jobd_worker_register(g_worker, "a.long", long_handler, NULL) != JOBD_OK) {
        fprintf(stderr, "worker %s: %s\n", id, err.msg);
        _exit(2);
    }
    signal(SIGTERM, on_sigterm);
    int rc = jobd_worker_run(g_worker, &err);
    jobd_worker_free(g_worker);
    _exit(rc == JOBD_OK ? 0 : 3);
}

static long long
succeeded(struct store *st, struct job_list *all)
{
    struct job_filter f = {.status = STORE_ANY, .limit = 1000};
    int64_t next = 0;
    struct jobd_error err = {0};
    job_list_fini(all);
    ASSERT_OK(store_list(st, &f, all, &next, &err), &err);
    long long n = 0;
    for (size_t i = 0; i < all->n; i++)
        n += all->v[i].status == JOB_SUCCEEDED;
    return n;
}

/* Waits (30 s at most) until n workers have announced themselves. */
static void
await_workers(struct store *st, size_t n)
{
    int64_t deadline = clock_mono_now_us() + 30 * 1000000LL;
    for (;;) {
        struct worker_list l = {0};
        struct jobd_error err = {0};
        ASSERT_OK(store_worker_list(st, &l, &err), &err);
        size_t have = l.n;
        worker_list_fini(&l);
        if (have >= n)
            return;
        if (clock_mono_now_us() > deadline)
            TEST_FAIL("%zu of %zu workers announced after 30 s", have, n);
        usleep(20000);
    }
}

/* Distinct (worker, started_at) pairs among the no-op jobs: claims that got any. */
static int
claims_of(const struct job_list *all)
{
    int claims = 0;
    for (size_t i = 0; i < all->n; i++) {
        const struct job *a = &all->v[i];
        bool seen = strcmp(a->type, "a.noop") != 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(all->v[k].type, "a.noop") == 0 &&
                   all->v[k].started_at_us == a->started_at_us &&
                   strcmp(all->v[k].worker_id, a->worker_id) == 0;
        claims += !seen;
    }
    return claims;
}

TEST(auto_prefetch_claims_ahead_for_fast_jobs_and_spreads_long_ones)
{
    char url[700];
    snprintf(url, sizeof url, "sqlite:%s/adaptive.db", test_tmpdir);
    struct store *st = test_store_open(url);
    static struct job_spec specs[N_NOOP + N_LONG];
    for (int i = 0, k = 0; i < N_LONG; i++) { /* 150 no-op jobs, then a long one, ... */
        for (int j = 0; j < N_NOOP / N_LONG; j++)
            specs[k++] = (struct job_spec){.type = "a.noop", .payload = "{}"};
        specs[k++] = (struct job_spec){.type = "a.long", .payload = "{}"};
    }
    struct jobd_error err = {0};
    fflush(NULL);
    pid_t pids[2];
    for (int p = 0; p < 2; p++) {
        pids[p] = fork();
        ASSERT(pids[p] >= 0);
        if (pids[p] == 0)
            worker_process(url, p == 0 ? "wa" : "wb");
    }
    /* The jobs arrive once both workers are in their loops (announced): a
     * worker still starting on a loaded machine would otherwise leave every
     * long job to the other, which is not what is tested here. */
    await_workers(st, 2);
    ASSERT_OK(store_enqueue_batch(st, specs, N_NOOP + N_LONG, NULL, NULL, &err), &err);
    struct job_list all = {0};
    int64_t deadline = clock_mono_now_us() + 30 * 1000000LL;
    while (succeeded(st, &all) < N_NOOP + N_LONG && clock_mono_now_us() < deadline)
        usleep(50000);
    for (int p = 0; p < 2; p++) {
        int status = 0;
        kill(pids[p], SIGTERM);
        ASSERT_EQ(waitpid(pids[p], &status, 0), pids[p]);
        ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ASSERT_EQ(succeeded(st, &all), N_NOOP + N_LONG);
    int long_by_a = 0, long_by_b = 0;
    for (size_t i = 0; i < all.n; i++)
        if (strcmp(all.v[i].type, "a.long") == 0) {
            long_by_a += strcmp(all.v[i].worker_id, "wa") == 0;
            long_by_b += strcmp(all.v[i].worker_id, "wb") == 0;
        }
    fprintf(stderr, "long jobs: %d by wa, %d by wb; %d claims for %d no-op jobs\n", long_by_a,
            long_by_b, claims_of(&all), N_NOOP);
    ASSERT(long_by_a > 0 && long_by_b > 0);
    ASSERT(claims_of(&all) <= 60);
    job_list_fini(&all);
    store_close(st);
}
