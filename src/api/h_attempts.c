/*
 * h_attempts.c — GET /v1/jobs/{id}/attempts: a job's attempt history
 * (store/operator.h), oldest first, each as {attempt, worker_id,
 * started_at, finished_at, outcome, error, duration_s}.
 */
#include <inttypes.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/err.h"
#include "store/operator.h"

/* One attempt object; NULL when memory ran out. */
static json_t *
attempt_json(const struct job_attempt *a)
{
    json_t *dur = json_null();
    if (a->started_at_us > 0 && a->finished_at_us >= a->started_at_us)
        dur = jobjson_seconds((double)(a->finished_at_us - a->started_at_us) / 1e6);
    return json_pack("{s:I, s:o, s:o, s:o, s:s, s:o, s:o}", "attempt", (json_int_t)a->attempt,
                     "worker_id", a->worker_id ? json_string(a->worker_id) : json_null(),
                     "started_at", jobjson_time(a->started_at_us), "finished_at",
                     jobjson_time(a->finished_at_us), "outcome", attempt_outcome_name(a->outcome),
                     "error", a->error ? json_string(a->error) : json_null(), "duration_s", dur);
}

void
h_job_attempts(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct attempt_list l = {0};
    struct jobd_error err = {0};
    int rc = store_job_attempts(st, c->id, &l, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND) {
        api_error(c->resp, 404, "not_found", "id", "no job with id %" PRId64, c->id);
        return;
    }
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        return;
    }
    json_t *arr = json_array();
    json_t *o = arr ? json_pack("{s:o}", "attempts", arr) : NULL;
    for (size_t i = 0; o && i < l.n; i++)
        if (json_array_append_new(arr, attempt_json(&l.v[i])) != 0) {
            json_decref(o);
            o = NULL;
        }
    attempt_list_fini(&l);
    api_json_take(c->resp, 200, jobjson_dump_take(o));
}
