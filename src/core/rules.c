/*
 * rules.c — the rules of the job model both stores share (see rules.h).
 */
#include "core/rules.h"

#include <string.h>

#include "core/err.h"

int
job_claim_order_cmp(const void *a, const void *b)
{
    const struct job *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->run_at_us != y->run_at_us)
        return x->run_at_us < y->run_at_us ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

struct job_spec
job_spec_with_defaults(const struct job_spec *spec)
{
    struct job_spec d = *spec;
    if (d.payload == NULL)
        d.payload = "{}";
    if (d.queue == NULL)
        d.queue = JOB_DEFAULT_QUEUE;
    if (d.max_attempts <= 0)
        d.max_attempts = JOB_DEFAULT_MAX_ATTEMPTS;
    return d;
}

int
job_error_stale(struct jobd_error *err, int64_t id, int32_t attempt)
{
    return jobd_error_set(err, JOBD_E_STALE, "attempt",
                          "attempt %d of job %lld is not running (stale report)", (int)attempt,
                          (long long)id);
}

const char *
job_error_tail(const char *e)
{
    if (e == NULL)
        return NULL;
    size_t n = strlen(e);
    if (n <= JOB_ERROR_MAX)
        return e;
    const char *p = e + n - JOB_ERROR_MAX;
    while (((unsigned char)*p & 0xC0) == 0x80)
        p++;
    return p;
}

const char *
job_action_name(enum job_action a)
{
    return a == JOB_ACTION_CANCEL ? "cancel" : "retry";
}

bool
job_action_allowed(enum job_action a, enum job_status status)
{
    if (a == JOB_ACTION_CANCEL)
        return status == JOB_PENDING || status == JOB_RUNNING || status == JOB_WAITING;
    return status == JOB_DEAD || status == JOB_CANCELLED;
}

int
job_error_refused(struct jobd_error *err, enum job_action a, int64_t id, enum job_status status)
{
    return jobd_error_set(err, JOBD_E_STATE, "status", "cannot %s job %lld: it is %s",
                          job_action_name(a), (long long)id, job_status_name(status));
}
