/*
 * presence.c — see presence.h.
 */
#include "worker/presence.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"

/* A JSON array of n strings, malloc'd; "[]" when names is NULL; NULL on OOM. */
static char *
names_json(const char *const *names, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && names != NULL && i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    char *s = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return s;
}

void
presence_init(struct presence *p, const struct worker_config *cfg, const char *id,
              const char *const *types, size_t n_types)
{
    memset(p, 0, sizeof *p);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    p->info.id = strdup(id);
    p->info.hostname = strdup(host);
    p->info.pid = (int64_t)getpid();
    p->info.version = strdup(JOBD_VERSION);
    p->info.queues = names_json((const char *const *)cfg->queues, cfg->n_queues);
    p->info.types = names_json(types, n_types);
    p->info.concurrency = cfg->concurrency;
    p->info.heartbeat_ms = cfg->heartbeat_ms > 0 ? cfg->heartbeat_ms : 20000;
    /* Out of memory now: no presence rather than a half-described worker. */
    p->off =
        !p->info.id || !p->info.hostname || !p->info.version || !p->info.queues || !p->info.types;
}

void
presence_tick(struct presence *p, struct store *st, int64_t now_mono_us, bool draining)
{
    if (p->off || st == NULL)
        return;
    bool due = now_mono_us >= p->next_us || draining != p->draining;
    if (!due)
        return;
    p->next_us = now_mono_us + p->info.heartbeat_ms * 1000;
    p->draining = draining; /* a failure is retried at the next interval, not at once */
    struct jobd_error err = {0};
    int rc = JOBD_E_NOTFOUND;
    if (p->announced)
        rc = store_worker_seen(st, p->info.id, draining, &err);
    if (rc == JOBD_E_NOTFOUND) {
        rc = store_worker_announce(st, &p->info, &err);
        if (rc == JOBD_OK && draining)
            rc = store_worker_seen(st, p->info.id, true, &err);
    }
    if (rc == JOBD_E_INTERNAL)
        p->off = true; /* a store without presence: stop asking */
    if (rc == JOBD_OK)
        p->announced = true;
}

int64_t
presence_next_us(const struct presence *p)
{
    return p->off ? 0 : p->next_us;
}

void
presence_withdraw(struct presence *p, struct store *st)
{
    if (p->off || st == NULL || !p->announced)
        return;
    struct jobd_error err = {0};
    if (store_worker_withdraw(st, p->info.id, &err) == JOBD_OK)
        p->announced = false;
}

void
presence_fini(struct presence *p)
{
    free(p->info.id);
    free(p->info.hostname);
    free(p->info.version);
    free(p->info.queues);
    free(p->info.types);
    memset(p, 0, sizeof *p);
}
