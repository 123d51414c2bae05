/*
 * remote/presence.c — worker presence (store/operator.h) for a worker that
 * talks to an API server (jobd worker --server): POST /v1/workers,
 * /v1/workers/{id}/presence and /v1/workers/{id}/withdraw, which write the
 * same rows a --db worker writes itself.
 *
 * Why a thread: the worker's loop calls the presence operations between
 * claims and reports, and a presence call that waits on a slow or held
 * server would hold up heartbeats and the fence with it (a previous,
 * synchronous version did exactly that). So the operations only record
 * what the server should be told and wake this store's presence thread,
 * which says it over a connection of its own. The loop learns nothing of
 * the outcome, and needs nothing: presence is advice for operators. The
 * one thing the thread decides itself is to announce again when the server
 * answers 404 to a refresh (it forgot the worker, or never heard of it).
 *
 * And it refreshes on its own at the worker's heartbeat interval when the
 * loop said nothing for that long: an idle remote worker's loop sits in
 * long polls of its claims, which may outlast three presence intervals.
 *
 * store_worker_seen answers JOBD_E_NOTFOUND only while this store has not
 * been given an announce (a fresh store after a reconnect), so
 * worker/presence.c announces on it as it would on a database.
 * store_worker_withdraw waits a short while for the withdraw to be sent:
 * the worker is stopping and would otherwise exit before it is.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "store/operator.h"
#include "store/remote/internal.h"

/* A presence request never takes longer than this... */
#define RP_TIMEOUT_MS 5000L
/* ...and a withdraw at stop is waited for this long at most. */
#define RP_WITHDRAW_WAIT_MS 3000

struct remote_presence {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* work for the thread, or quit */
    pthread_cond_t done; /* a withdraw was sent (or given up) */
    atomic_bool quit;    /* also aborts the request under way */
    char *url;
    /* guarded by mu */
    json_t *announce;    /* the announce body; NULL after a withdraw */
    char *id;            /* the announced worker's id */
    int64_t interval_ms; /* its presence interval */
    int64_t last_us;     /* monotonic time of the last round */
    bool want_announce, want_seen, draining, want_withdraw;
    unsigned withdraws; /* withdraws sent so far */
    /* the thread's own */
    struct remote_conn conn; /* conn.http.curl NULL until needed and after an outage */
};

/* What one round of the thread says, taken from the shared state under mu. */
struct rp_round {
    json_t *announce; /* a copy, or NULL */
    char path[600];   /* /v1/workers/ID/ (the id escaped) */
    bool do_announce, seen, draining, withdraw;
};

/* POSTs body (stolen) to p->url + path over the thread's connection. */
static int
rp_post(struct remote_presence *p, const char *path, json_t *body)
{
    struct jobd_error err = {0};
    if (p->conn.http.curl == NULL) {
        if (remote_conn_init(&p->conn, p->url, RP_TIMEOUT_MS, &err) != JOBD_OK) {
            remote_conn_fini(&p->conn);
            json_decref(body);
            return JOBD_E_UNAVAILABLE;
        }
        httpc_interruptible(&p->conn.http, &p->quit, NULL);
    }
    int rc = remote_conn_call(&p->conn, path, body, NULL, &err);
    if (store_error_is_outage(rc))
        remote_conn_fini(&p->conn); /* a fresh connection next round */
    return rc;
}

static int
rp_post_seen(struct remote_presence *p, const struct rp_round *r)
{
    char path[640];
    snprintf(path, sizeof path, "%spresence", r->path);
    return rp_post(p, path, json_pack("{s:b}", "draining", r->draining));
}

static void
rp_say(struct remote_presence *p, struct rp_round *r)
{
    if (r->withdraw) {
        char path[640];
        snprintf(path, sizeof path, "%swithdraw", r->path);
        rp_post(p, path, json_object());
        return;
    }
    int rc = JOBD_E_NOTFOUND;
    if (r->seen && !r->do_announce)
        rc = rp_post_seen(p, r);
    if (rc == JOBD_E_NOTFOUND && r->announce != NULL) {
        rc = rp_post(p, "/v1/workers", json_incref(r->announce));
        if (rc == JOBD_OK && r->draining)
            rp_post_seen(p, r);
    }
}

/* Takes the next round from the shared state (mu held); false if there is none. */
static bool
rp_take(struct remote_presence *p, struct rp_round *r)
{
    memset(r, 0, sizeof *r);
    if (!p->want_announce && !p->want_seen && !p->want_withdraw)
        return false;
    r->do_announce = p->want_announce;
    r->seen = p->want_seen;
    r->draining = p->draining;
    r->withdraw = p->want_withdraw;
    r->announce = json_incref(p->announce);
    char *e = p->id ? httpc_escape(p->id) : NULL;
    if (e != NULL && strlen(e) < sizeof r->path - 32)
        snprintf(r->path, sizeof r->path, "/v1/workers/%s/", e);
    else
        r->seen = r->withdraw = false; /* an id we cannot put in a path: announce only */
    free(e);
    p->want_announce = p->want_seen = p->want_withdraw = false;
    return true;
}

static int64_t
mono_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Waits (mu held) for work, or until a refresh of an announced worker is due. */
static void
rp_idle(struct remote_presence *p)
{
    if (p->announce == NULL || p->interval_ms <= 0) {
        pthread_cond_wait(&p->wake, &p->mu);
        return;
    }
    int64_t due = p->last_us + p->interval_ms * 1000;
    if (mono_us() >= due) {
        p->want_seen = true;
        return;
    }
    struct timespec until = {.tv_sec = (time_t)(due / 1000000),
                             .tv_nsec = (long)(due % 1000000) * 1000};
    pthread_cond_timedwait(&p->wake, &p->mu, &until);
}

static void *
rp_main(void *arg)
{
    struct remote_presence *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!atomic_load(&p->quit)) {
        struct rp_round r;
        if (!rp_take(p, &r)) {
            rp_idle(p);
            continue;
        }
        p->last_us = mono_us();
        pthread_mutex_unlock(&p->mu);
        rp_say(p, &r);
        json_decref(r.announce);
        pthread_mutex_lock(&p->mu);
        if (r.withdraw) {
            json_decref(p->announce); /* gone: no refresh, no announce from here on */
            p->announce = NULL;
            p->withdraws++;
            pthread_cond_broadcast(&p->done);
        }
    }
    pthread_mutex_unlock(&p->mu);
    remote_conn_fini(&p->conn);
    return NULL;
}

void
remote_presence_stop(struct remote_presence *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->quit, true);
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    json_decref(p->announce);
    free(p->id);
    free(p->url);
    free(p);
}

/* The store's presence thread into *out, started now if it is not yet. */
static int
rp_get(struct store *st, struct remote_presence **out, struct jobd_error *err)
{
    struct remote_presence **slot = &((struct remote_store *)st)->presence;
    if ((*out = *slot) != NULL)
        return JOBD_OK;
    struct remote_presence *p = calloc(1, sizeof *p);
    if (p == NULL || (p->url = strdup(((struct remote_store *)st)->conn.http.base)) == NULL) {
        free(p);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca; /* rp_idle's deadline is monotonic */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->quit, false);
    if (pthread_create(&p->thread, NULL, rp_main, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->wake);
        pthread_cond_destroy(&p->done);
        free(p->url);
        free(p);
        /* JOBD_E_INTERNAL: worker/presence.c stops asking this store */
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the presence thread");
    }
    *slot = *out = p;
    return JOBD_OK;
}

static json_t *
announce_body(const struct worker_info *w)
{
    json_t *queues = json_loads(w->queues ? w->queues : "[]", 0, NULL);
    json_t *types = json_loads(w->types ? w->types : "[]", 0, NULL);
    return json_pack("{s:s, s:s, s:I, s:s, s:o, s:o, s:i, s:I}", "id", w->id, "hostname",
                     w->hostname ? w->hostname : "", "pid", (json_int_t)w->pid, "version",
                     w->version ? w->version : "", "queues", queues ? queues : json_array(),
                     "types", types ? types : json_array(), "concurrency", (int)w->concurrency,
                     "heartbeat_ms", (json_int_t)w->heartbeat_ms);
}

static int
rp_announce(struct store *st, const struct worker_info *w, int64_t max_workers,
            struct jobd_error *err)
{
    (void)max_workers; /* the server applies its own (--max-workers) */
    struct remote_presence *p;
    int rc = rp_get(st, &p, err);
    if (rc != JOBD_OK)
        return rc;
    json_t *body = announce_body(w);
    char *id = strdup(w->id);
    if (body == NULL || id == NULL) {
        json_decref(body);
        free(id);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    pthread_mutex_lock(&p->mu);
    json_decref(p->announce);
    free(p->id);
    p->announce = body;
    p->id = id;
    p->interval_ms = w->heartbeat_ms;
    p->want_announce = true;
    p->want_seen = p->draining = false;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->mu);
    return JOBD_OK;
}

static int
rp_seen(struct store *st, const char *id, bool draining, struct jobd_error *err)
{
    struct remote_presence *p = ((struct remote_store *)st)->presence;
    int rc = JOBD_OK;
    if (p != NULL)
        pthread_mutex_lock(&p->mu);
    if (p == NULL || p->id == NULL || strcmp(p->id, id) != 0) {
        rc = jobd_error_set(err, JOBD_E_NOTFOUND, "id", "worker %s was not announced here", id);
    } else {
        p->want_seen = true;
        p->draining = draining;
        pthread_cond_signal(&p->wake);
    }
    if (p != NULL)
        pthread_mutex_unlock(&p->mu);
    return rc;
}

static int
rp_withdraw(struct store *st, const char *id, struct jobd_error *err)
{
    (void)err;
    struct remote_presence *p = ((struct remote_store *)st)->presence;
    if (p == NULL)
        return JOBD_OK;
    pthread_mutex_lock(&p->mu);
    if (p->id != NULL && strcmp(p->id, id) == 0) {
        p->want_withdraw = true;
        p->want_announce = p->want_seen = false;
        pthread_cond_signal(&p->wake);
        unsigned before = p->withdraws;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += RP_WITHDRAW_WAIT_MS / 1000;
        while (p->withdraws == before && pthread_cond_timedwait(&p->done, &p->mu, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&p->mu);
    return JOBD_OK;
}

const struct store_operator_ops remote_operator_ops = {
    .worker_announce = rp_announce,
    .worker_seen = rp_seen,
    .worker_withdraw = rp_withdraw,
};
