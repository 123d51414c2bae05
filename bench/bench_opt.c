/*
 * bench_opt.c — options, die() and the wall clock: the part of bench_util.c
 * that the C-handler worker (bench_cworker.c) needs too, kept apart so that
 * program links nothing but libjobd (its RSS is a libjobd worker's).
 */
#include "bench.h"

/* ---------------------------------------------------------------- options */

int g_argc;
char **g_argv;

/* The value after --name, or dflt. Every option takes a value. */
const char *
opt(const char *name, const char *dflt)
{
    for (int i = 2; i + 1 < g_argc; i++)
        if (strncmp(g_argv[i], "--", 2) == 0 && strcmp(g_argv[i] + 2, name) == 0)
            return g_argv[i + 1];
    return dflt;
}

long long
opt_ll(const char *name, long long dflt)
{
    const char *v = opt(name, NULL);
    if (v == NULL)
        return dflt;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || end == v) {
        fprintf(stderr, "jobd_bench: --%s %s: not an integer\n", name, v);
        exit(2);
    }
    return x;
}

const char *
opt_req(const char *name)
{
    const char *v = opt(name, NULL);
    if (v == NULL) {
        fprintf(stderr, "jobd_bench %s: --%s is required\n", g_argv[1], name);
        exit(2);
    }
    return v;
}

void
die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jobd_bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* ------------------------------------------------------------------ clocks */

int64_t
real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
