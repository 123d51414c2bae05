/*
 * longpoll.c — see longpoll.h.
 *
 * The thread's loop: wait for a reason to look (a wake-up signal, a timer
 * for the soonest deadline or run_at, at most LP_POLL_MS for PostgreSQL's
 * NOTIFY and LP_SAFETY_MS for SQLite or a PostgreSQL store that cannot
 * LISTEN: behind a transaction pooler, NOTIFY comes only through the
 * pool's notify URL, on a connection of the thread's own), then make one pass: each parked
 * claim is tried in arrival order (so the longest waiter gets work first);
 * a claim that got jobs, failed, or ran out of time is answered and its
 * connection resumed. Parked claims are in a list guarded by mu; only this
 * thread removes from it.
 *
 * With no claim parked the thread has nothing to look for, so it does not
 * wait on the shared wake-up signal (which every group commit of POST
 * /v1/jobs sends, one thread wake-up per commit for nothing) but on
 * idle_cv, which longpoll_add and longpoll_stop signal; its timer runs as
 * before, so the NOTIFY connection is still drained.
 */
#include "api/longpoll.h"

#include "api/events.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierr.h"
#include "api/jobjson.h"
#include "api/metrics.h"
#include "core/err.h"
#include "util/clock.h"

/* How often the store's signal is drained while claims wait. A resume,
 * retry or failure in another process must reach a parked claim within
 * 100 ms; draining is a non-blocking read, so 20 ms costs nothing. */
#define LP_POLL_MS 20
#define LP_SAFETY_MS 500     /* a store without a signal: other processes cannot wake us */
#define LP_PG_SAFETY_MS 5000 /* a NOTIFY that went missing */

/*
 * The safety poll of a store without a signal. Test builds take it from
 * $JOBD_TEST_LP_SAFETY_MS: stretched, a wake-up path that is missing costs
 * seconds instead of the half second a loaded machine may cost as well, so
 * a test can tell the two apart (test_api_longpoll_wake.c).
 */
static int64_t
safety_ms(void)
{
#ifdef JOBD_TEST_HOOKS
    const char *v = getenv("JOBD_TEST_LP_SAFETY_MS");
    long ms = v != NULL ? strtol(v, NULL, 10) : 0;
    if (ms > 0 && ms <= 60000)
        return ms;
#endif
    return LP_SAFETY_MS;
}

struct lp_waiter {
    struct claim_req req;
    char *worker_id;
    char **queues;
    char **types;
    int64_t deadline_mono_us;
    int64_t arrived_us;       /* claim_clock */
    struct api_response resp; /* the answer, once done */
    bool done;
    lp_resume_fn resume;
    lp_alive_fn alive;
    void *arg;
    struct lp_waiter *next;
};

struct longpoll {
    pthread_mutex_t mu;
    pthread_cond_t idle_cv; /* CLOCK_MONOTONIC; a claim parked, or a stop */
    struct lp_waiter *head, *tail;
    bool stopping;
    pthread_t thread;
    struct store_pool *pool;
    struct api_metrics *metrics;
    struct wakeup *wake;
    struct wakeup own_wake; /* used when no wake was given */
    struct store *st;
    struct store *nst; /* on the pool's notify URL, when it has one */
    int64_t safety_ms; /* LP_SAFETY_MS, or the test build's */
};

static char **
copy_strs(const char *const *v, size_t n, int *bad)
{
    if (v == NULL)
        return NULL;
    char **c = calloc(n ? n : 1, sizeof *c);
    if (c == NULL) {
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if ((c[i] = strdup(v[i])) == NULL)
            *bad = 1;
    return c;
}

static void
free_strs(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

struct lp_waiter *
lp_waiter_new(const struct claim_req *req, int wait_ms, int64_t arrived_us)
{
    struct lp_waiter *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    int bad = 0;
    w->req = *req;
    w->worker_id = strdup(req->worker_id);
    w->queues = copy_strs(req->queues, req->n_queues, &bad);
    w->types = copy_strs(req->types, req->n_types, &bad);
    w->req.worker_id = w->worker_id;
    w->req.queues = (const char *const *)w->queues;
    w->req.types = (const char *const *)w->types;
    w->deadline_mono_us = clock_mono_now_us() + (int64_t)wait_ms * 1000;
    w->arrived_us = arrived_us;
    if (bad || w->worker_id == NULL) {
        lp_waiter_free(w);
        return NULL;
    }
    return w;
}

void
lp_waiter_free(struct lp_waiter *w)
{
    if (w == NULL)
        return;
    free(w->worker_id);
    free_strs(w->queues, w->req.n_queues);
    free_strs(w->types, w->req.n_types);
    api_response_fini(&w->resp);
    free(w);
}

bool
api_response_note_claimed(struct api_response *r, const struct job_list *l)
{
    free(r->claimed);
    r->claimed = NULL;
    r->n_claimed = 0;
    if (l->n == 0)
        return true;
    r->claimed = calloc(l->n, sizeof *r->claimed);
    if (r->claimed == NULL)
        return false;
    for (size_t i = 0; i < l->n; i++)
        r->claimed[i] = (struct api_claimed){l->v[i].id, l->v[i].attempt};
    r->n_claimed = l->n;
    return true;
}

void
lp_waiter_take_response(struct lp_waiter *w, struct api_response *out)
{
    free(out->claimed);
    out->claimed = w->resp.claimed;
    out->n_claimed = w->resp.n_claimed;
    w->resp.claimed = NULL;
    w->resp.n_claimed = 0;
    free(out->body);
    out->status = w->resp.status;
    out->content_type = w->resp.content_type;
    out->body = w->resp.body;
    out->body_len = w->resp.body_len;
    w->resp.body = NULL;
    w->resp.body_len = 0;
}

char *
longpoll_claim_body(const struct job_list *l, const struct claim_clock *clk,
                    struct api_metrics *metrics)
{
    json_t *arr = json_array();
    json_t *o = arr ? json_pack("{s:o}", "jobs", arr) : NULL;
    if (o == NULL)
        return NULL;
    /* Rounded down, both: the sum a client adds is then never too long. */
    int64_t now = clock_mono_now_us(), left_ms = 0;
    if (clk != NULL) {
        left_ms = (clk->lease_ms * 1000 - (now - clk->claimed_us)) / 1000;
        if (json_object_set_new(o, "held_ms", json_integer((now - clk->arrived_us) / 1000)) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    for (size_t i = 0; i < l->n; i++) {
        api_metrics_claimed(metrics, &l->v[i]);
        json_t *j = jobjson_claimed(&l->v[i]);
        /* j is stolen by the append even when the set failed: no leak */
        bool bad = j == NULL ||
                   (clk != NULL && json_object_set_new(j, "lease_remaining_ms",
                                                       json_integer(left_ms > 0 ? left_ms : 0)));
        if (!bad && clk != NULL && clk->tokens != NULL)
            bad = json_object_set_new(j, "lease_token", json_string(clk->tokens[i])) != 0;
        if (json_array_append_new(arr, j) != 0 || bad) {
            json_decref(o);
            return NULL;
        }
    }
    return jobjson_dump_take(o);
}

void
lp_waiter_finish_empty(struct lp_waiter *w)
{
    struct job_list none = {0};
    api_json_take(&w->resp, 200, longpoll_claim_body(&none, NULL, NULL));
    w->done = true;
}

static void listen_early(struct longpoll *lp);

/* Tries w's claim once; true if w is answered (jobs, error, or time is up). */
static bool
try_claim(struct longpoll *lp, struct lp_waiter *w, int64_t now_mono, int64_t *next_due_us)
{
    if (w->alive != NULL && !w->alive(w->arg)) {
        lp_waiter_finish_empty(w); /* the client has gone: claim nothing for it */
        return true;
    }
    struct jobd_error err = {0};
    int rc = JOBD_OK;
    if (lp->st == NULL && (rc = store_pool_get(lp->pool, &lp->st, &err)) == JOBD_OK)
        listen_early(lp);
    struct job_list l = {0};
    int64_t held = 0;
    w->req.held_until_us = &held;
    struct claim_clock clk = {.arrived_us = w->arrived_us,
                              .claimed_us = clock_mono_now_us(),
                              .lease_ms =
                                  w->req.lease_ms > 0 ? w->req.lease_ms : JOB_DEFAULT_LEASE_MS};
    if (rc == JOBD_OK)
        rc = store_claim(lp->st, &w->req, &l, &err);
    w->req.held_until_us = NULL;
    lease_token *tokens = NULL;
    if (rc == JOBD_OK && l.n > 0 && (rc = api_lease_tokens(lp->st, &l, &tokens, &err)) != JOBD_OK)
        job_list_fini(&l);
    clk.tokens = tokens;
    if (rc == JOBD_OK && l.n > 0) {
        api_json_take(&w->resp, 200, longpoll_claim_body(&l, &clk, lp->metrics));
        free(tokens);
        (void)api_response_note_claimed(&w->resp, &l); /* no note: a lease runs out instead */
        job_list_fini(&l);
        return true;
    }
    job_list_fini(&l);
    if (rc != JOBD_OK) {
        api_error_from(&w->resp, rc, &err);
        if (rc == JOBD_E_UNAVAILABLE && lp->st) {
            store_pool_put(lp->pool, lp->st, rc);
            lp->st = NULL;
        }
        return true;
    }
    if (now_mono >= w->deadline_mono_us) {
        lp_waiter_finish_empty(w);
        return true;
    }
    int64_t run_at = 0;
    /* A job a queue limit held back is due already: wake when the limit lets go. */
    if (store_next_run_at(lp->st, &w->req, &run_at, &err) == JOBD_OK &&
        (run_at = store_claim_timer(run_at, held, clock_real_now_us())) > 0 &&
        (*next_due_us == 0 || run_at < *next_due_us))
        *next_due_us = run_at;
    return false;
}

/* One look at every parked claim; answers and unlinks the finished ones. */
static void
pass(struct longpoll *lp, bool stopping, bool claim, int64_t *next_due_us, int64_t *next_deadline)
{
    int64_t now = clock_mono_now_us();
    pthread_mutex_lock(&lp->mu);
    struct lp_waiter *w = lp->head;
    pthread_mutex_unlock(&lp->mu);
    struct lp_waiter *prev = NULL;
    if (claim)
        *next_due_us = 0; /* recomputed from what the claims see; else kept */
    *next_deadline = 0;
    while (w != NULL) {
        bool finished;
        if (stopping) {
            lp_waiter_finish_empty(w);
            finished = true;
        } else if (claim) {
            finished = try_claim(lp, w, now, next_due_us);
        } else if (now >= w->deadline_mono_us) {
            lp_waiter_finish_empty(w);
            finished = true;
        } else {
            finished = false;
        }
        pthread_mutex_lock(&lp->mu);
        struct lp_waiter *next = w->next;
        if (finished) {
            if (prev)
                prev->next = next;
            else
                lp->head = next;
            if (lp->tail == w)
                lp->tail = prev;
        } else {
            prev = w;
            if (*next_deadline == 0 || w->deadline_mono_us < *next_deadline)
                *next_deadline = w->deadline_mono_us;
        }
        pthread_mutex_unlock(&lp->mu);
        if (finished) {
            api_metrics_waiting(lp->metrics, -1);
            w->done = true;
            w->resume(w->arg); /* after this, w belongs to the HTTP layer again */
        }
        w = next;
    }
}

/*
 * The store whose store_wait tells of new jobs, or NULL when there is none
 * (SQLite, a pooled PostgreSQL without a notify URL, no connection yet):
 * then the thread polls every LP_SAFETY_MS.
 */
static struct store *
notify_store(struct longpoll *lp)
{
    const char *url = store_pool_notify_url(lp->pool);
    if (url != NULL) {
        struct jobd_error err = {0};
        if (lp->nst == NULL && store_open(url, &lp->nst, &err) != JOBD_OK)
            lp->nst = NULL;
        return lp->nst;
    }
    if (lp->st != NULL && store_caps(lp->st)->push_wakeups && store_wait_ready(lp->st))
        return lp->st;
    return NULL;
}

/* Whether a NOTIFY came (the connection is dropped on an error, to reopen). */
static bool
notified(struct longpoll *lp, struct store *ns)
{
    struct jobd_error err = {0};
    int r = store_wait(ns, 0, &err);
    if (r < 0 && ns == lp->nst) {
        store_close(lp->nst);
        lp->nst = NULL;
    }
    return r > 0;
}

/*
 * On a connection just taken, before its first claim: LISTEN where NOTIFY
 * is the signal (store_wait issues it on its first call). Left to the first
 * wait after the pass, it missed what another process committed between the
 * claim and that wait, and the first claim parked on a fresh connection (a
 * server just started) waited for LP_PG_SAFETY_MS instead of LP_POLL_MS.
 * What this drains is older than the claim that follows.
 */
static void
listen_early(struct longpoll *lp)
{
    struct store *ns = notify_store(lp);
    if (ns != NULL)
        (void)notified(lp, ns);
}

/*
 * With nothing parked: waits (at most ms) until a claim is parked or a stop;
 * 1 if so, else 0 (as wakeup_wait answers).
 */
static int
idle_wait(struct longpoll *lp, int ms)
{
    struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, (int64_t)ms * 1000);
    pthread_mutex_lock(&lp->mu);
    int rc = 0;
    while (lp->head == NULL && !lp->stopping && rc == 0)
        rc = pthread_cond_timedwait(&lp->idle_cv, &lp->mu, &ts);
    int woken = lp->head != NULL || lp->stopping;
    pthread_mutex_unlock(&lp->mu);
    return woken;
}

static void *
longpoll_main(void *arg)
{
    struct longpoll *lp = arg;
    uint64_t seen = 0;
    bool claim = true;
    int64_t last_claim_mono = 0, next_due = 0;
    for (;;) {
        pthread_mutex_lock(&lp->mu);
        bool stopping = lp->stopping, empty = lp->head == NULL;
        pthread_mutex_unlock(&lp->mu);
        int64_t next_deadline = 0;
        if (empty)
            next_due = 0;
        if (!empty || stopping) {
            pass(lp, stopping, claim, &next_due, &next_deadline);
            if (claim)
                last_claim_mono = clock_mono_now_us();
        }
        if (stopping)
            break;
        /* How long to sleep: until the soonest deadline or run_at, or the poll period. */
        struct store *ns = notify_store(lp);
        bool pg = ns != NULL;
        int64_t now_mono = clock_mono_now_us();
        int64_t sleep_us = (pg ? LP_POLL_MS : lp->safety_ms) * 1000;
        bool idle = next_deadline == 0;
        if (idle)
            sleep_us = 1000 * 1000;
        if (next_deadline && next_deadline - now_mono < sleep_us)
            sleep_us = next_deadline - now_mono;
        if (next_due) {
            int64_t due_in = next_due - clock_real_now_us();
            if (due_in < sleep_us)
                sleep_us = due_in;
        }
        if (sleep_us < 0)
            sleep_us = 0;
        int ms = (int)((sleep_us + 999) / 1000);
        int signalled = empty ? idle_wait(lp, ms) : wakeup_wait(lp->wake, &seen, ms);
        claim = signalled != 0;
        if (!claim && next_due && clock_real_now_us() >= next_due)
            claim = true;
        if (!claim && pg)
            claim = notified(lp, ns);
        if (!claim && !pg && clock_mono_now_us() - last_claim_mono >= lp->safety_ms * 1000)
            claim = true;
        if (!claim && pg && clock_mono_now_us() - last_claim_mono >= LP_PG_SAFETY_MS * 1000)
            claim = true; /* a missed notification costs at most a few seconds */
    }
    return NULL;
}

int
longpoll_start(struct store_pool *pool, struct wakeup *wake, struct api_metrics *metrics,
               struct longpoll **out, struct jobd_error *err)
{
    *out = NULL;
    struct longpoll *lp = calloc(1, sizeof *lp);
    if (lp == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    lp->pool = pool;
    lp->metrics = metrics;
    lp->safety_ms = safety_ms();
    if (wakeup_init(&lp->own_wake) != 0) {
        free(lp);
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot create a wake-up signal");
    }
    lp->wake = wake ? wake : &lp->own_wake;
    pthread_mutex_init(&lp->mu, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* idle_wait's deadline */
    pthread_cond_init(&lp->idle_cv, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&lp->thread, NULL, longpoll_main, lp) != 0) {
        pthread_cond_destroy(&lp->idle_cv);
        pthread_mutex_destroy(&lp->mu);
        wakeup_fini(&lp->own_wake);
        free(lp);
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the long-poll thread");
    }
    *out = lp;
    return JOBD_OK;
}

void
longpoll_add(struct longpoll *lp, struct lp_waiter *w, lp_resume_fn resume, lp_alive_fn alive,
             void *arg)
{
    w->resume = resume;
    w->alive = alive;
    w->arg = arg;
    w->next = NULL;
    pthread_mutex_lock(&lp->mu);
    if (lp->stopping) {
        pthread_mutex_unlock(&lp->mu);
        lp_waiter_finish_empty(w);
        resume(arg);
        return;
    }
    if (lp->tail)
        lp->tail->next = w;
    else
        lp->head = w;
    lp->tail = w;
    pthread_cond_signal(&lp->idle_cv);
    pthread_mutex_unlock(&lp->mu);
    api_metrics_waiting(lp->metrics, 1);
    /* Look again now: work may have arrived between the first claim and parking. */
    wakeup_signal(lp->wake);
}

void
longpoll_stop(struct longpoll *lp)
{
    if (lp == NULL)
        return;
    pthread_mutex_lock(&lp->mu);
    bool was = lp->stopping;
    lp->stopping = true;
    pthread_cond_signal(&lp->idle_cv);
    pthread_mutex_unlock(&lp->mu);
    if (was)
        return;
    wakeup_signal(lp->wake);
    pthread_join(lp->thread, NULL);
    if (lp->st != NULL)
        store_pool_put(lp->pool, lp->st, JOBD_OK);
    lp->st = NULL;
    store_close(lp->nst);
    lp->nst = NULL;
}

void
longpoll_free(struct longpoll *lp)
{
    if (lp == NULL)
        return;
    longpoll_stop(lp);
    pthread_cond_destroy(&lp->idle_cv);
    pthread_mutex_destroy(&lp->mu);
    wakeup_fini(&lp->own_wake);
    free(lp);
}

void
api_response_fini(struct api_response *r)
{
    if (r == NULL)
        return;
    if (!r->body_static)
        free(r->body);
    r->body = NULL;
    r->body_static = false;
    r->body_len = 0;
    lp_waiter_free(r->wait);
    r->wait = NULL;
    free(r->claimed);
    r->claimed = NULL;
    r->n_claimed = 0;
    if (r->deferred != NULL)
        r->deferred->free(r->deferred);
    r->deferred = NULL;
    events_client_free(r->events);
    r->events = NULL;
}
