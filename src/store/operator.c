/*
 * operator.c — the backend-independent half of operator.h: outcome names, the
 * attempt list, and the store_*() wrappers that check arguments once for
 * every backend before calling the operator vtable.
 */
#include "store/operator.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
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

/* The operator vtable of st, or NULL after setting err. */
static const struct store_operator_ops *
operator_of(struct store *st, struct jobd_error *err)
{
    if (st->ops->oper == NULL)
        jobd_error_set(err, JOBD_E_INTERNAL, NULL,
                       "the %s store has no operator operations", st->ops->name);
    return st->ops->oper;
}

int
store_job_attempts(struct store *st, int64_t id, struct attempt_list *out,
                   struct jobd_error *err)
{
    const struct store_operator_ops *a = operator_of(st, err);
    if (a == NULL)
        return JOBD_E_INTERNAL;
    if (id <= 0)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no job with id %lld",
                              (long long)id);
    int rc = a->attempts(st, id, out, err);
    if (rc != JOBD_OK)
        attempt_list_fini(out);
    return rc;
}

const struct store_operator_ops pg_operator_ops = {
    .attempts = pg_op_attempts,
};

const struct store_operator_ops sqlite_operator_ops = {
    .attempts = sq_op_attempts,
};
