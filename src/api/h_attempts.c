/*
 * h_attempts.c — GET /v1/jobs/{id}/attempts: a job's attempt history
 * (store/operator.h), oldest first, each as {attempt, worker_id,
 * started_at, finished_at, outcome, error, duration_s, log_bytes}: log_bytes
 * the size of the attempt's kept log (store/attemptlog.h) or null, so a
 * reader fetches only logs that are there.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/err.h"
#include "store/attemptlog.h"
#include "store/operator.h"

/* One attempt object (log_bytes < 0: no log); NULL when memory ran out. */
static json_t *
attempt_json(const struct job_attempt *a, int64_t log_bytes)
{
    json_t *dur = json_null();
    if (a->started_at_us > 0 && a->finished_at_us >= a->started_at_us)
        dur = jobjson_seconds((double)(a->finished_at_us - a->started_at_us) / 1e6);
    return json_pack("{s:I, s:o, s:o, s:o, s:s, s:o, s:o, s:o}", "attempt", (json_int_t)a->attempt,
                     "worker_id", a->worker_id ? json_string(a->worker_id) : json_null(),
                     "started_at", jobjson_time(a->started_at_us), "finished_at",
                     jobjson_time(a->finished_at_us), "outcome", attempt_outcome_name(a->outcome),
                     "error", a->error ? json_string(a->error) : json_null(), "duration_s", dur,
                     "log_bytes", log_bytes >= 0 ? json_integer(log_bytes) : json_null());
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
    struct attempt_log_size *logs = NULL;
    size_t n_logs = 0;
    if (rc == JOBD_OK)
        rc = store_attempt_log_sizes(st, c->id, &logs, &n_logs, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND) {
        api_error(c->resp, 404, "not_found", "id", "no job with id %" PRId64, c->id);
        return;
    }
    if (rc != JOBD_OK) {
        free(logs);
        attempt_list_fini(&l);
        api_error_from(c->resp, rc, &err);
        return;
    }
    json_t *arr = json_array();
    json_t *o = arr ? json_pack("{s:o}", "attempts", arr) : NULL;
    for (size_t i = 0, k = 0; o && i < l.n; i++) {
        while (k < n_logs && logs[k].attempt < l.v[i].attempt)
            k++; /* both in attempt order */
        int64_t bytes = k < n_logs && logs[k].attempt == l.v[i].attempt ? logs[k].bytes : -1;
        if (json_array_append_new(arr, attempt_json(&l.v[i], bytes)) != 0) {
            json_decref(o);
            o = NULL;
        }
    }
    free(logs);
    attempt_list_fini(&l);
    api_json_take(c->resp, 200, jobjson_dump_take(o));
}
