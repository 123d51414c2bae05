/*
 * h_events.c — GET /v1/events?queue=&type=&job=&workflow= (docs/API.md, GET /v1/events): a
 * Server-Sent Events stream of job status changes, from the store's event
 * log, so a client of one server sees every server's. The handler checks
 * the filters and Last-Event-ID, marks the log as listened to (recording
 * starts or goes on), and hands the HTTP layer a client of the events
 * thread (api/events.h), which streams from there on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/events.h"
#include "api/handlers.h"
#include "core/err.h"
#include "store/events.h"

static bool
known(const char *k)
{
    return strcmp(k, "queue") == 0 || strcmp(k, "type") == 0 || strcmp(k, "job") == 0 ||
           strcmp(k, "workflow") == 0;
}

/* A positive id (job) or a non-negative one (an event); false if not one. */
static bool
parse_id(const char *v, bool zero_ok, int64_t *out)
{
    if (v == NULL || *v < '0' || *v > '9')
        return false;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < 0 || (n == 0 && !zero_ok))
        return false;
    *out = (int64_t)n;
    return true;
}

/* The filters of the query into f; false after answering 400. */
static bool
parse_filter(struct api_call *c, struct ev_filter *f)
{
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < c->req->n_query; i++)
        if (!known(c->req->query[i].key)) {
            api_error(c->resp, 400, "invalid_query", c->req->query[i].key,
                      "unknown query parameter '%.100s'", c->req->query[i].key);
            return false;
        }
    struct jobd_error err = {0};
    const char *v;
    if ((v = api_query(c, "queue")) != NULL && *v) {
        if (job_validate_queue(v, "queue", &err) != JOBD_OK) {
            api_error_from(c->resp, JOBD_E_INVALID, &err);
            return false;
        }
        snprintf(f->queue, sizeof f->queue, "%s", v);
    }
    if ((v = api_query(c, "type")) != NULL && *v) {
        if (job_validate_type(v, "type", &err) != JOBD_OK) {
            api_error_from(c->resp, JOBD_E_INVALID, &err);
            return false;
        }
        snprintf(f->type, sizeof f->type, "%s", v);
    }
    if ((v = api_query(c, "job")) != NULL && *v && !parse_id(v, false, &f->job)) {
        api_error(c->resp, 400, "invalid_query", "job", "job must be a job id");
        return false;
    }
    if ((v = api_query(c, "workflow")) != NULL && *v && !parse_id(v, false, &f->workflow)) {
        api_error(c->resp, 400, "invalid_query", "workflow", "workflow must be a workflow id");
        return false;
    }
    return true;
}

void
h_events(struct api_call *c)
{
    struct ev_filter f;
    if (!parse_filter(c, &f))
        return;
    int64_t last = -1;
    const char *lei = c->req->last_event_id;
    if (lei != NULL && *lei && !parse_id(lei, true, &last)) {
        api_error(c->resp, 400, "invalid_header", "Last-Event-ID",
                  "Last-Event-ID must be the id of an event");
        return;
    }
    if (c->ctx->events == NULL) {
        api_error(c->resp, 503, "unavailable", NULL, "this server streams no events");
        return;
    }
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct jobd_error err = {0};
    struct events_head head;
    bool ok = true;
    int rc = store_events_listen(st, &head, &err);
    if (rc == JOBD_OK && last >= 0)
        rc = store_events_resumable(st, last, &ok, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        return;
    }
    if (!ok) {
        api_error(c->resp, 410, "gone", "Last-Event-ID",
                  "the events after %lld are no longer all kept (an hour at most, and only "
                  "while someone listens): start again without Last-Event-ID",
                  (long long)last);
        return;
    }
    struct ev_client *ec = events_client_new(c->ctx->events, &f, last >= 0 ? last : head.max_id);
    if (ec == NULL) {
        api_error(c->resp, 503, "busy", NULL, "too many clients of the events stream");
        return;
    }
    c->resp->status = 200;
    c->resp->events = ec;
}
