/*
 * h_presence.c — the presence of a worker that talks to a server (`jobd
 * worker --server`): POST /v1/workers (announce), /v1/workers/{name}/presence
 * (seen, draining) and /v1/workers/{name}/withdraw. A --db worker writes its
 * presence rows itself; a remote worker has no store connection, so these
 * routes write the same rows for it (store_worker_announce, _seen,
 * _withdraw) and GET /v1/workers lists both alike. Role `worker`, as the
 * rest of the worker protocol.
 *
 * What one announce may make the store keep is bounded (docs/API.md,
 * POST /v1/workers): the lengths below, and --max-workers rows in all, so a
 * worker token cannot grow GET /v1/workers without limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/err.h"
#include "store/operator.h"

static const char *const announce_fields[] = {
    "id", "hostname", "pid", "version", "queues", "types", "concurrency", "heartbeat_ms", NULL};

#define WORKER_HOSTNAME_MAX 255 /* bytes: a fully qualified DNS name */
#define WORKER_VERSION_MAX 64   /* bytes */
#define WORKER_NAMES_MAX 256    /* entries of queues, and of types */

/* Each name of the array v checked as a queue or a job type name. */
static int
check_names(json_t *v, const char *key, struct jobd_error *err)
{
    if (json_array_size(v) > WORKER_NAMES_MAX)
        return jobd_error_set(err, JOBD_E_INVALID, key, "%s may list at most %d names", key,
                              WORKER_NAMES_MAX);
    bool queues = strcmp(key, "queues") == 0;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        char f[32];
        snprintf(f, sizeof f, "%s[%zu]", key, i);
        int rc = queues ? job_validate_queue(json_string_value(e), f, err)
                        : job_validate_type(json_string_value(e), f, err);
        if (rc != JOBD_OK)
            return rc;
    }
    return JOBD_OK;
}

/* s (may be NULL) is at most max bytes; else JOBD_E_INVALID naming key. */
static int
check_len(const char *s, size_t max, const char *key, struct jobd_error *err)
{
    if (s != NULL && strlen(s) > max)
        return jobd_error_set(err, JOBD_E_INVALID, key, "%s is longer than %zu bytes", key, max);
    return JOBD_OK;
}

/* A JSON array of strings from o[key], as compact text (malloc'd) in *out. */
static int
names_text(json_t *o, const char *key, char **out, struct jobd_error *err)
{
    json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v))
        v = json_array();
    else
        json_incref(v);
    size_t i;
    json_t *e;
    bool ok = json_is_array(v);
    json_array_foreach(v, i, e)
        ok = ok && json_is_string(e);
    int rc = ok ? check_names(v, key, err) : JOBD_OK;
    *out = ok && rc == JOBD_OK ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!ok)
        return jobd_error_set(err, JOBD_E_INVALID, key, "%s must be an array of names", key);
    if (rc != JOBD_OK)
        return rc;
    return *out ? JOBD_OK : jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
}

/* Reads an announce body into w (strings borrowed from o, queues/types malloc'd). */
static int
announce_body(json_t *o, struct worker_info *w, struct jobd_error *err)
{
    int64_t pid = 0, conc = 1, hb = 0;
    const char *id = NULL, *host = NULL, *version = NULL;
    int rc = jobjson_get_str(o, "id", NULL, true, &id, err);
    if (rc == JOBD_OK && (strlen(id) == 0 || strlen(id) > JOB_WORKER_ID_MAX))
        rc = jobd_error_set(err, JOBD_E_INVALID, "id", "id must be 1 to %d bytes",
                            JOB_WORKER_ID_MAX);
    if (rc == JOBD_OK)
        rc = jobjson_get_str(o, "hostname", NULL, false, &host, err);
    if (rc == JOBD_OK)
        rc = check_len(host, WORKER_HOSTNAME_MAX, "hostname", err);
    if (rc == JOBD_OK)
        rc = jobjson_get_str(o, "version", NULL, false, &version, err);
    if (rc == JOBD_OK)
        rc = check_len(version, WORKER_VERSION_MAX, "version", err);
    if (rc == JOBD_OK)
        rc = jobjson_get_int(o, "pid", NULL, false, 0, INT64_MAX, &pid, err);
    if (rc == JOBD_OK)
        rc = jobjson_get_int(o, "concurrency", NULL, false, 1, 100000, &conc, err);
    if (rc == JOBD_OK)
        rc = jobjson_get_int(o, "heartbeat_ms", NULL, true, 1, 86400000, &hb, err);
    if (rc == JOBD_OK)
        rc = names_text(o, "queues", &w->queues, err);
    if (rc == JOBD_OK)
        rc = names_text(o, "types", &w->types, err);
    w->id = (char *)id;
    w->hostname = (char *)host;
    w->version = (char *)version;
    w->pid = pid;
    w->concurrency = (int32_t)conc;
    w->heartbeat_ms = hb;
    return rc;
}

/* Answers a presence call's result: 200 {}, or the error. */
static void
presence_reply(struct api_call *c, int rc, const struct jobd_error *err)
{
    if (rc == JOBD_E_NOTFOUND)
        api_error(c->resp, 404, "not_found", "id", "no worker '%s': announce it again", c->name);
    else if (rc != JOBD_OK)
        api_error_from(c->resp, rc, err);
    else
        api_json_take(c->resp, 200, jobjson_dump_take(json_object()));
}

void
h_worker_announce(struct api_call *c)
{
    json_t *o = api_body_object(c, announce_fields);
    if (o == NULL)
        return;
    struct worker_info w = {0};
    struct jobd_error err = {0};
    int rc = announce_body(o, &w, &err);
    struct store *st = NULL;
    if (rc == JOBD_OK && api_store_get(c, &st)) {
        rc = store_worker_announce_capped(st, &w, c->ctx->max_workers, &err);
        api_store_put(c, st, rc);
        if (rc == JOBD_E_CONFLICT && strcmp(err.field, "max_workers") == 0)
            api_error(c->resp, 409, "limit_reached", "max_workers", "%s", err.msg);
        else
            presence_reply(c, rc, &err);
    } else if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    }
    free(w.queues);
    free(w.types);
    json_decref(o);
}

void
h_worker_presence(struct api_call *c)
{
    static const char *const fields[] = {"draining", NULL};
    json_t *o = api_body_object(c, fields);
    if (o == NULL)
        return;
    bool draining = false;
    struct jobd_error err = {0};
    int rc = jobjson_get_bool(o, "draining", NULL, &draining, &err);
    json_decref(o);
    struct store *st;
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
    } else if (api_store_get(c, &st)) {
        rc = store_worker_seen(st, c->name, draining, &err);
        api_store_put(c, st, rc);
        presence_reply(c, rc, &err);
    }
}

void
h_worker_withdraw(struct api_call *c)
{
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct jobd_error err = {0};
    int rc = store_worker_withdraw(st, c->name, &err);
    api_store_put(c, st, rc);
    presence_reply(c, rc, &err);
}
