/*
 * deps.c — the backend-independent half of store/deps.h: where a parent
 * read from a store goes in the job it belongs to.
 */
#include "store/deps.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"

int
store_deps_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].depends_on);
        v[i].depends_on = NULL;
        v[i].n_depends_on = 0;
        v[i].run_on_parent_failure = false;
        free(v[i].step);
        v[i].step = NULL;
        v[i].workflow = 0;
    }
    if (st->ops->deps_attach == NULL || n == 0)
        return JOBD_OK;
    return st->ops->deps_attach(st, v, n, err);
}

static int
push(struct job *j, int64_t parent)
{
    /* capacity: the next power of two at or above n */
    size_t n = j->n_depends_on;
    if ((n & (n - 1)) == 0) {
        int64_t *p = realloc(j->depends_on, (n ? n * 2 : 1) * sizeof *p);
        if (p == NULL)
            return JOBD_E_NOMEM;
        j->depends_on = p;
    }
    j->depends_on[j->n_depends_on++] = parent;
    return JOBD_OK;
}

int
store_deps_add(struct job *v, size_t n, int64_t child, int64_t parent, bool run)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].id != child)
            continue;
        v[i].run_on_parent_failure = run;
        if (push(&v[i], parent) != JOBD_OK)
            return JOBD_E_NOMEM;
    }
    return JOBD_OK;
}

static int
cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int
store_deps_from_spec(struct job *j, const struct job_spec *sp)
{
    free(j->depends_on);
    j->depends_on = NULL;
    j->n_depends_on = 0;
    j->run_on_parent_failure = sp->n_depends_on > 0 && sp->run_on_parent_failure;
    if (sp->n_depends_on == 0)
        return JOBD_OK;
    int64_t *v = malloc(sp->n_depends_on * sizeof *v);
    if (v == NULL)
        return JOBD_E_NOMEM;
    memcpy(v, sp->depends_on, sp->n_depends_on * sizeof *v);
    qsort(v, sp->n_depends_on, sizeof *v, cmp_i64);
    size_t k = 0;
    for (size_t i = 0; i < sp->n_depends_on; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    j->depends_on = v;
    j->n_depends_on = k;
    return JOBD_OK;
}
