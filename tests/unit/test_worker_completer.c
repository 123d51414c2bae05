/*
 * test_worker_completer.c — the completion batcher (worker/completer.c)
 * against a fake store backend that records each batch and can fail on
 * demand: batching by size, order, stale outcomes, and keeping what a
 * failed statement did not write for the next flush.
 */
#include "test.h"

#include "core/err.h"
#include "store/store.h"
#include "worker/completer.h"

struct fake {
    struct store base;
    struct store_ops ops;
    int fail_calls;     /* fail this many calls from now */
    int ok_before_fail; /* ... after letting this many succeed */
    size_t batch_sizes[64];
    size_t n_batches;
    int64_t ids[4096]; /* every id written, in order */
    size_t n_ids;
    int64_t stale_id; /* answer stale for this id */
};

static int
fake_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                    struct jobd_error *err)
{
    struct fake *f = (struct fake *)st;
    if (f->fail_calls > 0 && f->ok_before_fail > 0) {
        f->ok_before_fail--;
    } else if (f->fail_calls > 0) {
        f->fail_calls--;
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, NULL, "connection lost");
    }
    f->batch_sizes[f->n_batches++] = n;
    for (size_t i = 0; i < n; i++) {
        f->ids[f->n_ids++] = c[i].id;
        outcome[i] = c[i].id == f->stale_id ? JOBD_E_STALE : JOBD_OK;
        if (c[i].id % 2 == 0 && (c[i].result == NULL || strcmp(c[i].result, "{\"r\":1}") != 0))
            TEST_FAIL("result of %lld lost", (long long)c[i].id);
    }
    return JOBD_OK;
}

static void
fake_init(struct fake *f)
{
    memset(f, 0, sizeof *f);
    f->ops.name = "fake";
    f->ops.complete_batch = fake_complete_batch;
    f->base.ops = &f->ops;
}

static void
add(struct completer *c, int64_t from, int64_t to)
{
    for (int64_t id = from; id <= to; id++)
        ASSERT(completer_add(c, id, 1, id % 2 == 0 ? strdup("{\"r\":1}") : NULL));
}

TEST(batches_by_size_in_order)
{
    struct fake f;
    fake_init(&f);
    f.stale_id = 7;
    struct completer c;
    completer_init(&c);
    c.batch_max = 4;
    add(&c, 1, 10);
    struct jobd_error err = {0};
    ASSERT_OK(completer_flush(&c, &f.base, &err), &err);
    ASSERT_EQ(f.n_batches, 3);
    ASSERT_EQ(f.batch_sizes[0], 4);
    ASSERT_EQ(f.batch_sizes[2], 2);
    for (size_t i = 0; i < 10; i++)
        ASSERT_EQ(f.ids[i], (int64_t)i + 1);
    ASSERT_EQ(c.n, 0);
    ASSERT_EQ(c.written, 9);
    ASSERT_EQ(c.stale, 1);
    ASSERT_EQ(c.batches, 3);
    ASSERT_OK(completer_flush(&c, &f.base, &err), &err); /* nothing queued: no call */
    ASSERT_EQ(f.n_batches, 3);
    completer_fini(&c);
}

TEST(a_failed_flush_keeps_the_rest)
{
    struct fake f;
    fake_init(&f);
    struct completer c;
    completer_init(&c);
    c.batch_max = 3;
    add(&c, 1, 7);
    struct jobd_error err = {0};
    f.fail_calls = 1;
    ASSERT_EQ(completer_flush(&c, &f.base, &err), JOBD_E_UNAVAILABLE);
    ASSERT_EQ(c.n, 7);
    /* the store is back: the next flush writes all of them, in order */
    ASSERT_OK(completer_flush(&c, &f.base, &err), &err);
    ASSERT_EQ(c.n, 0);
    add(&c, 8, 8);
    f.fail_calls = 0;
    ASSERT_OK(completer_flush(&c, &f.base, &err), &err);
    ASSERT_EQ(f.n_ids, 8);
    for (size_t i = 0; i < 8; i++)
        ASSERT_EQ(f.ids[i], (int64_t)i + 1);
    completer_fini(&c);
}

TEST(partial_progress_then_failure)
{
    struct fake f;
    fake_init(&f);
    struct completer c;
    completer_init(&c);
    c.batch_max = 2;
    add(&c, 1, 5);
    struct jobd_error err = {0};
    f.fail_calls = 1;
    f.ok_before_fail = 1; /* the first batch is written, the second call fails */
    ASSERT_EQ(completer_flush(&c, &f.base, &err), JOBD_E_UNAVAILABLE);
    ASSERT_EQ(f.n_ids, 2);
    ASSERT_EQ(c.n, 3);
    ASSERT_EQ(c.written, 2);
    ASSERT_OK(completer_flush(&c, &f.base, &err), &err);
    ASSERT_EQ(f.n_ids, 5);
    for (size_t i = 0; i < 5; i++)
        ASSERT_EQ(f.ids[i], (int64_t)i + 1);
    ASSERT_EQ(c.n, 0);
    /* fini frees queued results too (LeakSanitizer checks) */
    add(&c, 10, 20);
    completer_fini(&c);
}

/* A store that refuses content: a batch holding job 4's result (say, bytes
 * PostgreSQL will not take), or job 7 at all. */
static int
picky_complete_batch(struct store *st, const struct completion *c, size_t n, int *outcome,
                     struct jobd_error *err)
{
    struct fake *f = (struct fake *)st;
    for (size_t i = 0; i < n; i++)
        if ((c[i].id == 4 && c[i].result != NULL) || c[i].id == 7)
            return jobd_error_set(err, JOBD_E_STORE, NULL, "invalid byte sequence");
    f->batch_sizes[f->n_batches++] = n;
    for (size_t i = 0; i < n; i++) {
        f->ids[f->n_ids++] = c[i].id;
        outcome[i] = JOBD_OK;
    }
    return JOBD_OK;
}

TEST(refused_content_never_loops)
{
    struct fake f;
    fake_init(&f);
    f.ops.complete_batch = picky_complete_batch;
    struct completer c;
    completer_init(&c);
    add(&c, 1, 8);
    struct jobd_error err = {0};
    /* Not an outage: the flush goes through, one by one, and ends. */
    ASSERT_OK(completer_flush(&c, &f.base, &err), &err);
    ASSERT_EQ(c.n, 0);
    ASSERT_EQ(c.written, 7); /* 4 without its result */
    ASSERT_EQ(c.refused, 1); /* 7, dropped */
    ASSERT_EQ(f.n_ids, 7);
    for (size_t i = 0; i < f.n_ids; i++)
        ASSERT(f.ids[i] != 7);
    completer_fini(&c);
}
