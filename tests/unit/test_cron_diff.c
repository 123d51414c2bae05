/*
 * test_cron_diff.c — differential test of the cron code against croner, an
 * independent implementation: tests/fixtures/cron_fixtures.tsv (written by
 * tests/fixtures/gen_cron_fixtures.mjs, which documents what it leaves out)
 * holds expressions, zones, start instants and croner's next five firings.
 * Every case must parse and give the same five instants. It runs in process
 * (no fork per case, not through tests/test.h) so it can print how many
 * cases it compared; its last line has the harness's "N passed, N failed" form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cron.h"
#include "core/err.h"
#include "cron_time.h"

#define MAX_ZONES 32

struct zone_cache {
    char name[CRON_ZONE_MAX];
    struct cron_zone *z;
};

static struct cron_zone *
zone_get(struct zone_cache *zc, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(zc[i].name, name) == 0)
            return zc[i].z;
    if (*n == MAX_ZONES)
        return NULL;
    struct jobd_error err = {0};
    if (cron_zone_open(name, &zc[*n].z, &err) != 0) {
        fprintf(stderr, "zone %s: %s\n", name, err.msg);
        return NULL;
    }
    snprintf(zc[*n].name, sizeof zc[*n].name, "%s", name);
    return zc[(*n)++].z;
}

/* Splits line at tabs into at most max fields; returns the count. */
static int
split_tabs(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (t == NULL)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

int
main(void)
{
    const char *src = getenv("JOBD_SRC");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/cron_fixtures.tsv", src ? src : ".");
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        printf("FAIL cannot open %s (set JOBD_SRC)\n0 passed, 1 failed\n", path);
        return 1;
    }
    struct zone_cache zc[MAX_ZONES];
    int nz = 0;
    char line[4096];
    long compared = 0, firings = 0, failures = 0, lineno = 0;
    while (fgets(line, sizeof line, fp) != NULL) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char *f[8];
        if (split_tabs(line, f, 8) != 8) {
            printf("line %ld: expected 8 tab-separated fields\n", lineno);
            failures++;
            continue;
        }
        struct cron_expr e;
        struct jobd_error err = {0};
        struct cron_zone *z = zone_get(zc, &nz, f[1]);
        int64_t at;
        if (z == NULL || ct_parse(f[2], &at) != 0) {
            printf("line %ld: bad zone or start time\n", lineno);
            failures++;
            continue;
        }
        if (cron_parse(f[0], &e, &err) != 0) {
            if (failures++ < 20)
                printf("line %ld: \"%s\" refused: %s\n", lineno, f[0], err.msg);
            continue;
        }
        compared++;
        for (int k = 0; k < 5; k++) {
            char got[40];
            if (cron_next_in(&e, z, at, &at, &err) != 0) {
                if (failures++ < 20)
                    printf("line %ld: \"%s\" %s: %s\n", lineno, f[0], f[1], err.msg);
                break;
            }
            ct_format(at, got, sizeof got);
            if (strcmp(got, f[3 + k]) != 0) {
                if (failures++ < 20)
                    printf("line %ld: \"%s\" in %s from %s, firing #%d: got %s, croner %s\n",
                           lineno, f[0], f[1], f[2], k + 1, got, f[3 + k]);
                break;
            }
            firings++;
        }
    }
    fclose(fp);
    for (int i = 0; i < nz; i++)
        cron_zone_free(zc[i].z);
    printf("compared %ld cases (%ld firings) against croner; %ld mismatches\n", compared, firings,
           failures);
    int ok = failures == 0 && compared >= 1000;
    if (compared < 1000)
        printf("FAIL only %ld cases (want >= 1000)\n", compared);
    printf("%s cron_fixtures\n%d passed, %d failed\n", ok ? "ok  " : "FAIL", ok, !ok);
    return ok ? 0 : 1;
}
