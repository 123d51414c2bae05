/*
 * unhandled.c — the "unhandled_types" of the queue objects of GET
 * /v1/queues: per queue, the types of its pending jobs that no live worker
 * claims, so "nothing happens" shows its cause (no worker for that type, or
 * none for that queue) instead of looking like a slow queue.
 *
 * Two cheap reads: the worker presence (GET /v1/workers' data) and the
 * distinct (queue, type) pairs of pending jobs, which the store finds by a
 * skip scan over an index, one seek per pair, whatever the backlog. A
 * worker counts when it is active: a draining one claims nothing more.
 */
#include <jansson.h>
#include <string.h>

#include "api/handlers.h"
#include "core/err.h"
#include "core/handles.h"
#include "store/operator.h"

/* The active workers' types and queues, parsed once: an array of [types, queues]. */
static json_t *
active_workers(const struct worker_list *wl)
{
    json_t *out = json_array();
    for (size_t i = 0; out != NULL && i < wl->n; i++) {
        const struct worker_info *w = &wl->v[i];
        if (w->gone || w->draining)
            continue;
        json_t *types = json_loads(w->types ? w->types : "[]", 0, NULL);
        json_t *queues = json_loads(w->queues ? w->queues : "[]", 0, NULL);
        if (json_is_array(types) && json_is_array(queues))
            json_array_append_new(out, json_pack("[o, o]", types, queues));
        else {
            json_decref(types);
            json_decref(queues);
        }
    }
    return out;
}

/* True if some worker of ws claims type t from queue q (no queues = every queue). */
static bool
handled(const json_t *ws, const char *q, const char *t)
{
    size_t i;
    const json_t *w;
    json_array_foreach(ws, i, w) {
        if (worker_handles(json_array_get(w, 0), json_array_get(w, 1), t, q))
            return true;
    }
    return false;
}

/* The queue object of arr named q, or NULL. */
static json_t *
queue_named(json_t *arr, const char *q)
{
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        const char *name = json_string_value(json_object_get(o, "name"));
        if (name != NULL && strcmp(name, q) == 0)
            return o;
    }
    return NULL;
}

int
api_queues_add_unhandled(struct store *st, json_t *queues, struct jobd_error *err)
{
    struct worker_list wl = {0};
    struct queue_type_list pairs = {0};
    int rc = store_worker_list(st, &wl, err);
    if (rc == JOBD_OK)
        rc = store_pending_queue_types(st, &pairs, err);
    json_t *ws = rc == JOBD_OK ? active_workers(&wl) : NULL;
    if (rc == JOBD_OK && ws == NULL)
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    size_t i;
    json_t *o;
    json_array_foreach(queues, i, o) {
        if (rc == JOBD_OK && json_object_set_new(o, "unhandled_types", json_array()) != 0)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    for (size_t k = 0; rc == JOBD_OK && k < pairs.n; k++) {
        const struct queue_type *p = &pairs.v[k];
        json_t *q = queue_named(queues, p->queue);
        if (q != NULL && !handled(ws, p->queue, p->type) &&
            json_array_append_new(json_object_get(q, "unhandled_types"), json_string(p->type)) != 0)
            rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    json_decref(ws);
    queue_types_fini(&pairs);
    worker_list_fini(&wl);
    return rc;
}
