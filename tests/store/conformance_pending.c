/*
 * conformance_pending.c — store_pending_queue_types on every backend: the
 * distinct (queue, type) pairs of pending jobs, by queue then type; pairs
 * with only running or finished jobs are not listed.
 */
#include "conformance.h"

#include "store/operator.h"

TEST(pending_queue_types_distinct_pending_only)
{
    struct fx f;
    fx_open(&f);
    struct queue_type_list l = {0};
    ASSERT_OK(store_pending_queue_types(f.st, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 0);

    int64_t first = enq(&f, "c.run", "q3", 10, 0); /* claimed first: running only */
    enq(&f, "b.t", "q1", 0, 0);
    enq(&f, "a.t", "q1", 0, 0);
    enq(&f, "a.t", "q1", 0, 0);
    enq(&f, "a.t", "q2", 0, 0);
    enq(&f, "d.later", "q1", 0, now_of(&f) + 3600 * SEC); /* pending, not due yet */
    int64_t done = enq(&f, "e.done", "q2", 5, 0);
    ASSERT_EQ(claim_one(&f, first), 1);
    int32_t a = claim_one(&f, done);
    ASSERT_OK(store_complete(f.st, done, a, NULL, NULL, &f.err), &f.err);

    ASSERT_OK(store_pending_queue_types(f.st, &l, &f.err), &f.err);
    const char *want[][2] = {{"q1", "a.t"}, {"q1", "b.t"}, {"q1", "d.later"}, {"q2", "a.t"}};
    ASSERT_EQ(l.n, 4);
    for (size_t i = 0; i < 4; i++) {
        ASSERT_STR_EQ(l.v[i].queue, want[i][0]);
        ASSERT_STR_EQ(l.v[i].type, want[i][1]);
    }
    queue_types_fini(&l);
    fx_close(&f);
}
