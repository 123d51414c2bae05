/*
 * jobjson.c — see jobjson.h. Output objects are built member by member in the
 * order docs/API.md lists them (docs/API.md, "The job object"), so responses
 * read the same as the documentation. Stored payloads/results are canonical
 * JSON text; they are re-parsed (always valid, since they passed the same
 * parser on the way in) and embedded as values, never as strings. The job
 * object of a one-job answer is also written straight as text
 * (jobjson_job_text), member by member in the same order, with a unit test
 * holding it byte-identical to the tree printed (test_api_routes.c).
 */
#include "api/jobjson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/duration.h"
#include "core/err.h"
#include "core/json.h"
#include "core/num.h"
#include "core/timefmt.h"

const char *const jobjson_job_fields[] = {
    "type",         "payload",         "queue",   "priority",  "run_at",     "in",
    "max_attempts", "idempotency_key", "timeout", "timeout_s", "depends_on", "on_parent_failure",
    "traceparent",  "debounce",        "unique",  "group",     NULL,
};

static const char *
fname(char *buf, size_t len, const char *prefix, const char *key)
{
    snprintf(buf, len, "%s%s", prefix ? prefix : "", key);
    return buf;
}

json_t *
jobjson_time(int64_t us)
{
    if (us == 0)
        return json_null();
    char buf[TIME_RFC3339_LEN];
    return json_string(time_format_rfc3339(us, buf, sizeof buf));
}

static json_t *
str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* Stored JSON text -> value; null if absent. A stored text that does not
 * parse (it cannot, short of corruption) is shown as a string, not lost;
 * NULL (out of memory) fails the whole answer rather than show it so. */
static json_t *
stored_json(const char *text)
{
    if (text == NULL)
        return json_null();
    json_t *v = NULL;
    int rc = json_load_stored(text, &v);
    if (rc == JOBD_E_INVALID)
        return json_string(text);
    return v;
}

static json_t *
timeout_s(int64_t ms)
{
    if (ms <= 0)
        return json_null();
    if (ms % 1000 == 0)
        return json_integer(ms / 1000);
    return json_real((double)ms / 1000.0);
}

json_t *
jobjson_seconds(double s)
{
    return json_real(num_round(s * 1000.0) / 1000.0);
}

/* json_object_set_new that remembers failure instead of checking each call. */
static void
put(json_t *o, const char *k, json_t *v, int *bad)
{
    if (v == NULL || json_object_set_new(o, k, v) != 0)
        *bad = 1;
}

/* {percent, message, data, at} of the job's current attempt, or null
 * (docs/API.md, The job object). */
static json_t *
progress_json(const struct job_progress *p)
{
    if (p == NULL)
        return json_null();
    json_t *pct = json_null();
    if (p->has_percent && p->percent == (double)(int)p->percent)
        pct = json_integer((json_int_t)p->percent);
    else if (p->has_percent)
        pct = json_real(p->percent);
    return json_pack("{s:o, s:o, s:o, s:o}", "percent", pct, "message", str_or_null(p->message),
                     "data", stored_json(p->data), "at", jobjson_time(p->at_us));
}

json_t *
jobjson_job(const struct job *j)
{
    json_t *o = json_object();
    int bad = o == NULL;
    if (bad)
        return NULL;
    put(o, "id", json_integer(j->id), &bad);
    put(o, "queue", str_or_null(j->queue), &bad);
    put(o, "type", str_or_null(j->type), &bad);
    put(o, "payload", stored_json(j->payload), &bad);
    put(o, "status", json_string(job_status_name(j->status)), &bad);
    put(o, "priority", json_integer(j->priority), &bad);
    put(o, "run_at", jobjson_time(j->run_at_us), &bad);
    put(o, "attempt", json_integer(j->attempt), &bad);
    put(o, "max_attempts", json_integer(j->max_attempts), &bad);
    put(o, "attempt_floor", json_integer(j->attempt_floor), &bad);
    put(o, "idempotency_key", str_or_null(j->idempotency_key), &bad);
    put(o, "schedule", str_or_null(j->schedule), &bad);
    put(o, "scheduled_for", jobjson_time(j->scheduled_for_us), &bad);
    put(o, "worker_id", str_or_null(j->worker_id), &bad);
    put(o, "lease_expires_at", jobjson_time(j->lease_expires_at_us), &bad);
    /* Until the attempt ends (docs/API.md, The job object). */
    put(o, "cancel_requested", json_boolean(j->status == JOB_RUNNING && j->cancel_requested), &bad);
    put(o, "timeout_s", timeout_s(j->timeout_ms), &bad);
    put(o, "last_error", str_or_null(j->last_error), &bad);
    put(o, "result", stored_json(j->result), &bad);
    put(o, "created_at", jobjson_time(j->created_at_us), &bad);
    put(o, "started_at", jobjson_time(j->started_at_us), &bad);
    put(o, "finished_at", jobjson_time(j->finished_at_us), &bad);
    /* docs/API.md, Dependencies and Workflows */
    json_t *deps = json_array();
    for (size_t i = 0; deps != NULL && i < j->n_depends_on; i++)
        if (json_array_append_new(deps, json_integer(j->depends_on[i])) != 0)
            bad = 1;
    put(o, "depends_on", deps, &bad);
    put(o, "on_parent_failure", json_string(j->run_on_parent_failure ? "run" : "cancel"), &bad);
    put(o, "workflow", j->workflow ? json_integer(j->workflow) : json_null(), &bad);
    put(o, "step", str_or_null(j->step), &bad);
    put(o, "traceparent", str_or_null(j->traceparent), &bad);
    put(o, "group", str_or_null(j->group), &bad); /* docs/MODEL.md, Groups */
    put(o, "progress", progress_json(j->progress), &bad);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A stored JSON text as stored_json shows it; out of memory fails o. */
static void
out_stored(struct json_out *o, const char *text)
{
    if (text == NULL) {
        json_out_raw(o, "null", 4);
        return;
    }
    json_t *v = stored_json(text);
    json_out_value(o, v);
    json_decref(v);
}

/* ,"key":  (key is a literal: no escaping needed) */
#define OUT_KEY(o, lit) json_out_raw((o), "," lit ":", sizeof "," lit ":" - 1)

static void
out_time(struct json_out *o, int64_t us)
{
    char buf[TIME_RFC3339_LEN];
    json_out_str(o, us == 0 ? NULL : time_format_rfc3339(us, buf, sizeof buf));
}

/* A value jobjson_job builds with jansson (rare members: progress, a real timeout). */
static void
out_take(struct json_out *o, json_t *v)
{
    json_out_value(o, v);
    json_decref(v);
}

static void out_job_rest(struct json_out *o, const struct job *j);

char *
jobjson_job_text(const struct job *j)
{
    struct json_out o = {0};
    json_out_raw(&o, "{\"id\":", 6);
    json_out_int(&o, j->id);
    OUT_KEY(&o, "\"queue\"");
    json_out_str(&o, j->queue);
    OUT_KEY(&o, "\"type\"");
    json_out_str(&o, j->type);
    OUT_KEY(&o, "\"payload\"");
    out_stored(&o, j->payload);
    OUT_KEY(&o, "\"status\"");
    json_out_str(&o, job_status_name(j->status));
    OUT_KEY(&o, "\"priority\"");
    json_out_int(&o, j->priority);
    OUT_KEY(&o, "\"run_at\"");
    out_time(&o, j->run_at_us);
    OUT_KEY(&o, "\"attempt\"");
    json_out_int(&o, j->attempt);
    OUT_KEY(&o, "\"max_attempts\"");
    json_out_int(&o, j->max_attempts);
    OUT_KEY(&o, "\"attempt_floor\"");
    json_out_int(&o, j->attempt_floor);
    OUT_KEY(&o, "\"idempotency_key\"");
    json_out_str(&o, j->idempotency_key);
    OUT_KEY(&o, "\"schedule\"");
    json_out_str(&o, j->schedule);
    OUT_KEY(&o, "\"scheduled_for\"");
    out_time(&o, j->scheduled_for_us);
    OUT_KEY(&o, "\"worker_id\"");
    json_out_str(&o, j->worker_id);
    OUT_KEY(&o, "\"lease_expires_at\"");
    out_time(&o, j->lease_expires_at_us);
    OUT_KEY(&o, "\"cancel_requested\"");
    if (j->status == JOB_RUNNING && j->cancel_requested)
        json_out_raw(&o, "true", 4);
    else
        json_out_raw(&o, "false", 5);
    OUT_KEY(&o, "\"timeout_s\"");
    if (j->timeout_ms <= 0)
        json_out_raw(&o, "null", 4);
    else if (j->timeout_ms % 1000 == 0)
        json_out_int(&o, j->timeout_ms / 1000);
    else
        out_take(&o, timeout_s(j->timeout_ms));
    out_job_rest(&o, j);
    if (o.rc != JOBD_OK) {
        free(o.p);
        return NULL;
    }
    return o.p;
}

/* jobjson_job_text from last_error on. */
static void
out_job_rest(struct json_out *o, const struct job *j)
{
    OUT_KEY(o, "\"last_error\"");
    json_out_str(o, j->last_error);
    OUT_KEY(o, "\"result\"");
    out_stored(o, j->result);
    OUT_KEY(o, "\"created_at\"");
    out_time(o, j->created_at_us);
    OUT_KEY(o, "\"started_at\"");
    out_time(o, j->started_at_us);
    OUT_KEY(o, "\"finished_at\"");
    out_time(o, j->finished_at_us);
    OUT_KEY(o, "\"depends_on\"");
    json_out_raw(o, "[", 1);
    for (size_t i = 0; i < j->n_depends_on; i++) {
        if (i > 0)
            json_out_raw(o, ",", 1);
        json_out_int(o, j->depends_on[i]);
    }
    json_out_raw(o, "]", 1);
    OUT_KEY(o, "\"on_parent_failure\"");
    json_out_str(o, j->run_on_parent_failure ? "run" : "cancel");
    OUT_KEY(o, "\"workflow\"");
    if (j->workflow)
        json_out_int(o, j->workflow);
    else
        json_out_raw(o, "null", 4);
    OUT_KEY(o, "\"step\"");
    json_out_str(o, j->step);
    OUT_KEY(o, "\"traceparent\"");
    json_out_str(o, j->traceparent);
    OUT_KEY(o, "\"group\"");
    json_out_str(o, j->group);
    OUT_KEY(o, "\"progress\"");
    if (j->progress == NULL)
        json_out_raw(o, "null", 4);
    else
        out_take(o, progress_json(j->progress));
    json_out_raw(o, "}", 1);
}

json_t *
jobjson_claimed(const struct job *j)
{
    json_t *o = json_object();
    int bad = o == NULL;
    if (bad)
        return NULL;
    put(o, "id", json_integer(j->id), &bad);
    put(o, "attempt", json_integer(j->attempt), &bad);
    put(o, "attempt_floor", json_integer(j->attempt_floor), &bad); /* for the retry delay */
    put(o, "type", str_or_null(j->type), &bad);
    put(o, "queue", str_or_null(j->queue), &bad);
    put(o, "payload", stored_json(j->payload), &bad);
    put(o, "idempotency_key", str_or_null(j->idempotency_key), &bad);
    put(o, "timeout_s", timeout_s(j->timeout_ms), &bad);
    put(o, "lease_expires_at", jobjson_time(j->lease_expires_at_us), &bad);
    if (j->parents != NULL) /* docs/API.md, POST /v1/claim: only for a job that has parents */
        put(o, "parents", stored_json(j->parents), &bad);
    put(o, "traceparent", str_or_null(j->traceparent), &bad);
    put(o, "group", str_or_null(j->group), &bad);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A queue's rate limit, {"limit": N, "per": DUR}, or null. */
static json_t *
jobjson_rate(int32_t limit, int64_t per_ms)
{
    if (limit <= 0)
        return json_null();
    char per[32];
    return json_pack("{s:I,s:s}", "limit", (json_int_t)limit, "per",
                     duration_format_ms(per_ms, per, sizeof per));
}

json_t *
jobjson_queue(const struct queue_stat *q)
{
    json_t *o = json_object();
    int bad = o == NULL;
    if (bad)
        return NULL;
    put(o, "name", json_string(q->name), &bad);
    put(o, "paused", json_boolean(q->paused), &bad);
    for (int s = 0; s < JOB_STATUS_COUNT; s++)
        put(o, job_status_name((enum job_status)s), json_integer(q->count[s]), &bad);
    /* null when no pending job is due (docs/API.md, Queues) */
    put(o, "oldest_pending_age_s",
        q->any_due ? jobjson_seconds(q->oldest_pending_age_s) : json_null(), &bad);
    put(o, "max_running", q->max_running > 0 ? json_integer(q->max_running) : json_null(), &bad);
    put(o, "rate", jobjson_rate(q->rate_limit, q->rate_per_ms), &bad);
    /* docs/MODEL.md, Groups */
    put(o, "group_max_running",
        q->group_max_running > 0 ? json_integer(q->group_max_running) : json_null(), &bad);
    put(o, "group_rate", jobjson_rate(q->group_rate_limit, q->group_rate_per_ms), &bad);
    put(o, "throughput_1m",
        json_pack("{s:I, s:I, s:I}", "succeeded", (json_int_t)q->throughput_1m.succeeded, "failed",
                  (json_int_t)q->throughput_1m.failed, "dead", (json_int_t)q->throughput_1m.dead),
        &bad);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int
jobjson_parse_object(const char *body, size_t len, json_t **out, struct jobd_error *err)
{
    *out = NULL;
    if (len == 0)
        return jobd_error_set(err, JOBD_E_INVALID, NULL,
                              "the request body is empty; "
                              "expected a JSON object");
    json_error_t je;
    json_t *v = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    /* jansson gives no reason at all when it cannot allocate its lexer. */
    if (v == NULL && (json_error_code(&je) == json_error_out_of_memory || je.text[0] == '\0'))
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory parsing the request body");
    if (v == NULL && json_error_code(&je) == json_error_numeric_overflow) {
        /* Valid JSON that jansson cannot hold: say exactly where it is. */
        char path[sizeof err->field];
        json_path_at(body, len, (size_t)je.position, path, sizeof path);
        return jobd_error_set(err, JOBD_E_TOOBIG, path[0] ? path : NULL,
                              "the number at line %d, column %d%s%s does not fit a 64-bit "
                              "integer or a double (%s); send it as a string",
                              je.line, je.column, path[0] ? " (" : "", path[0] ? path : "",
                              je.text);
    }
    if (v == NULL)
        return jobd_error_set(err, JOBD_E_INVALID, NULL, "malformed JSON at line %d, column %d: %s",
                              je.line, je.column, je.text);
    if (!json_is_object(v)) {
        json_decref(v);
        return jobd_error_set(err, JOBD_E_INVALID, NULL,
                              "the request body must be a JSON "
                              "object");
    }
    *out = v;
    return JOBD_OK;
}

int
jobjson_check_fields(json_t *o, const char *const *allowed, const char *prefix,
                     struct jobd_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        bool ok = false;
        for (size_t i = 0; allowed[i] != NULL && !ok; i++)
            ok = strcmp(key, allowed[i]) == 0;
        if (!ok) {
            char f[160];
            fname(f, sizeof f, prefix, key);
            return jobd_error_set(err, JOBD_E_INVALID, f, "unknown field '%s'", f);
        }
    }
    return JOBD_OK;
}

int
jobjson_get_int(json_t *o, const char *key, const char *prefix, bool required, int64_t min,
                int64_t max, int64_t *out, struct jobd_error *err)
{
    char f[160];
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                                  "%s is required", f);
        return JOBD_OK;
    }
    if (!json_is_integer(v))
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s must be an integer", f);
    json_int_t x = json_integer_value(v);
    if (x < min || x > max)
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s must be between %lld and %lld", f, (long long)min,
                              (long long)max);
    *out = (int64_t)x;
    return JOBD_OK;
}

int
jobjson_get_str(json_t *o, const char *key, const char *prefix, bool required, const char **out,
                struct jobd_error *err)
{
    char f[160];
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                                  "%s is required", f);
        return JOBD_OK;
    }
    if (!json_is_string(v))
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s must be a string", f);
    /* A NUL inside a string would silently truncate it in C. */
    if (strlen(json_string_value(v)) != json_string_length(v))
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s must not contain NUL characters", f);
    *out = json_string_value(v);
    return JOBD_OK;
}

int
jobjson_get_bool(json_t *o, const char *key, const char *prefix, bool *out, struct jobd_error *err)
{
    char f[160];
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v))
        return JOBD_OK;
    if (!json_is_boolean(v))
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s must be true or false", f);
    *out = json_is_true(v);
    return JOBD_OK;
}

int
jobjson_get_seconds_ms(json_t *o, const char *key, const char *prefix, double max_s,
                       int64_t *out_ms, struct jobd_error *err)
{
    char f[160];
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v))
        return JOBD_OK;
    if (!json_is_number(v))
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s must be a number of seconds", f);
    double s = json_number_value(v);
    if (!isfinite(s) || s < 0 || s > max_s)
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s must be between 0 and %g seconds", f, max_s);
    *out_ms = (int64_t)num_round(s * 1000.0);
    return JOBD_OK;
}

int
jobjson_get_str_array(json_t *o, const char *key, const char *prefix, bool required,
                      const char ***out, size_t *n, struct jobd_error *err)
{
    char f[160];
    *out = NULL;
    *n = 0;
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                                  "%s is required", f);
        return JOBD_OK;
    }
    if (!json_is_array(v))
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s must be an array of strings", f);
    size_t len = json_array_size(v);
    if (len > JOB_FILTER_NAMES_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, key),
                              "%s has more than %d entries", f, JOB_FILTER_NAMES_MAX);
    const char **arr = calloc(len ? len : 1, sizeof *arr);
    if (arr == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < len; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e) || strlen(json_string_value(e)) != json_string_length(e)) {
            free(arr);
            snprintf(f, sizeof f, "%s%s[%zu]", prefix ? prefix : "", key, i);
            return jobd_error_set(err, JOBD_E_INVALID, f, "%s must be a string", f);
        }
        arr[i] = json_string_value(e);
    }
    *out = arr;
    *n = len;
    return JOBD_OK;
}

void
jobjson_spec_fini(struct spec_owned *o)
{
    if (o == NULL)
        return;
    free(o->payload);
    o->payload = NULL;
    free(o->depends_on);
    o->depends_on = NULL;
}

static int
spec_payload(json_t *o, const char *prefix, struct spec_owned *owned, struct job_spec *spec,
             struct jobd_error *err)
{
    char f[160];
    json_t *p = json_object_get(o, "payload");
    if (p == NULL)
        return JOBD_OK; /* the store's default, {} */
    int rc = json_value_canonical(p, JOB_PAYLOAD_MAX, &owned->payload,
                                  fname(f, sizeof f, prefix, "payload"), err);
    if (rc != JOBD_OK)
        return rc;
    spec->payload = owned->payload;
    return JOBD_OK;
}

/* depends_on and on_parent_failure (docs/API.md, Dependencies). */
static int
spec_deps(json_t *o, const char *prefix, struct spec_owned *owned, struct job_spec *spec,
          struct jobd_error *err)
{
    char f[160];
    const char *policy = NULL;
    int rc = jobjson_get_str(o, "on_parent_failure", prefix, false, &policy, err);
    if (rc != JOBD_OK)
        return rc;
    if (policy != NULL && strcmp(policy, "run") != 0 && strcmp(policy, "cancel") != 0)
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, "on_parent_failure"),
                              "on_parent_failure must be \"cancel\" or \"run\"");
    spec->run_on_parent_failure = policy != NULL && strcmp(policy, "run") == 0;
    json_t *d = json_object_get(o, "depends_on");
    if (d == NULL || json_is_null(d))
        return JOBD_OK;
    fname(f, sizeof f, prefix, "depends_on");
    if (!json_is_array(d))
        return jobd_error_set(err, JOBD_E_INVALID, f, "depends_on must be an array of job ids");
    size_t n = json_array_size(d);
    if (n > JOB_DEPS_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, f, "depends_on holds at most %d job ids",
                              JOB_DEPS_MAX);
    if (n == 0)
        return JOBD_OK;
    if ((owned->depends_on = malloc(n * sizeof *owned->depends_on)) == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, f, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(d, i);
        if (!json_is_integer(v) || json_integer_value(v) <= 0)
            return jobd_error_set(err, JOBD_E_INVALID, f,
                                  "depends_on[%zu] must be a job id (a positive integer)", i);
        owned->depends_on[i] = (int64_t)json_integer_value(v);
    }
    spec->depends_on = owned->depends_on;
    spec->n_depends_on = n;
    return JOBD_OK;
}

static int
spec_times(json_t *o, const char *prefix, int64_t now_us, struct job_spec *spec,
           struct jobd_error *err)
{
    char f[160];
    const char *run_at = NULL, *in = NULL, *timeout = NULL;
    int rc;
    if ((rc = jobjson_get_str(o, "run_at", prefix, false, &run_at, err)) ||
        (rc = jobjson_get_str(o, "in", prefix, false, &in, err)) ||
        (rc = jobjson_get_str(o, "timeout", prefix, false, &timeout, err)))
        return rc;
    if (run_at && in)
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, "in"),
                              "give either run_at or in, not both");
    if (run_at && (rc = time_parse_rfc3339(run_at, &spec->run_at_us,
                                           fname(f, sizeof f, prefix, "run_at"), err)))
        return rc;
    if (in) {
        int64_t ms = 0;
        if ((rc = duration_parse_ms(in, &ms, fname(f, sizeof f, prefix, "in"), err)))
            return rc;
        /* run_at must stay printable and readable: at most TIME_MAX_US. */
        if (now_us > TIME_MAX_US || ms > (TIME_MAX_US - now_us) / 1000)
            return jobd_error_set(err, JOBD_E_INVALID, f,
                                  "%s is too far in the future (after 9999-12-31T23:59:59Z)", f);
        spec->run_at_us = now_us + ms * 1000;
    }
    if (timeout && json_object_get(o, "timeout_s") &&
        !json_is_null(json_object_get(o, "timeout_s")))
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, "timeout_s"),
                              "give either timeout or timeout_s, not both");
    if (timeout && (rc = duration_parse_ms(timeout, &spec->timeout_ms,
                                           fname(f, sizeof f, prefix, "timeout"), err)))
        return rc;
    if (timeout && spec->timeout_ms < 1)
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, "timeout"),
                              "timeout must be at least 1ms (leave it out or null for none)");
    json_t *ts = json_object_get(o, "timeout_s");
    if (json_is_number(ts) && json_number_value(ts) < 0.001)
        return jobd_error_set(err, JOBD_E_INVALID, fname(f, sizeof f, prefix, "timeout_s"),
                              "timeout_s must be at least 0.001 (leave it out or null for "
                              "none)");
    return jobjson_get_seconds_ms(o, "timeout_s", prefix, JOB_TIMEOUT_MAX_MS / 1000.0,
                                  &spec->timeout_ms, err);
}

int
jobjson_spec(json_t *o, const char *prefix, const char *header_key, const char *header_tp,
             int64_t now_us, struct job_spec *spec, struct spec_owned *owned,
             struct jobd_error *err)
{
    char f[160];
    memset(spec, 0, sizeof *spec);
    int64_t prio = 0, max_attempts = 0;
    int rc;
    if ((rc = jobjson_get_str(o, "type", prefix, true, &spec->type, err)) ||
        (rc = jobjson_get_str(o, "queue", prefix, false, &spec->queue, err)) ||
        (rc = jobjson_get_int(o, "priority", prefix, false, JOB_PRIORITY_MIN, JOB_PRIORITY_MAX,
                              &prio, err)) ||
        (rc = jobjson_get_int(o, "max_attempts", prefix, false, 1, JOB_MAX_ATTEMPTS_MAX,
                              &max_attempts, err)) ||
        (rc = jobjson_get_str(o, "idempotency_key", prefix, false, &spec->idempotency_key, err)) ||
        (rc = jobjson_get_str(o, "traceparent", prefix, false, &spec->traceparent, err)) ||
        (rc = jobjson_get_str(o, "group", prefix, false, &spec->group, err)))
        return rc;
    /* The field wins over the header (docs/API.md, Trace context): a proxy
     * or client library may add a header of its own span to any request,
     * while the field is what the caller meant the job to carry. */
    if (spec->traceparent == NULL)
        spec->traceparent = header_tp;
    spec->priority = (int32_t)prio;
    spec->max_attempts = (int32_t)max_attempts;
    if (header_key != NULL) {
        if (spec->idempotency_key && strcmp(spec->idempotency_key, header_key) != 0)
            return jobd_error_set(err, JOBD_E_INVALID,
                                  fname(f, sizeof f, prefix, "idempotency_key"),
                                  "idempotency_key differs from the Idempotency-Key header");
        spec->idempotency_key = header_key;
    }
    if ((rc = spec_times(o, prefix, now_us, spec, err)))
        return rc;
    if ((rc = spec_payload(o, prefix, owned, spec, err)))
        return rc;
    if ((rc = spec_deps(o, prefix, owned, spec, err)))
        return rc;
    if ((rc = jobjson_spec_windows(o, prefix, spec, err)))
        return rc;
    return job_spec_validate(spec, prefix, err);
}

int
jobjson_schedule_spec(json_t *o, struct schedule_spec *spec, char **payload, struct jobd_error *err)
{
    memset(spec, 0, sizeof *spec);
    int64_t prio = 0, max_attempts = 0;
    const char *catchup = NULL;
    int rc;
    if ((rc = jobjson_get_str(o, "name", NULL, false, &spec->name, err)) ||
        (rc = jobjson_get_str(o, "cron", NULL, true, &spec->cron, err)) ||
        (rc = jobjson_get_str(o, "type", NULL, true, &spec->type, err)) ||
        (rc = jobjson_get_str(o, "timezone", NULL, false, &spec->timezone, err)) ||
        (rc = jobjson_get_str(o, "queue", NULL, false, &spec->queue, err)) ||
        (rc = jobjson_get_str(o, "catchup", NULL, false, &catchup, err)) ||
        (rc = jobjson_get_int(o, "priority", NULL, false, JOB_PRIORITY_MIN, JOB_PRIORITY_MAX, &prio,
                              err)) ||
        (rc = jobjson_get_int(o, "max_attempts", NULL, false, 1, JOB_MAX_ATTEMPTS_MAX,
                              &max_attempts, err)))
        return rc;
    spec->priority = (int32_t)prio;
    spec->max_attempts = (int32_t)max_attempts;
    if (catchup && (rc = schedule_catchup_parse(catchup, &spec->catchup, err)))
        return rc;
    json_t *p = json_object_get(o, "payload");
    if (p != NULL) {
        if ((rc = json_value_canonical(p, JOB_PAYLOAD_MAX, payload, "payload", err)))
            return rc;
        spec->payload = *payload;
    }
    return JOBD_OK;
}

char *
jobjson_dump_take(json_t *v)
{
    if (v == NULL)
        return NULL;
    char *s = json_print(v, 0);
    json_decref(v);
    return s;
}
