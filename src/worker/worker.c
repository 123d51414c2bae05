/*
 * worker.c — the worker loop (worker.h).
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
 *             "claim now" hint. PostgreSQL: LISTEN jobd_jobs. SQLite (a
 *             worker of its own, not embedded): inotify on the WAL, i.e.
 *             any commit by any process (store/sqlite_wake.c); without
 *             inotify there is no listener and the poll stays short.
 *   fence     the lease watchdog (fence.h): stops a run whose lease ended
 *             by our clock, even while the loop is blocked in a store call.
 *             It sees the slots only through its own entries, which the
 *             loop arms, extends and disarms.
 *   bridge    embedded in a server: forwards its in-process wake-up (SQLite
 *             has no NOTIFY) to the hint.
 *
 * One loop turn (Redis serverCron style, every step bounded):
 *   1. take finished runs: successes to the completer, failures to a list;
 *   2. (re)connect if the store went away (backoff 100 ms .. 5 s);
 *   3. write completions (one batch statement; on PostgreSQL handed to the
 *      flusher thread) and failures;
 *   4. heartbeat every slot whose time has come; a stale answer means the
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

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/backoff.h"
#include "core/err.h"
#include "core/job.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/log.h"
#include "worker/completer.h"
#include "worker/cthread.h"
#include "worker/exec.h"
#include "worker/fence.h"
#include "worker/flusher.h"
#include "worker/http.h"
#include "worker/remote.h"
#include "worker/run.h"

/* After the last job ended in a shutdown, how long to keep trying to report. */
#define FINAL_REPORT_MS 5000
/* Reconnect backoff bounds. */
#define RECONNECT_MIN_MS 100
#define RECONNECT_MAX_MS 5000
/* A connection that lived this long was healthy: its failure restarts the backoff. */
#define RECONNECT_HEALTHY_MS 10000
/* The longest the loop sleeps without looking around. */
#define MAX_SLEEP_MS 1000

struct slot {
    bool used;
    int64_t id;
    int32_t attempt;
    const struct handler_conf *h;
    int64_t next_hb_us;       /* monotonic */
    int64_t lease_end_us;     /* monotonic: the lease is surely live until then (see fence) */
    int64_t started_us;       /* monotonic, for the events' run duration */
    enum run_stop stop_sent;
    bool lost;                /* stale lease: the result belongs to nobody */
    bool watched;             /* armed in w->fence (the lease watchdog) */
};

struct failure {
    int64_t id;
    int32_t attempt;
    char *error;
    bool retryable;
    int64_t delay_ms;
    struct failure *next;
};

struct worker {
    struct worker_config cfg;
    char *db_url;
    char id[JOB_WORKER_ID_MAX + 1];
    struct wakeup *ext;
    struct wakeup wake;
    pthread_t loop_thread, listen_thread, bridge_thread;
    bool has_listener, has_bridge;
    atomic_bool quit_helpers;
    atomic_bool stop_req;
    _Atomic int64_t grace_ms;
    atomic_bool hint;

    pthread_mutex_t rmu;      /* guards the result queue */
    struct run_result *rhead, *rtail;

    struct exec_runner *exec;
    struct http_runner *http;
    struct cthread_runner *cth;
    struct flusher *fl;       /* PostgreSQL: completions on their own connection */
    struct fence *fence;      /* the lease watchdog: stops runs whose lease ran out */

    /* loop thread only */
    struct store *st;
    bool is_pg;
    struct store *listen_st; /* SQLite: the listener's connection, until it takes it */
    struct slot *slots;       /* n_slots: concurrency + prefetch (claimed, under lease) */
    int n_slots;
    int prefetch;             /* effective: 0 unless every handler is a C handler */
    struct run **cbatch;      /* C runs of the claim being dispatched (n_slots entries) */
    size_t n_cbatch;
    int n_running;
    struct completer comp;
    struct failure *fails, **fails_tail;
    const char **types;
    size_t n_types;
    uint64_t rng;
    int64_t poll_ms;
    int64_t next_poll_us, timer_us, timer_floor_ms;
    bool backlog;
    int64_t reconnect_at_us, reconnect_ms;
    int64_t store_opened_us;  /* monotonic time of the last successful (re)connect */

    pthread_mutex_t smu;      /* guards stats */
    struct worker_stats stats;
    uint64_t told_succeeded, told_stale; /* loop thread: what cfg.events has heard */
    /* A run is stopped this long before its lease ends by our clock, so that
     * even an exec handler that waits for SIGKILL is gone by then. */
    int64_t fence_margin_us;
};

/* Logs one line for worker w (util/log): its id goes in a field. */
#define wlog(w, lvl, msg, ...) \
    log_at((lvl), "worker", (msg), LF_STR("worker", (w)->id), __VA_ARGS__)

static void
stat_add(struct worker *w, uint64_t *field, uint64_t n)
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
static void
publish_counts(struct worker *w)
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
worker_id(const struct worker *w)
{
    return w->id;
}

/* ---- results from the runners (any thread) ---- */

static void
deliver(void *ctx, struct run_result *r)
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

/* ---- slots and runners (loop thread) ---- */

static struct slot *
find_slot(struct worker *w, int64_t id, int32_t attempt)
{
    for (int i = 0; i < w->n_slots; i++)
        if (w->slots[i].used && w->slots[i].id == id && w->slots[i].attempt == attempt)
            return &w->slots[i];
    return NULL;
}

static void
stop_run(struct worker *w, struct slot *s, enum run_stop why)
{
    if (s->stop_sent != RUN_STOP_NONE)
        return;
    s->stop_sent = why;
    switch (s->h->kind) {
    case HANDLER_EXEC: exec_runner_stop(w->exec, s->id, s->attempt, why); break;
    case HANDLER_HTTP: http_runner_stop(w->http, s->id, s->attempt, why); break;
    case HANDLER_C: cthread_runner_stop(w->cth, s->id, s->attempt, why); break;
    }
}

/*
 * The lease watchdog (fence.h) and the loop: the loop arms a slot's entry
 * once its run is with the runner, extends it after each answered heartbeat
 * and disarms it when the slot ends or is stopped for another reason. The
 * watchdog, on its own thread, stops a run whose entry's lease end passed
 * (lease_ran_out), whatever store call the loop is blocked in; the loop
 * learns of it from fence_extend / fence_disarm / fence_fired.
 */

/* Stops watching s. True if the watchdog had fired for it. */
static bool
unwatch(struct worker *w, struct slot *s)
{
    if (!s->watched)
        return false;
    s->watched = false;
    return fence_disarm(w->fence, (int)(s - w->slots));
}

/* The watchdog stopped s's run: its result is nobody's; no second stop. */
static void
fenced(struct slot *s)
{
    s->lost = true;
    if (s->stop_sent == RUN_STOP_NONE)
        s->stop_sent = RUN_STOP_LOST;
}

/* Watchdog thread: the lease of (id, attempt) ran out by our clock. */
static void
lease_ran_out(void *arg, int64_t id, int32_t attempt, const void *tag)
{
    struct worker *w = arg;
    const struct handler_conf *h = tag;
    wlog(w, LOGL_WARN, "the lease ran out without a heartbeat answer; stopping it",
         LF_INT("job", id), LF_INT("attempt", attempt));
    /* The runners' stops are thread-safe and match (id, attempt): a slot
     * reused meanwhile by another run is not touched. */
    switch (h->kind) {
    case HANDLER_EXEC: exec_runner_stop(w->exec, id, attempt, RUN_STOP_LOST); break;
    case HANDLER_HTTP: http_runner_stop(w->http, id, attempt, RUN_STOP_LOST); break;
    case HANDLER_C: cthread_runner_stop(w->cth, id, attempt, RUN_STOP_LOST); break;
    }
    wakeup_signal(&w->wake); /* the loop marks the slot, when it is free to */
}

/* Arms the watchdog for every slot whose run was just handed to its runner. */
static void
watch_new_runs(struct worker *w)
{
    for (int i = 0; i < w->n_slots; i++) {
        struct slot *s = &w->slots[i];
        if (s->used && !s->watched && !s->lost && s->stop_sent == RUN_STOP_NONE) {
            fence_arm(w->fence, i, s->id, s->attempt, s->lease_end_us - w->fence_margin_us,
                      s->h);
            s->watched = true;
        }
    }
}

static void
push_failure(struct worker *w, int64_t id, int32_t attempt, char *error, bool retryable,
             int64_t delay_ms)
{
    struct failure *f = calloc(1, sizeof *f);
    if (f == NULL) { /* the lease will run out and the reaper will retry it */
        free(error);
        return;
    }
    *f = (struct failure){id, attempt, error, retryable, delay_ms, NULL};
    *w->fails_tail = f;
    w->fails_tail = &f->next;
}

static void
take_results(struct worker *w)
{
    pthread_mutex_lock(&w->rmu);
    struct run_result *r = w->rhead;
    w->rhead = w->rtail = NULL;
    pthread_mutex_unlock(&w->rmu);
    while (r != NULL) {
        struct run_result *next = r->next;
        struct slot *s = find_slot(w, r->id, r->attempt);
        if (s != NULL && unwatch(w, s))
            s->lost = true; /* the watchdog stopped it at its lease's end */
        /* A lost run's failure is the stop's doing and nobody's result; a
         * success is real work, reported anyway: fenced by attempt, it is
         * taken only if nobody claimed the job since. */
        if (s != NULL && (!s->lost || r->outcome == RUN_SUCCEEDED)) {
            if (r->outcome == RUN_SUCCEEDED) {
                if (!completer_add(&w->comp, r->id, r->attempt, r->result))
                    wlog(w, LOGL_ERROR, "out of memory queueing a completion", LF_INT("job", r->id));
                r->result = NULL;
            } else {
                int64_t delay = r->retry_after_ms;
                if (s->stop_sent == RUN_STOP_SHUTDOWN || r->stopped == RUN_STOP_SHUTDOWN)
                    delay = 0; /* not the job's fault: due again at once */
                else if (delay < 0)
                    delay = backoff_delay_ms(r->attempt, w->cfg.backoff_base_ms,
                                             w->cfg.backoff_cap_ms, backoff_rand_splitmix,
                                             &w->rng);
                push_failure(w, r->id, r->attempt, r->error, r->outcome == RUN_RETRY, delay);
                r->error = NULL;
            }
        }
        if (s != NULL) {
            if (w->cfg.events.ran != NULL)
                w->cfg.events.ran(w->cfg.events.arg,
                                  (double)(clock_mono_now_us() - s->started_us) / 1e6);
            s->used = false;
            w->n_running--;
        }
        run_result_free(r);
        r = next;
    }
}

/* ---- the store connection (loop thread) ---- */

/* A database by URL, or an API server (--server) speaking the worker protocol. */
static int
open_store(const char *url, struct store **out, struct jobd_error *err)
{
    if (remote_url(url))
        return remote_store_open(url, out, err);
    return store_open(url, out, err);
}

static void
store_trouble(struct worker *w, int rc, const struct jobd_error *err, const char *what)
{
    wlog(w, LOGL_WARN, "store error; reconnecting", LF_STR("during", what),
         LF_STR("error", err->msg[0] ? err->msg : jobd_strerror(rc)));
    store_close(w->st);
    w->st = NULL;
    /*
     * A store that opens but fails at once (a full disk, a server that
     * accepts and then errors) must not be retried at the minimum pace
     * forever: the backoff starts over only after a connection that lasted.
     */
    int64_t now = clock_mono_now_us();
    if (now - w->store_opened_us >= RECONNECT_HEALTHY_MS * 1000)
        w->reconnect_ms = RECONNECT_MIN_MS;
    else
        w->reconnect_ms = w->reconnect_ms * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS
                                                                  : w->reconnect_ms * 2;
    w->reconnect_at_us = now + w->reconnect_ms * 1000;
}

static void
ensure_store(struct worker *w, int64_t now)
{
    if (w->st != NULL || now < w->reconnect_at_us)
        return;
    struct jobd_error err = {0};
    int rc = open_store(w->db_url, &w->st, &err);
    if (rc != JOBD_OK) {
        w->st = NULL;
        w->reconnect_ms = w->reconnect_ms * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS
                                                                  : w->reconnect_ms * 2;
        w->reconnect_at_us = now + w->reconnect_ms * 1000;
        wlog(w, LOGL_WARN, "store still unreachable",
             LF_STR("error", err.msg[0] ? err.msg : jobd_strerror(rc)),
             LF_INT("retry_ms", w->reconnect_ms));
        return;
    }
    w->store_opened_us = now;
    wlog(w, LOGL_INFO, "reconnected to the store");
    stat_add(w, &w->stats.reconnects, 1);
    atomic_store(&w->hint, true); /* whatever was enqueued meanwhile */
}

/* Writes completions and failures. False if the store failed (and was dropped). */
static bool
report(struct worker *w)
{
    struct jobd_error err = {0};
    if (w->comp.n > 0 && w->fl == NULL) {
        uint64_t written = w->comp.written, stale = w->comp.stale, batches = w->comp.batches;
        int rc = completer_flush(&w->comp, w->st, &err);
        stat_add(w, &w->stats.succeeded, w->comp.written - written);
        stat_add(w, &w->stats.stale, w->comp.stale - stale);
        stat_add(w, &w->stats.batches, w->comp.batches - batches);
        if (rc != JOBD_OK) {
            store_trouble(w, rc, &err, "completion");
            return false;
        }
    }
    while (w->fails != NULL) {
        struct failure *f = w->fails;
        /* The job as the report left it, only when someone wants its status. */
        struct job after = {0};
        struct job *out = w->cfg.events.finished != NULL ? &after : NULL;
        int rc = store_fail(w->st, f->id, f->attempt, f->error, f->retryable, f->delay_ms, out,
                            &err);
        if (rc == JOBD_OK) {
            stat_add(w, &w->stats.failed, 1);
            if (out != NULL) {
                w->cfg.events.finished(w->cfg.events.arg, after.status, 1);
                job_fini(&after);
            }
        } else if (rc == JOBD_E_STALE || rc == JOBD_E_NOTFOUND) {
            stat_add(w, &w->stats.stale, 1);
        } else if (rc == JOBD_E_INVALID) {
            wlog(w, LOGL_WARN, "failure report refused", LF_INT("job", f->id),
                 LF_STR("error", err.msg));
        } else {
            store_trouble(w, rc, &err, "failure report");
            return false;
        }
        w->fails = f->next;
        if (w->fails == NULL)
            w->fails_tail = &w->fails;
        free(f->error);
        free(f);
    }
    return true;
}

static bool
heartbeats(struct worker *w, int64_t now)
{
    for (int i = 0; i < w->n_slots; i++) {
        struct slot *s = &w->slots[i];
        if (!s->used || s->lost || s->next_hb_us > now)
            continue;
        struct jobd_error err = {0};
        int64_t exp = 0;
        bool cancel = false;
        int64_t sent_us = clock_mono_now_us();
        int rc = store_heartbeat(w->st, s->id, s->attempt, w->cfg.lease_ms, &exp, &cancel, &err);
        if (rc == JOBD_OK) {
            s->next_hb_us = now + w->cfg.heartbeat_ms * 1000;
            s->lease_end_us = sent_us + w->cfg.lease_ms * 1000;
            if (s->watched &&
                !fence_extend(w->fence, i, s->lease_end_us - w->fence_margin_us)) {
                /* The answer came too late: the watchdog is stopping the run. */
                unwatch(w, s);
                fenced(s);
                continue;
            }
            if (cancel)
                stop_run(w, s, RUN_STOP_CANCEL);
        } else if (rc == JOBD_E_STALE || rc == JOBD_E_NOTFOUND) {
            bool fired = unwatch(w, s); /* the watchdog sent its stop already */
            wlog(w, LOGL_WARN,
                 fired ? "lost the lease (stopped when it ran out by our clock)"
                       : "lost the lease; stopping it",
                 LF_INT("job", s->id), LF_INT("attempt", s->attempt));
            s->lost = true;
            stat_add(w, &w->stats.stale, 1);
            if (fired)
                fenced(s);
            stop_run(w, s, RUN_STOP_LOST);
        } else {
            store_trouble(w, rc, &err, "heartbeat");
            return false;
        }
    }
    return true;
}

/*
 * Self-fencing: a run whose lease was not renewed in time (the store did
 * not answer its heartbeats: a partition, a database down) is stopped when
 * the lease runs out by our own clock, counted from when the last renewal
 * that got an answer was sent, so never later than the store's. From then
 * on the reaper may hand the job to another worker, which must not find
 * this one still at work. A stopped run's failure is dropped; a success
 * that beat the stop is still reported (the store's fencing decides). It
 * is stopped fence_margin_us before the lease's end, so that even an exec
 * handler that waits out SIGTERM is gone by then. The watchdog thread (fence.h) does the stopping
 * on time even while this thread is blocked in a store call (a silent
 * network); here the loop catches up: it marks the runs the watchdog
 * stopped, and stops itself any run it finds past its lease first.
 */
static void
fence_expired(struct worker *w)
{
    int64_t now = clock_mono_now_us();
    for (int i = 0; i < w->n_slots; i++) {
        struct slot *s = &w->slots[i];
        if (!s->used || s->lost)
            continue;
        bool fired = s->watched && fence_fired(w->fence, i);
        if (!fired && now < s->lease_end_us - w->fence_margin_us)
            continue;
        if (unwatch(w, s)) /* the watchdog fired first, or just now */
            fired = true;
        if (fired) {
            fenced(s);
            continue;
        }
        wlog(w, LOGL_WARN, "the lease ran out without a heartbeat answer; stopping it",
             LF_INT("job", s->id), LF_INT("attempt", s->attempt));
        s->lost = true;
        stop_run(w, s, RUN_STOP_LOST);
    }
}

/* ---- claiming (loop thread) ---- */

static struct slot *
free_slot(struct worker *w)
{
    for (int i = 0; i < w->n_slots; i++)
        if (!w->slots[i].used)
            return &w->slots[i];
    return NULL;
}

static char *
steal(char **p)
{
    char *s = *p;
    *p = NULL;
    return s;
}

/*
 * Starts j in a free slot; C runs are collected in w->cbatch
 * (cthread_runner_start_many). asked_us: when the claim was sent; the lease
 * began after it.
 */
static void
dispatch(struct worker *w, struct job *j, int64_t now, int64_t asked_us)
{
    struct slot *s = free_slot(w);
    const struct handler_conf *h = worker_config_handler(&w->cfg, j->type);
    if (s == NULL || h == NULL) { /* cannot happen: we claim only our types, <= free slots */
        push_failure(w, j->id, j->attempt, strdup("no handler for this job type here"), true,
                     0);
        return;
    }
    struct run *run = calloc(1, sizeof *run);
    if (run == NULL) {
        push_failure(w, j->id, j->attempt, NULL, true, 0);
        return;
    }
    run->id = j->id;
    run->attempt = j->attempt;
    run->type = steal(&j->type);
    run->queue = steal(&j->queue);
    run->payload = steal(&j->payload);
    if (run->payload == NULL)
        run->payload = strdup("{}");
    if (j->idempotency_key != NULL) {
        run->idempotency_key = steal(&j->idempotency_key);
    } else {
        char key[32];
        snprintf(key, sizeof key, "job-%" PRId64, j->id);
        run->idempotency_key = strdup(key);
    }
    run->scheduled_for_us = j->scheduled_for_us;
    run->timeout_ms = j->timeout_ms > 0 ? j->timeout_ms : h->timeout_ms;
    run->handler = h;
    if (run->type == NULL || run->queue == NULL || run->payload == NULL ||
        run->idempotency_key == NULL) {
        run_free(run);
        push_failure(w, j->id, j->attempt, NULL, true, 0);
        return;
    }
    *s = (struct slot){.used = true, .id = j->id, .attempt = j->attempt, .h = h,
                       .next_hb_us = now + w->cfg.heartbeat_ms * 1000,
                       .lease_end_us = asked_us + w->cfg.lease_ms * 1000,
                       .started_us = clock_mono_now_us()};
    if (w->cfg.events.started != NULL)
        w->cfg.events.started(w->cfg.events.arg, j);
    w->n_running++;
    switch (h->kind) {
    case HANDLER_EXEC: exec_runner_start(w->exec, run); break;
    case HANDLER_HTTP: http_runner_start(w->http, run); break;
    case HANDLER_C: w->cbatch[w->n_cbatch++] = run; break;
    }
}

static void
arm_timer(struct worker *w, const struct claim_req *req, int64_t now, bool timer_fired,
          size_t got)
{
    struct jobd_error err = {0};
    int64_t run_at = 0;
    int rc = store_next_run_at(w->st, req, &run_at, &err);
    if (rc != JOBD_OK) {
        store_trouble(w, rc, &err, "next_run_at");
        return;
    }
    if (run_at == 0) {
        w->timer_us = 0;
        return;
    }
    /* The store's clock may run ahead of ours: when the timer fired and there
     * was nothing to claim, wait a little longer each time, not a busy loop. */
    if (got > 0)
        w->timer_floor_ms = 1;
    else if (timer_fired)
        w->timer_floor_ms = w->timer_floor_ms * 2 > w->poll_ms ? w->poll_ms
                                                               : w->timer_floor_ms * 2;
    int64_t delta_ms = (run_at - clock_real_now_us() + 999) / 1000;
    if (delta_ms < w->timer_floor_ms)
        delta_ms = w->timer_floor_ms;
    w->timer_us = now + delta_ms * 1000;
}

/*
 * Room for a claim: free slots, and, with prefetch, no more than half of
 * the prefetch queue still waiting for a thread. Waiting for the queue to
 * drain that far makes each claim carry many jobs (one commit for all),
 * while the jobs still queued and running keep the threads busy during the
 * claim's round trip. 0 = do not claim now.
 */
static int
claim_room(const struct worker *w)
{
    int free_n = w->n_slots - w->n_running;
    if (free_n <= 0 || w->n_running - w->cfg.concurrency > w->prefetch / 2)
        return 0;
    return free_n;
}

/* Claims if there may be work; returns true if every free slot got a job. */
static bool
maybe_claim(struct worker *w, int64_t now)
{
    int free_n = claim_room(w);
    if (free_n <= 0)
        return false;
    bool timer_fired = w->timer_us != 0 && now >= w->timer_us;
    bool hint = atomic_exchange(&w->hint, false);
    if (!hint && !w->backlog && !timer_fired && now < w->next_poll_us)
        return false;
    struct claim_req req = {
        .worker_id = w->id,
        .queues = (const char *const *)w->cfg.queues,
        .n_queues = w->cfg.n_queues,
        .types = w->types,
        .n_types = w->n_types,
        .limit = free_n,
        .lease_ms = w->cfg.lease_ms,
    };
    struct job_list got = {0};
    struct jobd_error err = {0};
    int64_t asked_us = clock_mono_now_us();
    int rc = store_claim(w->st, &req, &got, &err);
    if (rc != JOBD_OK) {
        job_list_fini(&got);
        atomic_store(&w->hint, hint || atomic_load(&w->hint));
        store_trouble(w, rc, &err, "claim");
        return false;
    }
    stat_add(w, &w->stats.claims, 1);
    stat_add(w, &w->stats.claimed, got.n);
    /* The leases began after asked_us. An answer that took a whole lease to
     * arrive (a network that held it, a stopped process) may carry leases
     * that are already gone and jobs that another worker already runs:
     * starting them would run a job under a dead lease. Drop them; the
     * reaper hands them on. Measured on our own monotonic clock, so the
     * store's clock does not matter. */
    int64_t took_ms = (clock_mono_now_us() - asked_us) / 1000;
    if (got.n > 0 && took_ms * 1000 >= w->cfg.lease_ms * 1000 - w->fence_margin_us) {
        wlog(w, LOGL_WARN, "claim answered too close to the lease's end; handing the jobs back",
             LF_INT("jobs", got.n), LF_INT("took_ms", took_ms), LF_INT("lease_ms", w->cfg.lease_ms));
        /* Fenced by attempt: refused if someone has claimed them since. */
        for (size_t i = 0; i < got.n; i++)
            push_failure(w, got.v[i].id, got.v[i].attempt,
                         strdup("claimed too close to the lease's end to start"), true, 0);
        job_list_fini(&got);
        w->next_poll_us = now + w->poll_ms * 1000;
        return false;
    }
    w->n_cbatch = 0;
    for (size_t i = 0; i < got.n; i++)
        dispatch(w, &got.v[i], now, asked_us);
    if (w->n_cbatch > 0) /* the whole claimed batch under one lock */
        cthread_runner_start_many(w->cth, w->cbatch, w->n_cbatch);
    watch_new_runs(w); /* after the starts: a stop must not overtake its run */
    w->next_poll_us = now + w->poll_ms * 1000;
    w->backlog = got.n == (size_t)free_n;
    if (!w->backlog)
        arm_timer(w, &req, now, timer_fired, got.n);
    else
        w->timer_us = 0;
    job_list_fini(&got);
    return w->backlog;
}

/* ---- the loop ---- */

static int64_t
earlier(int64_t a, int64_t b)
{
    if (a == 0)
        return b;
    if (b == 0)
        return a;
    return a < b ? a : b;
}

static int
sleep_ms_until(struct worker *w, int64_t now, int64_t wake_at)
{
    if (wake_at == 0)
        return MAX_SLEEP_MS;
    if (wake_at <= now)
        return 0;
    int64_t ms = (wake_at - now + 999) / 1000;
    return ms > MAX_SLEEP_MS ? MAX_SLEEP_MS : (int)ms;
}

static void
stop_all(struct worker *w, enum run_stop why)
{
    for (int i = 0; i < w->n_slots; i++)
        if (w->slots[i].used)
            stop_run(w, &w->slots[i], why);
}

static void *
loop_main(void *arg)
{
    struct worker *w = arg;
    uint64_t seen = 0;
    bool stopping = false, shutdown_sent = false;
    int64_t grace_end = 0, give_up_at = 0, hard_end = 0;
    for (;;) {
        int64_t now = clock_mono_now_us();
        take_results(w);
        if (!stopping && atomic_load(&w->stop_req)) {
            stopping = true;
            /* Prefetched jobs that no thread has started go back at once,
             * as retryable failures due again now (take_results): another
             * worker may run them while this one drains. */
            size_t back = cthread_runner_drop_queued(w->cth, RUN_STOP_SHUTDOWN);
            if (back > 0) {
                wlog(w, LOGL_INFO, "stopping: handing back prefetched jobs not yet started",
                     LF_INT("jobs", back));
                take_results(w);
            }
            grace_end = now + atomic_load(&w->grace_ms) * 1000;
            hard_end = grace_end + (EXEC_KILL_GRACE_MS + FINAL_REPORT_MS + 5000) * 1000LL;
            if (w->n_running > 0)
                wlog(w, LOGL_INFO, "stopping: waiting for running jobs",
                     LF_INT("grace_ms", atomic_load(&w->grace_ms)), LF_INT("running", w->n_running));
        }
        if (stopping && !shutdown_sent && now >= grace_end) {
            if (w->n_running > 0)
                wlog(w, LOGL_WARN, "grace period over: stopping jobs", LF_INT("running", w->n_running));
            stop_all(w, RUN_STOP_SHUTDOWN);
            shutdown_sent = true;
        }
        ensure_store(w, now);
        if (w->fl != NULL && !flusher_push(w->fl, &w->comp))
            wlog(w, LOGL_ERROR, "out of memory handing completions over; retrying");
        if (w->st != NULL && report(w))
            heartbeats(w, now);
        fence_expired(w);
        publish_counts(w);
        if (stopping && w->n_running == 0) {
            if (w->comp.n == 0 && w->fails == NULL &&
                (w->fl == NULL || flusher_pending(w->fl) == 0))
                break;
            if (give_up_at == 0)
                give_up_at = now + FINAL_REPORT_MS * 1000LL;
            if (now >= give_up_at) {
                wlog(w, LOGL_ERROR, "giving up reporting completions and failures: their leases "
                     "will run out",
                     LF_INT("completions", w->comp.n + (w->fl != NULL ? flusher_pending(w->fl) : 0)));
                break;
            }
        }
        if (stopping && now >= hard_end) {
            wlog(w, LOGL_WARN, "jobs did not stop in time; leaving them to their leases",
                 LF_INT("running", w->n_running));
            break;
        }
        if (!stopping && w->st != NULL && maybe_claim(w, now) && claim_room(w) > 0)
            continue; /* every free slot got a job: there may be more */

        int64_t wake_at = 0;
        if (!stopping && w->st != NULL && claim_room(w) > 0) {
            wake_at = earlier(wake_at, w->next_poll_us);
            wake_at = earlier(wake_at, w->timer_us);
            if (w->backlog || atomic_load(&w->hint))
                wake_at = now;
        }
        for (int i = 0; i < w->n_slots; i++) {
            const struct slot *s = &w->slots[i];
            if (!s->used)
                continue;
            if (w->st != NULL && !s->lost)
                wake_at = earlier(wake_at, s->next_hb_us);
            if (!s->lost)
                wake_at = earlier(wake_at, s->lease_end_us - w->fence_margin_us);
        }
        if (w->st == NULL)
            wake_at = earlier(wake_at, w->reconnect_at_us);
        if (stopping) {
            wake_at = earlier(wake_at, shutdown_sent ? hard_end : grace_end);
            wake_at = earlier(wake_at, give_up_at);
        }
        if (w->st != NULL && (w->comp.n > 0 || w->fails != NULL))
            wake_at = now; /* results came in while we reported */
        int ms = sleep_ms_until(w, now, wake_at);
        if (ms > 0)
            wakeup_wait(&w->wake, &seen, ms);
    }
    publish_counts(w);
    return NULL;
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
    int64_t delay = RECONNECT_MIN_MS;
    while (!atomic_load(&w->quit_helpers)) {
        struct jobd_error err = {0};
        if (ls == NULL) {
            if (open_store(w->db_url, &ls, &err) != JOBD_OK) {
                ls = NULL;
                nap(w, delay);
                delay = delay * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : delay * 2;
                continue;
            }
            delay = RECONNECT_MIN_MS;
            atomic_store(&w->hint, true);
            wakeup_signal(&w->wake);
        }
        int r = store_wait(ls, 500, &err);
        if (r == 1) {
            atomic_store(&w->hint, true);
            wakeup_signal(&w->wake);
        } else if (r < 0) {
            store_close(ls);
            ls = NULL;
            nap(w, delay);
        }
    }
    store_close(ls);
    return NULL;
}

static void *
bridge_main(void *arg)
{
    struct worker *w = arg;
    uint64_t seen = 0;
    while (!atomic_load(&w->quit_helpers)) {
        if (wakeup_wait(w->ext, &seen, 200)) {
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
    flusher_stop(w->fl); /* before the wake-up goes: it signals w->wake */
    exec_runner_free(w->exec);
    http_runner_free(w->http);
    cthread_runner_free(w->cth);
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
    store_close(w->st);
    store_close(w->listen_st);
    free(w->types);
    free(w->slots);
    free(w->cbatch);
    free(w->db_url);
    worker_config_fini(&w->cfg);
    wakeup_fini(&w->wake);
    pthread_mutex_destroy(&w->rmu);
    pthread_mutex_destroy(&w->smu);
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
        return jobd_error_set(err, JOBD_E_IO, NULL, "cannot start a thread: %s", strerror(rc));
    return JOBD_OK;
}

static int
start_runners(struct worker *w, struct jobd_error *err)
{
    bool need[4] = {false};
    for (size_t i = 0; i < w->cfg.n_handlers; i++)
        need[w->cfg.handlers[i].kind] = true;
    struct run_sink sink = {deliver, w};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = JOBD_OK;
    if (need[HANDLER_EXEC])
        rc = exec_runner_new(sink, &w->exec, err);
    if (rc == JOBD_OK && need[HANDLER_HTTP])
        rc = http_runner_new(sink, &w->http, err);
    if (rc == JOBD_OK && need[HANDLER_C])
        rc = cthread_runner_new(sink, w->cfg.concurrency, &w->cth, err); /* + queue */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int
worker_start(const struct worker_config *cfg, const char *db_url, struct wakeup *wake,
             struct worker **out, struct jobd_error *err)
{
    *out = NULL;
    int rc = worker_config_check(cfg, err);
    if (rc != JOBD_OK)
        return rc;
    struct worker *w = calloc(1, sizeof *w);
    if (w == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    if (wakeup_init(&w->wake) != 0) {
        free(w);
        return jobd_error_set(err, JOBD_E_IO, NULL, "cannot create a wake-up signal");
    }
    pthread_mutex_init(&w->rmu, NULL);
    pthread_mutex_init(&w->smu, NULL);
    completer_init(&w->comp);
    w->fails_tail = &w->fails;
    worker_config_init(&w->cfg);
    w->prefetch = worker_effective_prefetch(cfg);
    w->n_slots = cfg->concurrency + w->prefetch;
    if (worker_config_copy(&w->cfg, cfg) != JOBD_OK || (w->db_url = strdup(db_url)) == NULL ||
        (w->slots = calloc((size_t)w->n_slots, sizeof *w->slots)) == NULL ||
        (w->cbatch = calloc((size_t)w->n_slots, sizeof *w->cbatch)) == NULL ||
        (w->types = calloc(cfg->n_handlers, sizeof *w->types)) == NULL) {
        worker_free(w);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
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
    w->ext = wake;
    w->rng = (uint64_t)clock_real_now_us() ^ ((uint64_t)getpid() << 32);
    atomic_store(&w->grace_ms, w->cfg.shutdown_grace_ms);
    atomic_store(&w->hint, true);
    w->timer_floor_ms = 1;
    w->reconnect_ms = RECONNECT_MIN_MS;
    /* SIGTERM-to-SIGKILL grace, but at most half the slack a heartbeat
     * leaves (heartbeat < lease, so this is positive): a healthy run is
     * never stopped by it. */
    int64_t slack_ms = (w->cfg.lease_ms - w->cfg.heartbeat_ms) / 2;
    w->fence_margin_us = (slack_ms < EXEC_KILL_GRACE_MS ? slack_ms : EXEC_KILL_GRACE_MS) * 1000;

    rc = open_store(w->db_url, &w->st, err);
    if (rc != JOBD_OK) {
        w->st = NULL;
        worker_free(w);
        return rc;
    }
    w->is_pg = strcmp(store_backend(w->st), "pg") == 0;
    bool remote = remote_url(w->db_url);
    /*
     * SQLite in a process of its own: a listener watching the WAL (when
     * inotify works here) makes the poll only a safety net. Embedded in
     * the server, the in-process wake-up covers the server's own enqueues.
     */
    bool sq_listen = false;
    if (!w->is_pg && !remote && wake == NULL) {
        struct jobd_error lerr = {0};
        if (open_store(w->db_url, &w->listen_st, &lerr) == JOBD_OK &&
            store_wait_ready(w->listen_st)) {
            sq_listen = true;
        } else {
            store_close(w->listen_st);
            w->listen_st = NULL;
        }
    }
    w->poll_ms = w->cfg.poll_ms > 0 ? w->cfg.poll_ms
               : w->is_pg         ? 5000
               : remote           ? 250 /* no NOTIFY over HTTP */
               : wake != NULL     ? 1000
               : sq_listen        ? 1000
                                  : 100;

    /* PostgreSQL: completions go out on a second connection, so the next
     * claim does not wait behind them (SQLite has one writer at a time:
     * a second connection would only queue behind the first). */
    rc = JOBD_OK;
    if (w->is_pg) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        rc = flusher_start(w->db_url, open_store, &w->wake, &w->fl, err);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (rc == JOBD_OK)
        rc = start_runners(w, err);
    if (rc == JOBD_OK)
        rc = fence_new(w->n_slots, lease_ran_out, w, &w->fence, err);
    if (rc == JOBD_OK)
        rc = start_thread(&w->loop_thread, loop_main, w, err);
    if (rc != JOBD_OK) {
        worker_free(w);
        return rc;
    }
    if ((w->is_pg || sq_listen) &&
        start_thread(&w->listen_thread, listen_main, w, err) == JOBD_OK)
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
