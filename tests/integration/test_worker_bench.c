/*
 * test_worker_bench.c — worker benchmarks, run only with JOBD_BENCH=1 (and
 * JOBD_TEST_PG_URL for PostgreSQL); otherwise every case returns at once.
 *
 *   JOBD_BENCH=1 scripts/with-pg.sh build/test_worker_bench
 *
 * Results are appended to $JOBD_BENCH_OUT (default $TMPDIR/jobd-worker-bench.txt):
 * the harness shows a passing test's output to nobody.
 *
 * latency_*: an idle worker, one job at a time: time from just before
 *   store_enqueue to the first line of the C handler (median and p99).
 * throughput_*: N no-op jobs enqueued first, then one worker drains them;
 *   jobs per second from its start to the last completion written
 *   ($JOBD_BENCH_CONCURRENCY sets the C-handler cases' concurrency, default 32;
 *   TEST_FILTER=throughput_pg_c_noop runs one case).
 */
#include "test.h"
#include "workertest.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/job.h"
#include "pgtest.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/wakeup.h"
#include "worker/worker.h"

#define LAT_N 200

static char db_url[700];
static _Atomic int64_t last_start_us;
static atomic_int started;

static int
lat_handler(struct jobd_run *run, void *ctx)
{
    (void)ctx;
    (void)run;
    atomic_store(&last_start_us, clock_real_now_us());
    atomic_fetch_add(&started, 1);
    return JOBD_HANDLER_OK;
}

static int
noop_handler(struct jobd_run *run, void *ctx)
{
    (void)run;
    (void)ctx;
    return JOBD_HANDLER_OK;
}

static bool
setup(bool pg)
{
    if (getenv("JOBD_BENCH") == NULL)
        TEST_SKIP("a benchmark: set JOBD_BENCH=1 to run it");
    if (!pg) {
        snprintf(db_url, sizeof db_url, "sqlite:%s/bench.db", test_tmpdir);
        return true;
    }
    TEST_NEED_PG();
    return pgtest_fresh_db(db_url, sizeof db_url) == 0;
}

static void
bench_line(const char *line)
{
    const char *path = getenv("JOBD_BENCH_OUT");
    char spare[600];
    if (path == NULL) {
        const char *tmp = getenv("TMPDIR");
        snprintf(spare, sizeof spare, "%s/jobd-worker-bench.txt",
                 tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
        path = spare;
    }
    FILE *f = fopen(path, "a");
    if (f != NULL) {
        fputs(line, f);
        fclose(f);
    }
}

static int
cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void
latency(bool pg, bool with_wakeup, const char *label)
{
    if (!setup(pg))
        return;
    struct store *st = test_store_open(db_url);
    struct worker_config cfg;
    worker_config_init(&cfg);
    struct jobd_error err = {0};
    ASSERT_OK(worker_config_add_c(&cfg, "lat", lat_handler, NULL, 0, &err), &err);
    struct wakeup wk;
    wakeup_init(&wk);
    struct worker *w = NULL;
    ASSERT_OK(worker_start(&cfg, db_url, with_wakeup ? &wk : NULL, &w, &err), &err);
    static int64_t lat[LAT_N], lat_commit[LAT_N];
    for (int i = 0; i < LAT_N + 5; i++) {
        int before = atomic_load(&started);
        char payload[64];
        int64_t t0 = clock_real_now_us();
        snprintf(payload, sizeof payload, "{\"t\":%lld}", (long long)t0);
        struct job_spec spec = {.type = "lat", .payload = payload};
        ASSERT_OK(store_enqueue(st, &spec, NULL, NULL, &err), &err);
        int64_t t1 = clock_real_now_us(); /* committed */
        if (with_wakeup)
            wakeup_signal(&wk); /* what the embedding API server does after an enqueue */
        int64_t dl = clock_mono_now_us() + 10000000;
        while (atomic_load(&started) == before) {
            if (clock_mono_now_us() > dl)
                TEST_FAIL("job %d never started", i);
            usleep(200);
        }
        if (i >= 5) { /* warm-up */
            lat[i - 5] = atomic_load(&last_start_us) - t0;
            lat_commit[i - 5] = atomic_load(&last_start_us) - t1;
        }
        usleep(20000); /* let the worker go idle again: this measures an idle worker */
    }
    qsort(lat, LAT_N, sizeof lat[0], cmp64);
    qsort(lat_commit, LAT_N, sizeof lat[0], cmp64);
    char line[300];
    snprintf(line, sizeof line,
             "latency %-28s n=%d from enqueue call: median=%.2fms "
             "p99=%.2fms; from its commit: median=%.2fms p99=%.2fms\n",
             label, LAT_N, lat[LAT_N / 2] / 1000.0, lat[LAT_N * 99 / 100] / 1000.0,
             lat_commit[LAT_N / 2] / 1000.0, lat_commit[LAT_N * 99 / 100] / 1000.0);
    bench_line(line);
    worker_stop(w, 1000);
    worker_config_fini(&cfg);
    wakeup_fini(&wk);
    store_close(st);
    if (pg)
        pgtest_drop_db(db_url);
}

TEST(latency_sqlite_poll)
{
    latency(false, false, "sqlite (100ms poll)");
}

TEST(latency_sqlite_embedded_wakeup)
{
    latency(false, true, "sqlite (in-process wake-up)");
}

TEST(latency_pg_notify)
{
    latency(true, false, "postgresql (LISTEN/NOTIFY)");
}

/* $JOBD_BENCH_CONCURRENCY overrides the C-handler cases' slot count. */
static int
bench_concurrency(int dflt)
{
    const char *v = getenv("JOBD_BENCH_CONCURRENCY");
    return v != NULL && atoi(v) > 0 ? atoi(v) : dflt;
}

static void
throughput(bool pg, int concurrency, bool exec, const char *label)
{
    if (!setup(pg))
        return;
    const int n = exec ? 2000 : 20000;
    struct store *st = test_store_open(db_url);
    struct jobd_error err = {0};
    struct job_spec *specs = calloc(1000, sizeof *specs);
    for (int i = 0; i < 1000; i++)
        specs[i] = (struct job_spec){.type = "noop", .payload = "{}"};
    for (int done = 0; done < n; done += 1000)
        ASSERT_OK(store_enqueue_batch(st, specs, 1000, NULL, NULL, &err), &err);
    free(specs);
    struct worker_config cfg;
    worker_config_init(&cfg);
    cfg.concurrency = concurrency;
    if (exec) {
        char ini[256];
        snprintf(ini, sizeof ini, "[handler \"noop\"]\nexec = /bin/true\n");
        FILE *f = fopen(test_path("b.ini"), "w");
        fputs(ini, f);
        fclose(f);
        ASSERT_OK(worker_config_load(&cfg, test_path("b.ini"), &err), &err);
    } else {
        ASSERT_OK(worker_config_add_c(&cfg, "noop", noop_handler, NULL, 0, &err), &err);
    }
    struct worker *w = NULL;
    int64_t t0 = clock_mono_now_us();
    ASSERT_OK(worker_start(&cfg, db_url, NULL, &w, &err), &err);
    struct worker_stats s;
    int64_t dl = t0 + 300000000;
    for (;;) {
        worker_get_stats(w, &s);
        if (s.succeeded >= (uint64_t)n)
            break;
        if (clock_mono_now_us() > dl)
            TEST_FAIL("only %llu of %d done", (unsigned long long)s.succeeded, n);
        usleep(1000);
    }
    double secs = (double)(clock_mono_now_us() - t0) / 1e6;
    char line[256];
    snprintf(line, sizeof line,
             "throughput %-30s n=%d concurrency=%d %.0f jobs/s "
             "(claims=%llu, completion batches=%llu)\n",
             label, n, concurrency, n / secs, (unsigned long long)s.claims,
             (unsigned long long)s.batches);
    bench_line(line);
    worker_stop(w, 1000);
    worker_config_fini(&cfg);
    store_close(st);
    if (pg)
        pgtest_drop_db(db_url);
}

TEST(throughput_sqlite_c_noop)
{
    throughput(false, bench_concurrency(32), false, "sqlite, C no-op handler");
}

TEST(throughput_pg_c_noop)
{
    throughput(true, bench_concurrency(32), false, "postgresql, C no-op handler");
}

TEST(throughput_sqlite_exec_true)
{
    throughput(false, 16, true, "sqlite, exec /bin/true");
}

TEST(throughput_pg_exec_true)
{
    throughput(true, 16, true, "postgresql, exec /bin/true");
}
