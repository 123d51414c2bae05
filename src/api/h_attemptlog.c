/*
 * h_attemptlog.c — an attempt's log (docs/API.md, GET
 * /v1/jobs/{id}/attempts/{attempt}/log): read as text/plain, and written by
 * a remote worker with the attempt's report, fenced by its lease token like
 * the reports (POST, the same path). The log is plain text, not JSON: a
 * reader pipes it to a terminal or a pager as it is.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/err.h"
#include "store/attemptlog.h"

static const char *const log_fields[] = {"lease_token", "text", NULL};

void
h_attempt_log_get(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    char *text = NULL;
    struct jobd_error err = {0};
    int rc = store_attempt_log_get(st, c->id, c->attempt, &text, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        return;
    }
    free(c->resp->body);
    c->resp->status = 200;
    c->resp->content_type = "text/plain; charset=utf-8";
    c->resp->body = text;
    c->resp->body_len = strlen(text);
}

void
h_attempt_log_put(struct api_call *c)
{
    json_t *o = api_body_object(c, log_fields);
    if (o == NULL)
        return;
    json_t *t = json_object_get(o, "text");
    if (!json_is_string(t)) {
        struct jobd_error e = {0};
        jobd_error_set(&e, JOBD_E_INVALID, "text", "text is required: the attempt's log, a string");
        api_error_from(c->resp, JOBD_E_INVALID, &e);
        json_decref(o);
        return;
    }
    struct store *st;
    if (!api_store_get(c, &st)) {
        json_decref(o);
        return;
    }
    int rc = JOBD_OK;
    if (api_report_fenced(c, st, c->attempt, o)) {
        struct attempt_log l = {.id = c->id, .attempt = c->attempt, .text = json_string_value(t)};
        int outcome = JOBD_OK;
        struct jobd_error err = {0};
        if (strlen(l.text) != json_string_length(t))
            rc = jobd_error_set(&err, JOBD_E_INVALID, "text", "text must not hold NUL characters");
        else
            rc = store_attempt_logs_put(st, &l, 1, &outcome, &err);
        if (rc == JOBD_OK && outcome != JOBD_OK)
            rc = jobd_error_set(&err, JOBD_E_NOTFOUND, "attempt",
                                "job %" PRId64 " has no attempt %" PRId32, c->id, c->attempt);
        if (rc != JOBD_OK)
            api_error_from(c->resp, rc, &err);
        else
            api_json_take(
                c->resp, 200,
                jobjson_dump_take(json_pack("{s:I, s:I}", "attempt", (json_int_t)c->attempt,
                                            "bytes", (json_int_t)strlen(l.text))));
    }
    api_store_put(c, st, rc);
    json_decref(o);
}
