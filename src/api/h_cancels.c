/*
 * h_cancels.c — GET /v1/cancels?jobs=ID,...&wait=DUR (docs/API.md, Hearing
 * of a cancel): which of the listed jobs are running with a cancel
 * requested. A remote worker (jobd worker --server) keeps one open while it
 * holds jobs, so a cancel reaches its handler within a second instead of at
 * its next heartbeat (docs/WORKER.md, Cancellation). With none requested
 * and a wait, the request parks in api/cancelwait.c (no thread, no store
 * connection) until a cancel may have been requested anywhere, then reads
 * its jobs again and answers, whatever it finds: an empty answer only
 * means "ask again".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "api/apierr.h"
#include "api/cancelwait.h"
#include "api/handlers.h"
#include "api/storepool.h"
#include "api/wait.h"
#include "core/err.h"

/* The most job ids one request may list (a worker's concurrency is less). */
#define CANCELS_MAX_JOBS 1000

/* ?jobs= as ids (*ids malloc'd, the caller's); false after answering 400. */
static bool
parse_jobs(struct api_call *c, int64_t **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    const char *v = api_query(c, "jobs");
    if (v == NULL || *v == '\0') {
        api_error(c->resp, 400, "invalid_query", "jobs",
                  "jobs is required: the ids of the running jobs, comma-separated");
        return false;
    }
    int64_t *out = malloc(CANCELS_MAX_JOBS * sizeof *out);
    if (out == NULL) {
        api_error(c->resp, 500, "internal", NULL, "out of memory");
        return false;
    }
    size_t k = 0;
    for (const char *p = v;;) {
        char *end;
        errno = 0;
        long long id = (*p >= '0' && *p <= '9') ? strtoll(p, &end, 10) : 0;
        if (id <= 0 || errno != 0 || (*end != ',' && *end != '\0')) {
            api_error(c->resp, 400, "invalid_query", "jobs",
                      "jobs must be positive job ids separated by commas");
            free(out);
            return false;
        }
        if (k == CANCELS_MAX_JOBS) {
            api_error(c->resp, 400, "invalid_query", "jobs", "jobs may list at most %d ids",
                      CANCELS_MAX_JOBS);
            free(out);
            return false;
        }
        out[k++] = (int64_t)id;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    *ids = out;
    *n = k;
    return true;
}

/*
 * Reads which of ids have a cancel requested into *found (how many) and
 * fills out with the answer when any is, or when answer_empty; JOBD_OK, or
 * the store's error (answered already).
 */
static int
read_answer(struct api_ctx *ctx, const int64_t *ids, size_t n, bool answer_empty,
            struct api_response *out, size_t *found)
{
    *found = 0;
    bool *req = calloc(n, sizeof *req);
    if (req == NULL) {
        api_error(out, 500, "internal", NULL, "out of memory");
        return JOBD_E_NOMEM;
    }
    struct store *st;
    struct jobd_error err = {0};
    int rc = store_pool_get(ctx->pool, &st, &err);
    if (rc == JOBD_OK) {
        rc = store_cancels_requested(st, ids, n, req, &err);
        store_pool_put(ctx->pool, st, rc);
    }
    if (rc != JOBD_OK) {
        free(req);
        api_error_from(out, rc, &err);
        return rc;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (!req[i])
            continue;
        bool dup = false; /* an id listed twice is answered once */
        for (size_t j = 0; j < i && !dup; j++)
            dup = req[j] && ids[j] == ids[i];
        if (!dup) {
            json_array_append_new(arr, json_integer(ids[i]));
            (*found)++;
        }
    }
    free(req);
    if (*found > 0 || answer_empty) {
        json_t *o = json_pack("{s:o}", "jobs", arr);
        api_json_take(out, 200, jobjson_dump_take(o));
    } else {
        json_decref(arr);
    }
    return JOBD_OK;
}

struct cancels_wait {
    struct api_deferred base;
    struct api_ctx *ctx;
    int64_t *ids;
    size_t n;
    uint64_t gen;
    int64_t deadline_mono_us;
    bool parked;
    struct cw_entry e;
};

static void
cw_start(struct api_deferred *d, void (*resume)(void *arg), void *arg)
{
    struct cancels_wait *w = (struct cancels_wait *)d;
    w->e = (struct cw_entry){.deadline_mono_us = w->deadline_mono_us,
                             .resume = resume,
                             .alive = d->client_alive,
                             .arg = arg};
    w->parked = cancelwait_park(w->ctx->cancelwait, &w->e, w->gen);
    if (!w->parked)
        resume(arg); /* full or stopping: answered now with what is there */
}

static void
cw_finish(struct api_deferred *d, struct api_response *out)
{
    struct cancels_wait *w = (struct cancels_wait *)d;
    size_t found;
    (void)read_answer(w->ctx, w->ids, w->n, true, out, &found);
}

static void
cw_free(struct api_deferred *d)
{
    struct cancels_wait *w = (struct cancels_wait *)d;
    free(w->ids);
    free(w);
}

void
h_cancels(struct api_call *c)
{
    int64_t *ids;
    size_t n;
    int64_t wait_ms;
    if (!api_wait_query(c, &wait_ms) || !parse_jobs(c, &ids, &n))
        return;
    bool can_park = wait_ms > 0 && c->ctx->cancelwait != NULL && c->ctx->defer_enqueue;
    uint64_t gen = can_park ? cancelwait_gen(c->ctx->cancelwait) : 0;
    size_t found;
    if (read_answer(c->ctx, ids, n, !can_park, c->resp, &found) != JOBD_OK || found > 0 ||
        !can_park) {
        free(ids);
        return;
    }
    struct cancels_wait *w = calloc(1, sizeof *w);
    if (w == NULL) {
        free(ids);
        api_error(c->resp, 500, "internal", NULL, "out of memory");
        return;
    }
    w->base = (struct api_deferred){cw_start, cw_finish, cw_free, NULL};
    w->ctx = c->ctx;
    w->ids = ids;
    w->n = n;
    w->gen = gen;
    w->deadline_mono_us = clock_mono_now_us() + wait_ms * 1000;
    c->resp->deferred = &w->base;
}
