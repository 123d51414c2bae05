/*
 * jobstates.c — store_job_states for every backend: the ids a server's
 * parked waits name, sorted and each once, so that a backend reads each job
 * once and places each row it reads by binary search (store_ids_find).
 * Apart from store.c, whose lines it would push past the size rule.
 */
#include "store/store.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

static int
cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

size_t
store_ids_find(const int64_t *ids, size_t n, int64_t id)
{
    const int64_t *p = bsearch(&id, ids, n, sizeof *ids, cmp_id);
    return p != NULL ? (size_t)(p - ids) : SIZE_MAX;
}

/*
 * The backends get the ids ascending and each once, and place each row they
 * read by binary search: a server asks about every parked wait's job at
 * once (up to --max-waits, 10,000 by default; docs/API.md, Waiting for a
 * result), several waits may name one job, and a scan of all the ids per
 * row read was 10^8 steps at that size.
 */
int
store_job_states(struct store *st, const int64_t *ids, size_t n, int *status,
                 struct jobd_error *err)
{
    if (st->ops->job_states == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, NULL, "the %s store cannot read job states",
                              st->ops->name);
    if (n == 0)
        return JOBD_OK;
    int64_t *u = malloc(n * sizeof *u);
    int *us = malloc(n * sizeof *us);
    if (u == NULL || us == NULL) {
        free(u);
        free(us);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    memcpy(u, ids, n * sizeof *u);
    qsort(u, n, sizeof *u, cmp_id);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || u[m - 1] != u[i])
            u[m++] = u[i];
    int rc = st->ops->job_states(st, u, m, us, err);
    for (size_t i = 0; rc == JOBD_OK && i < n; i++)
        status[i] = us[store_ids_find(u, m, ids[i])];
    free(u);
    free(us);
    return rc;
}
