/*
 * workflow.c — checking a submitted workflow and ordering its steps
 * (core/workflow.h): refs looked up in a sorted index, Kahn's algorithm for
 * the order, and for a cycle the name of a step on it.
 */
#include "core/workflow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

void
workflow_plan_fini(struct workflow_plan *p)
{
    free(p->order);
    free(p->off);
    free(p->idx);
    memset(p, 0, sizeof *p);
}

/* A step's ref and index, sorted by ref to find steps by ref. */
struct byref {
    const char *ref;
    size_t i;
};

static int
cmp_ref(const void *a, const void *b)
{
    return strcmp(((const struct byref *)a)->ref, ((const struct byref *)b)->ref);
}

/* The step index of ref in byref (sorted), or n. */
static size_t
find_ref(const struct workflow_spec *spec, const struct byref *byref, const char *ref)
{
    size_t lo = 0, hi = spec->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(byref[mid].ref, ref);
        if (c == 0)
            return byref[mid].i;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return spec->n;
}

static int
check_names(const struct workflow_spec *spec, struct jobd_error *err)
{
    if (spec->name == NULL || spec->name[0] == '\0' || strlen(spec->name) > WORKFLOW_NAME_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "name", "name must be 1 to %d bytes",
                              WORKFLOW_NAME_MAX);
    if (spec->n == 0)
        return jobd_error_set(err, JOBD_E_INVALID, "steps", "a workflow needs at least one step");
    if (spec->n > WORKFLOW_STEPS_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "steps",
                              "a workflow holds at most %d steps, not %zu", WORKFLOW_STEPS_MAX,
                              spec->n);
    for (size_t i = 0; i < spec->n; i++) {
        const char *r = spec->steps[i].ref;
        if (r == NULL || r[0] == '\0' || strlen(r) > WORKFLOW_NAME_MAX) {
            char f[48];
            snprintf(f, sizeof f, "steps[%zu].ref", i);
            return jobd_error_set(err, JOBD_E_INVALID, f, "%s must be 1 to %d bytes", f,
                                  WORKFLOW_NAME_MAX);
        }
        if (spec->steps[i].n_after > WORKFLOW_DEPS_MAX) {
            char f[48];
            snprintf(f, sizeof f, "steps[%zu].depends_on", i);
            return jobd_error_set(err, JOBD_E_INVALID, f, "%s holds at most %d refs", f,
                                  WORKFLOW_DEPS_MAX);
        }
    }
    return JOBD_OK;
}

/* Fills off/idx (parents as indexes, without repeats). */
static int
map_parents(const struct workflow_spec *spec, const struct byref *byref, struct workflow_plan *p,
            struct jobd_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < spec->n; i++)
        total += spec->steps[i].n_after;
    p->off = malloc((spec->n + 1) * sizeof *p->off);
    p->idx = malloc((total ? total : 1) * sizeof *p->idx);
    if (p->off == NULL || p->idx == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < spec->n; i++) {
        p->off[i] = k;
        const struct workflow_step_spec *s = &spec->steps[i];
        for (size_t a = 0; a < s->n_after; a++) {
            size_t j = s->after[a] ? find_ref(spec, byref, s->after[a]) : spec->n;
            if (j == spec->n) {
                char f[48];
                snprintf(f, sizeof f, "steps[%zu].depends_on", i);
                return jobd_error_set(err, JOBD_E_INVALID, f, "%s: no step with ref '%s'", f,
                                      s->after[a] ? s->after[a] : "");
            }
            bool seen = false;
            for (size_t x = p->off[i]; x < k && !seen; x++)
                seen = p->idx[x] == j;
            if (!seen)
                p->idx[k++] = j;
        }
    }
    p->off[spec->n] = k;
    return JOBD_OK;
}

/* Kahn's order; on a cycle, names a step on it. */
static int
order_steps(const struct workflow_spec *spec, struct workflow_plan *p, struct jobd_error *err)
{
    size_t n = spec->n, e = p->off[n];
    size_t *indeg = calloc(n, sizeof *indeg);
    size_t *coff = calloc(n + 1, sizeof *coff);
    size_t *kids = malloc((e ? e : 1) * sizeof *kids);
    p->order = malloc(n * sizeof *p->order);
    int rc = JOBD_OK;
    if (!indeg || !coff || !kids || !p->order) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        indeg[i] = p->off[i + 1] - p->off[i];
        for (size_t x = p->off[i]; x < p->off[i + 1]; x++)
            coff[p->idx[x] + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        coff[i + 1] += coff[i];
    size_t *fill = calloc(n, sizeof *fill);
    if (fill == NULL) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t x = p->off[i]; x < p->off[i + 1]; x++) {
            size_t par = p->idx[x];
            kids[coff[par] + fill[par]++] = i;
        }
    free(fill);
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++)
        if (indeg[i] == 0)
            p->order[tail++] = i;
    while (head < tail) {
        size_t s = p->order[head++];
        for (size_t x = coff[s]; x < coff[s + 1]; x++)
            if (--indeg[kids[x]] == 0)
                p->order[tail++] = kids[x];
    }
    if (tail < n) {
        /* From any step left, follow a parent left n times: that is on a cycle. */
        size_t s = 0;
        while (indeg[s] == 0)
            s++;
        for (size_t k = 0; k < n; k++) {
            size_t x = p->off[s];
            while (indeg[p->idx[x]] == 0)
                x++;
            s = p->idx[x];
        }
        char f[48];
        snprintf(f, sizeof f, "steps[%zu].depends_on", s);
        rc = jobd_error_set(err, JOBD_E_INVALID, f, "%s: step '%s' is on a cycle", f,
                            spec->steps[s].ref);
    }
out:
    free(indeg);
    free(coff);
    free(kids);
    return rc;
}

int
workflow_plan(const struct workflow_spec *spec, struct workflow_plan *out, struct jobd_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_names(spec, err);
    if (rc != JOBD_OK)
        return rc;
    struct byref *byref = malloc(spec->n * sizeof *byref);
    if (byref == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < spec->n; i++)
        byref[i] = (struct byref){spec->steps[i].ref, i};
    qsort(byref, spec->n, sizeof *byref, cmp_ref);
    for (size_t k = 1; k < spec->n && rc == JOBD_OK; k++)
        if (strcmp(byref[k - 1].ref, byref[k].ref) == 0) {
            size_t i = byref[k].i > byref[k - 1].i ? byref[k].i : byref[k - 1].i;
            char f[48];
            snprintf(f, sizeof f, "steps[%zu].ref", i);
            rc = jobd_error_set(err, JOBD_E_INVALID, f, "%s: ref '%s' is used twice", f,
                                spec->steps[i].ref);
        }
    if (rc == JOBD_OK)
        rc = map_parents(spec, byref, out, err);
    if (rc == JOBD_OK)
        rc = order_steps(spec, out, err);
    free(byref);
    if (rc != JOBD_OK)
        workflow_plan_fini(out);
    return rc;
}
