/*
 * claimpresence.c — a claim counts as its worker's presence (docs/API.md,
 * Remote workers): a client that only calls POST /v1/claim and reports on
 * its jobs is listed by GET /v1/workers, so `jobd submit`, `jobd queues` and
 * the dashboard do not call its types unhandled.
 *
 * A claim by a worker id the store knows marks it seen (and active: a
 * worker that claims is not draining); by an id it does not know, it
 * announces the worker with what the claim says: its types, its queues, its
 * limit as concurrency, and a presence interval of its lease or its long
 * poll, whichever is longer, at least BARE_HEARTBEAT_MIN_MS. Presence is
 * advice: a failure here never fails the claim, and the --max-workers bound
 * holds as for POST /v1/workers.
 *
 * Claims are the hot path, so one worker id costs at most one presence
 * write per SEEN_EVERY_US: a small direct-mapped table of the ids touched
 * lately (per API context), shared by the server's threads under a mutex.
 * A collision only costs an extra write.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "core/err.h"
#include "core/json.h"
#include "store/operator.h"
#include "util/clock.h"

#define SEEN_SLOTS 1024
#define SEEN_EVERY_US (5 * 1000000LL)
/* Twice SEEN_EVERY_US, so a worker claiming steadily never looks gone. */
#define BARE_HEARTBEAT_MIN_MS 10000

struct seen {
    const void *ctx;
    int64_t at_us;
    char id[JOB_WORKER_ID_MAX + 1];
};

static struct seen seen_slots[SEEN_SLOTS];
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;

/* FNV-1a of the id, mixed with the context's address. */
static size_t
slot_of(const void *ctx, const char *id)
{
    uint64_t h = 14695981039346656037ULL ^ (uint64_t)(uintptr_t)ctx;
    for (const unsigned char *p = (const unsigned char *)id; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (size_t)(h % SEEN_SLOTS);
}

/* True (and noted) if id's presence was not written within SEEN_EVERY_US. */
static bool
presence_due(const void *ctx, const char *id, int64_t now_us)
{
    struct seen *s = &seen_slots[slot_of(ctx, id)];
    pthread_mutex_lock(&seen_mu);
    bool due = s->ctx != ctx || strcmp(s->id, id) != 0 || now_us - s->at_us >= SEEN_EVERY_US;
    if (due) {
        s->ctx = ctx;
        s->at_us = now_us;
        snprintf(s->id, sizeof s->id, "%s", id);
    }
    pthread_mutex_unlock(&seen_mu);
    return due;
}

/* names (n of them; NULL = none) as a JSON array's text, malloc'd; NULL if out of memory. */
static char *
names_text(const char *const *names, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && names != NULL && i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    char *s = json_print(a);
    json_decref(a);
    return s;
}

void
api_claim_presence(struct api_call *c, struct store *st, const struct claim_req *req,
                   int64_t wait_ms)
{
    if (!presence_due(c->ctx, req->worker_id, clock_mono_now_us()))
        return;
    struct jobd_error err = {0};
    if (store_worker_seen(st, req->worker_id, false, &err) != JOBD_E_NOTFOUND)
        return; /* seen, or the store cannot say: presence is advice */
    int64_t hb = req->lease_ms > 0 ? req->lease_ms : JOB_DEFAULT_LEASE_MS;
    hb = hb > wait_ms ? hb : wait_ms;
    struct worker_info w = {
        .id = (char *)req->worker_id,
        .queues = names_text(req->queues, req->n_queues),
        .types = names_text(req->types, req->n_types),
        .concurrency = req->limit,
        .heartbeat_ms = hb > BARE_HEARTBEAT_MIN_MS ? hb : BARE_HEARTBEAT_MIN_MS,
    };
    int rc = w.queues != NULL && w.types != NULL
                 ? store_worker_announce_capped(st, &w, c->ctx->max_workers, &err)
                 : JOBD_E_NOMEM;
    (void)rc; /* refused (--max-workers) or failed: the claim goes on all the same */
    free(w.queues);
    free(w.types);
}
