/*
 * h_ui.c — two small read-only routes the dashboard needs and a script can
 * use the same way (docs/API.md):
 *
 *   GET /v1/whoami → {"role": ROLE, "tokens": BOOL, "token_sent": BOOL}:
 *       whether to ask for a token, and which actions to offer (a button
 *       the role may not use is not shown);
 *   GET /v1/schedules/{name}/next?count=N → {"timezone": Z, "next": [TIME…]}:
 *       the schedule's next N firings (default 5, at most 100) after now,
 *       computed by the server's cron and ICU rules, so the page need not
 *       reimplement cron or the DST rules.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/cron.h"
#include "core/err.h"
#include "core/schedule.h"

#define NEXT_DEFAULT 5
#define NEXT_MAX 100

/* Public (no token needed), so a page can learn that it must ask for one
 * without provoking a 401: "none" is the role of no valid token. */
void
h_whoami(struct api_call *c)
{
    bool tokens = api_auth_required(api_ctx_auth(c->ctx));
    api_json_take(c->resp, 200,
                  jobjson_dump_take(json_pack("{s:s, s:b, s:b}", "role", api_role_name(c->role),
                                              "tokens", (int)tokens, "token_sent",
                                              (int)(c->req->authorization != NULL))));
}

/* ?count=N (1..NEXT_MAX); false after answering 400. */
static bool
next_count(struct api_call *c, long *count)
{
    *count = NEXT_DEFAULT;
    for (size_t i = 0; i < c->req->n_query; i++) {
        const char *k = c->req->query[i].key, *v = c->req->query[i].value;
        if (strcmp(k, "count") != 0) {
            api_error(c->resp, 400, "invalid_query", k,
                      "unknown query parameter '%.64s' "
                      "(this route takes count)",
                      k);
            return false;
        }
        char *end = NULL;
        errno = 0;
        *count = v ? strtol(v, &end, 10) : 0;
        if (v == NULL || errno != 0 || end == v || *end != '\0' || *count < 1 ||
            *count > NEXT_MAX) {
            api_error(c->resp, 400, "invalid_query", "count", "count must be a number from 1 to %d",
                      NEXT_MAX);
            return false;
        }
    }
    return true;
}

/* The next count firings of s after now_us as a JSON array; NULL after err. */
static json_t *
next_firings(const struct schedule *s, long count, int64_t now_us, struct jobd_error *err)
{
    struct cron_expr e;
    struct cron_zone *z = NULL;
    int rc = cron_parse(s->cron ? s->cron : "", &e, err);
    if (rc == JOBD_OK)
        rc = cron_zone_open(s->timezone, &z, err);
    json_t *arr = rc == JOBD_OK ? json_array() : NULL;
    int64_t at = now_us;
    for (long i = 0; arr != NULL && i < count; i++) {
        rc = cron_next_in(&e, z, at, &at, err);
        if (rc != JOBD_OK || json_array_append_new(arr, jobjson_time(at)) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    cron_zone_free(z);
    return arr;
}

void
h_sched_next(struct api_call *c)
{
    long count;
    if (!next_count(c, &count))
        return;
    if (!api_sched_path_name(c)) /* as GET /v1/schedules/{name}: 400, then 404 */
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct schedule s = {0};
    struct jobd_error err = {0};
    int rc = store_schedule_get(st, c->name, &s, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND) {
        api_sched_not_found(c, c->name);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else {
        json_t *next = next_firings(&s, count, api_now_us(c), &err);
        if (next == NULL)
            api_error(c->resp, 500, "internal", NULL, "cannot compute the next firings: %s",
                      err.msg[0] ? err.msg : "out of memory");
        else
            api_json_take(
                c->resp, 200,
                jobjson_dump_take(json_pack("{s:s, s:o}", "timezone",
                                            s.timezone ? s.timezone : "UTC", "next", next)));
    }
    schedule_fini(&s);
}
