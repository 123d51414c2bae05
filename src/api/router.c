/*
 * router.c — the route table and api_handle(): match method and path,
 * check the token, run the handler. The table is data (not a chain of
 * strcmp in code) so docs/API.md can be checked against it by a test and
 * the HTTP layer can ask for a route's body limit before the body arrives.
 *
 * Paths are matched segment by segment: "{id}" takes a positive decimal job
 * id, "{attempt}" a positive attempt number, "{name}" any non-empty segment (validated by the handler, so a bad
 * queue name is a 400 that names it, not a 404). A path that matches a
 * route under another method is a 405 with Allow.
 *
 * With tokens configured, the token is checked before the route is looked
 * up (an unknown route without a valid token is a 401, so routes cannot be
 * probed), then the token's role against the route's (403 forbidden).
 * The dashboard's files under /ui/ are answered before any of this (ui.c):
 * the page needs no token, it asks for one for its API calls.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/auth.h"
#include "api/handlers.h"
#include "api/longpoll.h"
#include "api/storepool.h"
#include "api/ui.h"
#include "core/err.h"

const struct api_route api_routes[] = {
    {"POST", "/v1/jobs", h_job_create, API_BODY_MAX, false, API_ROLE_WRITE},
    {"POST", "/v1/jobs/batch", h_job_batch, API_BATCH_BODY_MAX, false, API_ROLE_WRITE},
    {"GET", "/v1/jobs/{id}", h_job_get, API_BODY_MAX, false, API_ROLE_READ},
    {"GET", "/v1/jobs", h_job_list, API_BODY_MAX, false, API_ROLE_READ},
    {"POST", "/v1/jobs/{id}/cancel", h_job_cancel, API_BODY_MAX, false, API_ROLE_WRITE},
    {"POST", "/v1/jobs/{id}/retry", h_job_retry, API_BODY_MAX, false, API_ROLE_WRITE},
    {"GET", "/v1/jobs/{id}/attempts", h_job_attempts, API_BODY_MAX, false, API_ROLE_READ},
    {"GET", "/v1/jobs/{id}/attempts/{attempt}/log", h_attempt_log_get, API_BODY_MAX, false,
     API_ROLE_READ},
    /* admin, as bulk delete: deleting destroys history (docs/API.md, roles) */
    {"DELETE", "/v1/jobs/{id}", h_job_delete, API_BODY_MAX, false, API_ROLE_ADMIN},
    {"POST", "/v1/jobs/bulk", h_job_bulk, API_BODY_MAX, false, API_ROLE_WRITE},
    {"POST", "/v1/workflows", h_workflow_submit, API_BATCH_BODY_MAX, false, API_ROLE_WRITE},
    {"GET", "/v1/workflows/{id}", h_workflow_get, API_BODY_MAX, false, API_ROLE_READ},
    {"GET", "/v1/workflows", h_workflow_list, API_BODY_MAX, false, API_ROLE_READ},
    {"POST", "/v1/workflows/{id}/steps", h_workflow_add_steps, API_BATCH_BODY_MAX, false,
     API_ROLE_WRITE},
    {"POST", "/v1/workflows/{id}/cancel", h_workflow_cancel, API_BODY_MAX, false, API_ROLE_WRITE},
    {"POST", "/v1/workflows/{id}/retry", h_workflow_retry, API_BODY_MAX, false, API_ROLE_WRITE},
    /* admin, as DELETE /v1/jobs/{id}: deleting destroys history */
    {"DELETE", "/v1/workflows/{id}", h_workflow_delete, API_BODY_MAX, false, API_ROLE_ADMIN},
    {"GET", "/v1/queues", h_queue_list, API_BODY_MAX, false, API_ROLE_READ},
    {"POST", "/v1/queues/{name}/pause", h_queue_pause, API_BODY_MAX, false, API_ROLE_WRITE},
    {"POST", "/v1/queues/{name}/resume", h_queue_resume, API_BODY_MAX, false, API_ROLE_WRITE},
    {"PUT", "/v1/queues/{name}", h_queue_limits, API_BODY_MAX, false, API_ROLE_ADMIN},
    {"GET", "/v1/queues/{name}/groups", h_queue_groups, API_BODY_MAX, false, API_ROLE_READ},
    {"POST", "/v1/schedules", h_sched_create, API_BODY_MAX, false, API_ROLE_WRITE},
    {"PUT", "/v1/schedules/{name}", h_sched_put, API_BODY_MAX, false, API_ROLE_WRITE},
    {"GET", "/v1/schedules", h_sched_list, API_BODY_MAX, false, API_ROLE_READ},
    {"GET", "/v1/schedules/{name}", h_sched_get, API_BODY_MAX, false, API_ROLE_READ},
    {"DELETE", "/v1/schedules/{name}", h_sched_delete, API_BODY_MAX, false, API_ROLE_ADMIN},
    {"POST", "/v1/schedules/{name}/pause", h_sched_pause, API_BODY_MAX, false, API_ROLE_WRITE},
    {"POST", "/v1/schedules/{name}/resume", h_sched_resume, API_BODY_MAX, false, API_ROLE_WRITE},
    {"POST", "/v1/schedules/{name}/trigger", h_sched_trigger, API_BODY_MAX, false, API_ROLE_WRITE},
    {"GET", "/v1/schedules/{name}/next", h_sched_next, API_BODY_MAX, false, API_ROLE_READ},
    {"GET", "/v1/workers", h_worker_list, API_BODY_MAX, false, API_ROLE_READ},
    {"GET", "/v1/stats", h_stats, API_BODY_MAX, false, API_ROLE_READ},
    {"POST", "/v1/workers", h_worker_announce, API_BODY_MAX, false, API_ROLE_WORKER},
    {"POST", "/v1/workers/{name}/presence", h_worker_presence, API_BODY_MAX, false,
     API_ROLE_WORKER},
    {"POST", "/v1/workers/{name}/withdraw", h_worker_withdraw, API_BODY_MAX, false,
     API_ROLE_WORKER},
    {"POST", "/v1/claim", h_claim, API_BODY_MAX, false, API_ROLE_WORKER},
    {"POST", "/v1/jobs/{id}/heartbeat", h_heartbeat, API_BODY_MAX, false, API_ROLE_WORKER},
    {"POST", "/v1/jobs/{id}/progress", h_progress, API_BODY_MAX, false, API_ROLE_WORKER},
    {"POST", "/v1/jobs/{id}/complete", h_complete, API_BODY_MAX, false, API_ROLE_WORKER},
    {"POST", "/v1/jobs/{id}/fail", h_fail, API_BODY_MAX, false, API_ROLE_WORKER},
    {"POST", "/v1/jobs/{id}/release", h_release, API_BODY_MAX, false, API_ROLE_WORKER},
    /* a log of up to 1 MiB, escaped in JSON: the batch's body limit */
    {"POST", "/v1/jobs/{id}/attempts/{attempt}/log", h_attempt_log_put, API_BATCH_BODY_MAX, false,
     API_ROLE_WORKER},
    {"GET", "/v1/cancels", h_cancels, API_BODY_MAX, false, API_ROLE_WORKER},
    {"GET", "/v1/events", h_events, API_BODY_MAX, false, API_ROLE_READ},
    {"GET", "/v1/whoami", h_whoami, API_BODY_MAX, true, API_ROLE_READ},
    {"GET", "/healthz", h_healthz, API_BODY_MAX, true, API_ROLE_READ},
    {"GET", "/metrics", h_metrics, API_BODY_MAX, false, API_ROLE_READ},
};
const size_t api_n_routes = sizeof api_routes / sizeof api_routes[0];

/* Next segment of *p (after a '/'), as [start, len); false at the end. */
static bool
next_segment(const char **p, const char **seg, size_t *len)
{
    if (**p != '/')
        return false;
    (*p)++;
    *seg = *p;
    while (**p != '\0' && **p != '/')
        (*p)++;
    *len = (size_t)(*p - *seg);
    return true;
}

static bool
parse_id(const char *s, size_t len, int64_t *out)
{
    if (len == 0 || len > 18 || s[0] == '0')
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* True if path matches pattern; fills c's id/name. */
static bool
match(const char *pattern, const char *path, struct api_call *c)
{
    const char *p = pattern, *q = path;
    for (;;) {
        const char *ps, *qs;
        size_t pl, ql;
        bool pm = next_segment(&p, &ps, &pl);
        bool qm = next_segment(&q, &qs, &ql);
        if (!pm || !qm)
            return !pm && !qm && *p == '\0' && *q == '\0';
        if (pl == 4 && memcmp(ps, "{id}", 4) == 0) {
            if (!parse_id(qs, ql, &c->id))
                return false;
        } else if (pl == 9 && memcmp(ps, "{attempt}", 9) == 0) {
            int64_t a = 0;
            if (!parse_id(qs, ql, &a) || a > INT32_MAX)
                return false;
            c->attempt = (int32_t)a;
        } else if (pl == 6 && memcmp(ps, "{name}", 6) == 0) {
            if (ql == 0)
                return false;
            c->name_too_long = ql >= sizeof c->name;
            size_t n = c->name_too_long ? sizeof c->name - 1 : ql;
            memcpy(c->name, qs, n);
            c->name[n] = '\0';
        } else if (pl != ql || memcmp(ps, qs, pl) != 0) {
            return false;
        }
    }
}

static bool
method_is(const char *route_method, const char *method)
{
    if (strcmp(route_method, method) == 0)
        return true;
    /* HEAD is GET without the body (libmicrohttpd drops the body). */
    return strcmp(method, "HEAD") == 0 && strcmp(route_method, "GET") == 0;
}

/* The route for method+path, or NULL; *path_known tells if any method matched. */
static const struct api_route *
find_route(const char *method, const char *path, struct api_call *c, bool *path_known, char *allow,
           size_t allow_len)
{
    *path_known = false;
    if (allow_len)
        allow[0] = '\0';
    const struct api_route *found = NULL;
    /* The first route for method and path ends the search: the Allow list
     * is needed only when none takes the method (405). A scratch call of
     * its own per route, with only what match() fills cleared (the whole
     * struct, name buffer and all, was cleared for every route of every
     * request: POST /v1/jobs's profile showed it). */
    struct api_call tmp;
    for (size_t i = 0; i < api_n_routes && found == NULL; i++) {
        tmp.id = 0;
        tmp.attempt = 0;
        tmp.name[0] = '\0';
        tmp.name_too_long = false;
        if (!match(api_routes[i].pattern, path, &tmp))
            continue;
        *path_known = true;
        if (allow_len) {
            size_t used = strlen(allow);
            snprintf(allow + used, allow_len - used, "%s%s", used ? ", " : "",
                     api_routes[i].method);
        }
        if (found == NULL && method_is(api_routes[i].method, method)) {
            found = &api_routes[i];
            if (c != NULL) {
                c->id = tmp.id;
                c->attempt = tmp.attempt;
                memcpy(c->name, tmp.name, strlen(tmp.name) + 1);
                c->name_too_long = tmp.name_too_long;
            }
        }
    }
    return found;
}

/* The least role a route needs (see struct api_route). */
static enum api_role
route_need(const struct api_route *r)
{
    if (r->need != API_ROLE_NONE)
        return r->need;
    return strcmp(r->method, "GET") == 0 ? API_ROLE_READ : API_ROLE_WRITE;
}

bool
api_require_role(struct api_call *c, enum api_role need, const char *what)
{
    if (c->role >= need)
        return true;
    if (what != NULL)
        api_error(c->resp, 403, "forbidden", NULL,
                  "%s needs a token with role %s or above; "
                  "this token's role is %s",
                  what, api_role_name(need), api_role_name(c->role));
    else
        api_error(c->resp, 403, "forbidden", NULL,
                  "%s %.200s needs a token with role %s or "
                  "above; this token's role is %s",
                  c->req->method, c->req->path, api_role_name(need), api_role_name(c->role));
    return false;
}

size_t
api_body_limit(const char *method, const char *path)
{
    bool known;
    const struct api_route *r = find_route(method, path, NULL, &known, NULL, 0);
    return r ? r->body_limit : API_BODY_MAX;
}

void
api_handle(struct api_ctx *ctx, const struct api_request *req, struct api_response *out)
{
    struct api_call c = {.ctx = ctx, .req = req, .resp = out};
    bool known;
    char allow[64];
    out->status = 500;
    if (api_ui_path(req->path)) {
        api_ui_serve(req, out); /* the page needs no token; its API calls do */
        return;
    }
    const struct api_route *r = find_route(req->method, req->path, &c, &known, allow, sizeof allow);
    c.role = api_auth_role(api_ctx_auth(ctx), req->authorization);
    (void)api_auth_queues(api_ctx_auth(ctx), req->authorization, &c.queues, &c.n_queues);
    if ((r == NULL || !r->public_route) && c.role == API_ROLE_NONE) {
        api_error(out, 401, "unauthorized", NULL,
                  req->authorization ? "the bearer token is not valid"
                                     : "this server requires Authorization: Bearer TOKEN");
        return;
    }
    if (r == NULL && !known) {
        api_error(out, 404, "not_found", NULL, "no route for %s %.200s", req->method, req->path);
        return;
    }
    if (r == NULL) {
        out->allow_header = true;
        snprintf(out->allow, sizeof out->allow, "%s", allow);
        api_error(out, 405, "method_not_allowed", NULL, "%.200s allows %s, not %s", req->path,
                  allow, req->method);
        return;
    }
    if (!r->public_route && !api_require_role(&c, route_need(r), NULL))
        return;
    if (req->body_len > r->body_limit) {
        api_error(out, 413, "too_large", NULL, "the request body is over %zu bytes", r->body_limit);
        return;
    }
    r->fn(&c);
}

/* ---- helpers for handlers ---- */

bool
api_store_get(struct api_call *c, struct store **st)
{
    struct jobd_error err = {0};
    int rc = store_pool_get(c->ctx->pool, st, &err);
    if (rc != JOBD_OK) {
        *st = NULL;
        api_error_from(c->resp, rc == JOBD_E_NOMEM ? rc : JOBD_E_UNAVAILABLE, &err);
        return false;
    }
    return true;
}

void
api_store_put(struct api_call *c, struct store *st, int rc)
{
    store_pool_put(c->ctx->pool, st, rc);
}

json_t *
api_body_object(struct api_call *c, const char *const *allowed)
{
    struct jobd_error err = {0};
    json_t *o = NULL;
    int rc = jobjson_parse_object(c->req->body, c->req->body_len, &o, &err);
    if (rc == JOBD_E_NOMEM) {
        api_error_from(c->resp, rc, &err); /* 500: not the client's fault */
        return NULL;
    }
    if (rc == JOBD_E_TOOBIG) {
        api_error(c->resp, 400, "number_out_of_range", err.field, "%s", err.msg);
        return NULL;
    }
    if (rc != JOBD_OK) {
        api_error(c->resp, 400, "malformed_json", NULL, "%s", err.msg);
        return NULL;
    }
    if (allowed != NULL && jobjson_check_fields(o, allowed, NULL, &err) != JOBD_OK) {
        api_error(c->resp, 400, "unknown_field", err.field, "%s", err.msg);
        json_decref(o);
        return NULL;
    }
    return o;
}

void
api_reply_job(struct api_call *c, int status, const struct job *j)
{
    api_json_take(c->resp, status, jobjson_job_text(j));
}

int64_t
api_now_us(const struct api_call *c)
{
    return c->ctx->clock ? clock_now_us(c->ctx->clock) : clock_real_now_us();
}

const char *
api_query(const struct api_call *c, const char *key)
{
    for (size_t i = 0; i < c->req->n_query; i++)
        if (strcmp(c->req->query[i].key, key) == 0)
            return c->req->query[i].value ? c->req->query[i].value : "";
    return NULL;
}
