/*
 * bench_lat.c — latency samples shared by the runs that measure them
 * (lateness in bench_run.c, deps-chain in bench_deps.c): the C worker's
 * --out file, sorting, nearest-rank percentiles, JSON numbers.
 */
#include "bench.h"

int
cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array, as the shared harness computes it. */
double
pct(const double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    size_t r = (size_t)ceil(p / 100 * (double)n);
    if (r < 1)
        r = 1;
    if (r > n)
        r = n;
    return v[r - 1];
}

/* x with two decimals, or null (JSON has no NaN); slot picks one of 6 buffers. */
const char *
jnum(double x, int slot)
{
    static char b[6][32];
    if (isnan(x))
        return "null";
    snprintf(b[slot], sizeof b[slot], "%.2f", x);
    return b[slot];
}

/* Reads {"handled":H,"lat":[...]} written by cworker --out; appends to *v. */
long long
read_lat(const char *path, double **v, size_t *n, size_t *cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long handled = -1;
    if (fscanf(f, "{\"handled\":%lld,\"lat\":[", &handled) != 1) {
        fclose(f);
        return -1;
    }
    double x;
    while (fscanf(f, "%lf", &x) == 1) {
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 4096;
            *v = realloc(*v, *cap * sizeof **v);
            if (!*v)
                die("out of memory");
        }
        (*v)[(*n)++] = x;
        if (fgetc(f) != ',')
            break;
    }
    fclose(f);
    return handled;
}
