/*
 * jobwait.c — see jobwait.h.
 *
 * The thread's loop: sleep until there is a reason to look (a signal, a
 * wait parked, a deadline, the next tick), drain the store's signal
 * without blocking (store_wait_ends(st, 0); every JW_TICK_MS while waits
 * are parked, as the long-poll thread drains NOTIFY), then make one pass.
 * A pass reads states only when there is news: after an end was signalled
 * (in-process or by the store), the states of every parked wait's job, in
 * one query; otherwise only those of the waits parked since the last pass
 * (a job may have ended between the request's first read and its
 * parking). A burst of ends costs one query per JW_GAP_MIN_MS at most, and
 * never more than a third of the thread's time (the gap is twice the last
 * query's time), however many jobs end: the answer is late by that much at
 * most. Without a signal from the store (SQLite without inotify, PostgreSQL
 * behind a transaction pooler without --notify-db) ends in other processes
 * are only seen by a safety pass every JW_SAFETY_MS.
 *
 * The connection is opened at the first wait and closed after
 * JW_IDLE_CLOSE_MS without one: on PostgreSQL ends are announced only
 * while a server listens (pg/ends.c), which costs the writers, and an
 * end committed by a transaction that began before the LISTEN may go
 * unannounced, so one full pass follows JW_RECHECK_MS after each open.
 *
 * Parked waits are a doubly linked list under mu; HTTP threads append,
 * only this thread unlinks, so it may read an entry outside the lock
 * until it resumes it.
 */
#include "api/jobwait.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/metrics.h"
#include "core/err.h"
#include "core/job.h"
#include "store/store.h"
#include "util/log.h"

#define JW_TICK_MS 20          /* how often the store's signal is drained while waits are parked */
#define JW_IDLE_MS 1000        /* ... and while none is (NOTIFYs must not pile up unread) */
#define JW_GAP_MIN_MS 5        /* least time between two reads of every parked wait's state */
#define JW_ALIVE_MS 1000       /* how often parked waits' clients are checked */
#define JW_SAFETY_MS 1000      /* a full pass this often when the store cannot signal */
#define JW_REOPEN_MS 1000      /* a failed store connection is opened again after this */
#define JW_RETRY_MS 200        /* states that could not be read are asked for again after this */
#define JW_RECHECK_MS 1000     /* a full pass this long after the connection opened */
#define JW_IDLE_CLOSE_MS 10000 /* the connection is closed after this long with no wait */
#define JW_UNREAD (-2)         /* a state not read in this pass */

struct jobwait {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    struct jw_entry *head, *tail;
    size_t parked; /* in the list */
    size_t placed; /* reserved or parked */
    size_t max;
    uint64_t ends;         /* bumped by jobwait_signal */
    bool fresh;            /* a wait was parked since the last pass */
    int64_t next_deadline; /* the soonest deadline of a parked wait (0 = none known) */
    bool stopping;
    bool joined;
    pthread_t thread;
    char *url;
    const struct jobd_clock *clock;
    struct api_metrics *metrics;
    /* the thread's own */
    struct store *st;
    int64_t st_failed_us; /* when opening or using st last failed */
    int64_t recheck_us;   /* the full pass after st opened (0: done) */
    int64_t idle_us;      /* since when nothing is parked (0: something is) */
    struct jw_entry **ents;
    int64_t *ids;
    int *status;
    int *state; /* per snapshot entry: its job's status, -1 gone, JW_UNREAD */
    size_t *pos;
    size_t cap;
};

static int64_t
mono_us(void)
{
    return clock_mono_now_us();
}

/* Grows the pass buffers to n entries (the thread's; under mu). */
static bool
grow(struct jobwait *jw, size_t n)
{
    if (n <= jw->cap)
        return true;
    size_t cap = jw->cap ? jw->cap : 64;
    while (cap < n)
        cap *= 2;
    struct jw_entry **e = realloc(jw->ents, cap * sizeof *e);
    if (e != NULL)
        jw->ents = e;
    int64_t *ids = realloc(jw->ids, cap * sizeof *ids);
    if (ids != NULL)
        jw->ids = ids;
    int *st = realloc(jw->status, cap * sizeof *st);
    if (st != NULL)
        jw->status = st;
    size_t *pos = realloc(jw->pos, cap * sizeof *pos);
    if (pos != NULL)
        jw->pos = pos;
    int *state = realloc(jw->state, cap * sizeof *state);
    if (state != NULL)
        jw->state = state;
    if (e == NULL || ids == NULL || st == NULL || pos == NULL || state == NULL)
        return false;
    jw->cap = cap;
    return true;
}

/* The thread's connection, opened on first use (NULL while it cannot be). */
static struct store *
conn(struct jobwait *jw)
{
    if (jw->st != NULL)
        return jw->st;
    if (jw->st_failed_us != 0 && mono_us() - jw->st_failed_us < JW_REOPEN_MS * 1000)
        return NULL;
    struct jobd_error err = {0};
    if (store_open(jw->url, &jw->st, &err) != JOBD_OK) {
        jw->st = NULL;
        jw->st_failed_us = mono_us();
        log_at(LOGL_WARN, "api", "waits for results cannot reach the store",
               LF_STR("error", err.msg));
        return NULL;
    }
    store_set_clock(jw->st, jw->clock);
    (void)store_wait_ready(jw->st); /* sets up the WAL watch on SQLite */
    /* An end committed by a transaction that began before this connection
     * listened may never be announced (pg/ends.c): look once more soon. */
    jw->recheck_us = mono_us() + JW_RECHECK_MS * 1000;
    return jw->st;
}

static void
drop_conn(struct jobwait *jw)
{
    store_close(jw->st);
    jw->st = NULL;
    jw->st_failed_us = mono_us();
}

/*
 * Reads the states of the n jobs of jw->ids into jw->status. False if they
 * could not be read (they stay unread; the waits go on until their
 * deadline, or until a pass that can read them).
 */
static bool
read_states(struct jobwait *jw, size_t n)
{
    if (n == 0)
        return true;
    struct store *st = conn(jw);
    if (st == NULL)
        return false;
    struct jobd_error err = {0};
    int rc = store_job_states(st, jw->ids, n, jw->status, &err);
    if (rc == JOBD_OK)
        return true;
    log_at(LOGL_WARN, "api", "waits for results: cannot read job states", LF_STR("error", err.msg));
    if (store_error_is_outage(rc))
        drop_conn(jw);
    return false;
}

/*
 * One pass: every parked wait is looked at; those whose job is terminal
 * or gone (by the states read now: of all of them when full, else of the
 * fresh ones), whose deadline passed, whose client left (when check_alive),
 * or all when stopping, are unlinked and resumed. False if the states
 * could not be read (the caller looks again).
 */
static bool
pass(struct jobwait *jw, bool full, bool check_alive, bool stopping)
{
    pthread_mutex_lock(&jw->mu);
    size_t n = 0, q = 0;
    if (!grow(jw, jw->parked)) {
        pthread_mutex_unlock(&jw->mu);
        return false; /* out of memory: try again at the next tick */
    }
    for (struct jw_entry *e = jw->head; e != NULL; e = e->next) {
        jw->ents[n] = e;
        if (!stopping && (full || e->fresh)) {
            jw->ids[q] = e->job_id;
            jw->pos[q++] = n;
        }
        e->fresh = false;
        n++;
    }
    jw->fresh = false;
    pthread_mutex_unlock(&jw->mu);

    /* status[] is indexed by q; map it back onto the snapshot (ents) through pos. */
    bool read = read_states(jw, q);
    int *state = jw->state;
    for (size_t i = 0; i < n; i++)
        state[i] = JW_UNREAD;
    for (size_t k = 0; read && k < q; k++)
        state[jw->pos[k]] = jw->status[k];
    if (!read) {
        /* Not read: their states are asked for again at the next pass. */
        pthread_mutex_lock(&jw->mu);
        for (size_t k = 0; k < q; k++)
            jw->ents[jw->pos[k]]->fresh = true;
        pthread_mutex_unlock(&jw->mu);
    }

    int64_t now = mono_us(), soonest = 0;
    size_t done = 0;
    for (size_t i = 0; i < n; i++) {
        struct jw_entry *e = jw->ents[i];
        bool ended =
            state[i] == -1 || (state[i] >= 0 && job_status_terminal((enum job_status)state[i]));
        bool finished = stopping || ended || now >= e->deadline_mono_us ||
                        (check_alive && e->alive != NULL && !e->alive(e->arg));
        if (finished)
            jw->ents[done++] = e; /* ents[0..done) are the finished ones, in order */
        else if (soonest == 0 || e->deadline_mono_us < soonest)
            soonest = e->deadline_mono_us;
    }
    pthread_mutex_lock(&jw->mu);
    for (size_t i = 0; i < done; i++) {
        struct jw_entry *e = jw->ents[i];
        if (e->prev)
            e->prev->next = e->next;
        else
            jw->head = e->next;
        if (e->next)
            e->next->prev = e->prev;
        else
            jw->tail = e->prev;
    }
    jw->parked -= done;
    jw->placed -= done;
    /* Waits parked during the pass have their deadline folded in by park. */
    if (jw->next_deadline <= now)
        jw->next_deadline = soonest;
    else if (soonest != 0 && soonest < jw->next_deadline)
        jw->next_deadline = soonest;
    pthread_mutex_unlock(&jw->mu);
    api_metrics_results_waiting(jw->metrics, -(int64_t)done);
    for (size_t i = 0; i < done; i++) {
        struct jw_entry *e = jw->ents[i];
        e->resume(e->arg); /* after this, e belongs to its request again */
    }
    return read;
}

static int64_t
min_pos(int64_t a, int64_t b)
{
    return a <= 0 ? b : (b <= 0 || a < b ? a : b);
}

/* The loop's state (the thread's own). */
struct jw_loop {
    uint64_t seen_ends;
    bool store_end; /* the store signalled an end not yet acted on */
    int64_t last_full, full_cost, last_alive, last_safety;
};

static int64_t
gap_us(const struct jw_loop *L)
{
    return JW_GAP_MIN_MS * 1000 > 2 * L->full_cost ? JW_GAP_MIN_MS * 1000 : 2 * L->full_cost;
}

/* Sleeps until there is a reason to look; *any: waits are parked. True when stopping. */
static bool
sleep_until_ready(struct jobwait *jw, struct jw_loop *L, bool *any)
{
    int64_t now = mono_us(), gap = gap_us(L);
    pthread_mutex_lock(&jw->mu);
    if (jw->parked == 0) {
        /* Nobody waits: what ended so far answers no one. */
        L->seen_ends = jw->ends;
        L->store_end = false;
    }
    bool want_full = jw->ends != L->seen_ends || L->store_end;
    bool ready =
        jw->stopping || (jw->parked > 0 && (jw->fresh || (want_full && now - L->last_full >= gap) ||
                                            (jw->next_deadline != 0 && now >= jw->next_deadline)));
    if (!ready) {
        int64_t until = now + (jw->parked ? JW_TICK_MS : JW_IDLE_MS) * 1000;
        until = min_pos(until, jw->next_deadline);
        if (want_full)
            until = min_pos(until, L->last_full + gap);
        if (jw->parked > 0)
            until = min_pos(until, jw->recheck_us);
        struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, until - now);
        if (until > now)
            (void)pthread_cond_timedwait(&jw->cv, &jw->mu, &ts);
    }
    bool stopping = jw->stopping;
    *any = jw->parked > 0;
    pthread_mutex_unlock(&jw->mu);
    return stopping;
}

/* Drains the store's signal without blocking; closes the connection when idle. */
static void
listen_store(struct jobwait *jw, struct jw_loop *L, bool any)
{
    /* Nobody has waited for a while: close the connection, so that on
     * PostgreSQL ends are no longer announced (pg/ends.c). */
    int64_t now = mono_us();
    jw->idle_us = any ? 0 : jw->idle_us ? jw->idle_us : now;
    if (!any && jw->st != NULL && now - jw->idle_us >= JW_IDLE_CLOSE_MS * 1000) {
        store_close(jw->st);
        jw->st = NULL;
    }
    struct store *st = any || jw->st != NULL ? conn(jw) : NULL;
    if (st != NULL && store_wait_ready(st)) {
        struct jobd_error err = {0};
        int r = store_wait_ends(st, 0, &err);
        if (r > 0) {
            L->store_end = true;
        } else if (r < 0) {
            drop_conn(jw);
            L->store_end = true; /* ends may have gone unheard: look once reconnected */
        }
    } else if (st != NULL && any && mono_us() - L->last_safety >= JW_SAFETY_MS * 1000) {
        L->store_end = true; /* no signal from other processes: the safety pass */
        L->last_safety = mono_us();
    }
}

/* A pass, full when an end was signalled and the gap since the last one has passed. */
static void
look(struct jobwait *jw, struct jw_loop *L)
{
    int64_t now = mono_us();
    if (jw->recheck_us != 0 && now >= jw->recheck_us) {
        jw->recheck_us = 0;
        L->store_end = true;
    }
    pthread_mutex_lock(&jw->mu);
    bool full = (jw->ends != L->seen_ends || L->store_end) && now - L->last_full >= gap_us(L);
    if (full)
        L->seen_ends = jw->ends;
    pthread_mutex_unlock(&jw->mu);
    if (full)
        L->store_end = false;
    bool check_alive = now - L->last_alive >= JW_ALIVE_MS * 1000;
    if (check_alive)
        L->last_alive = now;
    bool read = pass(jw, full, check_alive, false);
    if (full) {
        L->last_full = mono_us();
        L->full_cost = L->last_full - now;
    }
    if (!read) {
        /* The store did not answer: a full pass again after JW_RETRY_MS. */
        L->store_end = true;
        L->last_full = mono_us();
        L->full_cost = JW_RETRY_MS * 1000 / 2;
    }
}

static void *
jobwait_main(void *arg)
{
    struct jobwait *jw = arg;
    struct jw_loop L = {.last_alive = mono_us(), .last_safety = mono_us()};
    bool any;
    while (!sleep_until_ready(jw, &L, &any)) {
        listen_store(jw, &L, any);
        if (any)
            look(jw, &L);
    }
    (void)pass(jw, false, false, true);
    return NULL;
}

int
jobwait_start(const char *url, const struct jobd_clock *clock, size_t max,
              struct api_metrics *metrics, struct jobwait **out, struct jobd_error *err)
{
    *out = NULL;
    struct jobwait *jw = calloc(1, sizeof *jw);
    if (jw == NULL || (jw->url = strdup(url)) == NULL) {
        free(jw);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    jw->max = max > 0 ? max : JOBWAIT_DEFAULT_MAX;
    jw->clock = clock;
    jw->metrics = metrics;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&jw->cv, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&jw->mu, NULL);
    if (pthread_create(&jw->thread, NULL, jobwait_main, jw) != 0) {
        pthread_cond_destroy(&jw->cv);
        pthread_mutex_destroy(&jw->mu);
        free(jw->url);
        free(jw);
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the waits thread");
    }
    *out = jw;
    return JOBD_OK;
}

bool
jobwait_reserve(struct jobwait *jw)
{
    pthread_mutex_lock(&jw->mu);
    bool ok = !jw->stopping && jw->placed < jw->max;
    if (ok)
        jw->placed++;
    pthread_mutex_unlock(&jw->mu);
    return ok;
}

void
jobwait_unreserve(struct jobwait *jw)
{
    pthread_mutex_lock(&jw->mu);
    if (jw->placed > 0)
        jw->placed--;
    pthread_mutex_unlock(&jw->mu);
}

void
jobwait_park(struct jobwait *jw, struct jw_entry *e)
{
    e->fresh = true;
    e->next = NULL;
    pthread_mutex_lock(&jw->mu);
    if (jw->stopping) {
        if (jw->placed > 0)
            jw->placed--;
        pthread_mutex_unlock(&jw->mu);
        e->resume(e->arg);
        return;
    }
    e->prev = jw->tail;
    if (jw->tail)
        jw->tail->next = e;
    else
        jw->head = e;
    jw->tail = e;
    jw->parked++;
    jw->fresh = true;
    if (jw->next_deadline == 0 || e->deadline_mono_us < jw->next_deadline)
        jw->next_deadline = e->deadline_mono_us;
    pthread_cond_signal(&jw->cv);
    pthread_mutex_unlock(&jw->mu);
    api_metrics_results_waiting(jw->metrics, 1);
}

void
jobwait_signal(struct jobwait *jw)
{
    if (jw == NULL)
        return;
    pthread_mutex_lock(&jw->mu);
    jw->ends++;
    if (jw->parked > 0)
        pthread_cond_signal(&jw->cv);
    pthread_mutex_unlock(&jw->mu);
}

size_t
jobwait_parked(struct jobwait *jw)
{
    pthread_mutex_lock(&jw->mu);
    size_t n = jw->parked;
    pthread_mutex_unlock(&jw->mu);
    return n;
}

void
jobwait_stop(struct jobwait *jw)
{
    if (jw == NULL)
        return;
    pthread_mutex_lock(&jw->mu);
    bool was = jw->stopping;
    jw->stopping = true;
    pthread_cond_signal(&jw->cv);
    pthread_mutex_unlock(&jw->mu);
    if (was)
        return;
    pthread_join(jw->thread, NULL);
    jw->joined = true;
}

void
jobwait_free(struct jobwait *jw)
{
    if (jw == NULL)
        return;
    jobwait_stop(jw);
    store_close(jw->st);
    pthread_cond_destroy(&jw->cv);
    pthread_mutex_destroy(&jw->mu);
    free(jw->ents);
    free(jw->ids);
    free(jw->status);
    free(jw->pos);
    free(jw->state);
    free(jw->url);
    free(jw);
}
