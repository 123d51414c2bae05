/*
 * conformance_trace.c — a job's traceparent (docs/API.md, Trace context)
 * is kept with it from enqueue to the end: read back by every read (one
 * job, a listing, a claim, a worker's claim that asks for what a run needs
 * only), and carried along wherever the row moves (a failure back to
 * pending, a release, a death, a cancel, a retry, a bulk retry, the
 * archive pass, the reaper, which also hands it out for its log line). A
 * job enqueued without one reads back NULL.
 */
#include <string.h>

#include "conformance.h"
#include "store/operator.h"

#define TP1 "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TP2 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"

static void
expect_tp(struct fx *f, int64_t id, const char *tp)
{
    struct job j = getj(f, id);
    if (tp == NULL)
        ASSERT(j.traceparent == NULL);
    else
        ASSERT_STR_EQ(j.traceparent, tp);
    job_fini(&j);
}

/* Claims exactly id (by type "t", as a worker does) and checks what it carries. */
static int32_t
claim_tp(struct fx *f, int64_t id, const char *tp)
{
    const char *types[] = {"t"};
    struct claim_req r = {
        .worker_id = "w1", .types = types, .n_types = 1, .limit = 1, .run_only = true};
    struct job_list l = {0};
    ASSERT_OK(store_claim(f->st, &r, &l, &f->err), &f->err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, id);
    if (tp == NULL)
        ASSERT(l.v[0].traceparent == NULL);
    else
        ASSERT_STR_EQ(l.v[0].traceparent, tp);
    int32_t a = l.v[0].attempt;
    job_list_fini(&l);
    return a;
}

TEST(traceparent_kept_from_enqueue_to_the_end)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .traceparent = TP1};
    struct job out = {0};
    ASSERT_OK(store_enqueue(f.st, &s, &out, NULL, &f.err), &f.err);
    ASSERT_STR_EQ(out.traceparent, TP1);
    int64_t id = out.id;
    job_fini(&out);
    int64_t plain = enq(&f, "u", NULL, 0, 0);
    expect_tp(&f, id, TP1);
    expect_tp(&f, plain, NULL);

    struct job_filter flt = {.limit = 10};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 2);
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].id == id)
            ASSERT_STR_EQ(l.v[i].traceparent, TP1);
        else
            ASSERT(l.v[i].traceparent == NULL);
    job_list_fini(&l);

    /* a failure back to pending, a release, then death: kept each time */
    int32_t a = claim_tp(&f, id, TP1);
    ASSERT_OK(store_fail(f.st, id, a, "x", true, 0, NULL, &f.err), &f.err);
    expect_tp(&f, id, TP1);
    a = claim_tp(&f, id, TP1);
    if (!is_remote()) { /* a remote worker gives a claim back through its own route */
        ASSERT_OK(store_release(f.st, id, a, &f.err), &f.err);
        expect_tp(&f, id, TP1);
        a = claim_tp(&f, id, TP1);
    }
    ASSERT_OK(store_fail(f.st, id, a, "x", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    expect_tp(&f, id, TP1);
    /* a retry, a cancel, a bulk retry */
    ASSERT_OK(store_retry(f.st, id, NULL, &f.err), &f.err);
    expect_tp(&f, id, TP1);
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_CANCELLED);
    expect_tp(&f, id, TP1);
    int64_t ids[] = {id};
    struct bulk_req br = {.action = BULK_RETRY, .f = {.status = STORE_ANY}, .ids = ids, .n_ids = 1};
    struct bulk_counts c = {0};
    int64_t cursor = 0;
    ASSERT_OK(store_bulk_batch(f.st, &br, 10, &cursor, &c, &f.err), &f.err);
    ASSERT_EQ(c.changed, 1);
    expect_tp(&f, id, TP1);
    /* a completion, then the archive pass */
    a = claim_tp(&f, id, TP1);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    expect_tp(&f, id, TP1);
    int moved = -1;
    manual_clock_advance(&f.mc, SEC);
    ASSERT_OK(store_archive(f.st, now_of(&f) + 1, 100, &moved, &f.err), &f.err);
    expect_tp(&f, id, TP1);
    fx_close(&f);
}

TEST(traceparent_kept_by_batches)
{
    struct fx f;
    fx_open(&f);
    /* without keys (one statement on PostgreSQL) and with them (another) */
    for (int keyed = 0; keyed < 2; keyed++) {
        struct job_spec s[3] = {
            {.type = "t", .traceparent = TP1, .idempotency_key = keyed ? "k1" : NULL},
            {.type = "t"},
            {.type = "t", .traceparent = TP2, .idempotency_key = keyed ? "k2" : NULL},
        };
        struct job out[3] = {0};
        ASSERT_OK(store_enqueue_batch(f.st, s, 3, out, NULL, &f.err), &f.err);
        ASSERT_STR_EQ(out[0].traceparent, TP1);
        ASSERT(out[1].traceparent == NULL);
        ASSERT_STR_EQ(out[2].traceparent, TP2);
        expect_tp(&f, out[0].id, TP1);
        expect_tp(&f, out[1].id, NULL);
        expect_tp(&f, out[2].id, TP2);
        for (int i = 0; i < 3; i++)
            job_fini(&out[i]);
    }
    fx_close(&f);
}

/* The reaper's log line names the trace (store_reap_jobs' reaped_job). */
TEST(traceparent_of_reaped_jobs)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .traceparent = TP1};
    int64_t id = enq_spec(&f, &s);
    int64_t plain = enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 2, 1000, &l);
    ASSERT_EQ(l.n, 2);
    job_list_fini(&l);
    manual_clock_advance(&f.mc, 2 * SEC);
    struct reaped_job out[4];
    int reaped = 0;
    ASSERT_OK(store_reap_jobs(f.st, 10, NULL, out, 4, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 2);
    for (int i = 0; i < 2; i++)
        if (out[i].id == id)
            ASSERT_STR_EQ(out[i].traceparent, TP1);
        else if (out[i].id == plain)
            ASSERT_STR_EQ(out[i].traceparent, "");
        else
            TEST_FAIL("reaped job %lld", (long long)out[i].id);
    expect_tp(&f, id, TP1);
    fx_close(&f);
}

TEST(traceparent_invalid_refused_naming_the_field)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .traceparent = "00-xyz"};
    struct job out = {0};
    ASSERT_EQ(store_enqueue(f.st, &s, &out, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "traceparent");
    struct job_spec b[2] = {{.type = "t"}, {.type = "t", .traceparent = "bad"}};
    ASSERT_EQ(store_enqueue_batch(f.st, b, 2, NULL, NULL, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "jobs[1].traceparent");
    fx_close(&f);
}
