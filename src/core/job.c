/*
 * job.c — job struct lifetime and status names. No I/O.
 */
#include "core/job.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[JOB_STATUS_COUNT] = {
    "pending", "running", "succeeded", "dead", "cancelled", "waiting",
};

void
job_fini(struct job *j)
{
    if (j == NULL)
        return;
    free(j->queue);
    free(j->type);
    free(j->payload);
    free(j->idempotency_key);
    free(j->schedule);
    free(j->worker_id);
    free(j->last_error);
    free(j->result);
    free(j->traceparent);
    job_progress_free(j->progress);
    free(j->depends_on);
    free(j->parents);
    free(j->step);
    free(j->group);
    memset(j, 0, sizeof *j);
}

void
job_progress_free(struct job_progress *p)
{
    if (p == NULL)
        return;
    free(p->message);
    free(p->data);
    free(p);
}

void
job_move(struct job *dst, struct job *src)
{
    *dst = *src;
    memset(src, 0, sizeof *src);
}

struct job *
job_list_push(struct job_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct job *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    assert(l->n < l->cap);
    struct job *j = &l->v[l->n++];
    memset(j, 0, sizeof *j);
    return j;
}

void
job_list_fini(struct job_list *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++)
        job_fini(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

const char *
job_status_name(enum job_status s)
{
    if ((unsigned)s < JOB_STATUS_COUNT)
        return status_names[s];
    return "?";
}

int
job_status_parse(const char *name, enum job_status *out)
{
    for (int i = 0; i < JOB_STATUS_COUNT; i++) {
        if (name != NULL && strcmp(name, status_names[i]) == 0) {
            *out = (enum job_status)i;
            return JOBD_OK;
        }
    }
    return JOBD_E_INVALID;
}
