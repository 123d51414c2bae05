/*
 * test_worker_c_alloc.c — a C handler thread of libjobd's worker neither
 * allocates nor frees anything for a job that succeeds (src/worker/cthread.c):
 * glibc gives every thread that calls malloc or free an arena of its own
 * (up to 8 per core), so a pool of 100 threads that each touched the
 * allocator once per job cost the worker a dozen arenas of resident memory.
 * The allocations are counted per thread with AddressSanitizer's hooks, so
 * the test needs the sanitizer build (`make test`); other builds skip it.
 */
#include "test.h"
#include "workertest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/job.h"
#include "jobd.h"
#include "store/store.h"
#include "util/clock.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ALLOC_HOOKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ALLOC_HOOKS 1
#endif
#endif

#ifdef HAVE_ALLOC_HOOKS
/* AddressSanitizer's runtime (sanitizer/allocator_interface.h, not shipped with every compiler). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));

static _Thread_local bool tl_handler_thread; /* this thread has run a handler */
static atomic_long pool_mallocs, pool_frees, ran;

static void
on_malloc(const volatile void *p, size_t n)
{
    (void)p;
    (void)n;
    if (tl_handler_thread)
        atomic_fetch_add(&pool_mallocs, 1);
}

static void
on_free(const volatile void *p)
{
    if (p != NULL && tl_handler_thread)
        atomic_fetch_add(&pool_frees, 1);
}

/* Marks its thread as a handler thread and succeeds, allocating nothing itself. */
static int
noop_handler(jobd_run *run, void *ctx)
{
    (void)run;
    (void)ctx;
    tl_handler_thread = true;
    atomic_fetch_add(&ran, 1);
    return JOBD_HANDLER_OK;
}
#endif

TEST(handler_threads_neither_allocate_nor_free_for_jobs_that_succeed)
{
#ifndef HAVE_ALLOC_HOOKS
    TEST_SKIP("counts allocations with AddressSanitizer's hooks: the sanitizer build only");
#else
    enum { JOBS = 300 };
    char url[700];
    snprintf(url, sizeof url, "sqlite:%s/alloc.db", test_tmpdir);
    struct store *st = test_store_open(url);
    int64_t last = 0;
    for (int i = 0; i < JOBS; i++) {
        struct job_spec spec = {.type = "a.noop", .payload = "{}"};
        struct job j = {0};
        struct jobd_error err = {0};
        ASSERT_OK(store_enqueue(st, &spec, &j, NULL, &err), &err);
        last = j.id;
        job_fini(&j);
    }
    ASSERT_EQ(__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) > 0, true);

    jobd_worker *w = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(jobd_worker_new(url, NULL, &w, &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "concurrency", "4", &err), &err);
    ASSERT_OK(jobd_worker_set_option(w, "poll_interval", "20ms", &err), &err);
    ASSERT_OK(jobd_worker_register(w, "a.noop", noop_handler, NULL), NULL);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, test_worker_run_thread, w), 0);

    /* Every job succeeded in the store: every result went through the loop. */
    int64_t dl = clock_mono_now_us() + 60 * 1000000LL;
    for (;;) {
        struct job j = {0};
        ASSERT_OK(store_get(st, last, &j, &err), &err);
        bool done = j.status == JOB_SUCCEEDED && atomic_load(&ran) >= JOBS;
        job_fini(&j);
        if (done)
            break;
        if (clock_mono_now_us() > dl)
            TEST_FAIL("%ld of %d jobs ran in 60 s", atomic_load(&ran), (int)JOBS);
        usleep(5000);
    }
    /* Before the stop: a thread that exits may free what glibc kept for it. */
    long mallocs = atomic_load(&pool_mallocs), frees = atomic_load(&pool_frees);
    jobd_worker_stop(w);
    void *rc = NULL;
    pthread_join(t, &rc);
    ASSERT_EQ((int)(intptr_t)rc, JOBD_OK);
    jobd_worker_free(w);
    store_close(st);
    ASSERT_EQ(atomic_load(&ran), JOBS);
    ASSERT_EQ(mallocs, 0);
    ASSERT_EQ(frees, 0);
#endif
}
