/*
 * jobjson.h — JSON <-> model for the API: the job object of docs/API.md, "The
 * job object" (every field present, times RFC 3339 UTC with milliseconds,
 * null for "none"), the claimed-job object, the queue object, and the parsing
 * of job request bodies into a struct job_spec with field-naming errors.
 *
 * json_t results are new references owned by the caller (json_decref); NULL
 * means out of memory. Parsing borrows strings from the json_t it reads, so
 * the spec is valid only while that json_t lives. Thread-safe.
 */
#ifndef JOBD_API_JOBJSON_H
#define JOBD_API_JOBJSON_H

#include <jansson.h>
#include <stdint.h>

#include "core/job.h"
#include "core/schedule.h"
#include "store/store.h"

/*
 * A number of seconds rounded to milliseconds (new reference): what is
 * measured to the microsecond is not known that well, and jobjson_dump_take
 * prints it short (0.007, not 0.0070000000000000001).
 */
json_t *jobjson_seconds(double s);
/* A time as an RFC 3339 string, or JSON null for 0. */
json_t *jobjson_time(int64_t us);
/* The full job object. A member added here goes into jobjson_job_text too. */
json_t *jobjson_job(const struct job *j);
/*
 * The same object printed: json_print(jobjson_job(j)) byte for byte,
 * written straight into the text (core/json.h, json_out) without the tree
 * in between, for the answers that carry one job (POST /v1/jobs above
 * all). A new malloc'd string, the caller's; NULL when out of memory.
 */
char *jobjson_job_text(const struct job *j);
/* The object POST /v1/claim lists: {id, attempt, type, queue, payload, ...}. */
json_t *jobjson_claimed(const struct job *j);
/* The queue object of GET /v1/queues. */
json_t *jobjson_queue(const struct queue_stat *q);

/*
 * Parses a request body that must be a JSON object (duplicate keys refused).
 * *out is a new reference. JOBD_E_INVALID with a message naming line and
 * column (malformed JSON, invalid UTF-8, too deep, not an object);
 * JOBD_E_TOOBIG for a number that fits neither an int64 nor a double, with
 * err->field its path ("payload.amount") and the message its line and column.
 */
int jobjson_parse_object(const char *body, size_t len, json_t **out, struct jobd_error *err);

/*
 * Checks that o has no member outside allowed (a NULL-terminated list).
 * JOBD_E_INVALID naming the first unknown field (with prefix, may be NULL).
 */
int jobjson_check_fields(json_t *o, const char *const *allowed, const char *prefix,
                         struct jobd_error *err);

/* Memory a parsed spec owns beyond the json_t (free with jobjson_spec_fini). */
struct spec_owned {
    char *payload;       /* canonical payload text */
    int64_t *depends_on; /* the parents' ids */
};
void jobjson_spec_fini(struct spec_owned *o);

/* The fields a job body may have (NULL-terminated), for jobjson_check_fields. */
extern const char *const jobjson_job_fields[];

/*
 * Reads a job body (type, payload, queue, priority, run_at | in,
 * max_attempts, idempotency_key, timeout | timeout_s, traceparent,
 * depends_on, on_parent_failure, debounce, unique) into
 * spec. header_key (may be NULL) is the Idempotency-Key header; if both are
 * given they must agree. header_tp (may be NULL) is the traceparent header,
 * taken when the body has no traceparent (the field wins); either is checked
 * by job_spec_validate, the error naming the field. Both borrowed: spec
 * points at them. now_us anchors `in`. Field names in errors get prefix ("jobs[3].").
 * Unknown fields are not checked here (jobjson_check_fields). Returns 0,
 * JOBD_E_INVALID or JOBD_E_TOOBIG (payload over 256 KiB).
 */
int jobjson_spec(json_t *o, const char *prefix, const char *header_key, const char *header_tp,
                 int64_t now_us, struct job_spec *spec, struct spec_owned *owned,
                 struct jobd_error *err);

/*
 * The debounce and unique members of job body o into spec (jobjson_window.c):
 * absent or null leaves them empty. Called by jobjson_spec; 0 or
 * JOBD_E_INVALID naming the field ("jobs[3].debounce.for").
 */
int jobjson_spec_windows(json_t *o, const char *prefix, struct job_spec *spec,
                         struct jobd_error *err);

/*
 * Typed member access with field-naming errors. Each returns 0 and sets *out
 * (untouched when the member is absent or null and not required), or
 * JOBD_E_INVALID ("attempt must be an integer").
 */
int jobjson_get_int(json_t *o, const char *key, const char *prefix, bool required, int64_t min,
                    int64_t max, int64_t *out, struct jobd_error *err);
int jobjson_get_str(json_t *o, const char *key, const char *prefix, bool required, const char **out,
                    struct jobd_error *err);
int jobjson_get_bool(json_t *o, const char *key, const char *prefix, bool *out,
                     struct jobd_error *err);
/* A number of seconds (integer or real, >= 0, <= max_s) converted to ms. */
int jobjson_get_seconds_ms(json_t *o, const char *key, const char *prefix, double max_s,
                           int64_t *out_ms, struct jobd_error *err);
/* An array of strings; *out is a malloc'd array of borrowed strings (free()). */
int jobjson_get_str_array(json_t *o, const char *key, const char *prefix, bool required,
                          const char ***out, size_t *n, struct jobd_error *err);

/*
 * Reads a schedule body (name, cron, type, timezone, payload, queue,
 * priority, max_attempts, catchup) into spec, without the cross-field
 * checks of schedule_spec_validate. Strings in spec are borrowed from o;
 * the payload's canonical text goes to *payload (malloc'd, caller frees,
 * NULL if the body has none). Returns 0 or JOBD_E_INVALID / JOBD_E_TOOBIG
 * naming the field. Shared by the schedule routes and the fuzz target.
 */
JOBD_MUST_USE int jobjson_schedule_spec(json_t *o, struct schedule_spec *spec, char **payload,
                                        struct jobd_error *err);

/*
 * Serializes v with json_print (compact, members in insertion order, reals
 * in their shortest round-trip form, so a payload's 0.1 prints 0.1) into a
 * new malloc'd string the caller frees, and drops the reference to v (which
 * may be NULL). NULL when v is NULL or printing failed (out of memory).
 */
char *jobjson_dump_take(json_t *v);

#endif
