/*
 * remote/job.c — the job object of a server's answer (docs/API.md, The job
 * object) read back into a struct job, for the `out` of a complete or a
 * fail: what the database stores hand their callers (the worker's events
 * and log lines read the job's new status from it).
 */
#include "store/remote/internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/timefmt.h"

/* A string member as a malloc'd copy, NULL when absent or null. */
static char *
str_of(json_t *o, const char *key, bool *oom)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return NULL;
    char *s = strdup(json_string_value(v));
    *oom |= s == NULL;
    return s;
}

/* A JSON member printed, NULL when absent or null. */
static char *
json_of(json_t *o, const char *key, bool *oom)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v))
        return NULL;
    char *s = json_print(v, JSON_SORT_KEYS);
    *oom |= s == NULL;
    return s;
}

int64_t
remote_time_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    int64_t us = 0;
    struct jobd_error ignored = {0};
    if (!json_is_string(v) || time_parse_rfc3339(json_string_value(v), &us, key, &ignored) != 0)
        return 0;
    return us;
}

int
remote_job_of(json_t *o, struct job *out, struct jobd_error *err)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(o))
        return jobd_error_set(err, JOBD_E_STORE, NULL, "the server's answer has no job");
    bool oom = false;
    out->id = (int64_t)json_integer_value(json_object_get(o, "id"));
    out->attempt = (int32_t)json_integer_value(json_object_get(o, "attempt"));
    out->attempt_floor = (int32_t)json_integer_value(json_object_get(o, "attempt_floor"));
    out->max_attempts = (int32_t)json_integer_value(json_object_get(o, "max_attempts"));
    out->priority = (int32_t)json_integer_value(json_object_get(o, "priority"));
    json_t *st = json_object_get(o, "status");
    if (!json_is_string(st) || job_status_parse(json_string_value(st), &out->status) != 0)
        return jobd_error_set(err, JOBD_E_STORE, NULL, "the server's job has no known status");
    out->run_at_us = remote_time_of(o, "run_at");
    out->created_at_us = remote_time_of(o, "created_at");
    out->started_at_us = remote_time_of(o, "started_at");
    out->finished_at_us = remote_time_of(o, "finished_at");
    out->type = str_of(o, "type", &oom);
    out->queue = str_of(o, "queue", &oom);
    out->idempotency_key = str_of(o, "idempotency_key", &oom);
    out->traceparent = str_of(o, "traceparent", &oom);
    out->group = str_of(o, "group", &oom);
    out->last_error = str_of(o, "last_error", &oom);
    out->worker_id = str_of(o, "worker_id", &oom);
    out->lease_expires_at_us = remote_time_of(o, "lease_expires_at");
    out->payload = json_of(o, "payload", &oom);
    out->result = json_of(o, "result", &oom);
    if (oom) {
        job_fini(out);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    return JOBD_OK;
}
