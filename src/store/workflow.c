/*
 * workflow.c — the backend-independent half of store/workflow.h: checking
 * a submit before any backend sees it, and the status, counts and end of a
 * workflow computed from its steps as read.
 */
#include "store/workflow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

const char *
workflow_status_name(int status)
{
    return status == WF_SUCCEEDED ? "succeeded" : status == WF_FAILED ? "failed" : "running";
}

void
workflow_fini(struct workflow *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; i < w->n_steps; i++) {
        free(w->steps[i].ref);
        free(w->steps[i].type);
        free(w->steps[i].parents);
    }
    free(w->steps);
    free(w->name);
    free(w->by_job);
    memset(w, 0, sizeof *w);
}

/* The steps of sort_w by job id (qsort has no context argument). */
static _Thread_local const struct workflow *sort_w;

static int
cmp_by_job(const void *a, const void *b)
{
    int64_t x = sort_w->steps[*(const size_t *)a].job_id;
    int64_t y = sort_w->steps[*(const size_t *)b].job_id;
    return (x > y) - (x < y);
}

int
store_workflow_add_parent(struct workflow *w, int64_t child, int64_t parent)
{
    if (w->by_job == NULL && w->n_steps > 0) {
        if ((w->by_job = malloc(w->n_steps * sizeof *w->by_job)) == NULL)
            return JOBD_E_NOMEM;
        for (size_t i = 0; i < w->n_steps; i++)
            w->by_job[i] = i;
        sort_w = w;
        qsort(w->by_job, w->n_steps, sizeof *w->by_job, cmp_by_job);
        sort_w = NULL;
    }
    size_t lo = 0, hi = w->n_steps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->steps[w->by_job[mid]].job_id < child)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == w->n_steps || w->steps[w->by_job[lo]].job_id != child)
        return JOBD_OK;
    struct workflow_step *s = &w->steps[w->by_job[lo]];
    /* capacity: the next power of two at or above n */
    size_t n = s->n_parents;
    if ((n & (n - 1)) == 0) {
        int64_t *p = realloc(s->parents, (n ? n * 2 : 1) * sizeof *p);
        if (p == NULL)
            return JOBD_E_NOMEM;
        s->parents = p;
    }
    s->parents[s->n_parents++] = parent;
    return JOBD_OK;
}

int
store_workflow_submit(struct store *st, const struct workflow_spec *spec, int64_t *id,
                      int64_t *job_ids, bool *replayed, struct jobd_error *err)
{
    bool again = false;
    if (replayed == NULL)
        replayed = &again;
    *replayed = false;
    *id = 0;
    if (st->ops->workflow_submit == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "db", "the %s store has no workflows",
                              st->ops->name);
    for (size_t i = 0; i < spec->n; i++) {
        char prefix[40];
        snprintf(prefix, sizeof prefix, "steps[%zu].", i);
        if (spec->steps[i].job.n_depends_on > 0)
            return jobd_error_set(err, JOBD_E_INVALID, prefix,
                                  "a step's parents are refs (after), not job ids");
        int rc = job_spec_validate(&spec->steps[i].job, prefix, err);
        if (rc != JOBD_OK)
            return rc;
    }
    struct workflow_plan plan;
    int rc = workflow_plan(spec, &plan, err);
    if (rc != JOBD_OK)
        return rc;
    for (size_t i = 0; i < spec->n; i++)
        job_ids[i] = 0;
    rc = st->ops->workflow_submit(st, spec, &plan, id, job_ids, replayed, err);
    workflow_plan_fini(&plan);
    return rc;
}

/* Status, counts and finished_at from the steps. */
static void
summarize(struct workflow *w)
{
    bool all_terminal = true, all_ok = true;
    int64_t last = 0;
    memset(w->counts, 0, sizeof w->counts);
    for (size_t i = 0; i < w->n_steps; i++) {
        const struct workflow_step *s = &w->steps[i];
        if (s->status >= 0 && s->status < JOB_STATUS_COUNT)
            w->counts[s->status]++;
        all_terminal = all_terminal && job_status_terminal((enum job_status)s->status);
        all_ok = all_ok && s->status == JOB_SUCCEEDED;
        if (s->finished_at_us > last)
            last = s->finished_at_us;
    }
    w->status = !all_terminal ? WF_RUNNING : all_ok ? WF_SUCCEEDED : WF_FAILED;
    w->finished_at_us = all_terminal ? last : 0;
}

int
store_workflow_get(struct store *st, int64_t id, struct workflow *out, struct jobd_error *err)
{
    memset(out, 0, sizeof *out);
    if (st->ops->workflow_get == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "db", "the %s store has no workflows",
                              st->ops->name);
    int rc = st->ops->workflow_get(st, id, out, err);
    if (rc == JOBD_OK && out->n_steps == 0) /* retention took every step */
        rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no workflow with id %lld", (long long)id);
    if (rc != JOBD_OK) {
        workflow_fini(out);
        return rc;
    }
    summarize(out);
    return JOBD_OK;
}

int
store_workflow_list(struct store *st, const struct workflow_filter *f, struct workflow **out,
                    size_t *n, int64_t *next, struct jobd_error *err)
{
    *out = NULL;
    *n = 0;
    *next = 0;
    if (st->ops->workflow_ids == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, "db", "the %s store has no workflows",
                              st->ops->name);
    int limit = f->limit > 0 ? f->limit : WORKFLOW_PAGE_DEFAULT;
    if (limit > WORKFLOW_PAGE_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "limit", "limit must be 1 to %d",
                              WORKFLOW_PAGE_MAX);
    int64_t *ids = malloc((size_t)limit * sizeof *ids);
    struct workflow *v = calloc((size_t)limit, sizeof *v);
    size_t got = 0, k = 0;
    int rc = ids && v ? st->ops->workflow_ids(st, f->name, f->before_id, limit, ids, &got, err)
                      : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; rc == JOBD_OK && i < got; i++) {
        rc = store_workflow_get(st, ids[i], &v[k], err);
        if (rc == JOBD_E_NOTFOUND) { /* deleted since, or every step pruned */
            rc = JOBD_OK;
            continue;
        }
        if (rc != JOBD_OK)
            break;
        struct workflow *w = &v[k];
        for (size_t s = 0; s < w->n_steps; s++) {
            free(w->steps[s].ref);
            free(w->steps[s].type);
            free(w->steps[s].parents);
        }
        free(w->steps);
        free(w->by_job);
        w->steps = NULL;
        w->by_job = NULL;
        w->n_steps = 0;
        if (f->status >= 0 && w->status != f->status)
            workflow_fini(w);
        else
            k++;
    }
    int64_t last = rc == JOBD_OK && got == (size_t)limit ? ids[got - 1] : 0;
    free(ids);
    if (rc != JOBD_OK) {
        for (size_t i = 0; v != NULL && i < k; i++)
            workflow_fini(&v[i]);
        free(v);
        return rc;
    }
    *next = last;
    *out = v;
    *n = k;
    return JOBD_OK;
}
