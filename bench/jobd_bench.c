/*
 * jobd_bench.c — jobd's own benchmark driver (docs/BENCHMARKS.md, bench/run.sh).
 *
 * One subcommand per measurement; each run prints exactly ONE JSON line on
 * stdout in the shared harness's contract (bench/harness/README.md:
 * system, variant, version, mode, n, concurrency, settings, notes, figures,
 * durability), plus `backend` ("pg" | "sqlite") and `bench` (the subcommand)
 * so that bench/report.py can find its rows. Logs go to stderr.
 *
 * It drives the real thing: `jobd server` and `jobd worker` processes (paths
 * given), and C-handler workers started as `jobd_bench cworker`, which
 * execs jobd_bench_cworker (libjobd's jobd_worker_* API, linked against
 * libjobd alone), so that a worker's peak RSS and CPU are its own process's. The store is read directly (libpq
 * or sqlite3) only to seed jobs fast and to count finished ones.
 *
 *   jobd_bench enqueue1   --db URL --jobd BIN [--n 20000] [--clients 10]
 *   jobd_bench enqueue    --db URL --via http|lib|sql --jobd BIN [--n 20000] [--batch 1000]
 *   jobd_bench process    --db URL --handler c|exec --jobd BIN [--workers 1] [--concurrency 100] [--n 20000]
 *                         [--prefetch P: a C worker's [worker] prefetch; default: its own]
 *                         [--events 1: the event log records, as while a stream client listens]
 *                         [--groups G: the jobs spread over G groups of the queue (fair claim)]
 *                         [--progress 1: the C handler reports progress once a job]
 *   jobd_bench lateness   --db URL [--n 2000] [--spread-ms 10000] [--lead-ms 1000] [--lat-file F]
 *                         [--due-now 1: one enqueue at a time, each due at once]
 *   jobd_bench scaling    --db URL --pending N [--future 10000] [--k 5000] [--concurrency 100]
 *   jobd_bench deps-chain --db URL [--n 300] [--spread-ms 6000] [--lead-ms 30] [--lat-file F]
 *                         (a child's start after its parent's end, bench_deps.c)
 *   jobd_bench deps-fanout --db URL [--n 10000] [--concurrency 100]
 *                         (a fan-out and fan-in beside as many independent jobs)
 *   jobd_bench cworker    --db URL [--concurrency C] [--prefetch P] [--progress 1] [--out FILE]   (a worker; used by the others;
 *                         runs jobd_bench_cworker, which links libjobd alone)
 *
 * --db is a postgres:// URL or sqlite:PATH; every run but cworker starts
 * from an empty store (PostgreSQL: DROP SCHEMA jobd; SQLite: a new file).
 * Any subcommand takes --round R (bench/run.sh's interleaved rounds), copied
 * into its line as "round".
 */
#include "bench.h"

#include <curl/curl.h>

/* -------------------------------------------------------------------- main */

/* `jobd_bench cworker ...` is jobd_bench_cworker (bench_cworker.c), beside
 * this binary: exec'ed with the same arguments, so the pid the caller
 * watches is the worker's, and its memory is libjobd's alone. */
__attribute__((noreturn)) static void
exec_cworker(char **argv)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
    if (n <= 0)
        die("cannot read /proc/self/exe: %s", strerror(errno));
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    snprintf(slash + 1, sizeof self - (size_t)(slash + 1 - self), "jobd_bench_cworker");
    argv[0] = self;
    execv(self, argv);
    die("cannot run %s: %s", self, strerror(errno));
}

int
main(int argc, char **argv)
{
    g_argc = argc;
    g_argv = argv;
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        fprintf(stderr, "usage: jobd_bench "
                        "enqueue1|enqueue|process|lateness|scaling|deps-chain|deps-fanout|cworker "
                        "--db URL [options] (see the header of bench/jobd_bench.c)\n");
        return 2;
    }
    const char *c = argv[1];
    if (strcmp(c, "cworker") == 0)
        exec_cworker(argv);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc;
    if (strcmp(c, "enqueue1") == 0)
        rc = cmd_enqueue1();
    else if (strcmp(c, "enqueue") == 0)
        rc = cmd_enqueue();
    else if (strcmp(c, "process") == 0)
        rc = cmd_process();
    else if (strcmp(c, "lateness") == 0)
        rc = cmd_lateness();
    else if (strcmp(c, "scaling") == 0)
        rc = cmd_scaling();
    else if (strcmp(c, "deps-chain") == 0)
        rc = cmd_deps_chain();
    else if (strcmp(c, "deps-fanout") == 0)
        rc = cmd_deps_fanout();
    else {
        fprintf(stderr, "jobd_bench: unknown subcommand '%s'\n", c);
        rc = 2;
    }
    curl_global_cleanup();
    return rc;
}
