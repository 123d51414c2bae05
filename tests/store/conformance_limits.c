/*
 * conformance_limits.c — the conformance cases of queue limits
 * (store_queue_limits, docs/API.md): max_running and rate as claims see them,
 * on every backend. Concurrency across processes is tested through the real
 * binary (tests/integration/test_limits_running.c, test_limits_rate.c); here
 * one claimer at a time pins down the arithmetic and what a held-back job
 * looks like.
 */
#include "conformance.h"

#include "store/operator.h"
#include "store/qlimits.h" /* QLIMITS_REFRESH_MS: how stale a connection may be */

/* Sets queue q's limits: mr = max_running (0 = remove, -1 = unchanged),
 * rate (0 = remove, -1 = unchanged) per per_ms. */
static void
set_limits(struct store *st, const char *q, int32_t mr, int32_t rate, int64_t per_ms)
{
    struct queue_limits_change c = {.set_max_running = mr >= 0,
                                    .max_running = mr,
                                    .set_rate = rate >= 0,
                                    .rate_limit = rate,
                                    .rate_per_ms = per_ms};
    struct jobd_error e = {0};
    ASSERT_OK(store_queue_limits(st, q, &c, &e), &e);
}

/* Claims up to limit jobs from st (queues: NULL = any) and returns how many;
 * *held gets the claim's held_until_us. The jobs are appended to out. */
static size_t
claim_held(struct store *st, const char *const *queues, size_t nq, int limit, struct job_list *out,
           int64_t *held)
{
    struct claim_req r = {.worker_id = "w1",
                          .queues = queues,
                          .n_queues = nq,
                          .limit = limit,
                          .lease_ms = 60000,
                          .held_until_us = held};
    struct jobd_error e = {0};
    size_t n0 = out->n;
    ASSERT_OK(store_claim(st, &r, out, &e), &e);
    return out->n - n0;
}

/* The queue_stat of q from store_queue_stats (zeros if not listed: found false). */
static struct queue_stat
stat_of(struct fx *f, const char *q, bool *found)
{
    struct queue_stat *qs = NULL, out = {0};
    size_t n = 0;
    ASSERT_OK(store_queue_stats(f->st, &qs, &n, &f->err), &f->err);
    *found = false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(qs[i].name, q) == 0) {
            out = qs[i];
            *found = true;
        }
    free(qs);
    return out;
}

TEST(limits_max_running_caps_a_claim_batch)
{
    struct fx f;
    fx_open(&f);
    for (int i = 0; i < 10; i++)
        enq(&f, "t", "lim", 0, 0);
    set_limits(f.st, "lim", 3, -1, 0);
    struct job_list l = {0};
    int64_t held = -1;
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 3);
    /* 7 left due but held back: the claim says when to look again, not "never". */
    ASSERT(held > now_of(&f) && held <= now_of(&f) + SEC);
    held = -1;
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 0);
    ASSERT(held > now_of(&f) && held <= now_of(&f) + SEC);
    /* Prefetched or running, a claimed job holds its slot until it ends. */
    ASSERT_OK(store_complete(f.st, l.v[0].id, l.v[0].attempt, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 1);
    ASSERT_OK(store_fail(f.st, l.v[1].id, l.v[1].attempt, "x", false, 0, NULL, &f.err), &f.err);
    ASSERT_OK(store_release(f.st, l.v[2].id, l.v[2].attempt, &f.err), &f.err);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 1, &l, &held), 1);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 1);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 0);
    job_list_fini(&l);
    fx_close(&f);
}

/*
 * A claim from a limited queue says the job's attempt_floor too (its own
 * statement on PostgreSQL), so a worker's retry delay restarts after a
 * manual retry there as well; and a read of the job says it.
 */
TEST(limits_claim_tells_the_attempt_floor)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .queue = "lim", .max_attempts = 1};
    int64_t id = enq_spec(&f, &s);
    set_limits(f.st, "lim", 5, -1, 0);
    struct job_list l = {0};
    int64_t held = -1;
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 1);
    ASSERT_EQ(l.v[0].attempt_floor, 0);
    ASSERT_OK(store_fail(f.st, id, l.v[0].attempt, "x", false, 0, NULL, &f.err), &f.err);
    job_list_fini(&l);
    ASSERT_OK(store_retry(f.st, id, NULL, &f.err), &f.err);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 1);
    ASSERT_EQ(l.v[0].attempt, 2);
    ASSERT_EQ(l.v[0].attempt_floor, 1);
    struct job g = getj(&f, id); /* running */
    ASSERT_EQ(g.attempt_floor, 1);
    job_fini(&g);
    ASSERT_OK(store_fail(f.st, id, 2, "y", false, 0, NULL, &f.err), &f.err);
    g = getj(&f, id); /* dead: on PostgreSQL a row of jobs_done */
    ASSERT_EQ(g.status, JOB_DEAD);
    ASSERT_EQ(g.attempt_floor, 1);
    job_fini(&g);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(limits_rate_caps_a_window_and_frees_the_next)
{
    struct fx f;
    fx_open(&f); /* T0 is a multiple of 10 s since the epoch: a window starts there */
    for (int i = 0; i < 12; i++)
        enq(&f, "t", "lim", 0, 0);
    set_limits(f.st, "lim", -1, 4, 10000);
    struct job_list l = {0};
    int64_t held = 0;
    ASSERT_EQ(claim_held(f.st, NULL, 0, 3, &l, &held), 3);
    ASSERT_EQ(held, 0);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 1);
    ASSERT_EQ(held, T0 + 10 * SEC); /* the window's end */
    /* Finishing jobs frees no start within the window. */
    for (size_t i = 0; i < l.n; i++)
        ASSERT_OK(store_complete(f.st, l.v[i].id, l.v[i].attempt, NULL, NULL, &f.err), &f.err);
    manual_clock_set(&f.mc, T0 + 10 * SEC - 1);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 0);
    ASSERT_EQ(held, T0 + 10 * SEC);
    manual_clock_set(&f.mc, T0 + 10 * SEC);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 4);
    /* A window with no claims at all does not carry its allowance over. */
    manual_clock_set(&f.mc, T0 + 35 * SEC);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 4);
    ASSERT_EQ(held, 0); /* nothing left to hold */
    job_list_fini(&l);
    fx_close(&f);
}

TEST(limits_both_limits_the_tighter_wins)
{
    struct fx f;
    fx_open(&f);
    for (int i = 0; i < 10; i++)
        enq(&f, "t", "lim", 0, 0);
    set_limits(f.st, "lim", 2, 3, 1000);
    struct job_list l = {0};
    int64_t held = 0;
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 2);
    ASSERT(held > 0 && held < T0 + SEC); /* max_running: look again soon */
    ASSERT_OK(store_complete(f.st, l.v[0].id, l.v[0].attempt, NULL, NULL, &f.err), &f.err);
    ASSERT_OK(store_complete(f.st, l.v[1].id, l.v[1].attempt, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 1);
    ASSERT_EQ(held, T0 + SEC); /* the rate: the window's end */
    job_list_fini(&l);
    fx_close(&f);
}

TEST(limits_null_removes_and_omitted_keeps)
{
    struct fx f;
    fx_open(&f);
    for (int i = 0; i < 6; i++)
        enq(&f, "t", "lim", 0, 0);
    set_limits(f.st, "lim", 1, 5, 60000);
    set_limits(f.st, "lim", -1, -1, 0); /* nothing named: nothing changes */
    bool found;
    struct queue_stat q = stat_of(&f, "lim", &found);
    ASSERT(found);
    ASSERT_EQ(q.max_running, 1);
    ASSERT_EQ(q.rate_limit, 5);
    ASSERT_EQ(q.rate_per_ms, 60000);
    struct job_list l = {0};
    int64_t held = 0;
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 1);
    set_limits(f.st, "lim", 0, -1, 0); /* max_running null; the rate stays */
    q = stat_of(&f, "lim", &found);
    ASSERT_EQ(q.max_running, 0);
    ASSERT_EQ(q.rate_limit, 5);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 4);
    ASSERT_EQ(held, T0 + 60 * SEC);
    set_limits(f.st, "lim", -1, 0, 0); /* rate null */
    q = stat_of(&f, "lim", &found);
    ASSERT_EQ(q.rate_limit, 0);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 1);
    ASSERT_EQ(held, 0);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(limits_do_not_touch_other_queues)
{
    struct fx f;
    fx_open(&f);
    for (int i = 0; i < 5; i++) {
        enq(&f, "t", "lim", 10, 0); /* higher priority, yet only one may run */
        enq(&f, "t", "free", 0, 0);
    }
    set_limits(f.st, "lim", 1, -1, 0);
    struct job_list l = {0};
    int64_t held = 0;
    ASSERT_EQ(claim_held(f.st, NULL, 0, 20, &l, &held), 6);
    size_t lim = 0;
    for (size_t i = 0; i < l.n; i++)
        lim += strcmp(l.v[i].queue, "lim") == 0;
    ASSERT_EQ(lim, 1);
    for (int i = 0; i < 3; i++)
        enq(&f, "t", "free", 0, 0);
    const char *free_q[] = {"free"}, *both[] = {"lim", "free"};
    ASSERT_EQ(claim_held(f.st, free_q, 1, 2, &l, &held), 2);
    ASSERT_EQ(claim_held(f.st, both, 2, 10, &l, &held), 1);
    ASSERT(held > 0); /* lim still has due jobs it holds back */
    job_list_fini(&l);
    fx_close(&f);
}

TEST(limits_held_back_jobs_stay_pending_and_keep_their_attempt)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[3];
    for (int i = 0; i < 3; i++)
        ids[i] = enq(&f, "t", "lim", 0, 0);
    set_limits(f.st, "lim", -1, 1, 1000);
    struct job_list l = {0};
    int64_t held = 0;
    for (int k = 0; k < 5; k++) /* held back again and again */
        ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), k == 0 ? 1 : 0);
    for (int i = 1; i < 3; i++) {
        struct job j = {0};
        ASSERT_OK(store_get(f.st, ids[i], &j, &f.err), &f.err);
        ASSERT_EQ(j.status, JOB_PENDING);
        ASSERT_EQ(j.attempt, 0);
        ASSERT_EQ(j.run_at_us, T0); /* still due, not pushed back */
        ASSERT(j.last_error == NULL);
        job_fini(&j);
    }
    job_list_fini(&l);
    fx_close(&f);
}

TEST(limits_listed_without_jobs_and_validated)
{
    struct fx f;
    fx_open(&f);
    bool found;
    set_limits(f.st, "empty", 7, 20, 1000);
    struct queue_stat q = stat_of(&f, "empty", &found);
    ASSERT(found);
    ASSERT_EQ(q.max_running, 7);
    ASSERT_EQ(q.rate_limit, 20);
    ASSERT_EQ(q.rate_per_ms, 1000);
    ASSERT(!q.paused);
    struct queue_limits_change bad[] = {
        {.set_max_running = true, .max_running = -1},
        {.set_max_running = true, .max_running = QUEUE_LIMIT_MAX + 1},
        {.set_rate = true, .rate_limit = -5, .rate_per_ms = 1000},
        {.set_rate = true, .rate_limit = 5, .rate_per_ms = 999},
        {.set_rate = true, .rate_limit = 5, .rate_per_ms = QUEUE_RATE_PER_MAX_MS + 1},
    };
    const char *field[] = {"max_running", "max_running", "rate.limit", "rate.per", "rate.per"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jobd_error e = {0};
        ASSERT_EQ(store_queue_limits(f.st, "empty", &bad[i], &e), JOBD_E_INVALID);
        ASSERT_STR_EQ(e.field, field[i]);
    }
    struct jobd_error e = {0};
    struct queue_limits_change ok = {.set_max_running = true, .max_running = 1};
    ASSERT_EQ(store_queue_limits(f.st, "", &ok, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "name");
    q = stat_of(&f, "empty", &found);
    ASSERT_EQ(q.max_running, 7); /* refused changes changed nothing */
    fx_close(&f);
}

TEST(limits_set_elsewhere_hold_at_once_and_apply_within_the_refresh)
{
    struct fx f;
    fx_open(&f);
    struct store *other = fx_connect(&f);
    for (int i = 0; i < 6; i++)
        enq(&f, "t", "lim", 0, 0);
    struct job_list l = {0};
    int64_t held = 0;
    /* f.st has read its (empty) list of limited queues... */
    const char *none[] = {"nothing-here"};
    ASSERT_EQ(claim_held(f.st, none, 1, 1, &l, &held), 0);
    /* ...when another connection (another server) limits the queue. */
    set_limits(other, "lim", 2, -1, 0);
    /* Never more than 2: held at once (0) while f.st's list is stale, or 2
     * if it was refreshed meanwhile (a slow machine: a server's list is
     * older than the test's last claim through it). */
    int at_once = claim_held(f.st, NULL, 0, 10, &l, &held);
    ASSERT(at_once == 0 || at_once == 2);
    usleep((QLIMITS_REFRESH_MS + 100) * 1000);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 2 - at_once);
    ASSERT_EQ(claim_held(other, NULL, 0, 10, &l, &held), 0);
    /* Removing it elsewhere frees the queue at once: the ordinary claim reads the row. */
    set_limits(other, "lim", 0, -1, 0);
    ASSERT_EQ(claim_held(f.st, NULL, 0, 10, &l, &held), 4);
    job_list_fini(&l);
    store_close(other);
    fx_close(&f);
}
