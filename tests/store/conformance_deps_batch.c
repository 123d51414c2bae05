/*
 * conformance_deps_batch.c — a batch of jobs with parents (docs/MODEL.md,
 * Dependencies): each job settles as if enqueued alone. On PostgreSQL such a
 * batch takes a set-wise path of its own (schema version 35,
 * docs/DESIGN.md, Dependencies), so its outcomes are checked case by case.
 */
#include "conformance.h"
#include "store/deps.h"

/* Claims exactly the job id and completes it. */
static void
run_ok(struct fx *f, int64_t id)
{
    int32_t a = claim_one(f, id);
    ASSERT_OK(store_complete(f->st, id, a, NULL, NULL, &f->err), &f->err);
}

/* Claims id and fails it for good. */
static void
run_dead(struct fx *f, int64_t id)
{
    int32_t a = claim_one(f, id);
    ASSERT_OK(store_fail(f->st, id, a, "boom", false, 0, NULL, &f->err), &f->err);
    ASSERT_EQ(status_of(f, id), JOB_DEAD);
}

/*
 * One batch whose jobs settle differently, each as if enqueued alone: a
 * child of an open parent waits, of a succeeded one is pending at once, of
 * a dead one is cancelled at once (or pending, told to run on failure), a
 * parent named twice is one edge, a job without parents is plain pending,
 * and a child of a job of an earlier batch waits for it. The parents are
 * marked: the open one's success releases its child.
 */
TEST(deps_batch_settles_each_child_alone)
{
    struct fx f;
    fx_open(&f);
    int64_t ok = enq(&f, "u", NULL, 0, 0);
    int64_t dead = enq(&f, "v", NULL, 0, 0);
    run_ok(&f, ok);
    run_dead(&f, dead);
    int64_t open = enq(&f, "t", NULL, 0, 0);
    int64_t twice[2] = {open, open};
    int64_t both[2] = {ok, open};
    struct job_spec b[7] = {
        {.type = "k", .depends_on = &open, .n_depends_on = 1},
        {.type = "k", .depends_on = &ok, .n_depends_on = 1},
        {.type = "k", .depends_on = &dead, .n_depends_on = 1},
        {.type = "k", .depends_on = &dead, .n_depends_on = 1, .run_on_parent_failure = true},
        {.type = "k", .depends_on = twice, .n_depends_on = 2},
        {.type = "k"},
        {.type = "k", .depends_on = both, .n_depends_on = 2},
    };
    struct job out[7] = {0};
    ASSERT_OK(store_enqueue_batch(f.st, b, 7, out, NULL, &f.err), &f.err);
    static const enum job_status want[7] = {JOB_WAITING, JOB_PENDING, JOB_CANCELLED, JOB_PENDING,
                                            JOB_WAITING, JOB_PENDING, JOB_WAITING};
    int64_t id[7];
    for (int i = 0; i < 7; i++) {
        ASSERT_EQ(out[i].status, want[i]);
        ASSERT_EQ(status_of(&f, out[i].id), want[i]);
        id[i] = out[i].id;
        job_fini(&out[i]);
    }
    for (int i = 1; i < 7; i++)
        ASSERT(id[i] > id[i - 1]);
    struct job j = {0};
    ASSERT_OK(store_get(f.st, id[4], &j, &f.err), &f.err);
    ASSERT_OK(store_deps_attach(f.st, &j, 1, &f.err), &f.err);
    ASSERT_EQ(j.n_depends_on, 1);
    job_fini(&j);
    /* a child of a job of the first batch, beside a job without parents: waits */
    struct job_spec c = {.type = "k", .depends_on = &id[5], .n_depends_on = 1};
    struct job_spec b2[2] = {{.type = "k"}, c};
    ASSERT_OK(store_enqueue_batch(f.st, b2, 2, out, NULL, &f.err), &f.err);
    ASSERT_EQ(out[1].status, JOB_WAITING);
    int64_t grand = out[1].id;
    job_fini(&out[0]);
    job_fini(&out[1]);
    /* claim all that is pending (open, id[1], id[3], id[5], b2[0]); end id[5], then open */
    struct job_list l = {0};
    claim(&f, 100, 60000, &l);
    ASSERT_EQ(l.n, 5);
    int32_t a5 = 0, ao = 0;
    for (size_t i = 0; i < l.n; i++) {
        ASSERT(l.v[i].id != grand && l.v[i].id != id[0] && l.v[i].id != id[4]);
        a5 = l.v[i].id == id[5] ? l.v[i].attempt : a5;
        ao = l.v[i].id == open ? l.v[i].attempt : ao;
    }
    job_list_fini(&l);
    ASSERT(a5 > 0 && ao > 0);
    ASSERT_OK(store_complete(f.st, id[5], a5, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, grand), JOB_PENDING);
    ASSERT_OK(store_complete(f.st, open, ao, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id[0]), JOB_PENDING);
    ASSERT_EQ(status_of(&f, id[4]), JOB_PENDING);
    ASSERT_EQ(status_of(&f, id[6]), JOB_PENDING);
    ASSERT_EQ(status_of(&f, id[2]), JOB_CANCELLED);
    fx_close(&f);
}
