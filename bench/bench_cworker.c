/*
 * bench_cworker.c — the C-handler worker of the benchmarks: a program on
 * libjobd's embedded worker API (jobd_worker_*), with a no-op handler. It is
 * its own executable, jobd_bench_cworker, linked against libjobd alone:
 * `jobd_bench cworker ...` execs it (same arguments), so the RSS measured
 * for a C-handler worker is a libjobd worker's, not jobd_bench's, which
 * links libpq, SQLite and libcurl for seeding and clients.
 */
#include "bench.h"

/* ----------------------------------------------------------------- cworker */

static jobd_worker *g_worker;
static atomic_llong g_handled;
static double *g_lat;
static long long g_lat_cap;
static atomic_llong g_lat_n;
static bool g_progress; /* --progress 1: every run reports its progress once */

/*
 * The instants chain parents' handlers returned, by job id, for the child
 * that names its parent in "after" (jobd_bench deps-chain): open addressing,
 * written once per parent, read by its child after the parent's completion.
 */
#define ENDS_CAP 65536
static atomic_llong g_end_id[ENDS_CAP];
static atomic_llong g_end_us[ENDS_CAP];

static void
end_put(long long id, long long us)
{
    for (size_t i = (size_t)id % ENDS_CAP, k = 0; k < ENDS_CAP; i = (i + 1) % ENDS_CAP, k++) {
        long long zero = 0;
        if (atomic_compare_exchange_strong(&g_end_id[i], &zero, id) || zero == id) {
            atomic_store(&g_end_us[i], us);
            return;
        }
    }
}

static long long
end_get(long long id)
{
    for (size_t i = (size_t)id % ENDS_CAP, k = 0; k < ENDS_CAP; i = (i + 1) % ENDS_CAP, k++) {
        long long got = atomic_load(&g_end_id[i]);
        if (got == id)
            return atomic_load(&g_end_us[i]);
        if (got == 0)
            return 0;
    }
    return 0;
}

static void
on_term(int sig)
{
    (void)sig;
    jobd_worker_stop(g_worker);
}

/*
 * The no-op handler; with --out it records now - due ("due_us" or the
 * harness's "due" in ms), or, for a child naming its parent ("after": id),
 * now - the instant the parent's handler returned ("chain_parent":1 records
 * it). A payload with "fail":true fails, retryably (bench/soak.py's failing
 * jobs). With --progress 1 it reports progress first (jobd_progress, 100 %),
 * what a handler that reports it costs (jobd_bench process --progress 1).
 */
static int
noop(jobd_run *run, void *ctx)
{
    (void)ctx;
    int64_t now = real_us();
    atomic_fetch_add(&g_handled, 1);
    if (g_progress && jobd_progress(run, 100, NULL, NULL) != JOBD_OK)
        return JOBD_HANDLER_RETRY;
    if (strstr(jobd_run_payload(run), "\"fail\":true") != NULL)
        return JOBD_HANDLER_RETRY;
    if (g_lat) {
        const char *p = jobd_run_payload(run), *q;
        double due_ms = NAN;
        if (strstr(p, "\"chain_parent\":1") != NULL) {
            end_put(jobd_run_id(run), real_us());
            return JOBD_HANDLER_OK;
        }
        if ((q = strstr(p, "\"after\":"))) {
            long long end = end_get(strtoll(q + 8, NULL, 10));
            if (end > 0)
                due_ms = (double)end / 1000;
        } else if ((q = strstr(p, "\"due_us\":")))
            due_ms = (double)strtoll(q + 9, NULL, 10) / 1000;
        else if ((q = strstr(p, "\"due\":")))
            due_ms = strtod(q + 6, NULL);
        if (!isnan(due_ms)) {
            long long i = atomic_fetch_add(&g_lat_n, 1);
            if (i < g_lat_cap)
                g_lat[i] = (double)now / 1000 - due_ms;
        }
    }
    return JOBD_HANDLER_OK;
}

int
cmd_cworker(void)
{
    const char *url = opt_req("db"), *out = opt("out", NULL), *conc = opt("concurrency", "100");
    const char *prefetch = opt("prefetch", "");
    const char *types = opt("type", "noop");
    g_progress = strcmp(opt("progress", "0"), "1") == 0;
    struct jobd_error err = {0};
    if (out) {
        g_lat_cap = opt_ll("lat-cap", 200000);
        g_lat = malloc((size_t)g_lat_cap * sizeof *g_lat);
        if (!g_lat)
            die("out of memory");
    }
    if (jobd_worker_new(url, NULL, &g_worker, &err) != JOBD_OK ||
        jobd_worker_set_option(g_worker, "concurrency", conc, &err) != JOBD_OK ||
        (*prefetch && jobd_worker_set_option(g_worker, "prefetch", prefetch, &err) != JOBD_OK) ||
        jobd_worker_register(g_worker, types, noop, NULL) != JOBD_OK)
        die("worker: %s", err.msg);
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int rc = jobd_worker_run(g_worker, &err);
    jobd_worker_free(g_worker);
    if (rc != JOBD_OK)
        die("worker: %s", err.msg);
    if (out) {
        char tmp[600];
        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        FILE *f = fopen(tmp, "w");
        if (!f)
            die("cannot write %s", tmp);
        long long n = atomic_load(&g_lat_n);
        if (n > g_lat_cap)
            n = g_lat_cap;
        fprintf(f, "{\"handled\":%lld,\"lat\":[", (long long)atomic_load(&g_handled));
        for (long long i = 0; i < n; i++)
            fprintf(f, "%s%.3f", i ? "," : "", g_lat[i]);
        fprintf(f, "]}\n");
        fclose(f);
        rename(tmp, out);
    }
    free(g_lat);
    return 0;
}

int
main(int argc, char **argv)
{
    g_argc = argc;
    g_argv = argv;
    if (argc < 2 || strcmp(argv[1], "cworker") != 0) {
        fprintf(stderr, "usage: jobd_bench_cworker cworker --db URL [--concurrency C] "
                        "[--prefetch P] [--progress 1] [--out FILE]\n");
        return 2;
    }
    return cmd_cworker();
}
