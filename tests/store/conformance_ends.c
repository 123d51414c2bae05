/*
 * conformance_ends.c — the conformance cases of what a waiting request
 * needs (docs/API.md, Waiting for a result): store_job_states reads every
 * status in one call, and store_wait_ends hears each kind of end
 * committed on another connection (a completion, a failure for good, a
 * cancel), and on PostgreSQL not an enqueue (its own channel).
 */
#include "conformance.h"

TEST(job_states_reads_every_status)
{
    struct fx f;
    fx_open(&f);
    int64_t pending = enq(&f, "p", NULL, 0, T0 + 100 * SEC);
    int64_t ok = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, ok);
    ASSERT_OK(store_complete(f.st, ok, a, NULL, NULL, &f.err), &f.err);
    int64_t dead = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, dead);
    ASSERT_OK(store_fail(f.st, dead, a, "no", false, 0, NULL, &f.err), &f.err);
    int64_t running = enq(&f, "t", NULL, 0, 0);
    claim_one(&f, running);
    int64_t cancelled = enq(&f, "c", NULL, 0, T0 + 100 * SEC);
    ASSERT_OK(store_cancel(f.st, cancelled, NULL, &f.err), &f.err);
    int64_t ids[] = {pending, ok, dead, running, cancelled, 987654321, ok};
    int want[] = {JOB_PENDING, JOB_SUCCEEDED, JOB_DEAD, JOB_RUNNING, JOB_CANCELLED,
                  -1,          JOB_SUCCEEDED};
    int got[7];
    ASSERT_OK(store_job_states(f.st, ids, 7, got, &f.err), &f.err);
    for (int i = 0; i < 7; i++)
        ASSERT_EQ(got[i], want[i]);
    ASSERT_OK(store_job_states(f.st, ids, 0, got, &f.err), &f.err);
    fx_close(&f);
}

/*
 * As a server asks at --max-waits' default: 10,000 waits over 100 jobs,
 * each job waited for many times, unknown ids among them, in no order.
 * Every answer lands at its own place (the store reads each job once).
 */
TEST(job_states_places_ten_thousand_waits)
{
    struct fx f;
    fx_open(&f);
    enum { JOBS = 100, WAITS = 10000 };
    int64_t job[JOBS];
    int state[JOBS];
    for (int j = 0; j < JOBS; j++) {
        job[j] = enq(&f, "w", NULL, 0, T0 + 100 * SEC);
        state[j] = JOB_PENDING;
        if (j % 3 == 0) {
            ASSERT_OK(store_cancel(f.st, job[j], NULL, &f.err), &f.err);
            state[j] = JOB_CANCELLED;
        }
    }
    int64_t *ids = malloc(WAITS * sizeof *ids);
    int *want = malloc(WAITS * sizeof *want), *got = malloc(WAITS * sizeof *got);
    ASSERT(ids != NULL && want != NULL && got != NULL);
    uint32_t x = 12345;
    for (int i = 0; i < WAITS; i++) {
        x = x * 1103515245u + 12345u;
        int j = (int)((x >> 8) % (JOBS + 7));
        ids[i] = j < JOBS ? job[j] : 900000000 + j; /* 7 ids of no job */
        want[i] = j < JOBS ? state[j] : -1;
    }
    ASSERT_OK(store_job_states(f.st, ids, WAITS, got, &f.err), &f.err);
    for (int i = 0; i < WAITS; i++)
        ASSERT_EQ(got[i], want[i]);
    free(ids);
    free(want);
    free(got);
    fx_close(&f);
}

/* Waits up to 10 s for store_wait_ends on st to report an end. */
static void
expect_end(struct fx *f, struct store *st, const char *what)
{
    int64_t t0 = clock_mono_now_us();
    for (;;) {
        int r = store_wait_ends(st, 1000, &f->err);
        if (r < 0)
            TEST_FAIL("%s: store_wait_ends: %s", what, f->err.msg);
        if (r > 0)
            return;
        if (clock_mono_now_us() - t0 > 10 * SEC)
            TEST_FAIL("%s: no end heard within 10 s", what);
    }
}

/* Drains what st has heard so far (a LISTEN just issued reports once). */
static void
drain(struct fx *f, struct store *st)
{
    while (store_wait_ends(st, 100, &f->err) > 0)
        ;
}

TEST(wait_ends_hears_ends_on_another_connection)
{
    struct fx f;
    fx_open(&f);
    if (!store_wait_ready(f.st)) {
        fx_close(&f); /* no signal here (a transaction pooler): nothing to hear */
        return;
    }
    struct store *other = fx_connect(&f);
    drain(&f, f.st);
    if (is_pg()) {
        /* Its own channel: new work is not an end. */
        enq(&f, "quiet", NULL, 0, T0 + 100 * SEC);
        ASSERT_EQ(store_wait_ends(f.st, 300, &f.err), 0);
    }
    int64_t id = enq(&f, "t", NULL, 0, 0);
    drain(&f, f.st);
    int32_t a = claim_one(&f, id);
    drain(&f, f.st);
    ASSERT_OK(store_complete(other, id, a, NULL, NULL, &f.err), &f.err);
    expect_end(&f, f.st, "a completion");
    id = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, id);
    drain(&f, f.st);
    struct completion c = {id, a, NULL};
    int outcome = -1;
    ASSERT_OK(store_complete_batch(other, &c, 1, &outcome, &f.err), &f.err);
    ASSERT_EQ(outcome, JOBD_OK);
    expect_end(&f, f.st, "a batch of completions");
    id = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, id);
    drain(&f, f.st);
    ASSERT_OK(store_fail(other, id, a, "no", false, 0, NULL, &f.err), &f.err);
    expect_end(&f, f.st, "a failure for good");
    id = enq(&f, "t", NULL, 0, T0 + 100 * SEC);
    drain(&f, f.st);
    ASSERT_OK(store_cancel(other, id, NULL, &f.err), &f.err);
    expect_end(&f, f.st, "a cancel");
    store_close(other);
    if (is_pg()) {
        /* Announced only while someone listens: the listener's row goes with it. */
        ASSERT_EQ(raw_count(&f, "SELECT count(*) FROM jobd.result_listeners"), 1);
        store_close(f.st);
        f.st = fx_connect(&f);
        ASSERT_EQ(raw_count(&f, "SELECT count(*) FROM jobd.result_listeners"), 0);
    }
    fx_close(&f);
}
