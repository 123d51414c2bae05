/*
 * h_workflow_ops.c — the actions on a whole workflow (docs/API.md,
 * Workflows): cancel, retry and delete, each one transaction of the store
 * (store/workflow.h). Cancel and retry answer the workflow as GET reads it
 * afterwards; the wake-ups and metrics are those of the single-job routes
 * (h_jobs.c): a cancel request reaches an embedded worker at once, a job
 * that ended answers its waiters, a step due again wakes the claimers.
 */
#include <inttypes.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "api/jobwait.h"
#include "api/metrics.h"
#include "core/err.h"
#include "store/workflow.h"

/* After a cancel or retry that changed *ch: the signals the single-job routes send. */
static void
signal_change(struct api_call *c, const struct workflow_change *ch)
{
    for (int64_t i = 0; i < ch->cancelled; i++)
        api_metrics_finished(c->ctx->metrics, OUTCOME_CANCELLED);
    if (ch->cancelled > 0)
        jobwait_signal(c->ctx->jobwait);
    if (ch->requested > 0 && c->ctx->wake)
        wakeup_signal_cancel(c->ctx->wake);
    if (ch->retried > 0 && c->ctx->wake)
        wakeup_signal(c->ctx->wake);
}

/* Runs action (cancel or retry) and answers the workflow as it is after it. */
static void
act(struct api_call *c,
    int (*action)(struct store *, int64_t, struct workflow_change *, struct jobd_error *))
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct workflow_change ch = {0};
    struct workflow w = {0};
    struct jobd_error err = {0};
    int rc = action(st, c->id, &ch, &err);
    if (rc == JOBD_OK)
        rc = store_workflow_get(st, c->id, &w, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_OK || rc == JOBD_E_NOTFOUND)
        signal_change(c, &ch);
    api_reply_workflow(c, rc, &w, &err);
    workflow_fini(&w);
}

void
h_workflow_cancel(struct api_call *c)
{
    act(c, store_workflow_cancel);
}

void
h_workflow_retry(struct api_call *c)
{
    act(c, store_workflow_retry);
}

void
h_workflow_delete(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct jobd_error err = {0};
    int rc = store_workflow_delete(st, c->id, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND)
        api_error(c->resp, 404, "not_found", "id", "no workflow with id %" PRId64, c->id);
    else if (rc == JOBD_E_STATE && strcmp(err.field, "depends_on") == 0)
        api_error(c->resp, 409, "has_waiting_dependents", "id", "%s", err.msg);
    else if (rc == JOBD_E_STATE)
        api_error(c->resp, 409, "workflow_running", "status", "%s", err.msg);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else {
        jobwait_signal(c->ctx->jobwait); /* a wait for one of its jobs is answered 404 */
        c->resp->status = 204;
    }
}
