/*
 * test_cron_bench.c — micro-benchmark of cron_next: prints nanoseconds per
 * call over a fixed set of expressions and zones, chaining each answer into
 * the next call as a scheduler does. It asserts only that every call
 * succeeds and moves forward, never on time (timings differ by machine and
 * under sanitizers). CRON_BENCH_ITERS sets the calls per row (default 5000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cron.h"
#include "core/err.h"

static double
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static const char *const exprs[] = {
    "* * * * *", "*/15 * * * *", "0 9 * * MON-FRI", "30 2 * * *",     "0 0 1 * *",
    "0 0 L * *", "0 0 29 2 *",   "0 0 13 * 5",      "*/10 * * * * *", "0 0 29 2 */7",
};
static const char *const zones[] = {"UTC", "America/New_York", "Australia/Lord_Howe"};

int
main(void)
{
    const char *it = getenv("CRON_BENCH_ITERS");
    long iters = it ? strtol(it, NULL, 10) : 5000;
    if (iters < 1)
        iters = 1;
    const int64_t start = 1767225600000000;             /* 2026-01-01T00:00:00Z */
    const int64_t wrap = (int64_t)4102444800 * 1000000; /* 2100-01-01: start over */
    int failed = 0;
    double total_ns = 0;
    long total_calls = 0;

    printf("%-18s %-22s %10s\n", "expression", "zone", "ns/call");
    for (size_t zi = 0; zi < sizeof zones / sizeof zones[0]; zi++) {
        struct jobd_error err = {0};
        struct cron_zone *z = NULL;
        if (cron_zone_open(zones[zi], &z, &err) != 0) {
            printf("FAIL zone %s: %s\n", zones[zi], err.msg);
            failed = 1;
            continue;
        }
        for (size_t ei = 0; ei < sizeof exprs / sizeof exprs[0]; ei++) {
            struct cron_expr e;
            if (cron_parse(exprs[ei], &e, &err) != 0) {
                printf("FAIL parse %s: %s\n", exprs[ei], err.msg);
                failed = 1;
                continue;
            }
            int64_t at = start;
            double t0 = now_ns();
            for (long i = 0; i < iters; i++) {
                int64_t prev = at;
                if (cron_next_in(&e, z, prev, &at, &err) != 0 || at <= prev) {
                    printf("FAIL %s in %s: %s\n", exprs[ei], zones[zi], err.msg);
                    failed = 1;
                    break;
                }
                if (at > wrap)
                    at = start;
            }
            double dt = now_ns() - t0;
            total_ns += dt;
            total_calls += iters;
            printf("%-18s %-22s %10.0f\n", exprs[ei], zones[zi], dt / (double)iters);
        }
        cron_zone_free(z);
    }

    /* The one-shot form opens an ICU calendar per call. */
    struct cron_expr e;
    struct jobd_error err = {0};
    if (cron_parse("30 2 * * *", &e, &err) == 0) {
        int64_t at = start;
        long n = iters / 4 + 1;
        double t0 = now_ns();
        for (long i = 0; i < n && !failed; i++)
            if (cron_next(&e, "Europe/Berlin", at, &at, &err) != 0)
                failed = 1;
        printf("%-18s %-22s %10.0f  (cron_next, zone opened per call)\n", "30 2 * * *",
               "Europe/Berlin", (now_ns() - t0) / (double)n);
    }
    printf("mean over the table: %.0f ns/call (%ld calls)\n", total_ns / (double)total_calls,
           total_calls);
    printf("%s cron_bench\n%d passed, %d failed\n", failed ? "FAIL" : "ok  ", !failed, failed);
    return failed;
}
