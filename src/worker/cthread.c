/*
 * cthread.c — the C handler thread pool (cthread.h).
 *
 * A mutex-protected FIFO of runs feeds nthreads threads. Each running
 * struct jobd_run sits on a list so stop requests can find it; the handler
 * reads its flag without the lock (an atomic). A claimed batch is queued
 * under one lock and wakes only as many idle threads as it has runs, so a
 * hundred threads do not all fight for the lock for every job.
 *
 * The FIFO may hold more runs than there are threads: the worker claims
 * ahead ("prefetch", docs/WORKER.md) so that handler threads find their
 * next job here without waiting for the loop's next claim. Such a queued
 * run is already under lease, so a stop (lost lease, cancel, shutdown)
 * must reach it too: it is marked and, when a thread takes it, answered
 * as stopped without ever running. A timeout counts from when a thread
 * takes the run, not from the claim (jobd_run.deadline_us).
 *
 * A pool thread neither allocates nor frees for a run that succeeds: the
 * loop allocates each queue entry together with the result that will
 * answer it (struct qitem), and the run rides back inside that result, so
 * the loop frees both. glibc gives every thread that calls malloc or free
 * an arena of its own (up to 8 per core) and keeps what it touched there:
 * with one result allocated and six frees per job, a pool of 100 threads
 * on 2 cores filled 16 arenas, ~84 KB each, about 1 MB of a C worker's
 * resident memory. Now only the handler's own allocations (a result, an
 * error text) and failures touch the allocator on these threads.
 */
#include "worker/cthread.h"

#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/job.h"
#include "core/utf8.h"
#include "jobd.h"
#include "util/clock.h"
#include "util/errtext.h"

/*
 * A queued run and, in the same block, the result that will answer it:
 * res comes first, so run_result_free(&q->res) frees the block, and the run
 * rides along in res.run. Allocated where runs are queued (the loop
 * thread), freed where results are taken (the loop thread again).
 */
struct qitem {
    struct run_result res; /* first: the block is the result's once answered */
    struct run *run;
    int stop;          /* enum run_stop: stopped while queued (under mu) */
    int64_t queued_us; /* monotonic: when it was queued (cthread_runner_return_stale) */
    struct qitem *next;
};
static_assert(offsetof(struct qitem, res) == 0, "a qitem's block is its result's");

struct cthread_runner {
    struct run_sink sink;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct qitem *head, *tail;
    struct jobd_run *running;
    bool quit;
    int idle;      /* threads waiting on cv */
    int signalled; /* of those, already sent a signal (not yet awake) */
    int nthreads;
    pthread_t *threads;
};

/*
 * Answers q's run with outcome: q's block becomes the result, which takes
 * the run along (freed with it). error is copied (its last JOB_ERROR_MAX
 * bytes as UTF-8, as run_result_new does: the only allocation here, and
 * only failures have one). NULL on out-of-memory, with q and its run freed.
 */
static struct run_result *
answer(struct qitem *q, enum run_outcome outcome, const char *error)
{
    struct run_result *r = &q->res;
    *r = (struct run_result){.id = q->run->id,
                             .attempt = q->run->attempt,
                             .outcome = outcome,
                             .retry_after_ms = -1,
                             .run = q->run};
    q->run = NULL;
    if (error != NULL) {
        r->error = utf8_clean(error, strlen(error), JOB_ERROR_MAX, UTF8_KEEP_TAIL);
        if (r->error == NULL) {
            run_result_free(r);
            return NULL;
        }
    }
    return r;
}

/* The answer for q's run, which j ran and which returned rc (takes q, see answer). */
static struct run_result *
result_for(struct qitem *q, struct jobd_run *j, int rc)
{
    enum run_stop why = (enum run_stop)atomic_load(&j->stop);
    struct run_result *r;
    if (rc == JOBD_HANDLER_OK) {
        r = answer(q, RUN_SUCCEEDED, NULL); /* no error text: cannot fail */
        r->result = j->result;
        j->result = NULL;
        return r;
    }
    char msg[256];
    const char *err = j->error;
    if (err == NULL && why != RUN_STOP_NONE) {
        snprintf(msg, sizeof msg, "%s", run_stop_text(why));
        err = msg;
    } else if (err == NULL) {
        snprintf(msg, sizeof msg, "the handler returned %d", rc);
        err = msg;
    }
    r = answer(q, rc == JOBD_HANDLER_DEAD ? RUN_DEAD : RUN_RETRY, err);
    if (r != NULL) {
        r->stopped = why;
        r->retry_after_ms = rc == JOBD_HANDLER_DEAD ? -1 : j->retry_after_ms;
    }
    return r;
}

/* The answer for q's run, stopped before a thread took it: it never ran (takes q). */
static struct run_result *
unstarted_result(struct qitem *q, enum run_stop why)
{
    struct run_result *r = answer(q, RUN_RETRY, run_stop_text(why));
    if (r != NULL)
        r->stopped = why;
    return r;
}

static void *
pool_thread(void *arg)
{
    struct cthread_runner *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        while (c->head == NULL && !c->quit) {
            c->idle++;
            pthread_cond_wait(&c->cv, &c->mu);
            c->idle--;
            if (c->signalled > 0)
                c->signalled--;
        }
        if (c->quit) {
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        struct qitem *q = c->head;
        c->head = q->next;
        if (c->head == NULL)
            c->tail = NULL;
        if (q->stop != RUN_STOP_NONE) { /* stopped while queued: never start it */
            pthread_mutex_unlock(&c->mu);
            struct run_result *r = unstarted_result(q, (enum run_stop)q->stop);
            if (r != NULL)
                c->sink.deliver(c->sink.ctx, r);
            continue;
        }
        struct jobd_run job = {.run = q->run, .retry_after_ms = -1, .sink = &c->sink};
        atomic_init(&job.stop, RUN_STOP_NONE);
        if (job.run->timeout_ms > 0)
            job.deadline_us = clock_mono_now_us() + job.run->timeout_ms * 1000;
        job.next = c->running;
        c->running = &job;
        pthread_mutex_unlock(&c->mu);

        int64_t t0 = clock_mono_now_us();
        int rc = job.run->handler->fn(&job, job.run->handler->ctx);
        int64_t ran_us = clock_mono_now_us() - t0 + 1; /* + 1: 0 means "not timed" */
        /* A handler that returned past its deadline without asking
         * jobd_run_should_stop still ran out of time: say so in its error. */
        if (job.deadline_us != 0 && clock_mono_now_us() >= job.deadline_us) {
            int none = RUN_STOP_NONE;
            atomic_compare_exchange_strong(&job.stop, &none, RUN_STOP_TIMEOUT);
        }

        pthread_mutex_lock(&c->mu);
        for (struct jobd_run **pp = &c->running; *pp != NULL; pp = &(*pp)->next)
            if (*pp == &job) {
                *pp = job.next;
                break;
            }
        bool quit = c->quit;
        pthread_mutex_unlock(&c->mu);
        /* q (and the run with it) goes back inside the result, so the loop
         * frees them: a run that succeeds costs this thread no malloc or
         * free at all (see the top of the file). */
        struct run_result *r = NULL;
        if (!quit) {
            r = result_for(q, &job, rc);
        } else {
            run_free(q->run);
            free(q);
        }
        if (r != NULL)
            r->ran_us = ran_us;
        free(job.result); /* NULL unless the handler set one and then failed */
        free(job.error);
        if (r != NULL)
            c->sink.deliver(c->sink.ctx, r);
    }
}

void
cthread_runner_start(struct cthread_runner *c, struct run *run)
{
    struct qitem *q = calloc(1, sizeof *q);
    if (q == NULL) {
        /* Not the job's fault: handed back unused. */
        struct run_result *r = run_result_new(run, RUN_RELEASE, "out of memory");
        run_free(run);
        if (r != NULL)
            c->sink.deliver(c->sink.ctx, r);
        return;
    }
    q->run = run;
    q->queued_us = clock_mono_now_us();
    pthread_mutex_lock(&c->mu);
    if (c->tail != NULL)
        c->tail->next = q;
    else
        c->head = q;
    c->tail = q;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void
cthread_runner_start_many(struct cthread_runner *c, struct run **runs, size_t n)
{
    struct qitem *first = NULL, **tail = &first;
    size_t queued = 0;
    int64_t now = clock_mono_now_us();
    for (size_t i = 0; i < n; i++) {
        struct qitem *q = calloc(1, sizeof *q);
        if (q == NULL) {
            cthread_runner_start(c, runs[i]); /* answers "out of memory" */
            continue;
        }
        q->run = runs[i];
        q->queued_us = now;
        *tail = q;
        tail = &q->next;
        queued++;
    }
    if (queued == 0)
        return;
    struct qitem *last = first;
    while (last->next != NULL)
        last = last->next;
    pthread_mutex_lock(&c->mu);
    if (c->tail != NULL)
        c->tail->next = first;
    else
        c->head = first;
    c->tail = last;
    /* A thread that finishes a job takes the next one without waiting, so
     * waking more than the queued count (or than are idle) is wasted. */
    size_t sleeping = (size_t)(c->idle - c->signalled);
    size_t wake = queued < sleeping ? queued : sleeping;
    if (wake > 0 && wake == sleeping)
        pthread_cond_broadcast(&c->cv);
    else
        for (size_t i = 0; i < wake; i++)
            pthread_cond_signal(&c->cv);
    c->signalled += (int)wake;
    pthread_mutex_unlock(&c->mu);
}

void
cthread_runner_stop(struct cthread_runner *c, int64_t id, int32_t attempt, enum run_stop why)
{
    pthread_mutex_lock(&c->mu);
    for (struct jobd_run *j = c->running; j != NULL; j = j->next)
        if (j->run->id == id && j->run->attempt == attempt) {
            int none = RUN_STOP_NONE;
            atomic_compare_exchange_strong(&j->stop, &none, (int)why);
        }
    for (struct qitem *q = c->head; q != NULL; q = q->next)
        if (q->run->id == id && q->run->attempt == attempt && q->stop == RUN_STOP_NONE)
            q->stop = (int)why;
    pthread_mutex_unlock(&c->mu);
}

size_t
cthread_runner_drop_queued(struct cthread_runner *c, enum run_stop why)
{
    if (c == NULL)
        return 0;
    pthread_mutex_lock(&c->mu);
    struct qitem *q = c->head;
    c->head = c->tail = NULL;
    pthread_mutex_unlock(&c->mu);
    size_t n = 0;
    while (q != NULL) { /* answered outside the lock: deliver takes the worker's */
        struct qitem *next = q->next;
        struct run_result *r =
            unstarted_result(q, q->stop != RUN_STOP_NONE ? (enum run_stop)q->stop : why);
        if (r != NULL)
            c->sink.deliver(c->sink.ctx, r);
        n++;
        q = next;
    }
    return n;
}

size_t
cthread_runner_return_stale(struct cthread_runner *c, int64_t max_wait_us)
{
    if (c == NULL)
        return 0;
    int64_t cutoff = clock_mono_now_us() - max_wait_us;
    struct qitem *first = NULL, **tail = &first;
    pthread_mutex_lock(&c->mu);
    /* A thread that is idle (or just signalled) takes the head at once: nothing is stuck. */
    while (c->idle == 0 && c->head != NULL && c->head->queued_us <= cutoff) {
        struct qitem *q = c->head; /* the FIFO is in queueing order: the oldest first */
        c->head = q->next;
        q->next = NULL;
        *tail = q;
        tail = &q->next;
    }
    if (c->head == NULL)
        c->tail = NULL;
    pthread_mutex_unlock(&c->mu);
    size_t n = 0;
    for (struct qitem *q = first, *next; q != NULL; q = next) {
        next = q->next;
        struct run_result *r;
        if (q->stop != RUN_STOP_NONE) {
            r = unstarted_result(q, (enum run_stop)q->stop);
        } else {
            r = answer(q, RUN_RELEASE, run_stop_text(RUN_STOP_RETURNED));
            if (r != NULL)
                r->stopped = RUN_STOP_RETURNED;
        }
        if (r != NULL)
            c->sink.deliver(c->sink.ctx, r);
        n++;
    }
    return n;
}

int
cthread_runner_new(struct run_sink sink, int nthreads, struct cthread_runner **out,
                   struct jobd_error *err)
{
    *out = NULL;
    struct cthread_runner *c = calloc(1, sizeof *c);
    if (c == NULL || (c->threads = calloc((size_t)nthreads, sizeof *c->threads)) == NULL) {
        free(c);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    c->sink = sink;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&c->threads[i], NULL, pool_thread, c);
        if (rc != 0) {
            c->nthreads = i;
            cthread_runner_free(c);
            return jobd_error_set(err, JOBD_E_IO, NULL, "cannot start a thread: %s",
                                  errno_text(rc));
        }
        c->nthreads = i + 1;
    }
    *out = c;
    return JOBD_OK;
}

void
cthread_runner_free(struct cthread_runner *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    c->quit = true;
    for (struct jobd_run *j = c->running; j != NULL; j = j->next) {
        int none = RUN_STOP_NONE;
        atomic_compare_exchange_strong(&j->stop, &none, RUN_STOP_SHUTDOWN);
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (int i = 0; i < c->nthreads; i++)
        pthread_join(c->threads[i], NULL);
    while (c->head != NULL) {
        struct qitem *q = c->head;
        c->head = q->next;
        run_free(q->run);
        free(q);
    }
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c->threads);
    free(c);
}
