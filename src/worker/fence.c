/*
 * fence.c — the lease watchdog (fence.h). One thread, one mutex, one
 * condition variable on CLOCK_MONOTONIC (the scale of clock_mono_now_us),
 * and a fixed array of entries, one per slot: with a few hundred slots at
 * most, a linear scan per wake-up costs less than keeping a heap in order.
 * The thread sleeps until the earliest armed lease end or a change.
 */
#include "worker/fence.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/check.h"
#include "util/clock.h"
#include "util/errtext.h"

struct entry {
    bool armed;
    bool fired;
    int64_t id;
    int32_t attempt;
    int64_t lease_end_us;
    const void *tag;
};

struct fence {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC; signalled by an arm it must see, and quit */
    struct entry *e;
    int n;
    bool quit;
    /*
     * Under mu: when the thread's wait ends (INT64_MAX: it waits for a
     * change only), 0 while it is not waiting. An arm signals only when its
     * lease ends before that: a claim arms hundreds of entries whose leases
     * all end after the earliest one already armed, and waking the thread
     * for each (a futex call, a context switch, a scan of every entry) cost
     * more than the claim's other bookkeeping.
     */
    int64_t wake_at;
    _Atomic uint64_t scans;   /* looks at the entries (fence_scans) */
    _Atomic uint64_t fired_n; /* entries fired so far (fence_fired_count) */
    fence_fire_fn fire;
    void *arg;
    pthread_t thread;
};

/* The firing of one entry, collected under the lock and called outside it. */
struct due {
    int64_t id;
    int32_t attempt;
    const void *tag;
};

static void *
fence_main(void *arg)
{
    struct fence *f = arg;
    struct due *due = calloc((size_t)f->n, sizeof *due);
    pthread_mutex_lock(&f->mu);
    while (!f->quit) {
        f->wake_at = 0;
        atomic_fetch_add(&f->scans, 1);
        int64_t now = clock_mono_now_us(), next = 0;
        int n_due = 0;
        for (int i = 0; i < f->n; i++) {
            struct entry *e = &f->e[i];
            if (!e->armed)
                continue;
            if (now >= e->lease_end_us && due != NULL) {
                e->armed = false;
                e->fired = true;
                due[n_due++] = (struct due){e->id, e->attempt, e->tag};
            } else if (next == 0 || e->lease_end_us < next) {
                next = e->lease_end_us;
            }
        }
        if (n_due > 0) {
            atomic_fetch_add(&f->fired_n, (uint64_t)n_due);
            pthread_mutex_unlock(&f->mu);
            for (int i = 0; i < n_due; i++)
                f->fire(f->arg, due[i].id, due[i].attempt, due[i].tag);
            pthread_mutex_lock(&f->mu);
            continue;
        }
        if (due == NULL) /* out of memory at start: retry now and then */
            next = now + FENCE_OOM_RETRY_US;
        if (next == 0) {
            f->wake_at = INT64_MAX;
            pthread_cond_wait(&f->cv, &f->mu);
            continue;
        }
        /* Sleep until next on the monotonic clock (clock_mono_now_us is
         * CLOCK_MONOTONIC, so the two scales agree up to the call's cost). */
        struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, next - now);
        f->wake_at = next;
        pthread_cond_timedwait(&f->cv, &f->mu, &ts);
        if (due == NULL)
            due = calloc((size_t)f->n, sizeof *due);
    }
    pthread_mutex_unlock(&f->mu);
    free(due);
    return NULL;
}

int
fence_new(int n, fence_fire_fn fire, void *arg, struct fence **out, struct jobd_error *err)
{
    *out = NULL;
    struct fence *f = calloc(1, sizeof *f);
    if (f == NULL || (f->e = calloc((size_t)n, sizeof *f->e)) == NULL) {
        free(f);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    f->n = n;
    f->fire = fire;
    f->arg = arg;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&f->cv, &attr);
    pthread_condattr_destroy(&attr);
    if (rc == 0 && (rc = pthread_mutex_init(&f->mu, NULL)) != 0)
        pthread_cond_destroy(&f->cv);
    if (rc != 0) {
        free(f->e);
        free(f);
        return jobd_error_set(err, JOBD_E_IO, NULL, "cannot set up the lease watchdog: %s",
                              errno_text(rc));
    }
    /* The watchdog takes no signals: the embedding program's threads do. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&f->thread, NULL, fence_main, f);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&f->cv);
        pthread_mutex_destroy(&f->mu);
        free(f->e);
        free(f);
        return jobd_error_set(err, JOBD_E_IO, NULL, "cannot start the lease watchdog: %s",
                              errno_text(rc));
    }
    *out = f;
    return JOBD_OK;
}

void
fence_free(struct fence *f)
{
    if (f == NULL)
        return;
    pthread_mutex_lock(&f->mu);
    f->quit = true;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f->e);
    free(f);
}

void
fence_arm(struct fence *f, int slot, int64_t id, int32_t attempt, int64_t lease_end_us,
          const void *tag)
{
    assert(slot >= 0 && slot < f->n && id > 0 && attempt >= 1);
    pthread_mutex_lock(&f->mu);
    f->e[slot] = (struct entry){
        .armed = true, .id = id, .attempt = attempt, .lease_end_us = lease_end_us, .tag = tag};
    if (lease_end_us < f->wake_at)
        pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

bool
fence_extend(struct fence *f, int slot, int64_t lease_end_us)
{
    assert(slot >= 0 && slot < f->n);
    pthread_mutex_lock(&f->mu);
    struct entry *e = &f->e[slot];
    bool ok = e->armed;
    assert(!(e->armed && e->fired)); /* firing disarms */
    if (ok && lease_end_us > e->lease_end_us)
        e->lease_end_us = lease_end_us; /* later: the watchdog's wait ends early, harmless */
    pthread_mutex_unlock(&f->mu);
    return ok;
}

bool
fence_disarm(struct fence *f, int slot)
{
    assert(slot >= 0 && slot < f->n);
    pthread_mutex_lock(&f->mu);
    struct entry *e = &f->e[slot];
    bool fired = e->fired;
    e->armed = false;
    e->fired = false;
    pthread_mutex_unlock(&f->mu);
    return fired;
}

uint64_t
fence_fired_count(struct fence *f)
{
    return atomic_load(&f->fired_n);
}

uint64_t
fence_scans(struct fence *f)
{
    return atomic_load(&f->scans);
}

bool
fence_fired(struct fence *f, int slot)
{
    assert(slot >= 0 && slot < f->n);
    pthread_mutex_lock(&f->mu);
    bool fired = f->e[slot].fired;
    pthread_mutex_unlock(&f->mu);
    return fired;
}
