/*
 * validate.c — the naming and range rules of docs/MODEL.md, "Names and
 * limits" for everything a client hands in. Errors name the field, so the API
 * and the CLI can tell a user exactly what is wrong. Pure; no I/O.
 */
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/job.h"
#include "core/traceparent.h"
#include "core/timefmt.h"

static bool
is_name_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '-';
}

static bool
is_queue_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static const char *
fieldname(char *buf, size_t len, const char *prefix, const char *field)
{
    snprintf(buf, len, "%s%s", prefix ? prefix : "", field);
    return buf;
}

int
job_validate_type(const char *type, const char *field, struct jobd_error *err)
{
    if (type == NULL || *type == '\0')
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s is required", field);
    size_t n = strlen(type);
    if (n > JOB_NAME_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s is longer than %d characters", field,
                              JOB_NAME_MAX);
    for (size_t i = 0; i < n; i++)
        if (!is_name_char((unsigned char)type[i]))
            return jobd_error_set(err, JOBD_E_INVALID, field,
                                  "%s may only contain A-Z a-z 0-9 . _ : - (bad character at "
                                  "position %zu)",
                                  field, i + 1);
    return JOBD_OK;
}

int
job_validate_queue(const char *queue, const char *field, struct jobd_error *err)
{
    if (queue == NULL || *queue == '\0')
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s must not be empty", field);
    size_t n = strlen(queue);
    if (n > JOB_QUEUE_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s is longer than %d characters", field,
                              JOB_QUEUE_MAX);
    for (size_t i = 0; i < n; i++)
        if (!is_queue_char((unsigned char)queue[i]))
            return jobd_error_set(err, JOBD_E_INVALID, field,
                                  "%s may only contain a-z 0-9 _ - (bad character at position "
                                  "%zu)",
                                  field, i + 1);
    return JOBD_OK;
}

int
job_validate_group(const char *group, const char *field, struct jobd_error *err)
{
    if (group == NULL)
        return JOBD_OK;
    size_t n = strlen(group);
    if (n == 0 || n > JOB_GROUP_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s must be 1 to %d characters", field,
                              JOB_GROUP_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)group[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == ':' || c == '-';
        if (!ok)
            return jobd_error_set(err, JOBD_E_INVALID, field,
                                  "%s may only contain A-Z a-z 0-9 . _ : - (bad character at "
                                  "position %zu)",
                                  field, i + 1);
    }
    return JOBD_OK;
}

int
job_validate_key(const char *key, const char *field, struct jobd_error *err)
{
    if (key == NULL)
        return JOBD_OK;
    size_t n = strlen(key);
    if (n == 0)
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s must not be empty", field);
    if (n > JOB_KEY_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s is longer than %d bytes", field,
                              JOB_KEY_MAX);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
            return jobd_error_set(err, JOBD_E_INVALID, field,
                                  "%s must not contain control characters", field);
    /* HTTP trims header values: "order-1 " would reach an http handler as
     * "order-1", a different key. */
    if (key[0] == ' ' || key[n - 1] == ' ')
        return jobd_error_set(err, JOBD_E_INVALID, field, "%s must not begin or end with a space%s",
                              field, strspn(key, " ") == n ? " (it is all blanks)" : "");
    return JOBD_OK;
}

int
job_spec_validate(const struct job_spec *spec, const char *prefix, struct jobd_error *err)
{
    char f[96];
    int rc = job_validate_type(spec->type, fieldname(f, sizeof f, prefix, "type"), err);
    if (rc != JOBD_OK)
        return rc;
    if (spec->queue != NULL &&
        (rc = job_validate_queue(spec->queue, fieldname(f, sizeof f, prefix, "queue"), err)))
        return rc;
    if (spec->payload != NULL && strlen(spec->payload) > JOB_PAYLOAD_MAX)
        return jobd_error_set(err, JOBD_E_TOOBIG, fieldname(f, sizeof f, prefix, "payload"),
                              "payload is over %d KiB", JOB_PAYLOAD_MAX / 1024);
    if (spec->payload != NULL && *spec->payload == '\0')
        return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "payload"),
                              "payload must be a JSON value");
    if (spec->priority < JOB_PRIORITY_MIN || spec->priority > JOB_PRIORITY_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "priority"),
                              "priority must be between %d and %d", JOB_PRIORITY_MIN,
                              JOB_PRIORITY_MAX);
    if (spec->max_attempts < 0 || spec->max_attempts > JOB_MAX_ATTEMPTS_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "max_attempts"),
                              "max_attempts must be between 1 and %d", JOB_MAX_ATTEMPTS_MAX);
    if ((rc = job_validate_key(spec->idempotency_key,
                               fieldname(f, sizeof f, prefix, "idempotency_key"), err)))
        return rc;
    if ((rc = job_validate_group(spec->group, fieldname(f, sizeof f, prefix, "group"), err)))
        return rc;
    if (spec->timeout_ms < 0)
        return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "timeout"),
                              "timeout must not be negative");
    if (spec->timeout_ms > JOB_TIMEOUT_MAX_MS)
        return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "timeout"),
                              "timeout must be at most 366d");
    if (spec->run_at_us < 0)
        return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "run_at"),
                              "run_at must be after 1970-01-01");
    if (spec->run_at_us > TIME_MAX_US)
        return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "run_at"),
                              "run_at must be before the year 10000");
    if (spec->schedule != NULL &&
        (rc = job_validate_type(spec->schedule, fieldname(f, sizeof f, prefix, "schedule"), err)))
        return rc;
    if (spec->n_depends_on > JOB_DEPS_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "depends_on"),
                              "depends_on holds at most %d job ids", JOB_DEPS_MAX);
    for (size_t i = 0; i < spec->n_depends_on; i++)
        if (spec->depends_on[i] <= 0)
            return jobd_error_set(err, JOBD_E_INVALID, fieldname(f, sizeof f, prefix, "depends_on"),
                                  "depends_on must hold job ids (positive integers)");
    if (spec->traceparent != NULL &&
        (rc = traceparent_validate(spec->traceparent, fieldname(f, sizeof f, prefix, "traceparent"),
                                   err)))
        return rc;
    return job_spec_validate_windows(spec, prefix, err);
}
