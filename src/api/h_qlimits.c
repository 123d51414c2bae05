/*
 * h_qlimits.c — PUT /v1/queues/{name} {"max_running"?: N|null, "rate"?:
 * {"limit": N, "per": DUR}|null}: a queue's limits (docs/API.md, "PUT
 * /v1/queues/{name}"). A field left out keeps its limit, null removes it. The
 * answer is the queue object, read back from store_queue_stats like GET
 * /v1/queues.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/duration.h"
#include "core/err.h"
#include "store/operator.h"

static const char *const limit_fields[] = {"max_running", "rate", NULL};
static const char *const rate_fields[] = {"limit", "per", NULL};

/* A limit count: an integer 1..QUEUE_LIMIT_MAX. */
static int
parse_count(json_t *v, const char *field, int32_t *out, struct jobd_error *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > QUEUE_LIMIT_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, field,
                              "%s must be an integer between 1 and %d%s", field, QUEUE_LIMIT_MAX,
                              strcmp(field, "max_running") == 0 ? ", or null for no limit" : "");
    *out = (int32_t)json_integer_value(v);
    return JOBD_OK;
}

static int
parse_rate(json_t *rate, struct queue_limits_change *ch, struct jobd_error *err)
{
    if (!json_is_object(rate))
        return jobd_error_set(err, JOBD_E_INVALID, "rate",
                              "rate must be an object {\"limit\": N, \"per\": DUR} or null");
    int rc = jobjson_check_fields(rate, rate_fields, "rate.", err);
    if (rc != JOBD_OK)
        return JOBD_E_NOTFOUND; /* an unknown field: the caller says so */
    json_t *per = json_object_get(rate, "per");
    if ((rc = parse_count(json_object_get(rate, "limit"), "rate.limit", &ch->rate_limit, err)) !=
        JOBD_OK)
        return rc;
    if (!json_is_string(per))
        return jobd_error_set(err, JOBD_E_INVALID, "rate.per",
                              "rate.per must be a duration such as \"1s\" or \"1m\"");
    if ((rc = duration_parse_ms(json_string_value(per), &ch->rate_per_ms, "rate.per", err)) !=
        JOBD_OK)
        return rc;
    if (ch->rate_per_ms < QUEUE_RATE_PER_MIN_MS || ch->rate_per_ms > QUEUE_RATE_PER_MAX_MS)
        return jobd_error_set(err, JOBD_E_INVALID, "rate.per",
                              "rate.per must be between 1s and 1d");
    return JOBD_OK;
}

/* Reads the body into ch; JOBD_E_INVALID (bad value) or JOBD_E_NOTFOUND (unknown field). */
static int
parse_limits(json_t *o, struct queue_limits_change *ch, struct jobd_error *err)
{
    json_t *mr = json_object_get(o, "max_running"), *rate = json_object_get(o, "rate");
    int rc = JOBD_OK;
    if (mr != NULL) {
        ch->set_max_running = true;
        if (!json_is_null(mr))
            rc = parse_count(mr, "max_running", &ch->max_running, err);
    }
    if (rc == JOBD_OK && rate != NULL) {
        ch->set_rate = true;
        if (!json_is_null(rate))
            rc = parse_rate(rate, ch, err);
    }
    return rc;
}

void
h_queue_limits(struct api_call *c)
{
    struct jobd_error err = {0};
    if (!api_queue_name_ok(c))
        return;
    json_t *o = api_body_object(c, limit_fields);
    if (o == NULL)
        return;
    struct queue_limits_change ch = {0};
    int rc = parse_limits(o, &ch, &err);
    json_decref(o);
    if (rc != JOBD_OK) {
        api_error(c->resp, 400, rc == JOBD_E_NOTFOUND ? "unknown_field" : "invalid_field",
                  err.field, "%s", err.msg);
        return;
    }
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct queue_stat *qs = NULL;
    size_t n = 0;
    rc = store_queue_limits(st, c->name, &ch, &err);
    if (rc == JOBD_OK)
        rc = store_queue_stats(st, &qs, &n, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        free(qs);
        return;
    }
    /* A limit removed or raised may make jobs claimable: parked claims look again. */
    if (c->ctx->wake)
        wakeup_signal(c->ctx->wake);
    api_reply_queue(c, qs, n, false);
    free(qs);
}
