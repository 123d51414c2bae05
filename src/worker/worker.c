/*
 * worker.c — a worker (worker.h): start-up, shutdown, the helper threads and
 * the counters. The loop itself is worker_loop.c and its parts (worker_int.h).
 *
 * Threads and who owns what:
 *   loop      owns the store connection used for claim, heartbeat and the
 *             reports, all slots, the completer and the pending failures.
 *             It writes every job state but successes on PostgreSQL, which
 *             the flusher writes on its own connection.
 *   runners   exec (one reactor thread for all child processes), http (one
 *             curl multi thread), C (a pool, one thread per slot). They run
 *             handlers and deliver a struct run_result into the worker's
 *             result queue, then poke the loop's wake-up.
 *   flusher   PostgreSQL only: writes the completions the loop hands it on a
 *             connection of its own (flusher.h), while the loop claims.
 *   listener  a second connection blocked in store_wait; a signal sets the
 *             "claim now" hint. PostgreSQL: LISTEN jobd_jobs (on notify_db
 *             when set: behind a transaction pooler LISTEN needs a direct
 *             connection; without one there is no listener). SQLite (a
 *             worker of its own, not embedded): inotify on the WAL, i.e.
 *             any commit by any process (store/sqlite/wake.c); without
 *             inotify there is no listener and the poll stays short.
 *   fence     the lease watchdog (fence.h): stops a run whose lease ended
 *             by our clock, even while the loop is blocked in a store call.
 *             It sees the slots only through its own entries, which the
 *             loop arms, extends and disarms.
 *   bridge    embedded in a server: forwards its in-process wake-up (SQLite
 *             has no NOTIFY) to the hint, and its cancel signal
 *             (wakeup_signal_cancel) to the cancel hint.
 *
 * One loop turn (Redis serverCron style, every step bounded):
 *   1. take finished runs: successes to the completer, failures to a list;
 *   2. (re)connect if the store went away (backoff 100 ms .. 5 s);
 *   3. write completions (one batch statement; on PostgreSQL handed to the
 *      flusher thread) and failures;
 *   4. heartbeat every slot whose time has come (every slot at once after
 *      a cancel hint: a cancel was requested, maybe of one of ours, and
 *      the heartbeat's answer says so); a stale answer means the
 *      lease is lost (stop the handler, drop its result); cancel_requested
 *      stops the handler, whose failure report then cancels the job;
 *      a run whose lease ran out by our clock without a heartbeat answer
 *      (store unreachable) is stopped too: it may be someone else's now
 *      (on time by the watchdog thread; here the loop catches up);
 *   5. claim at most "free slots" jobs (C handlers: threads plus a prefetch
 *      queue, claimed ahead and heartbeated like running jobs; the claim
 *      waits until that queue is half drained, so one commit carries many
 *      jobs while the rest keep the threads busy) when something says there
 *      may be work: the listener (NOTIFY, or a commit seen in SQLite's WAL),
 *      the in-process signal, the timer for the soonest future
 *      run_at, the last claim having filled every free slot (a backlog), or
 *      the safety-net poll;
 *   6. sleep on the wake-up until the earliest of: a result or hint, a
 *      heartbeat, the timer, the poll, a reconnect, the end of the grace.
 * A store error never ends the loop: reports wait in memory and go out
 * after the reconnect (fencing makes a late one harmless); leases of jobs
 * that cannot be reported simply run out.
 */
#include "worker/worker.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "util/clock.h"
#include "util/errtext.h"
#include "worker/exec.h"
#include "worker/fence.h"
#include "worker/flusher.h"
#include "worker/worker_int.h"

void
wk_stat_add(struct worker *w, uint64_t *field, uint64_t n)
{
    pthread_mutex_lock(&w->smu);
    *field += n;
    pthread_mutex_unlock(&w->smu);
}

void
worker_get_stats(struct worker *w, struct worker_stats *out)
{
    pthread_mutex_lock(&w->smu);
    if (w->fl != NULL)
        flusher_take_counts(w->fl, &w->stats.succeeded, &w->stats.stale, &w->stats.batches);
    *out = w->stats;
    pthread_mutex_unlock(&w->smu);
}

/*
 * Tells cfg.events what the counters gained since the last call (the
 * flusher's completions included). Loop thread; outside smu when calling out.
 */
void
wk_publish_counts(struct worker *w)
{
    const struct worker_events *ev = &w->cfg.events;
    if (ev->finished == NULL && ev->fenced == NULL)
        return;
    pthread_mutex_lock(&w->smu);
    if (w->fl != NULL)
        flusher_take_counts(w->fl, &w->stats.succeeded, &w->stats.stale, &w->stats.batches);
    uint64_t ok = w->stats.succeeded - w->told_succeeded;
    uint64_t stale = w->stats.stale - w->told_stale;
    w->told_succeeded = w->stats.succeeded;
    w->told_stale = w->stats.stale;
    pthread_mutex_unlock(&w->smu);
    if (ok > 0 && ev->finished != NULL)
        ev->finished(ev->arg, JOB_SUCCEEDED, ok);
    if (stale > 0 && ev->fenced != NULL)
        ev->fenced(ev->arg, stale);
}

const char *
worker_store_label(const struct worker *w)
{
    return w->caps->label;
}

const char *
worker_id(const struct worker *w)
{
    return w->id;
}

/* ---- results from the runners (any thread) ---- */

void
wk_deliver(void *ctx, struct run_result *r)
{
    struct worker *w = ctx;
    r->next = NULL;
    pthread_mutex_lock(&w->rmu);
    bool was_empty = w->rtail == NULL;
    if (w->rtail != NULL)
        w->rtail->next = r;
    else
        w->rhead = r;
    w->rtail = r;
    pthread_mutex_unlock(&w->rmu);
    /* Only the first result of a batch wakes the loop: it takes the whole
     * queue at once, so later ones ride along (no wake-up storm when a
     * hundred handler threads finish together). */
    if (was_empty)
        wakeup_signal(&w->wake);
}

/* ---- helper threads ---- */

static void
nap(struct worker *w, int64_t ms)
{
    for (int64_t slept = 0; slept < ms && !atomic_load(&w->quit_helpers); slept += 50)
        usleep(50000);
}

static void *
listen_main(void *arg)
{
    struct worker *w = arg;
    struct store *ls = w->listen_st; /* opened by worker_start on SQLite */
    w->listen_st = NULL;
    /* The loop's reset rule: a listener that connects and fails at once
     * keeps backing off (docs/WORKER.md, How the loop works). */
    struct backoff_conn bo;
    backoff_conn_init(&bo, RECONNECT_MIN_MS, RECONNECT_MAX_MS, RECONNECT_HEALTHY_MS);
    if (ls != NULL)
        backoff_conn_opened(&bo, clock_mono_now_us() / 1000);
    while (!atomic_load(&w->quit_helpers)) {
        struct jobd_error err = {0};
        if (ls == NULL) {
            const char *url =
                w->caps->push_wakeups && w->cfg.notify_db != NULL ? w->cfg.notify_db : w->db_url;
            if (store_open(url, &ls, &err) != JOBD_OK) {
                ls = NULL;
                nap(w, backoff_conn_failed(&bo, clock_mono_now_us() / 1000));
                continue;
            }
            backoff_conn_opened(&bo, clock_mono_now_us() / 1000);
            /* A first wait of 0 ms starts listening (LISTEN on PostgreSQL);
             * what was notified before that is caught by one look at the
             * store, for due jobs and for cancels of running ones: a cancel
             * notified while nobody listened (the claim can run ahead of
             * this thread's connection) would else wait for a heartbeat. */
            if (store_wait(ls, 0, &err) < 0) {
                store_close(ls);
                ls = NULL;
                nap(w, backoff_conn_failed(&bo, clock_mono_now_us() / 1000));
                continue;
            }
            atomic_store(&w->hint, true);
            atomic_store(&w->cancel_hint, true);
            wakeup_signal(&w->wake);
        }
        int r = store_wait(ls, 500, &err);
        if (r > 0) {
            if (r & STORE_WAKE_CANCEL)
                atomic_store(&w->cancel_hint, true);
            if (r & STORE_WAKE_JOBS)
                atomic_store(&w->hint, true);
            wakeup_signal(&w->wake);
        } else if (r < 0) {
            store_close(ls);
            ls = NULL;
            nap(w, backoff_conn_failed(&bo, clock_mono_now_us() / 1000));
        }
    }
    store_close(ls);
    return NULL;
}

static void *
bridge_main(void *arg)
{
    struct worker *w = arg;
    uint64_t seen = 0, cancels = wakeup_cancels(w->ext);
    while (!atomic_load(&w->quit_helpers)) {
        if (wakeup_wait(w->ext, &seen, 200)) {
            uint64_t c = wakeup_cancels(w->ext);
            if (c != cancels)
                atomic_store(&w->cancel_hint, true);
            cancels = c;
            atomic_store(&w->hint, true);
            wakeup_signal(&w->wake);
        }
    }
    return NULL;
}

/* ---- start and stop ---- */

static void
worker_free(struct worker *w)
{
    fence_free(w->fence); /* before the runners: it calls into them */
    flusher_stop(w->fl);  /* before the wake-up goes: it signals w->wake */
    for (int k = 0; k < HANDLER_KIND_COUNT; k++)
        if (w->runners[k] != NULL)
            runner_kinds[k].destroy(w->runners[k]);
    struct run_result *r = w->rhead;
    while (r != NULL) {
        struct run_result *next = r->next;
        run_result_free(r);
        r = next;
    }
    while (w->fails != NULL) {
        struct failure *f = w->fails;
        w->fails = f->next;
        free(f->error);
        free(f);
    }
    completer_fini(&w->comp);
    presence_fini(&w->presence);
    store_close(w->st);
    store_close(w->listen_st);
    free(w->types);
    free(w->slots);
    free(w->batch);
    free(w->db_url);
    worker_config_fini(&w->cfg);
    wakeup_fini(&w->wake);
    pthread_mutex_destroy(&w->rmu);
    pthread_mutex_destroy(&w->smu);
    wk_progress_fini(w);
    wk_logs_fini(w);
    free(w);
}

static int
start_thread(pthread_t *t, void *(*fn)(void *), void *arg, struct jobd_error *err)
{
    /* Worker threads take no signals: the embedding program's threads do. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return jobd_error_set(err, JOBD_E_IO, NULL, "cannot start a thread: %s", errno_text(rc));
    return JOBD_OK;
}

static int
start_runners(struct worker *w, struct jobd_error *err)
{
    struct run_sink sink = {wk_deliver, w, wk_progress_note};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = JOBD_OK;
    for (size_t i = 0; rc == JOBD_OK && i < w->cfg.n_handlers; i++) {
        enum handler_kind k = w->cfg.handlers[i].kind;
        if (w->runners[k] == NULL)
            rc = runner_kinds[k].create(sink, w->cfg.concurrency, &w->runners[k], err);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* What each handler needs here (an exec program), before any claim: a
 * typo fails the start, naming file:line, not every job's attempts. */
static int
check_handlers(const struct worker_config *cfg, struct jobd_error *err)
{
    int rc = worker_config_check(cfg, err);
    for (size_t i = 0; rc == JOBD_OK && i < cfg->n_handlers; i++) {
        const struct runner_kind *rk = &runner_kinds[cfg->handlers[i].kind];
        if (rk->check != NULL)
            rc = rk->check(&cfg->handlers[i], err);
    }
    return rc;
}

/* A worker with its memory, copies and settings, no store and no threads. */
static struct worker *
worker_alloc(const struct worker_config *cfg, const char *db_url, struct wakeup *wake)
{
    struct worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    if (wakeup_init(&w->wake) != 0) {
        free(w);
        return NULL;
    }
    pthread_mutex_init(&w->rmu, NULL);
    pthread_mutex_init(&w->smu, NULL);
    pthread_mutex_init(&w->pmu, NULL);
    completer_init(&w->comp);
    w->fails_tail = &w->fails;
    w->lnotes_tail = &w->lnotes;
    worker_config_init(&w->cfg);
    w->prefetch = worker_effective_prefetch(cfg);
    w->prefetch_auto = cfg->prefetch < 0;
    w->n_slots = cfg->concurrency + w->prefetch;
    if (worker_config_copy(&w->cfg, cfg) != JOBD_OK || (w->db_url = strdup(db_url)) == NULL ||
        (w->slots = calloc((size_t)w->n_slots, sizeof *w->slots)) == NULL ||
        (w->batch = calloc((size_t)w->n_slots, sizeof *w->batch)) == NULL ||
        (w->types = calloc(cfg->n_handlers, sizeof *w->types)) == NULL) {
        worker_free(w);
        return NULL;
    }
    for (size_t i = 0; i < w->cfg.n_handlers; i++)
        w->types[i] = w->cfg.handlers[i].type;
    w->n_types = w->cfg.n_handlers;
    if (w->cfg.worker_id != NULL) {
        snprintf(w->id, sizeof w->id, "%s", w->cfg.worker_id);
    } else {
        char host[64] = "localhost";
        gethostname(host, sizeof host - 1);
        snprintf(w->id, sizeof w->id, "%s:%d", host, (int)getpid());
    }
    presence_init(&w->presence, &w->cfg, w->id, w->types, w->n_types);
    w->ext = wake;
    w->rng = (uint64_t)clock_real_now_us() ^ ((uint64_t)getpid() << 32);
    atomic_store(&w->grace_ms, w->cfg.shutdown_grace_ms);
    atomic_store(&w->hint, true);
    w->timer_floor_ms = 1;
    backoff_conn_init(&w->recon, RECONNECT_MIN_MS, RECONNECT_MAX_MS, RECONNECT_HEALTHY_MS);
    /* SIGTERM-to-SIGKILL grace, but at most half the slack a heartbeat
     * leaves (heartbeat < lease, so this is positive): a healthy run is
     * never stopped by it. */
    int64_t slack_ms = (w->cfg.lease_ms - w->cfg.heartbeat_ms) / 2;
    w->fence_margin_us = (slack_ms < EXEC_KILL_GRACE_MS ? slack_ms : EXEC_KILL_GRACE_MS) * 1000;
    return w;
}

/*
 * After the first connection: which helper threads w gets besides its
 * loop, and so how many store connections it opens — true for a listener,
 * *flush for a flusher — and the poll to use. A store with push wake-ups
 * (PostgreSQL) spends its budget (cfg.db_connections) on the loop, then a
 * listener, then a flusher; behind a transaction pooler it cannot LISTEN
 * (store_wait_ready), so only notify_db gives it a listener. A store
 * without push wake-ups, in a process of its own, may still be watched
 * (SQLite: the WAL, when inotify works here); embedded in the server, the
 * in-process wake-up covers the server's own enqueues.
 */
static bool
plan_helpers(struct worker *w, const struct wakeup *wake, bool *flush)
{
    const struct store_caps *caps = w->caps;
    bool watch = false;
    if (!caps->push_wakeups && wake == NULL) {
        struct jobd_error lerr = {0};
        if (store_open(w->db_url, &w->listen_st, &lerr) == JOBD_OK &&
            store_wait_ready(w->listen_st)) {
            watch = true;
        } else {
            store_close(w->listen_st);
            w->listen_st = NULL;
        }
    }
    bool push_listen = caps->push_wakeups && w->cfg.db_connections >= 2 &&
                       (w->cfg.notify_db != NULL || store_wait_ready(w->st));
    *flush = caps->parallel_writers && w->cfg.db_connections >= 3;
    bool watched = caps->push_wakeups ? push_listen : watch || wake != NULL;
    w->poll_ms = w->cfg.poll_ms > 0 ? w->cfg.poll_ms
                 : watched          ? caps->watched_poll_ms
                                    : caps->blind_poll_ms;
    if (caps->push_wakeups && !push_listen)
        wlog(w, LOGL_INFO, "no LISTEN connection: polling",
             LF_STR("reason", w->cfg.db_connections < 2
                                  ? "db_connections is 1"
                                  : "the URL says pooler=transaction and no notify_db is set"),
             LF_INT("poll_ms", w->poll_ms));
    return push_listen || watch;
}

/* The flusher, the runners, the watchdog and the loop thread. */
static int
start_threads(struct worker *w, bool flush, struct jobd_error *err)
{
    /* Completions go out on a second connection, so the next claim does
     * not wait behind them, where writers run side by side (not SQLite:
     * a second connection would only queue behind the first). */
    int rc = JOBD_OK;
    if (flush) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        rc = flusher_start(w->db_url, store_open, &w->wake, &w->fl, err);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (rc == JOBD_OK)
        rc = start_runners(w, err);
    if (rc == JOBD_OK)
        rc = fence_new(w->n_slots, wk_lease_ran_out, w, &w->fence, err);
    if (rc == JOBD_OK)
        rc = start_thread(&w->loop_thread, wk_loop_main, w, err);
    return rc;
}

int
worker_start(const struct worker_config *cfg, const char *db_url, struct wakeup *wake,
             struct worker **out, struct jobd_error *err)
{
    *out = NULL;
    int rc = check_handlers(cfg, err);
    if (rc != JOBD_OK)
        return rc;
    struct worker *w = worker_alloc(cfg, db_url, wake);
    if (w == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    rc = store_open(w->db_url, &w->st, err);
    if (rc != JOBD_OK) {
        w->st = NULL;
        worker_free(w);
        return rc;
    }
    backoff_conn_opened(&w->recon, clock_mono_now_us() / 1000);
    w->caps = store_caps(w->st);
    store_offload(w->st);
    bool flush = false;
    bool listen = plan_helpers(w, wake, &flush);
    rc = start_threads(w, flush, err);
    if (rc != JOBD_OK) {
        worker_free(w);
        return rc;
    }
    if (listen && start_thread(&w->listen_thread, listen_main, w, err) == JOBD_OK)
        w->has_listener = true;
    if (!w->has_listener) {
        store_close(w->listen_st); /* no thread took it */
        w->listen_st = NULL;
    }
    if (wake != NULL && start_thread(&w->bridge_thread, bridge_main, w, err) == JOBD_OK)
        w->has_bridge = true;
    jobd_error_clear(err);
    *out = w;
    return JOBD_OK;
}

void
worker_request_stop(struct worker *w)
{
    atomic_store(&w->stop_req, true);
    wakeup_signal(&w->wake);
}

void
worker_stop(struct worker *w, int64_t grace_ms)
{
    if (w == NULL)
        return;
    if (grace_ms >= 0 && !atomic_load(&w->stop_req))
        atomic_store(&w->grace_ms, grace_ms);
    worker_request_stop(w);
    pthread_join(w->loop_thread, NULL);
    atomic_store(&w->quit_helpers, true);
    if (w->has_listener)
        pthread_join(w->listen_thread, NULL);
    if (w->has_bridge) {
        wakeup_signal(w->ext);
        pthread_join(w->bridge_thread, NULL);
    }
    worker_free(w);
}
