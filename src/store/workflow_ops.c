/*
 * workflow_ops.c — the backend-independent half of the operations on a
 * workflow after its submit (store/workflow.h; docs/API.md, Workflows):
 * checking steps added at run time and resolving their refs against the
 * steps the workflow has, the order in which a retry takes its steps
 * (parents first), and the calls into the backends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/workflow.h"

void
workflow_add_plan_fini(struct workflow_add_plan *p)
{
    if (p == NULL)
        return;
    workflow_plan_fini(&p->plan);
    free(p->ext_off);
    free(p->ext);
    free(p->before_ids);
    memset(p, 0, sizeof *p);
}

struct ref_ix {
    const char *ref;
    size_t i;
};

static int
cmp_ref_ix(const void *a, const void *b)
{
    return strcmp(((const struct ref_ix *)a)->ref, ((const struct ref_ix *)b)->ref);
}

/* The step of w named ref, or NULL. ix: w's steps sorted by ref. */
static const struct workflow_step *
existing(const struct workflow *w, const struct ref_ix *ix, const char *ref)
{
    if (ref == NULL)
        return NULL;
    struct ref_ix key = {ref, 0};
    const struct ref_ix *hit = bsearch(&key, ix, w->n_steps, sizeof *ix, cmp_ref_ix);
    return hit ? &w->steps[hit->i] : NULL;
}

/* The before refs as job ids; each must name a step of w with room for n more parents. */
static int
resolve_before(const struct workflow *w, const struct ref_ix *ix, const struct workflow_add *add,
               struct workflow_add_plan *out, struct jobd_error *err)
{
    out->before_ids = malloc((add->n_before ? add->n_before : 1) * sizeof *out->before_ids);
    if (out->before_ids == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t k = 0; k < add->n_before; k++) {
        char f[32];
        snprintf(f, sizeof f, "before[%zu]", k);
        const struct workflow_step *s = existing(w, ix, add->before[k]);
        if (s == NULL)
            return jobd_error_set(err, JOBD_E_INVALID, f, "%s: workflow %lld has no step '%s'", f,
                                  (long long)w->id, add->before[k] ? add->before[k] : "");
        if (s->n_parents + add->n > WORKFLOW_DEPS_MAX)
            return jobd_error_set(err, JOBD_E_INVALID, f,
                                  "%s: step '%s' would have more than %d parents", f, s->ref,
                                  WORKFLOW_DEPS_MAX);
        out->before_ids[k] = s->job_id;
    }
    return JOBD_OK;
}

/*
 * Splits each new step's parents into existing steps (out->ext) and new
 * ones (sub[i].after, for workflow_plan); after is the storage of the
 * latter, as many as all the steps' refs.
 */
static int
split_parents(const struct workflow *w, const struct ref_ix *ix, const struct workflow_add *add,
              struct workflow_step_spec *sub, const char **after, struct workflow_add_plan *out,
              struct jobd_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < add->n; i++)
        total += add->steps[i].n_after;
    out->ext_off = malloc((add->n + 1) * sizeof *out->ext_off);
    out->ext = malloc((total ? total : 1) * sizeof *out->ext);
    if (out->ext_off == NULL || out->ext == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    size_t ne = 0, na = 0;
    for (size_t i = 0; i < add->n; i++) {
        const struct workflow_step_spec *s = &add->steps[i];
        if (existing(w, ix, s->ref) != NULL) {
            char f[48];
            snprintf(f, sizeof f, "steps[%zu].ref", i);
            return jobd_error_set(err, JOBD_E_INVALID, f,
                                  "%s: workflow %lld already has a step '%s'", f, (long long)w->id,
                                  s->ref);
        }
        sub[i] = *s;
        sub[i].after = after + na;
        sub[i].n_after = 0;
        out->ext_off[i] = ne;
        for (size_t a = 0; a < s->n_after; a++) {
            const struct workflow_step *p = existing(w, ix, s->after[a]);
            if (p == NULL)
                after[na + sub[i].n_after++] = s->after[a];
            else
                out->ext[ne++] = p->job_id;
        }
        na += sub[i].n_after;
    }
    out->ext_off[add->n] = ne;
    return JOBD_OK;
}

int
workflow_add_resolve(const struct workflow *w, const struct workflow_add *add,
                     struct workflow_add_plan *out, struct jobd_error *err)
{
    memset(out, 0, sizeof *out);
    size_t total = 0;
    for (size_t i = 0; i < add->n; i++)
        total += add->steps[i].n_after;
    struct ref_ix *ix = malloc((w->n_steps ? w->n_steps : 1) * sizeof *ix);
    struct workflow_step_spec *sub = calloc(add->n ? add->n : 1, sizeof *sub);
    const char **after = malloc((total ? total : 1) * sizeof *after);
    int rc =
        ix && sub && after ? JOBD_OK : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; rc == JOBD_OK && i < w->n_steps; i++)
        ix[i] = (struct ref_ix){w->steps[i].ref, i};
    if (rc == JOBD_OK) {
        qsort(ix, w->n_steps, sizeof *ix, cmp_ref_ix);
        rc = split_parents(w, ix, add, sub, after, out, err);
    }
    if (rc == JOBD_OK) {
        /* refs among the new steps: duplicates, unknown refs and cycles, named */
        struct workflow_spec spec = {.name = w->name, .steps = sub, .n = add->n};
        rc = workflow_plan(&spec, &out->plan, err);
    }
    if (rc == JOBD_OK)
        rc = resolve_before(w, ix, add, out, err);
    free(ix);
    free(sub);
    free(after);
    if (rc != JOBD_OK)
        workflow_add_plan_fini(out);
    return rc;
}

static int
no_workflows(struct store *st, struct jobd_error *err)
{
    return jobd_error_set(err, JOBD_E_INVALID, "db", "the %s store has no workflows",
                          st->ops->name);
}

int
store_workflow_add_steps(struct store *st, int64_t id, const struct workflow_add *add,
                         int64_t *job_ids, struct jobd_error *err)
{
    if (st->ops->workflow_add == NULL)
        return no_workflows(st, err);
    if (add->n == 0 || add->n > WORKFLOW_STEPS_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "steps", "steps must hold 1 to %d steps",
                              WORKFLOW_STEPS_MAX);
    for (size_t i = 0; i < add->n; i++) {
        char prefix[40];
        snprintf(prefix, sizeof prefix, "steps[%zu].", i);
        if (add->steps[i].job.n_depends_on > 0)
            return jobd_error_set(err, JOBD_E_INVALID, prefix,
                                  "a step's parents are refs (after), not job ids");
        int rc = job_spec_validate(&add->steps[i].job, prefix, err);
        if (rc != JOBD_OK)
            return rc;
        job_ids[i] = 0;
    }
    int rc = st->ops->workflow_add(st, id, add, job_ids, err);
    if (rc != JOBD_OK)
        for (size_t i = 0; i < add->n; i++)
            job_ids[i] = 0;
    return rc;
}

int
store_workflow_cancel(struct store *st, int64_t id, struct workflow_change *c,
                      struct jobd_error *err)
{
    struct workflow_change none;
    if (c == NULL)
        c = &none;
    memset(c, 0, sizeof *c);
    if (st->ops->workflow_cancel == NULL)
        return no_workflows(st, err);
    return st->ops->workflow_cancel(st, id, c, err);
}

struct job_ix {
    int64_t job;
    size_t i;
};

static int
cmp_job_ix(const void *a, const void *b)
{
    int64_t x = ((const struct job_ix *)a)->job, y = ((const struct job_ix *)b)->job;
    return (x > y) - (x < y);
}

/* Work arrays of retry_order. */
struct topo {
    struct job_ix *ix; /* steps by job id */
    size_t *indeg, *coff, *kids, *queue;
};

static void
topo_fini(struct topo *t)
{
    free(t->ix);
    free(t->indeg);
    free(t->coff);
    free(t->kids);
    free(t->queue);
}

/* The children of each step as indexes (t->coff/kids) and each step's parents counted. */
static void
topo_edges(const struct workflow *w, struct topo *t)
{
    size_t ns = w->n_steps;
    for (size_t i = 0; i < ns; i++)
        t->ix[i] = (struct job_ix){w->steps[i].job_id, i};
    qsort(t->ix, ns, sizeof *t->ix, cmp_job_ix);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t c = 0; c < ns; c++)
            for (size_t x = 0; x < w->steps[c].n_parents; x++) {
                struct job_ix key = {w->steps[c].parents[x], 0};
                const struct job_ix *p = bsearch(&key, t->ix, ns, sizeof *t->ix, cmp_job_ix);
                if (p == NULL)
                    continue; /* a parent outside the workflow */
                if (pass == 0) {
                    t->coff[p->i + 1]++;
                    t->indeg[c]++;
                } else {
                    t->kids[t->queue[p->i]++] = c; /* queue: each run's fill point */
                }
            }
        if (pass == 0)
            for (size_t i = 0; i < ns; i++) {
                t->coff[i + 1] += t->coff[i];
                t->queue[i] = t->coff[i];
            }
    }
}

/*
 * The dead and cancelled steps of w, parents before children (Kahn's
 * order over the workflow's edges), into ids (*n of them, malloc'd).
 */
static int
retry_order(const struct workflow *w, int64_t **ids, size_t *n, struct jobd_error *err)
{
    size_t ns = w->n_steps, edges = 0, k = 0;
    for (size_t i = 0; i < ns; i++)
        edges += w->steps[i].n_parents;
    struct topo t = {
        .ix = malloc((ns + 1) * sizeof *t.ix),
        .indeg = calloc(ns + 1, sizeof *t.indeg),
        .coff = calloc(ns + 2, sizeof *t.coff),
        .kids = malloc((edges + 1) * sizeof *t.kids),
        .queue = malloc((ns + 1) * sizeof *t.queue),
    };
    *ids = malloc((ns + 1) * sizeof **ids);
    *n = 0;
    if (!t.ix || !t.indeg || !t.coff || !t.kids || !t.queue || !*ids) {
        topo_fini(&t);
        free(*ids);
        *ids = NULL;
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    topo_edges(w, &t);
    for (size_t i = 0; i < ns; i++)
        if (t.indeg[i] == 0)
            t.queue[k++] = i;
    for (size_t head = 0; head < k; head++) {
        size_t i = t.queue[head];
        const struct workflow_step *s = &w->steps[i];
        if (s->status == JOB_DEAD || s->status == JOB_CANCELLED)
            (*ids)[(*n)++] = s->job_id;
        for (size_t x = t.coff[i]; x < t.coff[i + 1]; x++)
            if (--t.indeg[t.kids[x]] == 0)
                t.queue[k++] = t.kids[x];
    }
    topo_fini(&t);
    return JOBD_OK;
}

int
store_workflow_retry(struct store *st, int64_t id, struct workflow_change *c,
                     struct jobd_error *err)
{
    struct workflow_change none;
    if (c == NULL)
        c = &none;
    memset(c, 0, sizeof *c);
    if (st->ops->workflow_retry == NULL)
        return no_workflows(st, err);
    struct workflow w;
    int rc = store_workflow_get(st, id, &w, err);
    if (rc != JOBD_OK)
        return rc;
    int64_t *ids = NULL;
    size_t n = 0;
    rc = retry_order(&w, &ids, &n, err);
    workflow_fini(&w);
    if (rc == JOBD_OK)
        rc = st->ops->workflow_retry(st, id, ids, n, c, err);
    free(ids);
    return rc;
}

int
store_workflow_delete(struct store *st, int64_t id, struct jobd_error *err)
{
    if (st->ops->workflow_delete == NULL)
        return no_workflows(st, err);
    return st->ops->workflow_delete(st, id, err);
}
