/*
 * bench_workers.c — the worker processes of a run: C-handler workers
 * (`jobd_bench cworker`, which becomes jobd_bench_cworker: bench_cworker.c,
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
        /* --prefetch and --progress pass through to the C worker (empty: its default). */
        const char *pf = opt("prefetch", ""), *pg = opt("progress", "0");
        char *argv[] = {"/proc/self/exe",
                        "cworker",
                        "--db",
                        (char *)url,
                        "--concurrency",
                        cs,
                        "--prefetch",
                        (char *)pf,
                        "--progress",
                        (char *)pg,
                        lat ? "--out" : NULL,
                        w->out[i],
                        NULL};
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
