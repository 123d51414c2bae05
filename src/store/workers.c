/*
 * workers.c — the backend-independent half of the worker presence of
 * store/operator.h: argument checks and the worker list's memory.
 */
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/job.h"
#include "store/operator.h"

/* The operator vtable of st in *o after checking id (NULL = no id to check). */
static int
presence_ops(struct store *st, const char *id, const struct store_operator_ops **o,
             struct jobd_error *err)
{
    *o = st->ops->oper;
    if (*o == NULL || (*o)->worker_seen == NULL || (id == NULL && (*o)->worker_list == NULL))
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "the %s store keeps no worker presence",
                              st->ops->name);
    if (id != NULL && (*id == '\0' || strlen(id) > JOB_WORKER_ID_MAX))
        return jobd_error_set(err, JOBD_E_INVALID, "id", "a worker id has 1 to %d bytes",
                              JOB_WORKER_ID_MAX);
    return JOBD_OK;
}

int
store_worker_announce(struct store *st, const struct worker_info *w, struct jobd_error *err)
{
    return store_worker_announce_capped(st, w, 0, err);
}

int
store_worker_announce_capped(struct store *st, const struct worker_info *w, int64_t max_workers,
                             struct jobd_error *err)
{
    const struct store_operator_ops *o;
    int rc = presence_ops(st, w->id ? w->id : "", &o, err);
    return rc != JOBD_OK ? rc : o->worker_announce(st, w, max_workers > 0 ? max_workers : 0, err);
}

int
store_worker_seen(struct store *st, const char *id, bool draining, struct jobd_error *err)
{
    const struct store_operator_ops *o;
    int rc = presence_ops(st, id ? id : "", &o, err);
    return rc != JOBD_OK ? rc : o->worker_seen(st, id, draining, err);
}

int
store_worker_withdraw(struct store *st, const char *id, struct jobd_error *err)
{
    const struct store_operator_ops *o;
    int rc = presence_ops(st, id ? id : "", &o, err);
    return rc != JOBD_OK ? rc : o->worker_withdraw(st, id, err);
}

int
store_worker_list(struct store *st, struct worker_list *out, struct jobd_error *err)
{
    static const struct name_page all = {0};
    return store_worker_page(st, &all, out, err);
}

int
store_worker_page(struct store *st, const struct name_page *pg, struct worker_list *out,
                  struct jobd_error *err)
{
    const struct store_operator_ops *o;
    int rc = presence_ops(st, NULL, &o, err);
    if (rc == JOBD_OK && pg->limit < 0)
        rc = jobd_error_set(err, JOBD_E_INVALID, "limit", "limit must not be negative");
    if (rc == JOBD_OK)
        rc = o->worker_list(st, pg, out, err);
    if (rc != JOBD_OK)
        worker_list_fini(out);
    return rc;
}

struct worker_info *
worker_list_push(struct worker_list *l)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 8;
        struct worker_info *nv = realloc(l->v, ncap * sizeof *nv);
        if (nv == NULL)
            return NULL;
        l->v = nv;
        l->cap = ncap;
    }
    struct worker_info *w = &l->v[l->n++];
    memset(w, 0, sizeof *w);
    return w;
}

bool
worker_info_add_running(struct worker_info *w, int64_t id)
{
    int64_t *nv = realloc(w->running, (w->n_running + 1) * sizeof *nv);
    if (nv == NULL)
        return false;
    nv[w->n_running++] = id;
    w->running = nv;
    return true;
}

void
worker_list_fini(struct worker_list *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++) {
        struct worker_info *w = &l->v[i];
        free(w->id);
        free(w->hostname);
        free(w->version);
        free(w->queues);
        free(w->types);
        free(w->running);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}
