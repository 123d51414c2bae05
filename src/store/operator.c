/*
 * operator.c — the backend-independent half of operator.h: the store_*()
 * wrappers that check arguments once for every backend before calling the
 * operator vtable. The backends' vtables are theirs (pg/open.c,
 * sqlite/open.c, remote/presence.c); the lists they fill are in lists.c.
 */
#include "store/operator.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/operator_int.h"
#include "store/stats_int.h"

/*
 * The operator vtable of st if it has the operation (has != false), or NULL
 * after setting err: a backend may have only some (the remote store of a
 * --server worker keeps presence only).
 */
static const struct store_operator_ops *
operator_check(struct store *st, bool has, struct jobd_error *err)
{
    if (!has) {
        jobd_error_set(err, JOBD_E_INTERNAL, NULL,
                       "the %s store does not do this operator operation", st->ops->name);
        return NULL;
    }
    return st->ops->oper;
}
#define operator_of(st, op, err)                                                                   \
    operator_check((st), (st)->ops->oper != NULL && (st)->ops->oper->op != NULL, (err))

int
store_job_attempts(struct store *st, int64_t id, struct attempt_list *out, struct jobd_error *err)
{
    const struct store_operator_ops *a = operator_of(st, attempts, err);
    if (a == NULL)
        return JOBD_E_INTERNAL;
    if (id <= 0)
        return jobd_error_set(err, JOBD_E_NOTFOUND, "id", "no job with id %lld", (long long)id);
    int rc = a->attempts(st, id, out, err);
    if (rc != JOBD_OK)
        attempt_list_fini(out);
    return rc;
}

int
store_bulk_batch(struct store *st, const struct bulk_req *r, int n, int64_t *cursor,
                 struct bulk_counts *c, struct jobd_error *err)
{
    const struct store_operator_ops *a = operator_of(st, bulk_batch, err);
    if (a == NULL)
        return JOBD_E_INTERNAL;
    if (n < 1 || n > STORE_BULK_BATCH)
        return jobd_error_set(err, JOBD_E_INVALID, "limit", "a batch takes 1 to %d jobs",
                              STORE_BULK_BATCH);
    if ((unsigned)r->action > BULK_DELETE)
        return jobd_error_set(err, JOBD_E_INVALID, "action", "unknown bulk action %d",
                              (int)r->action);
    if (r->f.status != STORE_ANY && (r->f.status < 0 || r->f.status >= JOB_STATUS_COUNT))
        return jobd_error_set(err, JOBD_E_INVALID, "status", "unknown status %d", r->f.status);
    if (r->ids != NULL && r->n_ids == 0) {
        *cursor = 0; /* an empty id list matches nothing */
        return JOBD_OK;
    }
    return a->bulk_batch(st, r, n, cursor, c, err);
}

int
store_prune_status(struct store *st, bool succeeded, int64_t finished_before_us, int limit,
                   int *deleted, struct jobd_error *err)
{
    *deleted = 0;
    const struct store_operator_ops *a = operator_of(st, prune_status, err);
    if (a == NULL)
        return JOBD_E_INTERNAL;
    if (limit <= 0)
        return JOBD_OK;
    return a->prune_status(st, succeeded, finished_before_us, limit, deleted, err);
}

bool
store_counts_cached(const struct store *st)
{
    return st->ops->oper != NULL && st->ops->oper->counts_refresh != NULL;
}

int
store_counts_refresh(struct store *st, int64_t max_age_ms, bool *recounted, struct jobd_error *err)
{
    *recounted = false;
    if (!store_counts_cached(st))
        return JOBD_OK;
    return st->ops->oper->counts_refresh(st, max_age_ms, recounted, err);
}

int
store_archive(struct store *st, int64_t finished_before_us, int limit, int *moved,
              struct jobd_error *err)
{
    *moved = 0;
    const struct store_operator_ops *o = st->ops->oper;
    if (o == NULL || o->archive == NULL || limit <= 0)
        return JOBD_OK; /* nothing is ever left to archive there */
    return o->archive(st, finished_before_us, limit, moved, err);
}

int
store_hot_churn(struct store *st, int64_t *rows, struct jobd_error *err)
{
    *rows = -1;
    const struct store_operator_ops *o = st->ops->oper;
    if (o == NULL || o->hot_churn == NULL)
        return JOBD_OK;
    return o->hot_churn(st, rows, err);
}

int
store_archive_days(struct store *st, int64_t now_us, int days_ahead, int *made,
                   struct jobd_error *err)
{
    *made = 0;
    const struct store_operator_ops *o = st->ops->oper;
    if (o == NULL || o->archive_days == NULL)
        return JOBD_OK;
    return o->archive_days(st, now_us, days_ahead, made, err);
}

int
store_vacuum_hot(struct store *st, bool *vacuumed, struct jobd_error *err)
{
    *vacuumed = false;
    const struct store_operator_ops *o = st->ops->oper;
    if (o == NULL || o->vacuum_hot == NULL)
        return JOBD_OK;
    int rc = o->vacuum_hot(st, err);
    *vacuumed = rc == JOBD_OK;
    return rc;
}

int
store_pending_queue_types(struct store *st, struct queue_type_list *out, struct jobd_error *err)
{
    const struct store_operator_ops *a = operator_of(st, pending_queue_types, err);
    if (a == NULL)
        return JOBD_E_INTERNAL;
    int rc = a->pending_queue_types(st, out, err);
    if (rc != JOBD_OK)
        queue_types_fini(out);
    return rc;
}

int
store_keys_expire(struct store *st, int limit, int *deleted, struct jobd_error *err)
{
    *deleted = 0;
    const struct store_operator_ops *a = operator_of(st, keys_expire, err);
    if (a == NULL)
        return JOBD_E_INTERNAL;
    return a->keys_expire(st, limit > 0 ? limit : JOB_PAGE_MAX, deleted, err);
}

int
store_delete(struct store *st, int64_t id, struct jobd_error *err)
{
    struct bulk_req r = {.action = BULK_DELETE, .f = {.status = STORE_ANY}, .ids = &id, .n_ids = 1};
    struct bulk_counts c = {0};
    int64_t cursor = 0;
    int rc = store_bulk_batch(st, &r, 1, &cursor, &c, err);
    if (rc != JOBD_OK || c.changed == 1)
        return rc;
    struct job j = {0};
    rc = store_get(st, id, &j, err); /* JOBD_E_NOTFOUND for no such job */
    if (rc == JOBD_OK && j.status != JOB_RUNNING)
        /* docs/API.md, Deleting jobs: a job a waiting job depends on stays */
        rc = jobd_error_set(err, JOBD_E_STATE, "depends_on",
                            "job %lld has waiting jobs that depend on it: cancel or delete "
                            "them first",
                            (long long)id);
    else if (rc == JOBD_OK)
        rc = jobd_error_set(err, JOBD_E_STATE, "status",
                            "job %lld is %s: cancel it before deleting it", (long long)id,
                            job_status_name(j.status));
    job_fini(&j);
    return rc;
}

int
store_queue_limits(struct store *st, const char *queue, const struct queue_limits_change *c,
                   struct jobd_error *err)
{
    const struct store_operator_ops *a = operator_of(st, queue_limits, err);
    if (a == NULL)
        return JOBD_E_INTERNAL;
    int rc = job_validate_queue(queue, "name", err);
    if (rc != JOBD_OK)
        return rc;
    if (c->set_max_running && (c->max_running < 0 || c->max_running > QUEUE_LIMIT_MAX))
        return jobd_error_set(err, JOBD_E_INVALID, "max_running",
                              "max_running must be between 1 and %d, or null for no limit",
                              QUEUE_LIMIT_MAX);
    if (c->set_rate && c->rate_limit != 0) {
        if (c->rate_limit < 0 || c->rate_limit > QUEUE_LIMIT_MAX)
            return jobd_error_set(err, JOBD_E_INVALID, "rate.limit",
                                  "rate.limit must be between 1 and %d", QUEUE_LIMIT_MAX);
        if (c->rate_per_ms < QUEUE_RATE_PER_MIN_MS || c->rate_per_ms > QUEUE_RATE_PER_MAX_MS)
            return jobd_error_set(err, JOBD_E_INVALID, "rate.per",
                                  "rate.per must be between 1s and 1d");
    }
    return a->queue_limits(st, queue, c, err);
}
