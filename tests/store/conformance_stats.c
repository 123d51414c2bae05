/*
 * conformance_stats.c — the conformance cases of the statistics
 * (store/stats.h, GET /v1/stats, throughput_1m). The manual clock puts every
 * event in a known 10-second bucket.
 */
#include "conformance.h"

#include "store/stats.h"

/* Sets the fixture's clock to T0 + s seconds. */
static void
at_s(struct fx *f, int64_t s)
{
    atomic_store(&f->mc.now_us, T0 + s * SEC);
}

/* The series of (since, step, queue) into *s; asserts success. */
static void
series(struct fx *f, int64_t since, int64_t step, const char *queue, struct stats_series *s)
{
    free(s->points);
    memset(s, 0, sizeof *s);
    ASSERT_OK(store_stats_series(f->st, since, step, queue, s, &f->err), &f->err);
    ASSERT_EQ(s->step_s, step);
}

/* Checks point i of s: its start (seconds after T0) and counts. */
static void
check_point(const struct stats_series *s, size_t i, int64_t t, int64_t enq, int64_t ok,
            int64_t failed, int64_t dead)
{
    ASSERT(i < s->n);
    const struct stats_point *p = &s->points[i];
    ASSERT_EQ(p->t_s, T0 / SEC + t);
    ASSERT_EQ(p->n[STATS_ENQUEUED], enq);
    ASSERT_EQ(p->n[STATS_SUCCEEDED], ok);
    ASSERT_EQ(p->n[STATS_FAILED], failed);
    ASSERT_EQ(p->n[STATS_DEAD], dead);
}

/*
 * The story of the statistics cases, as buckets (seconds after T0):
 *   0  qa: 3 enqueued, qb: 1 enqueued, qa: 1 enqueued with max_attempts 1
 *  10  qa: 1 succeeded, 1 failed (retryable), 1 dead (permanent)
 *  20  qb: its lease expired and was reaped: failed; qa's one-attempt job
 *      reaped: dead
 */
static void
stats_story(struct fx *f)
{
    at_s(f, 0);
    int64_t a1 = enq(f, "t", "qa", 9, 0), a2 = enq(f, "t", "qa", 8, 0);
    int64_t a3 = enq(f, "t", "qa", 7, 0);
    struct job_spec one = {.type = "t", .queue = "qa", .priority = 1, .max_attempts = 1};
    int64_t a4 = enq_spec(f, &one);
    int64_t b1 = enq(f, "t", "qb", 5, 0);
    struct job_spec key = {.type = "t", .queue = "qa", .idempotency_key = "k1"};
    enq_spec(f, &key);
    enq_spec(f, &key); /* a replay enqueues nothing */
    at_s(f, 12);
    int32_t t1 = claim_one(f, a1), t2 = claim_one(f, a2), t3 = claim_one(f, a3);
    struct completion c[2] = {{.id = a1, .attempt = t1}, {.id = a1, .attempt = t1 + 5}};
    int outcome[2];
    ASSERT_OK(store_complete_batch(f->st, c, 2, outcome, &f->err), &f->err);
    ASSERT_EQ(outcome[1], JOBD_E_STALE); /* a stale report counts nothing */
    ASSERT_OK(store_fail(f->st, a2, t2, "again", true, 60000, NULL, &f->err), &f->err);
    ASSERT_OK(store_fail(f->st, a3, t3, "never", false, 0, NULL, &f->err), &f->err);
    ASSERT(store_fail(f->st, a3, t3, "late", true, 0, NULL, &f->err) == JOBD_E_STALE);
    at_s(f, 21);
    struct job_list l = {0};
    claim(f, 2, 1000, &l); /* b1 (priority 5) and a4 (priority 1) */
    ASSERT_EQ(l.n, 2);
    ASSERT(l.v[0].id == b1 && l.v[1].id == a4);
    job_list_fini(&l);
    at_s(f, 25);
    int reaped = 0;
    ASSERT_OK(store_reap(f->st, 10, NULL, &reaped, &f->err), &f->err);
    ASSERT_EQ(reaped, 2);
    ASSERT_EQ(status_of(f, a4), JOB_DEAD);
}

TEST(stats_counts_per_bucket)
{
    struct fx f;
    fx_open(&f);
    stats_story(&f);
    struct stats_series s = {0};
    series(&f, 60, 10, NULL, &s); /* now T0+25: [T0-30, T0+30) */
    ASSERT_EQ(s.n, 6);
    check_point(&s, 0, -30, 0, 0, 0, 0); /* buckets with no events are zeros */
    check_point(&s, 1, -20, 0, 0, 0, 0);
    check_point(&s, 2, -10, 0, 0, 0, 0);
    check_point(&s, 3, 0, 6, 0, 0, 0);
    check_point(&s, 4, 10, 0, 1, 1, 1);
    check_point(&s, 5, 20, 0, 0, 1, 1); /* the current bucket, still filling */
    series(&f, 60, 10, "qb", &s);       /* one queue */
    check_point(&s, 3, 0, 1, 0, 0, 0);
    check_point(&s, 4, 10, 0, 0, 0, 0);
    check_point(&s, 5, 20, 0, 0, 1, 0);
    series(&f, 60, 10, "nosuch", &s);
    for (size_t i = 0; i < s.n; i++)
        check_point(&s, i, -30 + 10 * (int64_t)i, 0, 0, 0, 0);
    free(s.points);
    fx_close(&f);
}

TEST(stats_steps_aggregate_buckets)
{
    struct fx f;
    fx_open(&f);
    stats_story(&f);
    struct stats_series s = {0};
    series(&f, 60, 30, NULL, &s); /* aligned to 30 s: [T0-30, T0), [T0, T0+30) */
    ASSERT_EQ(s.n, 2);
    check_point(&s, 0, -30, 0, 0, 0, 0);
    check_point(&s, 1, 0, 6, 1, 2, 2);
    series(&f, 3600, 60, "qa", &s); /* the default: an hour of minutes */
    ASSERT_EQ(s.n, 60);
    check_point(&s, 59, 0, 5, 1, 1, 2);
    check_point(&s, 58, -60, 0, 0, 0, 0);
    series(&f, 25, 10, NULL, &s); /* since rounds up to whole steps */
    ASSERT_EQ(s.n, 3);
    check_point(&s, 0, 0, 6, 0, 0, 0);
    at_s(&f, 7 * 86400); /* a week later: 60,480 points of 10 s, the first one ours */
    series(&f, 7 * 86400, 10, NULL, &s);
    ASSERT_EQ(s.n, 60480);
    check_point(&s, 0, 10, 0, 1, 1, 1);
    free(s.points);
    fx_close(&f);
}

TEST(stats_throughput_last_minute)
{
    struct fx f;
    fx_open(&f);
    stats_story(&f);
    struct queue_stat *qs = NULL;
    size_t n = 0;
    at_s(&f, 65); /* the buckets from T0+10 on: the last minute */
    ASSERT_OK(store_queue_stats(f.st, &qs, &n, &f.err), &f.err);
    ASSERT_EQ(n, 2);
    ASSERT_STR_EQ(qs[0].name, "qa");
    ASSERT_EQ(qs[0].throughput_1m.succeeded, 1);
    ASSERT_EQ(qs[0].throughput_1m.failed, 1);
    ASSERT_EQ(qs[0].throughput_1m.dead, 2);
    ASSERT_EQ(qs[1].throughput_1m.failed, 1);
    ASSERT_EQ(qs[1].throughput_1m.dead, 0);
    free(qs);
    at_s(&f, 75); /* T0+10 has left the minute */
    ASSERT_OK(store_queue_stats(f.st, &qs, &n, &f.err), &f.err);
    ASSERT_EQ(qs[0].throughput_1m.succeeded, 0);
    ASSERT_EQ(qs[0].throughput_1m.dead, 1);
    free(qs);
    fx_close(&f);
}

TEST(stats_bad_arguments_and_prune)
{
    struct fx f;
    fx_open(&f);
    stats_story(&f);
    struct stats_series s = {0};
    static const struct {
        int64_t since, step;
        const char *field;
    } bad[] = {{0, 10, "since"},
               {7 * 86400 + 1, 60, "since"},
               {60, 5, "step"},
               {60, 15, "step"},
               {60, 120, "step"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ASSERT_EQ(store_stats_series(f.st, bad[i].since, bad[i].step, NULL, &s, &f.err),
                  JOBD_E_INVALID);
        ASSERT_STR_EQ(f.err.field, bad[i].field);
    }
    ASSERT_EQ(store_stats_series(f.st, 60, 10, "bad queue!", &s, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "queue");
    int deleted = 0;
    ASSERT_OK(store_stats_prune(f.st, T0 / SEC + 20, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 3); /* (T0, qa), (T0, qb), (T0+10, qa): one writer, one row each */
    series(&f, 60, 10, NULL, &s);
    check_point(&s, 3, 0, 0, 0, 0, 0);
    check_point(&s, 4, 10, 0, 0, 0, 0);
    check_point(&s, 5, 20, 0, 0, 1, 1);
    free(s.points);
    fx_close(&f);
}
