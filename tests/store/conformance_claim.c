/*
 * conformance_claim.c — the conformance cases of claim: the lease and the
 * attempt it sets, its order (priority, run_at, id, across queues), its
 * limit, and what it leaves alone (future jobs, paused queues, other types
 * and queues).
 */
#include "conformance.h"

/* ------------------------------------------------------------------ */
/* claim                                                               */

TEST(claim_sets_lease_and_attempt)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    manual_clock_advance(&f.mc, 2 * SEC);
    struct job_list l = {0};
    struct claim_req r = {.worker_id = "host-a:17", .limit = 10, .lease_ms = 45000};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    struct job *c = &l.v[0];
    ASSERT_EQ(c->id, id);
    ASSERT_EQ(c->status, JOB_RUNNING);
    ASSERT_EQ(c->attempt, 1);
    ASSERT_STR_EQ(c->worker_id, "host-a:17");
    ASSERT_EQ(c->lease_expires_at_us, T0 + 2 * SEC + 45 * SEC);
    ASSERT_EQ(c->started_at_us, T0 + 2 * SEC);
    ASSERT_STR_EQ(c->type, "t");
    ASSERT_STR_EQ(c->payload, "{}");
    job_list_fini(&l);

    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_RUNNING);
    ASSERT_EQ(g.attempt, 1);
    ASSERT_STR_EQ(g.worker_id, "host-a:17");
    ASSERT_EQ(g.lease_expires_at_us, T0 + 47 * SEC);
    job_fini(&g);

    /* nothing left to claim */
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_default_lease)
{
    struct fx f;
    fx_open(&f);
    enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 1, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].lease_expires_at_us, T0 + JOB_DEFAULT_LEASE_MS * MS);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_order_priority_run_at_id)
{
    struct fx f;
    fx_open(&f);
    /* enqueued in a scrambled order */
    int64_t p0_late = enq(&f, "t", NULL, 0, T0 - 1 * SEC);
    int64_t p5_b = enq(&f, "t", NULL, 5, T0 - 5 * SEC);
    int64_t p0_early = enq(&f, "t", NULL, 0, T0 - 9 * SEC);
    int64_t p5_a = enq(&f, "t", NULL, 5, T0 - 5 * SEC);
    int64_t pneg = enq(&f, "t", NULL, -3, T0 - 60 * SEC);
    int64_t p9 = enq(&f, "t", NULL, 9, T0);
    int64_t want[] = {p9, p5_b, p5_a, p0_early, p0_late, pneg};
    struct job_list l = {0};
    claim(&f, 100, 0, &l);
    ASSERT_EQ(l.n, 6);
    for (size_t i = 0; i < 6; i++)
        ASSERT_EQ(l.v[i].id, want[i]);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_order_across_queues)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", "qa", 1, 0);
    int64_t b = enq(&f, "t", "qb", 2, 0);
    int64_t c = enq(&f, "t", "qa", 3, 0);
    struct job_list l = {0};
    claim(&f, 2, 0, &l);
    ASSERT_EQ(l.n, 2);
    ASSERT_EQ(l.v[0].id, c);
    ASSERT_EQ(l.v[1].id, b);
    job_list_fini(&l);
    claim(&f, 2, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, a);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_limit)
{
    struct fx f;
    fx_open(&f);
    for (int i = 0; i < 7; i++)
        enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 3, 0, &l);
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    claim(&f, 3, 0, &l);
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    claim(&f, 3, 0, &l);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    struct claim_req r = {.worker_id = "w", .limit = 0};
    ASSERT_EQ(store_claim(f.st, &r, &l, &f.err), JOBD_E_INVALID);
    r.limit = 1001;
    ASSERT_EQ(store_claim(f.st, &r, &l, &f.err), JOBD_E_INVALID);
    fx_close(&f);
}

TEST(future_jobs_not_claimed)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, T0 + 10 * SEC);
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    manual_clock_advance(&f.mc, 10 * SEC - 1);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    manual_clock_advance(&f.mc, 1); /* run_at <= now */
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, id);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(paused_queue_not_claimed)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", "slow", 5, 0);
    int64_t b = enq(&f, "t", "fast", 0, 0);
    ASSERT_OK(store_queue_pause(f.st, "slow", true, &f.err), &f.err);
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, b);
    job_list_fini(&l);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    /* pausing twice is fine; resuming makes it claimable */
    ASSERT_OK(store_queue_pause(f.st, "slow", true, &f.err), &f.err);
    ASSERT_OK(store_queue_pause(f.st, "slow", false, &f.err), &f.err);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, a);
    job_list_fini(&l);
    ASSERT_EQ(store_queue_pause(f.st, "Bad Name", true, &f.err), JOBD_E_INVALID);
    fx_close(&f);
}

TEST(pause_before_jobs_exist)
{
    struct fx f;
    fx_open(&f);
    ASSERT_OK(store_queue_pause(f.st, "later", true, &f.err), &f.err);
    enq(&f, "t", "later", 0, 0);
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    ASSERT_OK(store_queue_pause(f.st, "later", false, &f.err), &f.err);
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(claim_filters_types_and_queues)
{
    struct fx f;
    fx_open(&f);
    int64_t ax = enq(&f, "x", "a", 0, 0);
    int64_t ay = enq(&f, "y", "a", 0, 0);
    int64_t bx = enq(&f, "x", "b", 0, 0);
    int64_t cz = enq(&f, "z", "c", 0, 0);
    const char *types_x[] = {"x"};
    const char *queues_b[] = {"b", "nope"};
    struct job_list l = {0};

    struct claim_req r = {.worker_id = "w",
                          .limit = 10,
                          .queues = queues_b,
                          .n_queues = 2,
                          .types = types_x,
                          .n_types = 1};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, bx);
    job_list_fini(&l);

    r = (struct claim_req){.worker_id = "w", .limit = 10, .types = types_x, .n_types = 1};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, ax);
    job_list_fini(&l);

    const char *types_yz[] = {"z", "y"};
    const char *queues_ac[] = {"a"};
    r = (struct claim_req){.worker_id = "w",
                           .limit = 10,
                           .queues = queues_ac,
                           .n_queues = 1,
                           .types = types_yz,
                           .n_types = 2};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, ay);
    job_list_fini(&l);

    r = (struct claim_req){.worker_id = "w", .limit = 10};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, cz);
    job_list_fini(&l);
    fx_close(&f);
}
