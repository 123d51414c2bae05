/*
 * claimpresence.c — a claim counts as presence (claimpresence.h): a fixed
 * table of the worker ids this server refreshed lately, so that a busy
 * worker costs one presence write per CLAIM_PRESENCE_TOUCH_MS, not one per
 * claim.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/claimpresence.h"
#include "core/err.h"
#include "core/job.h"
#include "store/operator.h"
#include "store/store.h"
#include "util/log.h"

/* Slots of the table: ids beyond it only cost extra refreshes. */
#define CLAIM_PRESENCE_SLOTS 1024

struct seen_slot {
    char id[JOB_WORKER_ID_MAX + 1]; /* "" = empty */
    int64_t touched_us;             /* monotonic */
};

struct claim_presence {
    pthread_mutex_t mu;
    struct seen_slot slot[CLAIM_PRESENCE_SLOTS];
};

struct claim_presence *
claim_presence_new(void)
{
    struct claim_presence *cp = calloc(1, sizeof *cp);
    if (cp != NULL && pthread_mutex_init(&cp->mu, NULL) != 0) {
        free(cp);
        return NULL;
    }
    return cp;
}

void
claim_presence_free(struct claim_presence *cp)
{
    if (cp == NULL)
        return;
    pthread_mutex_destroy(&cp->mu);
    free(cp);
}

/* FNV-1a: the slot of id. */
static size_t
slot_of(const char *id)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % CLAIM_PRESENCE_SLOTS;
}

/*
 * Whether id is due a refresh at now_us; if so, marks it refreshed (a
 * concurrent claim of the same id then skips its own write).
 */
static bool
due_refresh(struct claim_presence *cp, const char *id, int64_t now_us)
{
    struct seen_slot *s = &cp->slot[slot_of(id)];
    pthread_mutex_lock(&cp->mu);
    bool due = strcmp(s->id, id) != 0 || now_us - s->touched_us >= CLAIM_PRESENCE_TOUCH_MS * 1000;
    if (due) {
        snprintf(s->id, sizeof s->id, "%s", id);
        s->touched_us = now_us;
    }
    pthread_mutex_unlock(&cp->mu);
    return due;
}

/* n names as a JSON array's compact text (malloc'd), or NULL. */
static char *
names_json(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            a = NULL;
        }
    char *s = a != NULL ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return s;
}

void
claim_presence_note(struct claim_presence *cp, struct store *st, const struct claim_req *req,
                    int64_t max_workers, int64_t now_us)
{
    if (cp == NULL || req->worker_id == NULL || !due_refresh(cp, req->worker_id, now_us))
        return;
    struct worker_info w = {
        .id = (char *)req->worker_id,
        .queues = req->queues != NULL ? names_json(req->queues, req->n_queues) : strdup("[]"),
        .types = names_json(req->types, req->n_types),
        .concurrency = req->limit > 0 ? req->limit : 1,
        .heartbeat_ms = CLAIM_PRESENCE_INTERVAL_MS,
        .keep_existing = true,
    };
    struct jobd_error err = {0};
    int rc = w.queues != NULL && w.types != NULL
                 ? store_worker_announce_capped(st, &w, max_workers, &err)
                 : jobd_error_set(&err, JOBD_E_NOMEM, NULL, "out of memory");
    if (rc != JOBD_OK) /* tried again CLAIM_PRESENCE_TOUCH_MS later */
        log_at(LOGL_DEBUG, "server", "a claim's presence was not written",
               LF_STR("worker", req->worker_id), LF_STR("error", err.msg));
    free(w.queues);
    free(w.types);
}
