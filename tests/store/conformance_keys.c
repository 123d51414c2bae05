/*
 * conformance_keys.c — debounce and unique windows on enqueue
 * (docs/MODEL.md, Debounce and unique windows) through the store interface,
 * on every backend: the pending job replaced in place, a new job once it was
 * claimed, the window answering whatever the job's status, a deleted job
 * freeing its key, batches, retention of keys, the refused combinations,
 * and 16 threads enqueueing one key at once making exactly one job.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"
#include "store/operator.h"

static struct job_spec
debounced(const char *type, const char *key, int64_t for_ms, const char *payload)
{
    return (struct job_spec){.type = type, .payload = payload, .debounce = {key, for_ms}};
}

static struct job_spec
unique(const char *type, const char *key, int64_t for_ms, const char *payload)
{
    return (struct job_spec){.type = type, .payload = payload, .unique = {key, for_ms}};
}

/* Enqueues s; *replayed says whether it made no job. Returns the job (caller finis). */
static struct job
enq_window(struct fx *f, const struct job_spec *s, bool *replayed)
{
    struct job j = {0};
    *replayed = true;
    ASSERT_OK(store_enqueue(f->st, s, &j, replayed, &f->err), &f->err);
    return j;
}

static long
key_rows(struct fx *f)
{
    return raw_count(f, is_pg() ? "SELECT count(*) FROM jobd.enqueue_keys"
                                : "SELECT count(*) FROM enqueue_keys");
}

TEST(debounce_replaces_the_pending_job_in_place)
{
    struct fx f;
    fx_open(&f);
    bool rep;
    struct job_spec s = debounced("mail.digest", "user-7", 10000, "{\"n\":1}");
    struct job a = enq_window(&f, &s, &rep);
    ASSERT(!rep);
    ASSERT_EQ(a.status, JOB_PENDING);
    ASSERT_EQ(a.run_at_us, T0 + 10 * SEC);
    manual_clock_advance(&f.mc, 3 * SEC);
    s.payload = "{\"n\":2}";
    s.priority = 5;
    struct job b = enq_window(&f, &s, &rep);
    ASSERT(rep);
    ASSERT_EQ(b.id, a.id);
    ASSERT_STR_EQ(b.payload, "{\"n\":2}");
    ASSERT_EQ(b.priority, 5);
    ASSERT_EQ(b.run_at_us, T0 + 13 * SEC);
    ASSERT_EQ(b.created_at_us, a.created_at_us);
    /* the same key for another type, or in another queue: a job of its own */
    struct job_spec other = debounced("mail.other", "user-7", 10000, NULL);
    struct job c = enq_window(&f, &other, &rep);
    ASSERT(!rep);
    ASSERT_NE(c.id, a.id);
    other = debounced("mail.digest", "user-7", 10000, NULL);
    other.queue = "slow";
    struct job d = enq_window(&f, &other, &rep);
    ASSERT(!rep);
    ASSERT_NE(d.id, a.id);
    /* nothing is due before the last enqueue's for has passed */
    struct job_list l = {0};
    manual_clock_advance(&f.mc, 9 * SEC);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    manual_clock_advance(&f.mc, 1 * SEC);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    job_fini(&a);
    job_fini(&b);
    job_fini(&c);
    job_fini(&d);
    fx_close(&f);
}

TEST(debounce_makes_a_new_job_once_the_last_was_claimed)
{
    struct fx f;
    fx_open(&f);
    bool rep;
    struct job_spec s = debounced("t", "k", 1000, "1");
    struct job a = enq_window(&f, &s, &rep);
    manual_clock_advance(&f.mc, 2 * SEC);
    claim_one(&f, a.id);
    s.payload = "2";
    struct job b = enq_window(&f, &s, &rep);
    ASSERT(!rep);
    ASSERT_NE(b.id, a.id);
    ASSERT_EQ(b.run_at_us, now_of(&f) + 1 * SEC);
    struct job ra = getj(&f, a.id); /* the running job is left as it was */
    ASSERT_EQ(ra.status, JOB_RUNNING);
    ASSERT_STR_EQ(ra.payload, "1");
    /* a cancelled holder is not pending either */
    ASSERT_OK(store_cancel(f.st, b.id, NULL, &f.err), &f.err);
    struct job c = enq_window(&f, &s, &rep);
    ASSERT(!rep);
    ASSERT_NE(c.id, b.id);
    struct job d = enq_window(&f, &s, &rep);
    ASSERT(rep);
    ASSERT_EQ(d.id, c.id);
    job_fini(&a);
    job_fini(&b);
    job_fini(&c);
    job_fini(&d);
    job_fini(&ra);
    fx_close(&f);
}

TEST(unique_answers_the_windows_job_whatever_its_status)
{
    struct fx f;
    fx_open(&f);
    bool rep;
    struct job_spec s = unique("report", "daily-2027-01-15", 60000, "{\"v\":1}");
    struct job a = enq_window(&f, &s, &rep);
    ASSERT(!rep);
    ASSERT_EQ(a.run_at_us, T0); /* unique does not delay the job */
    /* another payload, type or queue inside the window: the same job, unchanged */
    struct job_spec o = unique("other", "daily-2027-01-15", 60000, "{\"v\":2}");
    o.queue = "q2";
    struct job b = enq_window(&f, &o, &rep);
    ASSERT(rep);
    ASSERT_EQ(b.id, a.id);
    ASSERT_STR_EQ(b.payload, "{\"v\":1}");
    /* run and finished: still the answer while the window lasts */
    manual_clock_advance(&f.mc, 10 * SEC);
    int32_t att = claim_one(&f, a.id);
    ASSERT_OK(store_complete(f.st, a.id, att, NULL, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 49 * SEC);
    struct job c = enq_window(&f, &s, &rep);
    ASSERT(rep);
    ASSERT_EQ(c.id, a.id);
    ASSERT_EQ(c.status, JOB_SUCCEEDED);
    /* the window is measured from the first job's creation, not renewed */
    manual_clock_advance(&f.mc, 1 * SEC);
    struct job d = enq_window(&f, &s, &rep);
    ASSERT(!rep);
    ASSERT_NE(d.id, a.id);
    ASSERT_EQ(d.created_at_us, T0 + 60 * SEC);
    manual_clock_advance(&f.mc, 59 * SEC);
    struct job e = enq_window(&f, &s, &rep);
    ASSERT(rep);
    ASSERT_EQ(e.id, d.id);
    ASSERT_EQ(key_rows(&f), 1); /* the ended window was taken over in place */
    job_fini(&a);
    job_fini(&b);
    job_fini(&c);
    job_fini(&d);
    job_fini(&e);
    fx_close(&f);
}

TEST(unique_key_of_a_deleted_job_is_free)
{
    struct fx f;
    fx_open(&f);
    bool rep;
    struct job_spec s = unique("t", "k", 3600 * 1000, NULL);
    struct job a = enq_window(&f, &s, &rep);
    ASSERT_OK(store_delete(f.st, a.id, &f.err), &f.err);
    struct job b = enq_window(&f, &s, &rep);
    ASSERT(!rep);
    ASSERT_NE(b.id, a.id);
    struct job c = enq_window(&f, &s, &rep);
    ASSERT(rep);
    ASSERT_EQ(c.id, b.id);
    /* a debounced job deleted: the next enqueue makes a new one */
    struct job_spec d = debounced("t", "k", 1000, NULL);
    struct job x = enq_window(&f, &d, &rep);
    ASSERT_OK(store_delete(f.st, x.id, &f.err), &f.err);
    struct job y = enq_window(&f, &d, &rep);
    ASSERT(!rep);
    ASSERT_NE(y.id, x.id);
    job_fini(&a);
    job_fini(&b);
    job_fini(&c);
    job_fini(&x);
    job_fini(&y);
    fx_close(&f);
}

TEST(batch_items_take_their_keys_in_order)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s[4] = {
        debounced("t", "k", 5000, "1"),
        {.type = "plain"},
        debounced("t", "k", 5000, "2"),
        unique("t", "u", 5000, NULL),
    };
    struct job out[4] = {0};
    bool rep[4] = {0};
    ASSERT_OK(store_enqueue_batch(f.st, s, 4, out, rep, &f.err), &f.err);
    ASSERT(!rep[0] && !rep[1] && rep[2] && !rep[3]);
    ASSERT_EQ(out[2].id, out[0].id);
    ASSERT_STR_EQ(out[2].payload, "2");
    for (int i = 0; i < 4; i++)
        job_fini(&out[i]);
    /* a bad item fails the batch with its field named, and writes nothing */
    s[1] = (struct job_spec){.type = "t", .debounce = {"k2", 0}};
    ASSERT_EQ(store_enqueue_batch(f.st, s, 4, out, rep, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "jobs[1].debounce.for");
    s[1] = unique("t", "u", 5000, NULL);
    s[3] = unique("t", "u", 5000, NULL);
    ASSERT_OK(store_enqueue_batch(f.st, s, 4, out, rep, &f.err), &f.err);
    ASSERT(rep[0] && rep[1] && rep[2] && rep[3]);
    for (int i = 0; i < 4; i++)
        job_fini(&out[i]);
    fx_close(&f);
}

TEST(window_combinations_are_refused)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = debounced("t", "k", 1000, NULL);
    s.idempotency_key = "i";
    ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "debounce");
    s = debounced("t", "k", 1000, NULL);
    s.run_at_us = T0 + SEC;
    ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "debounce");
    s = debounced("t", "k", 1000, NULL);
    s.unique = (struct job_window){"u", 1000};
    ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "unique");
    s = unique("t", "u", JOB_WINDOW_MAX_MS + 1, NULL);
    ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "unique.for");
    s = unique("t", " u", 1000, NULL);
    ASSERT_EQ(store_enqueue(f.st, &s, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "unique.key");
    ASSERT_EQ(key_rows(&f), 0);
    fx_close(&f);
}

TEST(keys_go_with_their_jobs_and_ended_windows_expire)
{
    struct fx f;
    fx_open(&f);
    bool rep;
    struct job_spec d = debounced("t", "d", 1000, NULL);
    struct job a = enq_window(&f, &d, &rep);
    for (int i = 0; i < 3; i++) {
        char key[8];
        snprintf(key, sizeof key, "u%d", i);
        struct job_spec u = unique("t", key, (i + 1) * 10000, NULL);
        u.run_at_us = T0 + 3600 * SEC; /* not claimed below */
        struct job j = enq_window(&f, &u, &rep);
        job_fini(&j);
    }
    ASSERT_EQ(key_rows(&f), 4);
    manual_clock_advance(&f.mc, 20 * SEC); /* u0 and u1 ended, u2 open */
    int deleted = -1;
    ASSERT_OK(store_keys_expire(f.st, 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 2);
    ASSERT_EQ(key_rows(&f), 2);
    /* the debounced job ends and is pruned: its key goes with it */
    int32_t att = claim_one(&f, a.id);
    ASSERT_OK(store_complete(f.st, a.id, att, NULL, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, SEC);
    ASSERT_OK(store_prune(f.st, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    ASSERT_EQ(key_rows(&f), 1);
    job_fini(&a);
    fx_close(&f);
}

/* ---- 16 threads enqueue one key at once ---- */

enum { KEY_THREADS = 16 };

struct key_arg {
    struct fx *f;
    pthread_barrier_t *go;
    bool debounce;
    int64_t id;
    bool replayed;
    int rc;
};

static void *
key_worker(void *p)
{
    struct key_arg *a = p;
    struct store *st = fx_connect(a->f);
    struct jobd_error e = {0};
    struct job_spec s =
        a->debounce ? debounced("race", "k", 60000, "{}") : unique("race", "k", 60000, "{}");
    struct job j = {0};
    pthread_barrier_wait(a->go);
    a->rc = store_enqueue(st, &s, &j, &a->replayed, &e);
    if (a->rc != JOBD_OK)
        fprintf(stderr, "enqueue: %s\n", e.msg);
    a->id = j.id;
    job_fini(&j);
    store_close(st);
    return NULL;
}

static void
race_one_key(bool debounce)
{
    struct fx f;
    fx_open(&f);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, KEY_THREADS);
    pthread_t th[KEY_THREADS];
    struct key_arg args[KEY_THREADS];
    for (int i = 0; i < KEY_THREADS; i++) {
        args[i] = (struct key_arg){.f = &f, .go = &go, .debounce = debounce};
        ASSERT_EQ(pthread_create(&th[i], NULL, key_worker, &args[i]), 0);
    }
    int made = 0;
    for (int i = 0; i < KEY_THREADS; i++) {
        pthread_join(th[i], NULL);
        ASSERT_EQ(args[i].rc, JOBD_OK);
        ASSERT_EQ(args[i].id, args[0].id);
        made += !args[i].replayed;
    }
    pthread_barrier_destroy(&go);
    ASSERT_EQ(made, 1);
    ASSERT_EQ(
        raw_count(&f, is_pg() ? "SELECT count(*) FROM jobd.all_jobs" : "SELECT count(*) FROM jobs"),
        1);
    ASSERT_EQ(key_rows(&f), 1);
    fx_close(&f);
}

TEST(unique_under_16_concurrent_enqueues_makes_one_job)
{
    race_one_key(false);
}

TEST(debounce_under_16_concurrent_enqueues_makes_one_job)
{
    race_one_key(true);
}

/* ---- batches taking two keys in opposite orders ---- */

enum { CROSS_ROUNDS = 40 };

struct cross_arg {
    struct fx *f;
    pthread_barrier_t *go;
    bool reversed;
    int errors;
};

static void *
cross_worker(void *p)
{
    struct cross_arg *a = p;
    struct store *st = fx_connect(a->f);
    struct jobd_error e = {0};
    pthread_barrier_wait(a->go);
    for (int i = 0; i < CROSS_ROUNDS; i++) {
        struct job_spec s[2] = {debounced("t", "A", 60000, NULL), debounced("t", "B", 60000, NULL)};
        if (a->reversed) {
            struct job_spec t = s[0];
            s[0] = s[1];
            s[1] = t;
        }
        if (store_enqueue_batch(st, s, 2, NULL, NULL, &e) != JOBD_OK) {
            fprintf(stderr, "batch: %s\n", e.msg);
            a->errors++;
        }
    }
    store_close(st);
    return NULL;
}

TEST(batches_taking_keys_in_opposite_orders_never_deadlock)
{
    struct fx f;
    fx_open(&f);
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    pthread_t th[2];
    struct cross_arg a[2];
    for (int i = 0; i < 2; i++) {
        a[i] = (struct cross_arg){.f = &f, .go = &go, .reversed = i == 1};
        ASSERT_EQ(pthread_create(&th[i], NULL, cross_worker, &a[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&go);
    ASSERT_EQ(a[0].errors + a[1].errors, 0);
    ASSERT_EQ(key_rows(&f), 2); /* one pending job per key, replaced 2 * 40 - 1 times */
    fx_close(&f);
}

TEST(debounce_replacement_wakes_waiting_workers)
{
    struct fx f;
    fx_open(&f);
    struct store *w = fx_connect(&f);
    if (strcmp(backend(), "pg_pooled") == 0 || !store_wait_ready(w)) {
        store_close(w);
        fx_close(&f);
        TEST_NOT_HERE("no cross-process wake-up on this connection (a pooler, or no inotify)");
    }
    bool rep;
    struct job_spec s = debounced("t", "k", 3600 * 1000, NULL);
    struct job a = enq_window(&f, &s, &rep);
    int rc, drained = 0;
    while ((rc = store_wait(w, 0, &f.err)) > 0 && drained++ < 100) /* the enqueue's */
        ;
    ASSERT_EQ(rc, 0);
    s.debounce.for_ms = 1000; /* due sooner than the waiter computed */
    struct job b = enq_window(&f, &s, &rep);
    ASSERT(rep);
    rc = store_wait(w, 5000, &f.err);
    ASSERT(rc > 0 && (rc & STORE_WAKE_JOBS) != 0);
    store_close(w);
    job_fini(&a);
    job_fini(&b);
    fx_close(&f);
}

TEST(debounce_replaces_a_job_pending_for_its_retry)
{
    struct fx f;
    fx_open(&f);
    bool rep;
    struct job_spec s = debounced("t", "k", 1000, "1");
    struct job a = enq_window(&f, &s, &rep);
    manual_clock_advance(&f.mc, 2 * SEC);
    int32_t att = claim_one(&f, a.id);
    ASSERT_OK(store_fail(f.st, a.id, att, "boom", true, 60000, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, a.id), JOB_PENDING);
    s.payload = "2";
    struct job b = enq_window(&f, &s, &rep);
    ASSERT(rep);
    ASSERT_EQ(b.id, a.id);
    ASSERT_EQ(b.attempt, 1);
    ASSERT_STR_EQ(b.payload, "2");
    ASSERT_EQ(b.run_at_us, now_of(&f) + 1 * SEC); /* now + for, not the retry's delay */
    job_fini(&a);
    job_fini(&b);
    fx_close(&f);
}
