/*
 * fuzz_spec.c — libFuzzer target for job and schedule request bodies: the
 * JSON object reader and typed getters (api/jobjson.c), the canonical
 * payload (core/json.c) and the validation rules (core/validate.c,
 * schedule_spec_validate with its cron and time zone checks).
 *
 * Every input is read both as a job body (POST /v1/jobs) and as a
 * schedule body (POST /v1/schedules), as the API would. Properties
 * asserted (abort() is a libFuzzer crash):
 *   - a refusal names a field (with the "jobs[0]." prefix for jobs, as
 *     in a batch) and says what is wrong;
 *   - an accepted job, stored and shown as the API shows it (jobjson_job),
 *     reads back as a job body to the same type, queue, priority,
 *     max_attempts, key, run_at (to the millisecond), timeout and the
 *     byte-identical canonical payload: what jobd prints, it accepts again;
 *   - an accepted schedule has a next firing, and its API object
 *     (jobjson_schedule) reads back to the same schedule.
 *
 * Input: the request body.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/jobjson.h"
#include "core/cron.h"
#include "core/err.h"
#include "core/json.h"
#include "core/schedule.h"
#include "fuzz_main.h"

#define NOW_US INT64_C(1796220197120000) /* 2026-12-02T14:03:17.120Z */

static void
fail(const char *what, const char *a, const char *b)
{
    fprintf(stderr, "fuzz_spec: %s\n  first:  %.300s\n  second: %.300s\n", what, a ? a : "(null)",
            b ? b : "(null)");
    abort();
}

static bool
same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void
check_refusal(int rc, const struct jobd_error *err, const char *prefix)
{
    if (rc != JOBD_E_INVALID && rc != JOBD_E_TOOBIG)
        fail("unexpected error code", err->msg, "");
    if (err->msg[0] == '\0')
        fail("a refusal without a message", err->field, "");
    if (prefix != NULL && strncmp(err->field, prefix, strlen(prefix)) != 0)
        fail("a refusal that does not name the field", err->field, err->msg);
}

static void
job_round_trip(json_t *o)
{
    struct jobd_error err = {0};
    struct job_spec spec;
    struct spec_owned own = {0};
    int rc = jobjson_check_fields(o, jobjson_job_fields, "jobs[0].", &err);
    if (rc == JOBD_OK)
        rc = jobjson_spec(o, "jobs[0].", NULL, NULL, NOW_US, &spec, &own, &err);
    if (rc != JOBD_OK) {
        check_refusal(rc, &err, "jobs[0].");
        jobjson_spec_fini(&own);
        return;
    }
    /* What the store would keep (its defaults filled in), shown as the API shows it. */
    struct job j = {
        .id = 1,
        .type = (char *)spec.type,
        .queue = (char *)(spec.queue ? spec.queue : JOB_DEFAULT_QUEUE),
        .payload = (char *)(spec.payload ? spec.payload : "{}"),
        .status = JOB_PENDING,
        .priority = spec.priority,
        .run_at_us = spec.run_at_us ? spec.run_at_us : NOW_US,
        .max_attempts = spec.max_attempts ? spec.max_attempts : JOB_DEFAULT_MAX_ATTEMPTS,
        .idempotency_key = (char *)spec.idempotency_key,
        .timeout_ms = spec.timeout_ms,
        .created_at_us = NOW_US,
    };
    char *shown = jobjson_dump_take(jobjson_job(&j));
    if (shown == NULL)
        fail("jobjson_job failed", j.type, j.payload);
    json_t *o2 = NULL;
    struct job_spec s2;
    struct spec_owned own2 = {0};
    if (jobjson_parse_object(shown, strlen(shown), &o2, &err) != JOBD_OK ||
        jobjson_spec(o2, NULL, NULL, NULL, NOW_US, &s2, &own2, &err) != JOBD_OK)
        fail("a job as shown is refused as a job body", shown, err.msg);
    if (!same(s2.type, j.type) || !same(s2.queue, j.queue) || s2.priority != j.priority ||
        s2.max_attempts != j.max_attempts || !same(s2.idempotency_key, j.idempotency_key))
        fail("a job as shown reads back with other names or numbers", shown, "");
    if (s2.run_at_us != j.run_at_us - j.run_at_us % 1000)
        fail("a job as shown reads back with another run_at", shown, "");
    if (s2.timeout_ms != j.timeout_ms)
        fail("a job as shown reads back with another timeout", shown, "");
    if (!same(s2.payload, j.payload))
        fail("a job as shown reads back with another payload", j.payload, s2.payload);
    jobjson_spec_fini(&own2);
    json_decref(o2);
    free(shown);
    jobjson_spec_fini(&own);
}

static void
schedule_round_trip(json_t *o)
{
    struct jobd_error err = {0};
    struct schedule_spec spec;
    char *payload = NULL;
    int rc = jobjson_schedule_spec(o, &spec, &payload, &err);
    if (rc == JOBD_OK)
        rc = schedule_spec_validate(&spec, &err);
    if (rc != JOBD_OK) {
        check_refusal(rc, &err, NULL);
        if (err.field[0] == '\0')
            fail("a schedule refusal without a field", err.msg, "");
        free(payload);
        return;
    }
    struct cron_expr e;
    int64_t next = 0;
    if (cron_parse(spec.cron, &e, &err) != 0 || cron_next(&e, spec.timezone, NOW_US, &next, &err))
        fail("an accepted schedule has no next firing", spec.cron, err.msg);
    struct schedule s = {
        .name = (char *)spec.name,
        .cron = (char *)spec.cron,
        .timezone = (char *)(spec.timezone ? spec.timezone : "UTC"),
        .type = (char *)spec.type,
        .payload = (char *)(spec.payload ? spec.payload : "{}"),
        .queue = (char *)(spec.queue ? spec.queue : JOB_DEFAULT_QUEUE),
        .priority = spec.priority,
        .max_attempts = spec.max_attempts ? spec.max_attempts : JOB_DEFAULT_MAX_ATTEMPTS,
        .catchup = spec.catchup,
        .next_run_at_us = next,
        .created_at_us = NOW_US,
    };
    char *shown = jobjson_dump_take(jobjson_schedule(&s));
    if (shown == NULL)
        fail("jobjson_schedule failed", s.name, s.payload);
    json_t *o2 = NULL;
    struct schedule_spec s2;
    char *payload2 = NULL;
    if (jobjson_parse_object(shown, strlen(shown), &o2, &err) != JOBD_OK ||
        jobjson_schedule_spec(o2, &s2, &payload2, &err) != JOBD_OK ||
        schedule_spec_validate(&s2, &err) != JOBD_OK)
        fail("a schedule as shown is refused as a schedule body", shown, err.msg);
    if (!same(s2.name, s.name) || !same(s2.cron, s.cron) || !same(s2.timezone, s.timezone) ||
        !same(s2.type, s.type) || !same(s2.queue, s.queue) || s2.priority != s.priority ||
        s2.max_attempts != s.max_attempts || s2.catchup != s.catchup)
        fail("a schedule as shown reads back with other fields", shown, "");
    if (!same(s2.payload, s.payload))
        fail("a schedule as shown reads back with another payload", s.payload, s2.payload);
    free(payload2);
    json_decref(o2);
    free(shown);
    free(payload);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct jobd_error err = {0};
    json_t *o = NULL;
    if (jobjson_parse_object((const char *)data, size, &o, &err) != JOBD_OK) {
        if (o != NULL || err.msg[0] == '\0')
            fail("a malformed body without a message", err.msg, "");
        return 0;
    }
    job_round_trip(o);
    schedule_round_trip(o);
    json_decref(o);
    return 0;
}
