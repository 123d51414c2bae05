/*
 * conformance_archive.c — succeeded jobs read and change the same before and
 * after the archive pass (store_archive). On PostgreSQL a completion moves
 * its row out of the hot table at once, into the finished-jobs archive
 * (docs/DESIGN.md, Table layout, round three), and on SQLite it ends where
 * it is: the pass has nothing to do on either. Either way no caller may tell
 * where a finished job lives:
 * reads, counts, listings, idempotent replays, attempts, operator actions,
 * deletion and retention must agree.
 */
#include "conformance.h"

#include "store/operator.h"

/* What a caller sees of the n_live succeeded jobs of queue arch, ids[0] among them. */
static void
check_succeeded_view(struct fx *f, const int64_t *ids, int n_live)
{
    struct job j = getj(f, ids[0]);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(j.result, "{\"r\":1}");
    ASSERT_STR_EQ(j.worker_id, "w1");
    ASSERT_EQ(j.attempt, 1);
    ASSERT(j.finished_at_us > 0);
    job_fini(&j);
    struct job_filter flt = {.status = JOB_SUCCEEDED, .queue = "arch", .limit = 10};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f->st, &flt, &l, &next, &f->err), &f->err);
    ASSERT_EQ(l.n, (size_t)n_live);
    job_list_fini(&l);
    bool recounted = false; /* PostgreSQL's counts are a cache, recounted on demand here */
    ASSERT_OK(store_counts_refresh(f->st, 0, &recounted, &f->err), &f->err);
    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(f->st, &qs, &nq, &f->err), &f->err);
    ASSERT_EQ(nq, 1);
    ASSERT_EQ(qs[0].count[JOB_SUCCEEDED], n_live);
    ASSERT_EQ(qs[0].count[JOB_PENDING] + qs[0].count[JOB_RUNNING], 0);
    free(qs);
    struct attempt_list al = {0};
    attempts_of(f, ids[0], &al);
    ASSERT_EQ(al.n, 1);
    ASSERT_EQ(al.v[0].outcome, ATT_SUCCEEDED);
    attempt_list_fini(&al);
    struct job_spec again = {
        .type = "t", .queue = "arch", .payload = "{\"k\":1}", .idempotency_key = "arch-key"};
    bool replayed = false;
    ASSERT_OK(store_enqueue(f->st, &again, &j, &replayed, &f->err), &f->err);
    ASSERT(replayed);
    ASSERT_EQ(j.id, ids[0]);
    job_fini(&j);
    ASSERT_EQ(store_cancel(f->st, ids[0], NULL, &f->err), JOBD_E_STATE);
    ASSERT_EQ(store_retry(f->st, ids[0], NULL, &f->err), JOBD_E_STATE);
    ASSERT_EQ(status_of(f, ids[0]), JOB_SUCCEEDED);
}

TEST(succeeded_jobs_read_the_same_before_and_after_the_archive)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {
        .type = "t", .queue = "arch", .payload = "{\"k\":1}", .idempotency_key = "arch-key"};
    int64_t ids[4];
    for (int i = 3; i > 0; i--) /* in claim order: ids[3] first, the keyed ids[0] last */
        ids[i] = enq(&f, "t", "arch", 0, 0);
    ids[0] = enq_spec(&f, &s);
    for (int i = 3; i >= 0; i--) { /* ids[3] finishes first (T0), ids[0] last */
        int32_t a = claim_one(&f, ids[i]);
        ASSERT_OK(store_complete(f.st, ids[i], a, i == 0 ? "{\"r\":1}" : NULL, NULL, &f.err),
                  &f.err);
        manual_clock_advance(&f.mc, SEC);
    }
    if (is_pg()) /* every completion moved its row: the hot table holds none */
        ASSERT_EQ(raw_count(&f, "SELECT count(*) FROM jobd.jobs"), 0);
    check_succeeded_view(&f, ids, 4);
    /* Deleting and pruning reach a succeeded job wherever it is. */
    ASSERT_OK(store_delete(f.st, ids[3], &f.err), &f.err);
    ASSERT_EQ(status_of(&f, ids[0]), JOB_SUCCEEDED);
    int deleted = -1;
    ASSERT_OK(store_prune_status(f.st, true, T0 + 2 * SEC, 10, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1); /* ids[2]: finished at T0 + 1 s (ids[3], at T0, is deleted) */
    struct job gone = {0};
    ASSERT_EQ(store_get(f.st, ids[2], &gone, &f.err), JOBD_E_NOTFOUND);
    check_succeeded_view(&f, ids, 2);

    int moved = -1;
    ASSERT_OK(store_archive(f.st, now_of(&f) + 1, 100, &moved, &f.err), &f.err);
    ASSERT_EQ(moved, 0);
    if (is_pg())
        ASSERT_EQ(raw_count(&f, "SELECT count(*) FROM jobd.jobs"), 0);
    check_succeeded_view(&f, ids, 2);
    ASSERT_OK(store_prune(f.st, now_of(&f) + 1, 1, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1); /* the older one, ids[1] */
    ASSERT_EQ(store_get(f.st, ids[1], &gone, &f.err), JOBD_E_NOTFOUND);
    ASSERT_OK(store_delete(f.st, ids[0], &f.err), &f.err);
    ASSERT_EQ(store_get(f.st, ids[0], &gone, &f.err), JOBD_E_NOTFOUND);
    ASSERT_OK(store_archive(f.st, now_of(&f) + 1, 100, &moved, &f.err), &f.err);
    ASSERT_EQ(moved, 0);
    fx_close(&f);
}
