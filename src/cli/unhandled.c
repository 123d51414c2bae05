/*
 * unhandled.c — after `jobd submit`, a warning on stderr when no live
 * worker handles the job's type on its queue, so a typo in TYPE or a worker
 * that is not running does not look like a slow queue.
 *
 * It asks GET /v1/workers, the same presence data `jobd workers` shows. The
 * check is advice: if the server cannot answer it (an older server, a token
 * that may not read workers), nothing is printed and submit still succeeds.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/http.h"
#include "core/handles.h"

/* True if worker w is active and claims type from queue ([] = every queue). */
static bool
worker_active_handles(const json_t *w, const char *type, const char *queue)
{
    const char *state = json_string_value(json_object_get(w, "state"));
    return state != NULL && strcmp(state, "active") == 0 &&
           worker_handles(json_object_get(w, "types"), json_object_get(w, "queues"), type, queue);
}

void
cli_warn_unhandled(const char *server, const char *type, const char *queue)
{
    struct cli_http_resp r;
    if (cli_http("submit", server, "GET", "/v1/workers", NULL, &r) != CLI_OK)
        return;
    json_t *o = r.status == 200 ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    free(r.body);
    const json_t *workers = json_object_get(o, "workers");
    bool handled = !json_is_array(workers); /* no answer: no warning */
    size_t i;
    const json_t *w;
    json_array_foreach(workers, i, w)
        handled = handled || worker_active_handles(w, type, queue);
    json_decref(o);
    if (!handled)
        fprintf(stderr,
                "jobd submit: warning: no live worker handles type %s on queue %s; "
                "the job will wait until one starts\n",
                type, queue);
}
