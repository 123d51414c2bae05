/*
 * groups.c — the store_*() wrappers of groups.h: arguments checked once for
 * every backend before the operator vtable (as operator.c does), and the
 * lists' frees.
 */
#include "store/groups.h"

#include <stdlib.h>

#include "core/err.h"
#include "store/operator.h"

int
store_queue_groups(struct store *st, const char *queue, int limit, struct queue_group **out,
                   size_t *n, struct jobd_error *err)
{
    *out = NULL;
    *n = 0;
    const struct store_operator_ops *o = st->ops->oper;
    if (o == NULL || o->queue_groups == NULL)
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "the %s store has no groups to list",
                              st->ops->name);
    int rc = job_validate_queue(queue, "name", err);
    if (rc != JOBD_OK)
        return rc;
    if (limit < 1 || limit > STORE_QUEUE_GROUPS_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "limit", "limit must be between 1 and %d",
                              STORE_QUEUE_GROUPS_MAX);
    rc = o->queue_groups(st, queue, limit, out, n, err);
    if (rc != JOBD_OK) {
        queue_groups_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void
queue_groups_free(struct queue_group *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i].group);
    free(v);
}

int
store_queue_group_counts(struct store *st, struct queue_group_count **out, size_t *n,
                         struct jobd_error *err)
{
    *out = NULL;
    *n = 0;
    const struct store_operator_ops *o = st->ops->oper;
    if (o == NULL || o->queue_group_counts == NULL)
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "the %s store has no groups to count",
                              st->ops->name);
    int rc = o->queue_group_counts(st, out, n, err);
    if (rc != JOBD_OK) {
        queue_group_counts_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void
queue_group_counts_free(struct queue_group_count *v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i].queue);
    free(v);
}
