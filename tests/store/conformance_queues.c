/*
 * conformance_queues.c — the conformance cases of queue counts, pruning,
 * next_run_at and store_wait, and of concurrent claimers in real processes
 * (one connection each: no job is ever handed to two).
 */
#include "conformance.h"

/* ------------------------------------------------------------------ */
/* queues, prune, next_run_at, wait                                    */

TEST(queue_stats_counts)
{
    struct fx f;
    fx_open(&f);
    ASSERT_OK(store_queue_pause(f.st, "empty_paused", true, &f.err), &f.err);
    int64_t a1 = enq(&f, "t", "alpha", 9, 0);
    int64_t a2 = enq(&f, "t", "alpha", 8, 0);
    int64_t a3 = enq(&f, "t", "alpha", 7, 0);
    enq(&f, "t", "alpha", 0, 0);
    int64_t b1 = enq(&f, "t", "beta", 0, 0);
    enq(&f, "t", "beta", 0, T0 + 100 * SEC);
    int32_t at = claim_one(&f, a1);
    ASSERT_OK(store_complete(f.st, a1, at, NULL, NULL, &f.err), &f.err);
    at = claim_one(&f, a2);
    ASSERT_OK(store_fail(f.st, a2, at, "x", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(claim_one(&f, a3), 1); /* running */
    ASSERT_OK(store_cancel(f.st, b1, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 10 * SEC);

    struct queue_stat *qs = NULL;
    size_t n = 0;
    ASSERT_OK(store_queue_stats(f.st, &qs, &n, &f.err), &f.err);
    ASSERT_EQ(n, 3);
    ASSERT_STR_EQ(qs[0].name, "alpha");
    ASSERT(!qs[0].paused);
    ASSERT_EQ(qs[0].count[JOB_PENDING], 1);
    ASSERT_EQ(qs[0].count[JOB_RUNNING], 1);
    ASSERT_EQ(qs[0].count[JOB_SUCCEEDED], 1);
    ASSERT_EQ(qs[0].count[JOB_DEAD], 1);
    ASSERT_EQ(qs[0].count[JOB_CANCELLED], 0);
    ASSERT(qs[0].any_due);
    ASSERT(qs[0].oldest_pending_age_s > 9.99 && qs[0].oldest_pending_age_s < 10.01);
    ASSERT_STR_EQ(qs[1].name, "beta");
    ASSERT_EQ(qs[1].count[JOB_PENDING], 1);
    ASSERT_EQ(qs[1].count[JOB_CANCELLED], 1);
    ASSERT_EQ(qs[1].count[JOB_RUNNING], 0);
    ASSERT(!qs[1].any_due); /* its only pending job is due in 90 s: not waiting */
    ASSERT_STR_EQ(qs[2].name, "empty_paused");
    ASSERT(qs[2].paused);
    for (int s = 0; s < JOB_STATUS_COUNT; s++)
        ASSERT_EQ(qs[2].count[s], 0);
    ASSERT(!qs[2].any_due);
    ASSERT(qs[2].oldest_pending_age_s == 0);
    free(qs);
    fx_close(&f);
}

TEST(prune_only_old_terminal_jobs)
{
    struct fx f;
    fx_open(&f);
    int64_t old_ok = enq(&f, "t", NULL, 0, 0);
    int64_t old_dead = enq(&f, "t", NULL, 0, 0);
    int64_t pending = enq(&f, "t", NULL, 0, T0 + 3600 * SEC);
    int64_t running = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, old_ok);
    ASSERT_OK(store_complete(f.st, old_ok, a, NULL, NULL, &f.err), &f.err);
    a = claim_one(&f, old_dead);
    ASSERT_OK(store_fail(f.st, old_dead, a, "x", false, 0, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 100 * SEC);
    int64_t cutoff = now_of(&f);
    struct claim_req r = {.worker_id = "w", .limit = 1, .lease_ms = 3600000};
    struct job_list l = {0};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, running);
    job_list_fini(&l);
    int64_t new_ok = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, new_ok);
    ASSERT_OK(store_complete(f.st, new_ok, a, NULL, NULL, &f.err), &f.err); /* at cutoff */

    int deleted = -1;
    ASSERT_OK(store_prune(f.st, cutoff, 1, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    ASSERT_OK(store_prune(f.st, cutoff, 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    ASSERT_OK(store_prune(f.st, cutoff, 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 0);
    struct job j = {0};
    ASSERT_EQ(store_get(f.st, old_ok, &j, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_get(f.st, old_dead, &j, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(status_of(&f, pending), JOB_PENDING);
    ASSERT_EQ(status_of(&f, running), JOB_RUNNING);
    ASSERT_EQ(status_of(&f, new_ok), JOB_SUCCEEDED);
    /* ids are not reused after a prune */
    int64_t after = enq(&f, "t", NULL, 0, 0);
    ASSERT(after > new_ok);
    fx_close(&f);
}

TEST(next_run_at)
{
    struct fx f;
    fx_open(&f);
    struct claim_req r = {.worker_id = "w", .limit = 1};
    int64_t t = -1;
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, 0);
    enq(&f, "x", "a", 0, T0 + 30 * SEC);
    enq(&f, "y", "a", 0, T0 + 10 * SEC);
    enq(&f, "x", "b", 0, T0 + 20 * SEC);
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, T0 + 10 * SEC);
    const char *types_x[] = {"x"};
    r.types = types_x;
    r.n_types = 1;
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, T0 + 20 * SEC);
    const char *queues_a[] = {"a"};
    r.queues = queues_a;
    r.n_queues = 1;
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, T0 + 30 * SEC);
    const char *types_z[] = {"z"};
    r.types = types_z;
    ASSERT_OK(store_next_run_at(f.st, &r, &t, &f.err), &f.err);
    ASSERT_EQ(t, 0);
    fx_close(&f);
}

TEST(wait_returns)
{
    struct fx f;
    fx_open(&f);
    int64_t t0 = clock_mono_now_us();
    int rc = store_wait(f.st, 20, &f.err);
    ASSERT(rc == 0 || rc == 1);
    ASSERT(clock_mono_now_us() - t0 < 5 * SEC);
    fx_close(&f);
}

TEST(real_clock_by_default)
{
    struct fx f;
    fx_open(&f);
    store_set_clock(f.st, NULL);
    int64_t before = clock_real_now_us();
    int64_t id = enq(&f, "t", NULL, 0, 0);
    struct job g = getj(&f, id);
    /* PostgreSQL uses the server's clock: allow some skew */
    ASSERT(g.created_at_us > before - 60 * SEC);
    ASSERT(g.created_at_us < clock_real_now_us() + 60 * SEC);
    job_fini(&g);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* concurrency: real processes, one connection each                    */

TEST(concurrent_claimers_never_share_a_job)
{
    struct fx f;
    fx_open(&f);
    enum { NJOBS = 600, NPROC = 3 };
    struct job_spec specs[100];
    for (int i = 0; i < 100; i++)
        specs[i] = (struct job_spec){.type = "t"};
    for (int k = 0; k < NJOBS / 100; k++)
        ASSERT_OK(store_enqueue_batch(f.st, specs, 100, NULL, NULL, &f.err), &f.err);
    fflush(NULL); /* or the children repeat what is buffered */
    pid_t pids[NPROC];
    for (int p = 0; p < NPROC; p++) {
        pids[p] = fork();
        ASSERT(pids[p] >= 0);
        if (pids[p] == 0) {
            struct store *st = NULL;
            struct jobd_error e = {0};
            int rc = store_open(f.url, &st, &e);
            if (rc != JOBD_OK)
                child_exit(2);
            store_set_clock(st, &f.mc.clock);
            char wid[32];
            snprintf(wid, sizeof wid, "p%d", p);
            for (;;) {
                struct job_list l = {0};
                struct claim_req r = {.worker_id = wid, .limit = 7};
                rc = store_claim(st, &r, &l, &e);
                if (rc != JOBD_OK) {
                    fprintf(stderr, "claim: %s\n", e.msg);
                    child_exit(3);
                }
                if (l.n == 0) {
                    job_list_fini(&l);
                    break;
                }
                for (size_t i = 0; i < l.n; i++) {
                    rc = store_complete(st, l.v[i].id, l.v[i].attempt, NULL, NULL, &e);
                    if (rc != JOBD_OK) {
                        fprintf(stderr, "complete %lld: %s\n", (long long)l.v[i].id, e.msg);
                        child_exit(4);
                    }
                }
                job_list_fini(&l);
            }
            store_close(st);
            child_exit(0);
        }
    }
    for (int p = 0; p < NPROC; p++) {
        int status = 0;
        ASSERT_EQ(waitpid(pids[p], &status, 0), pids[p]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            TEST_FAIL("claimer %d failed (status %d)", p, status);
    }
    struct job_filter flt = {.status = STORE_ANY, .limit = 1000};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, NJOBS);
    for (size_t i = 0; i < l.n; i++) {
        ASSERT_EQ(l.v[i].status, JOB_SUCCEEDED);
        ASSERT_EQ(l.v[i].attempt, 1);
    }
    job_list_fini(&l);
    fx_close(&f);
}
