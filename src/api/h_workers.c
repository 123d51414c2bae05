/*
 * h_workers.c — GET /v1/workers: every worker that announced itself, with
 * its state (active, draining, gone) and the ids of the jobs it holds, a
 * page at a time (paging.c).
 */
#include <stdlib.h>

#include "api/apierr.h"
#include "api/handlers.h"
#include "core/err.h"
#include "store/operator.h"

/* A stored JSON array (queues, types) as a value; an unreadable one as []. */
static json_t *
names(const char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_array(v)) {
        json_decref(v);
        v = json_array();
    }
    return v;
}

static json_t *
worker_json(const struct worker_info *w)
{
    json_t *running = json_array();
    for (size_t i = 0; running && i < w->n_running; i++)
        json_array_append_new(running, json_integer(w->running[i]));
    const char *state = w->gone ? "gone" : w->draining ? "draining" : "active";
    return json_pack("{s:s, s:s, s:I, s:s, s:o, s:o, s:i, s:o, s:o, s:s, s:o}", "id", w->id,
                     "hostname", w->hostname ? w->hostname : "", "pid", (json_int_t)w->pid,
                     "version", w->version ? w->version : "", "queues", names(w->queues), "types",
                     names(w->types), "concurrency", (int)w->concurrency, "started_at",
                     jobjson_time(w->started_at_us), "last_seen_at",
                     jobjson_time(w->last_seen_at_us), "state", state, "running", running);
}

/* GET /v1/workers?limit=&after=: one page, by id (docs/API.md). */
void
h_worker_list(struct api_call *c)
{
    struct name_page pg;
    int limit;
    if (!api_page_query(c, false, &pg, &limit))
        return;
    struct store *st;
    if (!api_store_get(c, &st))
        return;
    struct worker_list l = {0};
    struct jobd_error err = {0};
    int rc = store_worker_page(st, &pg, &l, &err);
    api_store_put(c, st, rc);
    if (rc != JOBD_OK) {
        api_error_from(c->resp, rc, &err);
        return;
    }
    size_t n = l.n < (size_t)limit ? l.n : (size_t)limit;
    json_t *arr = json_array();
    json_t *o = arr ? json_pack("{s:o, s:o}", "workers", arr, "next",
                                api_page_next(l.n, limit, n ? l.v[n - 1].id : NULL))
                    : NULL;
    for (size_t i = 0; o && i < n; i++)
        if (json_array_append_new(arr, worker_json(&l.v[i])) != 0) {
            json_decref(o);
            o = NULL;
        }
    worker_list_fini(&l);
    api_json_take(c->resp, 200, jobjson_dump_take(o));
}
