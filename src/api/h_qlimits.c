/*
 * h_qlimits.c — PUT /v1/queues/{name} {"max_running"?: N|null, "rate"?:
 * {"limit": N, "per": DUR}|null, "group_max_running"?, "group_rate"?: the
 * same per group}: a queue's limits (docs/API.md, "PUT /v1/queues/{name}";
 * docs/MODEL.md, Groups). A field left out keeps its limit, null removes it. The
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

static const char *const limit_fields[] = {"max_running", "rate", "group_max_running", "group_rate",
                                           NULL};
static const char *const rate_fields[] = {"limit", "per", NULL};

/* A limit count: an integer 1..QUEUE_LIMIT_MAX. */
static int
parse_count(json_t *v, const char *field, int32_t *out, struct jobd_error *err)
{
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > QUEUE_LIMIT_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, field,
                              "%s must be an integer between 1 and %d%s", field, QUEUE_LIMIT_MAX,
                              strstr(field, "max_running") != NULL ? ", or null for no limit" : "");
    *out = (int32_t)json_integer_value(v);
    return JOBD_OK;
}

/* A rate {"limit": N, "per": DUR} named name ("rate" or "group_rate") into *limit, *per_ms. */
static int
parse_rate(json_t *rate, const char *name, int32_t *limit, int64_t *per_ms, struct jobd_error *err)
{
    char f[3][32];
    snprintf(f[0], sizeof f[0], "%s.", name);
    snprintf(f[1], sizeof f[1], "%s.limit", name);
    snprintf(f[2], sizeof f[2], "%s.per", name);
    if (!json_is_object(rate))
        return jobd_error_set(err, JOBD_E_INVALID, name,
                              "%s must be an object {\"limit\": N, \"per\": DUR} or null", name);
    int rc = jobjson_check_fields(rate, rate_fields, f[0], err);
    if (rc != JOBD_OK)
        return JOBD_E_NOTFOUND; /* an unknown field: the caller says so */
    json_t *per = json_object_get(rate, "per");
    if ((rc = parse_count(json_object_get(rate, "limit"), f[1], limit, err)) != JOBD_OK)
        return rc;
    if (!json_is_string(per))
        return jobd_error_set(err, JOBD_E_INVALID, f[2],
                              "%s must be a duration such as \"1s\" or \"1m\"", f[2]);
    if ((rc = duration_parse_ms(json_string_value(per), per_ms, f[2], err)) != JOBD_OK)
        return rc;
    if (*per_ms < QUEUE_RATE_PER_MIN_MS || *per_ms > QUEUE_RATE_PER_MAX_MS)
        return jobd_error_set(err, JOBD_E_INVALID, f[2], "%s must be between 1s and 1d", f[2]);
    return JOBD_OK;
}

/* Reads the body into ch; JOBD_E_INVALID (bad value) or JOBD_E_NOTFOUND (unknown field). */
static int
parse_limits(json_t *o, struct queue_limits_change *ch, struct jobd_error *err)
{
    json_t *mr = json_object_get(o, "max_running"), *rate = json_object_get(o, "rate");
    json_t *gmr = json_object_get(o, "group_max_running");
    json_t *grate = json_object_get(o, "group_rate");
    int rc = JOBD_OK;
    if (mr != NULL) {
        ch->set_max_running = true;
        if (!json_is_null(mr))
            rc = parse_count(mr, "max_running", &ch->max_running, err);
    }
    if (rc == JOBD_OK && rate != NULL) {
        ch->set_rate = true;
        if (!json_is_null(rate))
            rc = parse_rate(rate, "rate", &ch->rate_limit, &ch->rate_per_ms, err);
    }
    if (rc == JOBD_OK && gmr != NULL) {
        ch->set_group_max_running = true;
        if (!json_is_null(gmr))
            rc = parse_count(gmr, "group_max_running", &ch->group_max_running, err);
    }
    if (rc == JOBD_OK && grate != NULL) {
        ch->set_group_rate = true;
        if (!json_is_null(grate))
            rc =
                parse_rate(grate, "group_rate", &ch->group_rate_limit, &ch->group_rate_per_ms, err);
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
