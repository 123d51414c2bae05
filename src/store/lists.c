/*
 * lists.c — the lists operator.h answers in (attempts, queue and type pairs)
 * and the names of attempt outcomes. A leaf: the backends fill these lists
 * and call nothing else of the front, so no file cycle runs through it
 * (docs/DESIGN.md, Source layout).
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator.h"
#include "store/operator_int.h"

static const char *const outcome_names[ATT_OUTCOME_COUNT] = {
    "running", "succeeded", "failed", "dead", "reaped", "cancelled", "released",
};

const char *
attempt_outcome_name(enum attempt_outcome o)
{
    return (unsigned)o < ATT_OUTCOME_COUNT ? outcome_names[o] : "?";
}

int
attempt_outcome_parse(const char *name, enum attempt_outcome *out)
{
    for (int i = 0; name != NULL && i < ATT_OUTCOME_COUNT; i++)
        if (strcmp(name, outcome_names[i]) == 0) {
            *out = (enum attempt_outcome)i;
            return JOBD_OK;
        }
    return JOBD_E_INVALID;
}

struct job_attempt *
attempt_list_push(struct attempt_list *l)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 8;
        struct job_attempt *nv = realloc(l->v, ncap * sizeof *nv);
        if (nv == NULL)
            return NULL;
        l->v = nv;
        l->cap = ncap;
    }
    struct job_attempt *a = &l->v[l->n++];
    memset(a, 0, sizeof *a);
    return a;
}

void
attempt_list_fini(struct attempt_list *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].worker_id);
        free(l->v[i].error);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

bool
queue_types_push(struct queue_type_list *l, const char *queue, const char *type)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct queue_type *v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            return false;
        l->v = v;
        l->cap = cap;
    }
    struct queue_type *p = &l->v[l->n];
    p->queue = strdup(queue);
    p->type = strdup(type);
    if (p->queue == NULL || p->type == NULL) {
        free(p->queue);
        free(p->type);
        return false;
    }
    l->n++;
    return true;
}

void
queue_types_fini(struct queue_type_list *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].queue);
        free(l->v[i].type);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}
