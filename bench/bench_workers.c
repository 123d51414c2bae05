/*
 * bench_workers.c — the worker processes of a run: C-handler workers (this
 * binary re-executed as `jobd_bench cworker`, libjobd's jobd_worker_* API,
 * so a worker's RSS and CPU are its own) or `jobd worker` with exec handlers.
 */
#include "bench.h"

/* ----------------------------------------------------------------- workers */

void
workers_start(struct workers *w, int n, const char *handler, const char *url, long long conc,
              const char *jobd, bool lat)
{
    if (n < 1 || n > 64)
        die("--workers must be 1..64");
    w->n = n;
    char log[300], cs[32];
    snprintf(log, sizeof log, "%s/workers-%d.log", tmpdir(), (int)getpid());
    snprintf(cs, sizeof cs, "%lld", conc);
    if (strcmp(handler, "exec") == 0) {
        char ini[300];
        snprintf(ini, sizeof ini, "%s/worker-exec-%d.ini", tmpdir(), (int)getpid());
        FILE *f = fopen(ini, "w");
        if (!f)
            die("cannot write %s", ini);
        fprintf(f, "[worker]\nconcurrency = %lld\n\n[handler \"noop\"]\nexec = /bin/true\n", conc);
        fclose(f);
        for (int i = 0; i < n; i++) {
            char *argv[] = {(char *)jobd, "worker", "--db", (char *)url, "--config", ini, NULL};
            w->pid[i] = spawn(argv, log);
        }
        return;
    }
    if (strcmp(handler, "c") != 0)
        die("--handler must be c or exec");
    for (int i = 0; i < n; i++) {
        snprintf(w->out[i], sizeof w->out[i], "%s/lat-%d-%d.json", tmpdir(), (int)getpid(), i);
        unlink(w->out[i]);
        /* --prefetch passes through to the C worker (empty: its default). */
        const char *pf = opt("prefetch", "");
        char *argv[] = {"/proc/self/exe",     "cworker", "--db",       (char *)url,
                        "--concurrency",      cs,        "--prefetch", (char *)pf,
                        lat ? "--out" : NULL, w->out[i], NULL};
        w->pid[i] = spawn(argv, log);
    }
}

long
workers_rss_max(struct workers *w)
{
    long m = -1;
    for (int i = 0; i < w->n; i++) {
        long r = vm_hwm_kb(w->pid[i]);
        if (r > m)
            m = r;
    }
    return m;
}

void
workers_stop(struct workers *w)
{
    for (int i = 0; i < w->n; i++)
        kill(w->pid[i], SIGTERM);
    for (int i = 0; i < w->n; i++)
        if (stop_proc(w->pid[i]) != 0)
            fprintf(stderr, "jobd_bench: worker %d did not exit cleanly\n", (int)w->pid[i]);
}

/* Waits until `target` jobs have succeeded; polls often near the end only. */
bool
wait_done(struct db *d, long long target, double timeout_s, struct workers *w)
{
    double t0 = mono_s();
    for (;;) {
        long long done = db_done(d);
        if (done >= target)
            return true;
        double el = mono_s() - t0;
        if (el > timeout_s) {
            fprintf(stderr, "jobd_bench: timed out with %lld/%lld done\n", done, target);
            return false;
        }
        for (int i = 0; w && i < w->n; i++)
            if (!alive(w->pid[i]))
                die("worker %d exited during the run (log in %s)", (int)w->pid[i], tmpdir());
        double rate = done > 0 ? (double)done / el : 0;
        double left_ms = rate > 0 ? (double)(target - done) / rate * 1000 : 1000;
        sleep_ms(fmin(250, fmax(10, left_ms / 4)));
    }
}

/* ----------------------------------------------------------------- cworker */

static jobd_worker *g_worker;
static atomic_llong g_handled;
static double *g_lat;
static long long g_lat_cap;
static atomic_llong g_lat_n;

static void
on_term(int sig)
{
    (void)sig;
    jobd_worker_stop(g_worker);
}

/*
 * The no-op handler; with --out it records now - due ("due_us" or the
 * harness's "due" in ms). A payload with "fail":true fails, retryably
 * (bench/soak.py's failing jobs).
 */
static int
noop(jobd_run *run, void *ctx)
{
    (void)ctx;
    int64_t now = real_us();
    atomic_fetch_add(&g_handled, 1);
    if (strstr(jobd_run_payload(run), "\"fail\":true") != NULL)
        return JOBD_HANDLER_RETRY;
    if (g_lat) {
        const char *p = jobd_run_payload(run), *q;
        double due_ms = NAN;
        if ((q = strstr(p, "\"due_us\":")))
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
