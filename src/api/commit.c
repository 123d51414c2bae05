/*
 * commit.c — see commit.h. Requests put an item on a FIFO and sleep on one
 * shared condition variable; the committer swaps the whole FIFO out under
 * the lock (so requests keep queueing while it writes), writes, marks each
 * item done and broadcasts. Items live on the requesters' stacks: a
 * requester never returns before its item is marked done.
 */
#include "api/commit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/metrics.h"
#include "core/err.h"
#include "util/check.h"
#include "util/clock.h"

/* The longest a batch waits for requests expected back (see await_batch()). */
#define COMMIT_GATHER_MAX_US 10000
/* After a gather that ran out of time, this many batches do not wait. */
#define COMMIT_GATHER_REST 1

struct committer {
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* committer waits for items */
    pthread_cond_t done_cv; /* requesters wait for their item */
    struct commit_item *head, *tail;
    size_t queued;           /* items in head..tail */
    size_t expect;           /* the batch await_batch() waits for */
    int64_t gather_us;       /* ... for at most this long after the last answers */
    int64_t gather_until_us; /* ... that is, until then (monotonic) */
    int rest;                /* batches to write without gathering (after a miss) */
    int64_t gather_max_us;   /* COMMIT_GATHER_MAX_US, or a test's */
    size_t wake_at;          /* the committer waits until queued is this (await_batch) */
    bool stopping;
    bool joined; /* committer_quiesce joined the thread (only one may) */
    pthread_t thread;
    struct store_pool *pool;
    struct wakeup *wake;
    struct api_metrics *metrics;
    struct store *st; /* the committer's own connection, or NULL */
};

/* The store connection is gone: what was not sent was not written (a 503 is true). */
static bool
conn_lost(int rc)
{
    return rc == JOBD_E_UNAVAILABLE || rc == JOBD_E_COMMIT_UNKNOWN;
}
#ifndef NDEBUG
/* The FIFO's invariant (locked): queued counts head..tail, tail is the last,
 * and no item on it is done yet. */
static bool
fifo_ok(const struct committer *c)
{
    size_t n = 0;
    const struct commit_item *last = NULL;
    for (const struct commit_item *it = c->head; it != NULL; it = it->next, n++) {
        if (it->done)
            return false;
        last = it;
    }
    return n == c->queued && last == c->tail;
}
#endif

static void
finish_one_by_one(struct committer *c, struct commit_item **items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct commit_item *it = items[i];
        it->rc = store_enqueue(c->st, it->spec, it->out, &it->replayed, &it->err);
        if (conn_lost(it->rc)) {
            /* Nothing more can be written now; the rest were never sent. */
            for (size_t k = i + 1; k < n; k++)
                items[k]->rc = jobd_error_set(&items[k]->err, JOBD_E_UNAVAILABLE, NULL,
                                              "not written: the store connection broke "
                                              "before it was sent (%s)",
                                              it->err.msg);
            return;
        }
    }
}

static void
fail_all(struct commit_item **items, size_t n, int rc, const struct jobd_error *err)
{
    for (size_t i = 0; i < n; i++) {
        items[i]->rc = rc;
        items[i]->err = *err;
    }
}

/* One transaction for all n items; false if it did not commit (items untouched). */
static int
try_batch(struct committer *c, struct commit_item **items, size_t n, struct jobd_error *err)
{
    assert(n >= 2 && n <= COMMIT_BATCH_MAX); /* a lone item takes finish_one_by_one */
    struct job_spec *specs = calloc(n, sizeof *specs);
    struct job *outs = calloc(n, sizeof *outs);
    bool *rep = calloc(n, sizeof *rep);
    int rc;
    if (specs == NULL || outs == NULL || rep == NULL) {
        rc = jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    } else {
        for (size_t i = 0; i < n; i++)
            specs[i] = *items[i]->spec;
        rc = store_enqueue_batch(c->st, specs, n, outs, rep, err);
        for (size_t i = 0; rc == JOBD_OK && i < n; i++) {
            items[i]->rc = JOBD_OK;
            items[i]->replayed = rep[i];
            if (items[i]->out)
                job_move(items[i]->out, &outs[i]);
        }
    }
    for (size_t i = 0; outs && i < n; i++)
        job_fini(&outs[i]);
    free(specs);
    free(outs);
    free(rep);
    return rc;
}

static void
write_batch(struct committer *c, struct commit_item **items, size_t n)
{
    struct jobd_error err = {0};
    int rc = JOBD_OK;
    if (c->st == NULL)
        rc = store_pool_get(c->pool, &c->st, &err);
    if (rc != JOBD_OK) {
        fail_all(items, n, rc, &err);
        return;
    }
    if (n == 1) {
        finish_one_by_one(c, items, 1);
    } else {
        rc = try_batch(c, items, n, &err);
        /* The batch's true outcome goes to every caller in it: written
         * (JOBD_OK, also when the store learned it after losing COMMIT's
         * answer), not written (503), or unknown (504). Only a batch the
         * store refused, so surely not written, is retried item by item:
         * retrying one of unknown outcome could write it twice. */
        if (conn_lost(rc) || rc == JOBD_E_NOMEM)
            fail_all(items, n, rc, &err);
        else if (rc != JOBD_OK)
            finish_one_by_one(c, items, n); /* only the bad items fail */
    }
    /* A connection that saw the store go away is replaced next round. */
    for (size_t i = 0; i < n && c->st != NULL; i++) {
        if (conn_lost(items[i]->rc)) {
            store_pool_put(c->pool, c->st, JOBD_E_UNAVAILABLE);
            c->st = NULL;
        }
    }
}

/*
 * Requests answered by a commit usually come back with their next one (a
 * client that waits for each answer), and requests that arrived while it
 * was written wait in the queue. Committing that queue at once splits a
 * steady set of callers into groups that take turns: each request waits
 * for the other group's whole commit before its own (two commits per
 * answer), where waiting the short while its answered peers take to come
 * back would have written both groups in one. So the next batch is
 * expected to be the last one plus what queued meanwhile, and await_batch()
 * waits for that many items, but never longer than the last commit took
 * (at most COMMIT_GATHER_MAX_US) after its answers went out: a lone
 * request on an idle server, or one arriving after that, is written at
 * once, and no request waits more than one commit longer than it would
 * have, which is what taking turns costs it anyway. Half a commit, as it
 * was, is too short where the CPUs are busy: the answers' round trip (two
 * thread hand-offs, the client, HTTP parsing) often took longer, and each
 * miss had the next 8 batches written in two turns. When the peers do
 * not come back in time, the wait only costs: after such a miss the next
 * batch is written at once (COMMIT_GATHER_REST), then gathering resumes.
 * Locked.
 */
static void
expect_next(struct committer *c, size_t n, int64_t t0)
{
    int64_t wait = clock_mono_now_us() - t0;
    c->expect = n + c->queued < COMMIT_BATCH_MAX ? n + c->queued : COMMIT_BATCH_MAX;
    assert(c->expect <= COMMIT_BATCH_MAX); /* await_batch() must be able to get it */
    if (c->rest > 0) {
        c->rest--;
        c->expect = 0;
    }
    c->gather_us = wait < c->gather_max_us ? wait : c->gather_max_us;
}

/*
 * Waits (locked) for the next batch: until the expected one is queued or
 * its time is up (see expect_next), then for any item; false once stopping
 * with nothing queued. One wait for both: the committer sleeps until the
 * arrival it waits for (wake_at), where it used to be woken by the first
 * item of each batch only to wait again for the rest, a context switch
 * and a futex wake per group commit for nothing.
 */
static bool
await_batch(struct committer *c)
{
    for (;;) {
        if (c->stopping)
            return c->head != NULL;
        if (c->head != NULL && c->queued >= c->expect)
            return true;
        int64_t left = c->gather_until_us - clock_mono_now_us();
        if (left <= 0) {
            if (c->head != NULL) {
                c->rest = COMMIT_GATHER_REST; /* fewer came back than expected */
                return true;
            }
            c->wake_at = 1;
            pthread_cond_wait(&c->work_cv, &c->mu);
            continue;
        }
        c->wake_at = c->expect > c->queued ? c->expect : c->queued + 1;
        struct timespec ts = clock_deadline_in(CLOCK_MONOTONIC, left);
        pthread_cond_timedwait(&c->work_cv, &c->mu, &ts);
    }
}

static void *
committer_main(void *arg)
{
    struct committer *c = arg;
    struct commit_item *batch[COMMIT_BATCH_MAX];
    struct callback {
        void (*fn)(void *);
        void *arg;
    } cb[COMMIT_BATCH_MAX];
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (!await_batch(c))
            break;
        assert(fifo_ok(c));
        size_t n = 0;
        while (c->head != NULL && n < COMMIT_BATCH_MAX) {
            batch[n++] = c->head;
            c->head = c->head->next;
        }
        assert(n >= 1 && n <= c->queued);
        c->queued -= n;
        if (c->head == NULL)
            c->tail = NULL;
        assert(fifo_ok(c));
        pthread_mutex_unlock(&c->mu);
        int64_t t0 = clock_mono_now_us();

        write_batch(c, batch, n);
        api_metrics_commit(c->metrics);
        bool wrote = false;
        for (size_t i = 0; i < n; i++)
            wrote = wrote || (batch[i]->rc == JOBD_OK && !batch[i]->replayed);
        if (wrote && c->wake != NULL)
            wakeup_signal(c->wake);

        /* Callbacks are taken before `done` is set: a waiter may free its
         * item as soon as it sees done; a submitter frees it only after its
         * callback, which runs outside the lock. */
        size_t n_cb = 0;
        pthread_mutex_lock(&c->mu);
        expect_next(c, n, t0);
        for (size_t i = 0; i < n; i++) {
            assert(!batch[i]->done); /* each item is answered exactly once */
            if (batch[i]->done_fn != NULL)
                cb[n_cb++] = (struct callback){batch[i]->done_fn, batch[i]->done_arg};
            batch[i]->done = true;
        }
        pthread_cond_broadcast(&c->done_cv);
        if (n_cb > 0) {
            pthread_mutex_unlock(&c->mu);
            for (size_t i = 0; i < n_cb; i++)
                cb[i].fn(cb[i].arg);
            pthread_mutex_lock(&c->mu);
        }
        c->gather_until_us = clock_mono_now_us() + c->gather_us; /* the answers are out */
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/*
 * The cap on await_batch()'s wait. Test builds take it from
 * $JOBD_TEST_GATHER_MAX_MS: with commits slowed to hundreds of
 * milliseconds, whether the committer waits half a commit or a whole one
 * is then a difference of a hundred milliseconds, which a loaded machine
 * does not blur (test_api_group_commit.c); under the 10 ms cap it is a
 * few milliseconds.
 */
static int64_t
gather_max_us(void)
{
#ifdef JOBD_TEST_HOOKS
    const char *v = getenv("JOBD_TEST_GATHER_MAX_MS");
    long ms = v != NULL ? strtol(v, NULL, 10) : 0;
    if (ms > 0 && ms <= 60000)
        return (int64_t)ms * 1000;
#endif
    return COMMIT_GATHER_MAX_US;
}

int
committer_start(struct store_pool *pool, struct wakeup *wake, struct api_metrics *metrics,
                struct committer **out, struct jobd_error *err)
{
    *out = NULL;
    struct committer *c = calloc(1, sizeof *c);
    if (c == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    c->pool = pool;
    c->wake = wake;
    c->metrics = metrics;
    c->gather_max_us = gather_max_us();
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* await_batch()'s deadline */
    pthread_cond_init(&c->work_cv, &attr);
    pthread_condattr_destroy(&attr);
    pthread_cond_init(&c->done_cv, NULL);
    if (pthread_create(&c->thread, NULL, committer_main, c) != 0) {
        pthread_cond_destroy(&c->done_cv);
        pthread_cond_destroy(&c->work_cv);
        pthread_mutex_destroy(&c->mu);
        free(c);
        return jobd_error_set(err, JOBD_E_INTERNAL, NULL, "cannot start the committer thread");
    }
    *out = c;
    return JOBD_OK;
}

void
committer_quiesce(struct committer *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    bool joined = c->joined;
    c->stopping = true;
    c->joined = true;
    pthread_cond_signal(&c->work_cv);
    pthread_mutex_unlock(&c->mu);
    if (!joined)
        pthread_join(c->thread, NULL); /* it writes what is queued first */
}

void
committer_stop(struct committer *c)
{
    if (c == NULL)
        return;
    committer_quiesce(c);
    /* The thread wrote everything queued before it returned: no requester
     * is left waiting on an item nobody will answer. */
    assert(c->head == NULL && c->queued == 0);
    if (c->st != NULL)
        store_pool_put(c->pool, c->st, JOBD_OK);
    pthread_cond_destroy(&c->done_cv);
    pthread_cond_destroy(&c->work_cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void
committer_submit(struct committer *c, struct commit_item *it)
{
    assert(it->done_fn != NULL); /* its only way to learn the answer */
    it->done = false;
    it->next = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        it->rc = jobd_error_set(&it->err, JOBD_E_UNAVAILABLE, NULL, "the server is shutting down");
        it->done = true;
        it->done_fn(it->done_arg);
        return;
    }
    if (c->tail)
        c->tail->next = it;
    else
        c->head = it;
    c->tail = it;
    if (++c->queued == c->wake_at)
        pthread_cond_signal(&c->work_cv); /* not each arrival await_batch waits for */
    pthread_mutex_unlock(&c->mu);
}

int
committer_enqueue(struct committer *c, const struct job_spec *spec, struct job *out, bool *replayed,
                  struct jobd_error *err)
{
    struct commit_item it = {.spec = spec, .out = out};
    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, NULL, "the server is shutting down");
    }
    if (c->tail)
        c->tail->next = &it;
    else
        c->head = &it;
    c->tail = &it;
    if (++c->queued == c->wake_at)
        pthread_cond_signal(&c->work_cv);
    while (!it.done)
        pthread_cond_wait(&c->done_cv, &c->mu);
    /* Off the FIFO before done: the stack item may now go. */
    assert(c->head != &it && c->tail != &it);
    pthread_mutex_unlock(&c->mu);
    if (replayed)
        *replayed = it.replayed;
    if (it.rc != JOBD_OK && err != NULL)
        *err = it.err;
    return it.rc;
}
