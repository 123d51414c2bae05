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
 * given), and C-handler workers that are this same binary re-executed as
 * `jobd_bench cworker` (libjobd's jobd_worker_* API), so that a worker's
 * peak RSS and CPU are its own process's. The store is read directly (libpq
 * or sqlite3) only to seed jobs fast and to count finished ones.
 *
 *   jobd_bench enqueue1   --db URL --jobd BIN [--n 20000] [--clients 10]
 *   jobd_bench enqueue    --db URL --via http|lib|sql --jobd BIN [--n 20000] [--batch 1000]
 *   jobd_bench process    --db URL --handler c|exec --jobd BIN [--workers 1] [--concurrency 100] [--n 20000]
 *                         [--prefetch P: a C worker's [worker] prefetch; default: its own]
 *   jobd_bench lateness   --db URL [--n 2000] [--spread-ms 10000] [--lead-ms 1000] [--lat-file F]
 *                         [--due-now 1: one enqueue at a time, each due at once]
 *   jobd_bench scaling    --db URL --pending N [--future 10000] [--k 5000] [--concurrency 100]
 *   jobd_bench cworker    --db URL [--concurrency C] [--prefetch P] [--out FILE]   (a worker; used by the others)
 *
 * --db is a postgres:// URL or sqlite:PATH; every run but cworker starts
 * from an empty store (PostgreSQL: DROP SCHEMA jobd; SQLite: a new file).
 */
#include "bench.h"

#include <curl/curl.h>

/* -------------------------------------------------------------------- main */

int
main(int argc, char **argv)
{
    g_argc = argc;
    g_argv = argv;
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        fprintf(stderr, "usage: jobd_bench enqueue1|enqueue|process|lateness|scaling|cworker "
                        "--db URL [options] (see the header of bench/jobd_bench.c)\n");
        return 2;
    }
    const char *c = argv[1];
    if (strcmp(c, "cworker") == 0)
        return cmd_cworker();
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
    else {
        fprintf(stderr, "jobd_bench: unknown subcommand '%s'\n", c);
        rc = 2;
    }
    curl_global_cleanup();
    return rc;
}
