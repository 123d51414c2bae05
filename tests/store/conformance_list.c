/*
 * conformance_list.c — the conformance cases of listing jobs (newest first
 * across both tables, cursors, filters) and of idempotency keys (replay,
 * conflict, a key kept after its job finished).
 */
#include "conformance.h"

/* ------------------------------------------------------------------ */
/* list                                                                */

TEST(list_newest_first_across_tables_with_cursor)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[25];
    for (int i = 0; i < 25; i++)
        ids[i] = enq(&f, "t", NULL, 0, 0);
    /* finish a few so the list spans the hot and the finished jobs */
    struct job_list l = {0};
    claim(&f, 5, 0, &l);
    for (size_t i = 0; i < l.n; i++)
        ASSERT_OK(store_complete(f.st, l.v[i].id, l.v[i].attempt, NULL, NULL, &f.err), &f.err);
    job_list_fini(&l);

    struct job_filter flt = {.status = STORE_ANY, .limit = 10};
    int64_t next = 0;
    int seen = 0;
    for (int page = 0; page < 5; page++) {
        ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
        for (size_t i = 0; i < l.n; i++) {
            ASSERT_EQ(l.v[i].id, ids[24 - seen]);
            seen++;
        }
        job_list_fini(&l);
        if (next == 0)
            break;
        flt.before_id = next;
    }
    ASSERT_EQ(seen, 25);
    ASSERT_EQ(next, 0);
    /* default limit 100 */
    flt = (struct job_filter){.status = STORE_ANY};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 25);
    ASSERT_EQ(next, 0);
    job_list_fini(&l);
    flt.limit = 1001;
    ASSERT_EQ(store_list(f.st, &flt, &l, &next, &f.err), JOBD_E_INVALID);
    fx_close(&f);
}

/* due: pending jobs whose run_at has come, or scheduled for later (docs/API.md, Jobs). */
static void
expect_due(struct fx *f, int status, int due, const int64_t *want, size_t n)
{
    struct job_filter flt = {.status = status, .due = due};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f->st, &flt, &l, &next, &f->err), &f->err);
    ASSERT_EQ(l.n, n);
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(l.v[i].id, want[i]);
    job_list_fini(&l);
}

TEST(list_due_filter)
{
    struct fx f;
    fx_open(&f);
    int64_t now = enq(&f, "t", "qa", 0, 0);
    int64_t later = enq(&f, "t", "qa", 0, T0 + 100 * SEC);
    int64_t done = enq(&f, "t", "qb", 0, 0);
    ASSERT_OK(store_cancel(f.st, done, NULL, &f.err), &f.err);
    expect_due(&f, STORE_ANY, JOB_DUE_NOW, (int64_t[]){now}, 1);
    expect_due(&f, JOB_PENDING, JOB_DUE_NOW, (int64_t[]){now}, 1);
    expect_due(&f, STORE_ANY, JOB_DUE_LATER, (int64_t[]){later}, 1);
    expect_due(&f, STORE_ANY, JOB_DUE_ANY, (int64_t[]){done, later, now}, 3);
    struct job_filter bad = {.status = JOB_CANCELLED, .due = JOB_DUE_NOW};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_EQ(store_list(f.st, &bad, &l, &next, &f.err), JOBD_E_INVALID);
    manual_clock_advance(&f.mc, 100 * SEC); /* run_at == now is due */
    expect_due(&f, STORE_ANY, JOB_DUE_NOW, (int64_t[]){later, now}, 2);
    expect_due(&f, STORE_ANY, JOB_DUE_LATER, NULL, 0);
    fx_close(&f);
}

TEST(list_filters)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "x", "qa", 0, 0);
    int64_t b = enq(&f, "y", "qa", 0, 0);
    int64_t c = enq(&f, "x", "qb", 0, 0);
    struct job_spec s = {.type = "x", .queue = "qb", .schedule = "nightly", .scheduled_for_us = T0};
    int64_t d = enq_spec(&f, &s);
    /* a succeeds, d is running */
    int32_t at = claim_one(&f, a);
    ASSERT_OK(store_complete(f.st, a, at, NULL, NULL, &f.err), &f.err);
    const char *types_x[] = {"x"};
    const char *queues_qb[] = {"qb"};
    struct claim_req r = {.worker_id = "w",
                          .limit = 1,
                          .types = types_x,
                          .n_types = 1,
                          .queues = queues_qb,
                          .n_queues = 1};
    struct job_list l = {0};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, c);
    job_list_fini(&l);
    (void)b;
    (void)d;

    struct {
        struct job_filter flt;
        int n;
        int64_t want[4];
    } cases[] = {
        {{.status = STORE_ANY, .queue = "qa"}, 2, {b, a}},
        {{.status = STORE_ANY, .type = "x"}, 3, {d, c, a}},
        {{.status = JOB_SUCCEEDED}, 1, {a}},
        {{.status = JOB_PENDING}, 2, {d, b}},
        {{.status = JOB_RUNNING, .queue = "qb"}, 1, {c}},
        {{.status = STORE_ANY, .schedule = "nightly"}, 1, {d}},
        {{.status = JOB_PENDING, .queue = "qb", .type = "x"}, 1, {d}},
        {{.status = JOB_DEAD}, 0, {0}},
        {{.status = STORE_ANY, .queue = "nope"}, 0, {0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t next = -1;
        ASSERT_OK(store_list(f.st, &cases[k].flt, &l, &next, &f.err), &f.err);
        if ((int)l.n != cases[k].n)
            TEST_FAIL("case %zu: %zu jobs, want %d", k, l.n, cases[k].n);
        for (int i = 0; i < cases[k].n; i++)
            if (l.v[i].id != cases[k].want[i])
                TEST_FAIL("case %zu: job %d is %lld, want %lld", k, i, (long long)l.v[i].id,
                          (long long)cases[k].want[i]);
        ASSERT_EQ(next, 0);
        job_list_fini(&l);
    }
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* idempotency                                                         */

TEST(idempotency_replay_and_conflict)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {
        .type = "email.send", .payload = "{\"to\":\"a@b.c\"}", .idempotency_key = "order-17"};
    struct job j1 = {0}, j2 = {0};
    bool rep = true;
    ASSERT_OK(store_enqueue(f.st, &s, &j1, &rep, &f.err), &f.err);
    ASSERT(!rep);
    ASSERT_OK(store_enqueue(f.st, &s, &j2, &rep, &f.err), &f.err);
    ASSERT(rep);
    ASSERT_EQ(j2.id, j1.id);
    ASSERT_STR_EQ(j2.idempotency_key, "order-17");
    ASSERT_STR_EQ(j2.payload, "{\"to\":\"a@b.c\"}");
    job_fini(&j2);
    /* replay with out == NULL */
    ASSERT_OK(store_enqueue(f.st, &s, NULL, &rep, &f.err), &f.err);
    ASSERT(rep);
    /* same key, different payload / type / queue */
    struct job_spec d = s;
    d.payload = "{\"to\":\"x@y.z\"}";
    ASSERT_EQ(store_enqueue(f.st, &d, &j2, &rep, &f.err), JOBD_E_CONFLICT);
    ASSERT_STR_EQ(f.err.field, "idempotency_key");
    d = s;
    d.type = "email.other";
    ASSERT_EQ(store_enqueue(f.st, &d, &j2, &rep, &f.err), JOBD_E_CONFLICT);
    d = s;
    d.queue = "mail";
    ASSERT_EQ(store_enqueue(f.st, &d, &j2, &rep, &f.err), JOBD_E_CONFLICT);
    /* default queue spelled out is the same request */
    d = s;
    d.queue = "default";
    ASSERT_OK(store_enqueue(f.st, &d, &j2, &rep, &f.err), &f.err);
    ASSERT(rep);
    ASSERT_EQ(j2.id, j1.id);
    job_fini(&j2);
    /* only one job exists */
    struct job_list l = {0};
    int64_t next;
    struct job_filter flt = {.status = STORE_ANY};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    job_list_fini(&l);
    job_fini(&j1);
    fx_close(&f);
}

TEST(idempotency_key_survives_finish)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .payload = "[1]", .idempotency_key = "k"};
    int64_t id = enq_spec(&f, &s);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_complete(f.st, id, a, "{\"r\":1}", NULL, &f.err), &f.err);
    struct job j = {0};
    bool rep = false;
    ASSERT_OK(store_enqueue(f.st, &s, &j, &rep, &f.err), &f.err);
    ASSERT(rep);
    ASSERT_EQ(j.id, id);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(j.result, "{\"r\":1}");
    job_fini(&j);
    s.payload = "[2]";
    ASSERT_EQ(store_enqueue(f.st, &s, &j, &rep, &f.err), JOBD_E_CONFLICT);
    /* a dead job retried keeps its key */
    int64_t id2 = enq(&f, "t", NULL, 0, 0);
    (void)id2;
    fx_close(&f);
}
