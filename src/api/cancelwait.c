/*
 * cancelwait.c — see cancelwait.h.
 *
 * The thread: while nothing is parked it sleeps on its condition (1 s),
 * and closes its store connection after CW_IDLE_CLOSE_MS. While requests
 * are parked it blocks in store_wait for at most CW_TICK_MS (the store's
 * signal: a cancel from any process), then looks at the in-process cancel
 * count, the deadlines and (every CW_ALIVE_MS) the clients. A store that
 * cannot signal (SQLite without inotify, PostgreSQL behind a pooler
 * without --notify-db) hears only this server's cancels; the worker's
 * next request, at most its wait later, reads the state anyway.
 */
#include "api/cancelwait.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/log.h"

#define CW_TICK_MS 20          /* longest sleep while requests are parked */
#define CW_ALIVE_MS 1000       /* how often parked requests' clients are checked */
#define CW_REOPEN_MS 1000      /* a failed store connection is opened again after this */
#define CW_IDLE_CLOSE_MS 10000 /* the connection is closed after this long with nothing parked */

struct cancelwait {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    struct cw_entry *head;
    size_t parked;
    uint64_t gen; /* bumped on every cancel heard */
    bool stopping;
    pthread_t thread;
    char *url;
    struct wakeup *wake;
    /* the thread's own */
    struct store *st;
    int64_t st_failed_us, idle_since_us, last_alive_us;
    uint64_t seen_cancels;
};

static void
unlink_entry(struct cancelwait *cw, struct cw_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        cw->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    cw->parked--;
}

/*
 * Resumes the parked requests that are done: all when all (a cancel, or
 * stopping), else those past their deadline or (check_alive) whose client
 * left. The list is cut under the lock; resume runs outside it.
 */
static void
resume_done(struct cancelwait *cw, bool all, bool check_alive)
{
    int64_t now = clock_mono_now_us();
    struct cw_entry *done = NULL;
    pthread_mutex_lock(&cw->mu);
    if (all)
        cw->gen++;
    for (struct cw_entry *e = cw->head, *next; e != NULL; e = next) {
        next = e->next;
        /* alive peeks at the socket: cheap, and the entry stays ours while parked */
        if (all || now >= e->deadline_mono_us ||
            (check_alive && e->alive != NULL && !e->alive(e->arg))) {
            unlink_entry(cw, e);
            e->next = done;
            done = e;
        }
    }
    pthread_mutex_unlock(&cw->mu);
    while (done != NULL) {
        struct cw_entry *e = done;
        done = e->next;
        e->resume(e->arg); /* after this, e belongs to its request again */
    }
}

/* The thread's connection while requests are parked (NULL while it cannot be had). */
static struct store *
conn(struct cancelwait *cw)
{
    if (cw->st != NULL)
        return cw->st;
    if (cw->st_failed_us != 0 && clock_mono_now_us() - cw->st_failed_us < CW_REOPEN_MS * 1000)
        return NULL;
    struct jobd_error err = {0};
    if (store_open(cw->url, &cw->st, &err) != JOBD_OK) {
        cw->st = NULL;
        cw->st_failed_us = clock_mono_now_us();
        log_at(LOGL_WARN, "api", "cancel waits cannot reach the store", LF_STR("error", err.msg));
        return NULL;
    }
    (void)store_wait_ready(cw->st); /* sets up the WAL watch on SQLite */
    return cw->st;
}

/* Sleeps up to CW_TICK_MS for the store's signal; true if it says a cancel may have come. */
static bool
store_heard(struct cancelwait *cw)
{
    struct store *st = conn(cw);
    if (st == NULL || !store_wait_ready(st)) {
        pthread_mutex_lock(&cw->mu);
        struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, CW_TICK_MS * 1000);
        if (!cw->stopping)
            (void)pthread_cond_timedwait(&cw->cv, &cw->mu, &ts);
        pthread_mutex_unlock(&cw->mu);
        return false;
    }
    struct jobd_error err = {0};
    int r = store_wait(st, CW_TICK_MS, &err);
    if (r < 0) {
        store_close(cw->st);
        cw->st = NULL;
        cw->st_failed_us = clock_mono_now_us();
        return true; /* a cancel may have gone unheard: let the requests read */
    }
    return r > 0 && (r & STORE_WAKE_CANCEL) != 0;
}

/* Nothing parked: sleep (a park signals), and close the connection once idle long enough. */
static void
idle(struct cancelwait *cw)
{
    int64_t now = clock_mono_now_us();
    if (cw->idle_since_us == 0)
        cw->idle_since_us = now;
    if (cw->st != NULL && now - cw->idle_since_us >= CW_IDLE_CLOSE_MS * 1000) {
        store_close(cw->st);
        cw->st = NULL;
    }
    pthread_mutex_lock(&cw->mu);
    struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, 1000 * 1000);
    if (!cw->stopping && cw->parked == 0)
        (void)pthread_cond_timedwait(&cw->cv, &cw->mu, &ts);
    pthread_mutex_unlock(&cw->mu);
}

static void *
cancelwait_main(void *arg)
{
    struct cancelwait *cw = arg;
    for (;;) {
        pthread_mutex_lock(&cw->mu);
        bool stopping = cw->stopping, any = cw->parked > 0;
        pthread_mutex_unlock(&cw->mu);
        if (stopping)
            break;
        uint64_t cancels = cw->wake != NULL ? wakeup_cancels(cw->wake) : 0;
        if (!any) {
            if (cancels != cw->seen_cancels) {
                /* Nobody to wake, but a request between its read and its
                 * park must learn of it (cancelwait_park compares). */
                cw->seen_cancels = cancels;
                pthread_mutex_lock(&cw->mu);
                cw->gen++;
                pthread_mutex_unlock(&cw->mu);
            }
            idle(cw);
            continue;
        }
        cw->idle_since_us = 0;
        bool heard = store_heard(cw);
        cancels = cw->wake != NULL ? wakeup_cancels(cw->wake) : 0;
        if (cancels != cw->seen_cancels) {
            cw->seen_cancels = cancels;
            heard = true;
        }
        int64_t now = clock_mono_now_us();
        bool check_alive = now - cw->last_alive_us >= CW_ALIVE_MS * 1000;
        if (check_alive)
            cw->last_alive_us = now;
        resume_done(cw, heard, check_alive);
    }
    resume_done(cw, true, false);
    return NULL;
}

int
cancelwait_start(const char *url, struct wakeup *wake, struct cancelwait **out,
                 struct jobd_error *err)
{
    *out = NULL;
    struct cancelwait *cw = calloc(1, sizeof *cw);
    if (cw == NULL || (cw->url = strdup(url)) == NULL) {
        free(cw);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    cw->wake = wake;
    cw->last_alive_us = clock_mono_now_us();
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cw->cv, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&cw->mu, NULL);
    if (pthread_create(&cw->thread, NULL, cancelwait_main, cw) != 0) {
        pthread_cond_destroy(&cw->cv);
        pthread_mutex_destroy(&cw->mu);
        free(cw->url);
        free(cw);
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the cancel waits thread");
    }
    *out = cw;
    return JOBD_OK;
}

uint64_t
cancelwait_gen(struct cancelwait *cw)
{
    pthread_mutex_lock(&cw->mu);
    uint64_t g = cw->gen;
    pthread_mutex_unlock(&cw->mu);
    return g;
}

bool
cancelwait_park(struct cancelwait *cw, struct cw_entry *e, uint64_t gen)
{
    pthread_mutex_lock(&cw->mu);
    if (cw->stopping || cw->parked >= CANCELWAIT_MAX) {
        pthread_mutex_unlock(&cw->mu);
        return false;
    }
    if (cw->gen != gen) {
        pthread_mutex_unlock(&cw->mu);
        e->resume(e->arg); /* a cancel came since the request read its jobs */
        return true;
    }
    e->prev = NULL;
    e->next = cw->head;
    if (cw->head)
        cw->head->prev = e;
    cw->head = e;
    cw->parked++;
    pthread_cond_signal(&cw->cv);
    pthread_mutex_unlock(&cw->mu);
    return true;
}

size_t
cancelwait_parked(struct cancelwait *cw)
{
    pthread_mutex_lock(&cw->mu);
    size_t n = cw->parked;
    pthread_mutex_unlock(&cw->mu);
    return n;
}

void
cancelwait_stop(struct cancelwait *cw)
{
    if (cw == NULL)
        return;
    pthread_mutex_lock(&cw->mu);
    bool was = cw->stopping;
    cw->stopping = true;
    pthread_cond_signal(&cw->cv);
    pthread_mutex_unlock(&cw->mu);
    if (!was)
        pthread_join(cw->thread, NULL);
}

void
cancelwait_free(struct cancelwait *cw)
{
    if (cw == NULL)
        return;
    cancelwait_stop(cw);
    store_close(cw->st);
    pthread_cond_destroy(&cw->cv);
    pthread_mutex_destroy(&cw->mu);
    free(cw->url);
    free(cw);
}
