/*
 * h_sched.c — the schedule routes of docs/API.md, "Schedules": create (409 if
 * the name exists), create-or-replace by PUT, read, list, delete, pause,
 * resume and trigger. Validation (cron fields, time zone, names) is
 * schedule_spec_validate's, so a bad expression is a 400 naming the field
 * before anything is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "api/metrics.h"
#include "core/err.h"
#include "core/json.h"
#include "core/schedule.h"

static const char *const create_fields[] = {"name",    "cron",  "type",     "timezone",
                                            "payload", "queue", "priority", "max_attempts",
                                            "catchup", NULL};
static const char *const put_fields[] = {"name",  "cron",     "type",         "timezone", "payload",
                                         "queue", "priority", "max_attempts", "catchup",  NULL};

json_t *
jobjson_schedule(const struct schedule *s)
{
    json_t *payload = s->payload ? json_loads(s->payload, JSON_DECODE_ANY, NULL) : NULL;
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:i, s:i, s:s, s:b, s:o, s:o, s:o}", "name",
                     s->name ? s->name : "", "cron", s->cron ? s->cron : "", "timezone",
                     s->timezone ? s->timezone : "UTC", "type", s->type ? s->type : "", "payload",
                     payload ? payload : json_object(), "queue", s->queue ? s->queue : "default",
                     "priority", (int)s->priority, "max_attempts", (int)s->max_attempts, "catchup",
                     schedule_catchup_name(s->catchup), "paused", (int)s->paused, "next_run_at",
                     jobjson_time(s->next_run_at_us), "last_fired_at",
                     jobjson_time(s->last_fired_at_us), "created_at",
                     jobjson_time(s->created_at_us));
}

bool
api_sched_path_name(struct api_call *c)
{
    struct jobd_error err = {0};
    if (c->name_too_long)
        jobd_error_set(&err, JOBD_E_INVALID, "name", "name is longer than %d characters",
                       JOB_NAME_MAX);
    else if (job_validate_type(c->name, "name", &err) == JOBD_OK)
        return true;
    api_error(c->resp, 400, "invalid_field", "name", "%s", err.msg);
    return false;
}

static void
reply_schedule(struct api_call *c, int status, const struct schedule *s)
{
    api_json_take(c->resp, status, jobjson_dump_take(jobjson_schedule(s)));
}

void
api_sched_not_found(struct api_call *c, const char *name)
{
    api_error(c->resp, 404, "not_found", "name", "no schedule named '%.128s'", name);
}

/* POST (replace false) and PUT (replace true). */
static void
put_schedule(struct api_call *c, bool replace)
{
    json_t *o = api_body_object(c, replace ? put_fields : create_fields);
    if (o == NULL)
        return;
    struct schedule_spec spec;
    char *payload = NULL;
    struct jobd_error err = {0};
    struct schedule out = {0};
    bool created = false;
    int rc = jobjson_schedule_spec(o, &spec, &payload, &err);
    if (rc == JOBD_OK && replace) {
        if (spec.name && strcmp(spec.name, c->name) != 0)
            rc = jobd_error_set(&err, JOBD_E_INVALID, "name",
                                "name in the body differs from the path");
        spec.name = c->name;
    } else if (rc == JOBD_OK && spec.name == NULL) {
        rc = jobd_error_set(&err, JOBD_E_INVALID, "name", "name is required");
    }
    if (rc == JOBD_OK)
        rc = schedule_spec_validate(&spec, &err);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        goto out;
    }
    struct store *st;
    if (!api_store_get(c, &st))
        goto out;
    rc = store_schedule_put_capped(st, &spec, replace, c->ctx->max_schedules, &out, &created, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_CONFLICT && strcmp(err.field, "max_schedules") == 0)
        api_error(c->resp, 409, "limit_reached", "max_schedules", "%s", err.msg);
    else if (rc == JOBD_E_CONFLICT)
        api_error(c->resp, 409, "conflict", "name", "a schedule named '%.128s' already exists",
                  spec.name);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else
        reply_schedule(c, created ? 201 : 200, &out);
out:
    schedule_fini(&out);
    free(payload);
    json_decref(o);
}

void
h_sched_create(struct api_call *c)
{
    put_schedule(c, false);
}

void
h_sched_put(struct api_call *c)
{
    if (api_sched_path_name(c))
        put_schedule(c, true);
}

/* One schedule of a list: without "payload" unless ?full=1 asked for it. */
static json_t *
listed(const struct schedule *s, bool full)
{
    json_t *o = jobjson_schedule(s);
    if (o != NULL && !full)
        json_object_del(o, "payload");
    return o;
}

/* GET /v1/schedules?limit=&after=&full=: one page, by name (docs/API.md). */
void
h_sched_list(struct api_call *c)
{
    struct name_page pg;
    int limit;
    if (!api_page_query(c, true, &pg, &limit))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct schedule_list l = {0};
    struct jobd_error err = {0};
    int rc = store_schedule_page(st, &pg, &l, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        schedule_list_fini(&l);
        return;
    }
    size_t n = l.n < (size_t)limit ? l.n : (size_t)limit;
    json_t *arr = json_array();
    json_t *o = arr ? json_pack("{s:o, s:o}", "schedules", arr, "next",
                                api_page_next(l.n, limit, n ? l.v[n - 1].name : NULL))
                    : NULL;
    for (size_t i = 0; o && i < n; i++)
        if (json_array_append_new(arr, listed(&l.v[i], pg.payload)) != 0) {
            json_decref(o);
            o = NULL;
        }
    api_json_take(c->resp, 200, jobjson_dump_take(o));
    schedule_list_fini(&l);
}

void
h_sched_get(struct api_call *c)
{
    if (!api_sched_path_name(c))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct schedule s = {0};
    struct jobd_error err = {0};
    int rc = store_schedule_get(st, c->name, &s, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND)
        api_sched_not_found(c, c->name);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else
        reply_schedule(c, 200, &s);
    schedule_fini(&s);
}

void
h_sched_delete(struct api_call *c)
{
    if (!api_sched_path_name(c))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct jobd_error err = {0};
    int rc = store_schedule_delete(st, c->name, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND) {
        api_sched_not_found(c, c->name);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else {
        free(c->resp->body);
        c->resp->body = NULL;
        c->resp->body_len = 0;
        c->resp->status = 204;
    }
}

static void
set_paused(struct api_call *c, bool paused)
{
    if (!api_sched_path_name(c))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct schedule s = {0};
    struct jobd_error err = {0};
    int rc = store_schedule_pause(st, c->name, paused, &s, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND)
        api_sched_not_found(c, c->name);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, &err);
    else
        reply_schedule(c, 200, &s);
    schedule_fini(&s);
}

void
h_sched_pause(struct api_call *c)
{
    set_paused(c, true);
}

void
h_sched_resume(struct api_call *c)
{
    set_paused(c, false);
}

void
h_sched_trigger(struct api_call *c)
{
    if (!api_sched_path_name(c))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct job job = {0};
    struct jobd_error err = {0};
    int rc = store_schedule_trigger(st, c->name, &job, &err);
    api_store_put(c, st, rc);
    if (rc == JOBD_E_NOTFOUND) {
        api_sched_not_found(c, c->name);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else {
        api_metrics_enqueued(c->ctx->metrics, 1);
        if (c->ctx->wake)
            wakeup_signal(c->ctx->wake);
        api_reply_job(c, 200, &job);
    }
    job_fini(&job);
}
