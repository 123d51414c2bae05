/*
 * progress.c — the backend-independent half of store/progress.h: the
 * bounds of a report, checked once for every backend. The SQL is in
 * pg/progress.c and sqlite/progress.c; remote/open.c sends the route.
 */
#include "store/progress.h"

#include <math.h>
#include <string.h>

#include "core/err.h"

int
store_progress(struct store *st, int64_t id, int32_t attempt, const struct progress_report *p,
               int64_t lease_ms, int64_t *lease_expires_at_us, bool *cancel_requested,
               struct jobd_error *err)
{
    if (st->ops->progress == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, NULL, "the %s store keeps no progress",
                              st->ops->name);
    if (p->has_percent && !(isfinite(p->percent) && p->percent >= 0 && p->percent <= 100))
        return jobd_error_set(err, JOBD_E_INVALID, "percent",
                              "percent must be a number from 0 to 100");
    if (p->message != NULL && strlen(p->message) > JOB_PROGRESS_MESSAGE_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "message", "message must be at most %d bytes",
                              JOB_PROGRESS_MESSAGE_MAX);
    if (p->data != NULL && strlen(p->data) > JOB_PROGRESS_DATA_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, "data", "data must be at most %d bytes of JSON",
                              JOB_PROGRESS_DATA_MAX);
    if (lease_ms <= 0)
        lease_ms = JOB_DEFAULT_LEASE_MS;
    bool cancel = false;
    int64_t expires = 0;
    int rc = st->ops->progress(st, id, attempt, p, lease_ms, &expires, &cancel, err);
    if (rc == JOBD_OK && lease_expires_at_us != NULL)
        *lease_expires_at_us = expires;
    if (rc == JOBD_OK && cancel_requested != NULL)
        *cancel_requested = cancel;
    return rc;
}

int
store_progress_attach(struct store *st, struct job *v, size_t n, struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        job_progress_free(v[i].progress);
        v[i].progress = NULL;
    }
    if (st->ops->progress_attach == NULL || n == 0)
        return JOBD_OK;
    return st->ops->progress_attach(st, v, n, err);
}
