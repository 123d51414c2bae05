/*
 * conformance_ops.c — the conformance cases of the operator operations
 * (store/operator.h, docs/API.md).
 *
 * raw_count (conformance.c) looks under the interface on purpose: "a job
 * that succeeds at its first attempt writes no history row" and "history
 * goes with its job" are promises about rows, which no store_*() call can
 * show.
 */
#include "conformance.h"

#include "store/operator.h"

static long
history_rows(struct fx *f)
{
    return raw_count(f, is_pg() ? "SELECT count(*) FROM jobd.job_attempts"
                                : "SELECT count(*) FROM job_attempts");
}

/* Checks attempt i of l: number, outcome, worker, times (0 = none), error (NULL = none). */
static void
check_attempt(const struct attempt_list *l, size_t i, int32_t attempt, enum attempt_outcome o,
              int64_t started, int64_t finished, const char *error)
{
    ASSERT(i < l->n);
    const struct job_attempt *a = &l->v[i];
    ASSERT_EQ(a->attempt, attempt);
    ASSERT_STR_EQ(attempt_outcome_name(a->outcome), attempt_outcome_name(o));
    ASSERT_STR_EQ(a->worker_id, "w1");
    ASSERT_EQ(a->started_at_us, started);
    ASSERT_EQ(a->finished_at_us, finished);
    if (error == NULL)
        ASSERT(a->error == NULL);
    else
        ASSERT_STR_EQ(a->error, error);
}

TEST(attempts_first_success_writes_no_history_row)
{
    struct fx f;
    fx_open(&f);
    struct attempt_list l = {0};
    ASSERT_EQ(store_job_attempts(f.st, 424242, &l, &f.err), JOBD_E_NOTFOUND);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    attempts_of(&f, id, &l);
    ASSERT_EQ(l.n, 0); /* never started */
    int32_t a = claim_one(&f, id);
    attempts_of(&f, id, &l);
    ASSERT_EQ(l.n, 1);
    check_attempt(&l, 0, 1, ATT_RUNNING, T0, 0, NULL);
    manual_clock_advance(&f.mc, 2 * SEC);
    ASSERT_OK(store_complete(f.st, id, a, "{\"ok\":1}", NULL, &f.err), &f.err);
    attempts_of(&f, id, &l);
    ASSERT_EQ(l.n, 1);
    check_attempt(&l, 0, 1, ATT_SUCCEEDED, T0, T0 + 2 * SEC, NULL);
    /* The same through the batch path: still no history row. */
    int64_t id2 = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, id2);
    struct completion c = {.id = id2, .attempt = a};
    int outcome = -1;
    ASSERT_OK(store_complete_batch(f.st, &c, 1, &outcome, &f.err), &f.err);
    ASSERT_EQ(outcome, JOBD_OK);
    attempts_of(&f, id2, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].outcome, ATT_SUCCEEDED);
    ASSERT_EQ(history_rows(&f), 0);
    attempt_list_fini(&l);
    fx_close(&f);
}

TEST(attempts_failed_then_succeeded)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    manual_clock_advance(&f.mc, 1 * SEC);
    ASSERT_OK(store_fail(f.st, id, a, "boom", true, 1000, NULL, &f.err), &f.err);
    struct attempt_list l = {0};
    attempts_of(&f, id, &l);
    ASSERT_EQ(l.n, 1);
    check_attempt(&l, 0, 1, ATT_FAILED, T0, T0 + SEC, "boom");
    manual_clock_advance(&f.mc, 1 * SEC);
    a = claim_one(&f, id);
    attempts_of(&f, id, &l);
    ASSERT_EQ(l.n, 2);
    check_attempt(&l, 1, 2, ATT_RUNNING, T0 + 2 * SEC, 0, NULL);
    manual_clock_advance(&f.mc, 3 * SEC);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    attempts_of(&f, id, &l);
    ASSERT_EQ(l.n, 2);
    check_attempt(&l, 0, 1, ATT_FAILED, T0, T0 + SEC, "boom");
    check_attempt(&l, 1, 2, ATT_SUCCEEDED, T0 + 2 * SEC, T0 + 5 * SEC, NULL);
    ASSERT_EQ(history_rows(&f), 1);
    attempt_list_fini(&l);
    fx_close(&f);
}

TEST(attempts_dead_reaped_cancelled)
{
    struct fx f;
    fx_open(&f);
    struct attempt_list l = {0};
    /* permanent failure: dead */
    int64_t dead = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, dead);
    ASSERT_OK(store_fail(f.st, dead, a, "bad", false, 0, NULL, &f.err), &f.err);
    attempts_of(&f, dead, &l);
    ASSERT_EQ(l.n, 1);
    check_attempt(&l, 0, 1, ATT_DEAD, T0, T0, "bad");
    /* a manual retry keeps the history; the next attempt adds to it */
    ASSERT_OK(store_retry(f.st, dead, NULL, &f.err), &f.err);
    a = claim_one(&f, dead);
    attempts_of(&f, dead, &l);
    ASSERT_EQ(l.n, 2);
    check_attempt(&l, 1, 2, ATT_RUNNING, T0, 0, NULL);
    /* lease expired: reaped, at the reaper's time */
    manual_clock_advance(&f.mc, 61 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    attempts_of(&f, dead, &l);
    ASSERT_EQ(l.n, 2);
    check_attempt(&l, 1, 2, ATT_REAPED, T0, T0 + 61 * SEC, "lease expired");
    /* cancel of a running job, then the worker's report: cancelled */
    int64_t can = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, can);
    ASSERT_OK(store_cancel(f.st, can, NULL, &f.err), &f.err);
    ASSERT_OK(store_fail(f.st, can, a, "stopped", true, 0, NULL, &f.err), &f.err);
    attempts_of(&f, can, &l);
    ASSERT_EQ(l.n, 1);
    check_attempt(&l, 0, 1, ATT_CANCELLED, now_of(&f), now_of(&f), "stopped");
    /* a stale report adds nothing */
    ASSERT_EQ(store_fail(f.st, can, a, "late", true, 0, NULL, &f.err), JOBD_E_STALE);
    attempts_of(&f, can, &l);
    ASSERT_EQ(l.n, 1);
    attempt_list_fini(&l);
    fx_close(&f);
}

TEST(attempts_pruned_with_their_job)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int64_t keep = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, "x", false, 0, NULL, &f.err), &f.err);
    a = claim_one(&f, keep);
    ASSERT_OK(store_fail(f.st, keep, a, "y", true, 3600000, NULL, &f.err), &f.err);
    ASSERT_EQ(history_rows(&f), 2);
    manual_clock_advance(&f.mc, 10 * SEC);
    int deleted = 0;
    ASSERT_OK(store_prune(f.st, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    struct attempt_list l = {0};
    ASSERT_EQ(store_job_attempts(f.st, id, &l, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(history_rows(&f), 1); /* the pending job's history stays */
    attempts_of(&f, keep, &l);
    ASSERT_EQ(l.n, 1);
    attempt_list_fini(&l);
    fx_close(&f);
}

/* Runs a whole bulk action in batches of batch; returns the counts. */
static struct bulk_counts
bulk_all(struct fx *f, const struct bulk_req *r, int batch)
{
    struct bulk_counts c = {0};
    int64_t cursor = 0;
    int batches = 0;
    do {
        ASSERT_OK(store_bulk_batch(f->st, r, batch, &cursor, &c, &f->err), &f->err);
        ASSERT(++batches < 1000);
    } while (cursor != 0);
    return c;
}

TEST(delete_job_with_key_and_history)
{
    struct fx f;
    fx_open(&f);
    struct job_spec sp = {.type = "t", .idempotency_key = "k-del"};
    int64_t id = enq_spec(&f, &sp);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(store_delete(f.st, id, &f.err), JOBD_E_STATE); /* running */
    ASSERT_OK(store_fail(f.st, id, a, "x", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(history_rows(&f), 1);
    ASSERT_OK(store_delete(f.st, id, &f.err), &f.err);
    struct job j = {0};
    ASSERT_EQ(store_get(f.st, id, &j, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_delete(f.st, id, &f.err), JOBD_E_NOTFOUND);
    ASSERT_EQ(history_rows(&f), 0);
    /* the key is free again: a new job, not a replay */
    int64_t again = enq_spec(&f, &sp);
    ASSERT(again > id);
    int64_t pending = enq(&f, "t", NULL, 0, 0);
    ASSERT_OK(store_delete(f.st, pending, &f.err), &f.err);
    ASSERT_EQ(store_get(f.st, pending, &j, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

TEST(bulk_retry_cancel_delete_by_filter_in_batches)
{
    struct fx f;
    fx_open(&f);
    int64_t dead[7];
    for (int i = 0; i < 7; i++) {
        dead[i] = enq(&f, "t", "q1", 0, 0);
        int32_t a = claim_one(&f, dead[i]);
        ASSERT_OK(store_fail(f.st, dead[i], a, "x", false, 0, NULL, &f.err), &f.err);
    }
    int64_t other = enq(&f, "t", "q2", 0, T0 + 3600 * SEC); /* pending, other queue */
    int64_t running = enq(&f, "t", "q1", 0, 0);
    ASSERT_EQ(claim_one(&f, running), 1);
    /* retry: only the dead ones change; the running one is skipped */
    struct bulk_req r = {.action = BULK_RETRY, .f = {.status = STORE_ANY, .queue = "q1"}};
    struct bulk_counts c = bulk_all(&f, &r, 3);
    ASSERT_EQ(c.matched, 8);
    ASSERT_EQ(c.changed, 7);
    for (int i = 0; i < 7; i++) {
        struct job j = getj(&f, dead[i]);
        ASSERT_EQ(j.status, JOB_PENDING);
        ASSERT_EQ(j.attempt, 1); /* attempt never decreases */
        job_fini(&j);
    }
    /* limit by ids; cancel: pending -> cancelled, running -> requested */
    int64_t pick[3] = {dead[0], dead[1], running};
    r = (struct bulk_req){
        .action = BULK_CANCEL, .f = {.status = STORE_ANY}, .ids = pick, .n_ids = 3};
    c = bulk_all(&f, &r, STORE_BULK_BATCH);
    ASSERT_EQ(c.matched, 3);
    ASSERT_EQ(c.changed, 3);
    ASSERT_EQ(c.cancelled, 2);
    ASSERT_EQ(status_of(&f, dead[0]), JOB_CANCELLED);
    struct job rj = getj(&f, running);
    ASSERT_EQ(rj.status, JOB_RUNNING);
    ASSERT(rj.cancel_requested);
    job_fini(&rj);
    /* delete by status: the running job is never deleted */
    r = (struct bulk_req){.action = BULK_DELETE, .f = {.status = JOB_CANCELLED}};
    c = bulk_all(&f, &r, 1);
    ASSERT_EQ(c.matched, 2);
    ASSERT_EQ(c.changed, 2);
    r = (struct bulk_req){.action = BULK_DELETE, .f = {.status = STORE_ANY, .queue = "q1"}};
    c = bulk_all(&f, &r, 2);
    ASSERT_EQ(c.matched, 6);
    ASSERT_EQ(c.changed, 5);
    ASSERT_EQ(status_of(&f, running), JOB_RUNNING);
    ASSERT_EQ(status_of(&f, other), JOB_PENDING);
    fx_close(&f);
}

/*
 * A bulk cancel takes waiting jobs as the single-job cancel does (docs/API.md,
 * POST /v1/jobs/bulk), and their own waiting children follow as for any
 * cancelled parent. PostgreSQL's batch once skipped them: their rows live in
 * jobs_waiting, apart from the pending ones.
 */
TEST(bulk_cancel_takes_waiting_jobs_and_their_children)
{
    struct fx f;
    fx_open(&f);
    int64_t parent = enq(&f, "t", "q1", 0, T0 + 3600 * SEC);
    struct job_spec sp = {.type = "t", .queue = "q2", .depends_on = &parent, .n_depends_on = 1};
    struct job j = {0};
    ASSERT_OK(store_enqueue(f.st, &sp, &j, NULL, &f.err), &f.err);
    int64_t child = j.id;
    job_fini(&j);
    sp = (struct job_spec){.type = "t", .queue = "q3", .depends_on = &child, .n_depends_on = 1};
    ASSERT_OK(store_enqueue(f.st, &sp, &j, NULL, &f.err), &f.err);
    int64_t grandchild = j.id;
    job_fini(&j);
    ASSERT_EQ(status_of(&f, child), JOB_WAITING);
    struct bulk_req r = {.action = BULK_CANCEL, .f = {.status = STORE_ANY, .queue = "q2"}};
    struct bulk_counts c = bulk_all(&f, &r, STORE_BULK_BATCH);
    ASSERT_EQ(c.matched, 1);
    ASSERT_EQ(c.changed, 1);
    ASSERT_EQ(c.cancelled, 1);
    ASSERT_EQ(status_of(&f, child), JOB_CANCELLED);
    ASSERT_EQ(status_of(&f, grandchild), JOB_CANCELLED);
    ASSERT_EQ(status_of(&f, parent), JOB_PENDING);
    /* by status too: a filter naming waiting jobs cancels them */
    sp = (struct job_spec){.type = "t", .queue = "q2", .depends_on = &parent, .n_depends_on = 1};
    ASSERT_OK(store_enqueue(f.st, &sp, &j, NULL, &f.err), &f.err);
    int64_t second = j.id;
    job_fini(&j);
    r = (struct bulk_req){.action = BULK_CANCEL, .f = {.status = JOB_WAITING}};
    c = bulk_all(&f, &r, STORE_BULK_BATCH);
    ASSERT_EQ(c.matched, 1);
    ASSERT_EQ(c.changed, 1);
    ASSERT_EQ(status_of(&f, second), JOB_CANCELLED);
    fx_close(&f);
}

TEST(list_by_created_time_and_key)
{
    struct fx f;
    fx_open(&f);
    int64_t early = enq(&f, "t", NULL, 0, 0);
    manual_clock_advance(&f.mc, 10 * SEC);
    struct job_spec sp = {.type = "t", .idempotency_key = "the-key"};
    int64_t keyed = enq_spec(&f, &sp);
    manual_clock_advance(&f.mc, 10 * SEC);
    int64_t late = enq(&f, "t", NULL, 0, 0);
    struct job_filter flt = {
        .status = STORE_ANY, .created_after_us = T0 + 10 * SEC, .created_before_us = T0 + 20 * SEC};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, keyed);
    job_list_fini(&l);
    flt = (struct job_filter){.status = STORE_ANY, .created_after_us = T0 + 1};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 2);
    ASSERT_EQ(l.v[0].id, late);
    job_list_fini(&l);
    flt = (struct job_filter){.status = STORE_ANY, .key = "the-key"};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].id, keyed);
    job_list_fini(&l);
    flt = (struct job_filter){.status = STORE_ANY, .key = "no-such-key"};
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_EQ(l.n, 0);
    job_list_fini(&l);
    /* the same filter drives bulk actions */
    struct bulk_req r = {.action = BULK_CANCEL,
                         .f = {.status = STORE_ANY, .created_before_us = T0 + 1}};
    struct bulk_counts c = bulk_all(&f, &r, 10);
    ASSERT_EQ(c.matched, 1);
    ASSERT_EQ(status_of(&f, early), JOB_CANCELLED);
    fx_close(&f);
}

/* The ids of a listing (or, with f->search, a search) of f, newest first, into ids (at most 8). */
static size_t
list_ids(struct fx *f, const struct job_filter *flt, int64_t *ids, int64_t *next)
{
    struct job_list l = {0};
    bool partial = false;
    if (flt->search != NULL)
        ASSERT_OK(store_search(f->st, flt, &l, next, &partial, &f->err), &f->err);
    else
        ASSERT_OK(store_list(f->st, flt, &l, next, &f->err), &f->err);
    ASSERT(l.n <= 8);
    for (size_t i = 0; i < l.n; i++)
        ids[i] = l.v[i].id;
    size_t n = l.n;
    job_list_fini(&l);
    return n;
}

TEST(list_by_group)
{
    struct fx f;
    fx_open(&f);
    struct job_spec g1 = {.type = "t", .group = "g1"};
    int64_t pending = enq_spec(&f, &g1);
    struct job_spec g2 = {.type = "t", .group = "g2"};
    int64_t other = enq_spec(&f, &g2);
    int64_t none = enq(&f, "t", NULL, 0, 0);
    int64_t cancelled = enq_spec(&f, &g1);
    ASSERT_OK(store_cancel(f.st, cancelled, NULL, &f.err), &f.err);
    struct job_spec w = {.type = "t", .group = "g1", .depends_on = &none, .n_depends_on = 1};
    int64_t waiting = enq_spec(&f, &w);
    struct job_spec q = {.type = "t", .queue = "q2", .group = "g1", .payload = "{\"needle\":1}"};
    int64_t queued = enq_spec(&f, &q);
    ASSERT_EQ(status_of(&f, waiting), JOB_WAITING);

    /* every table (pending, ended, waiting), newest first; no other group's job */
    int64_t ids[8], next = 0;
    struct job_filter flt = {.status = STORE_ANY, .group = "g1"};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 4);
    ASSERT_EQ(ids[0], queued);
    ASSERT_EQ(ids[1], waiting);
    ASSERT_EQ(ids[2], cancelled);
    ASSERT_EQ(ids[3], pending);
    ASSERT_EQ(next, 0);
    /* with a status, a queue, a page and its cursor, a search */
    flt = (struct job_filter){.status = JOB_CANCELLED, .group = "g1"};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 1);
    ASSERT_EQ(ids[0], cancelled);
    flt = (struct job_filter){.status = STORE_ANY, .group = "g1", .queue = "q2"};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 1);
    ASSERT_EQ(ids[0], queued);
    flt = (struct job_filter){.status = STORE_ANY, .group = "g1", .limit = 2};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 2);
    ASSERT_EQ(ids[1], waiting);
    ASSERT_EQ(next, waiting);
    flt.before_id = next;
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 2);
    ASSERT_EQ(ids[0], cancelled);
    ASSERT_EQ(ids[1], pending);
    flt = (struct job_filter){.status = STORE_ANY, .group = "g1", .search = "needle"};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 1);
    ASSERT_EQ(ids[0], queued);
    flt = (struct job_filter){.status = JOB_PENDING, .group = "g2"};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 1);
    ASSERT_EQ(ids[0], other);
    flt = (struct job_filter){.status = STORE_ANY, .group = "g3"};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 0);
    fx_close(&f);
}

/* A group's few jobs far apart among another's, one of them ended, are
 * listed newest first in pages, and so is a page of the other group
 * that crosses a bucket's edge (SQLite walks a group's jobs by buckets of
 * 1,024 ids: docs/DESIGN.md, Groups, "Tags on SQLite"). */
TEST(list_by_group_across_id_buckets)
{
    struct fx f;
    fx_open(&f);
    enum { N = 3000 };
    struct job_spec *specs = calloc(N, sizeof *specs);
    struct job *out = calloc(N, sizeof *out);
    ASSERT(specs != NULL && out != NULL);
    const int at[] = {0, 1100, 2500, 2999};
    for (int i = 0; i < N; i++)
        specs[i] = (struct job_spec){.type = "t", .group = "d"};
    for (size_t k = 0; k < 4; k++)
        specs[at[k]].group = "s";
    ASSERT_OK(store_enqueue_batch(f.st, specs, N, out, NULL, &f.err), &f.err);
    int64_t s[4];
    for (size_t k = 0; k < 4; k++)
        s[k] = out[at[k]].id;
    ASSERT_OK(store_cancel(f.st, s[1], NULL, &f.err), &f.err);
    int64_t ids[8], next = 0;
    struct job_filter flt = {.status = STORE_ANY, .group = "s", .limit = 2};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 2);
    ASSERT_EQ(ids[0], s[3]);
    ASSERT_EQ(ids[1], s[2]);
    ASSERT_EQ(next, s[2]);
    flt.before_id = next;
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 2);
    ASSERT_EQ(ids[0], s[1]);
    ASSERT_EQ(ids[1], s[0]);
    ASSERT_EQ(next, 0);
    flt = (struct job_filter){.status = JOB_PENDING, .group = "s"};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 3);
    ASSERT_EQ(ids[2], s[0]);
    flt = (struct job_filter){.status = JOB_CANCELLED, .group = "s"};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 1);
    ASSERT_EQ(ids[0], s[1]);
    flt = (struct job_filter){.status = STORE_ANY, .group = "d", .limit = 8};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 8);
    ASSERT_EQ(ids[0], out[2998].id);
    ASSERT_EQ(ids[7], out[2991].id);
    for (int from = 1020; from <= 1030; from += 5) { /* around ids 1,024 and 1,025 */
        flt = (struct job_filter){.status = STORE_ANY, .group = "d", .limit = 8};
        flt.before_id = out[from].id;
        ASSERT_EQ(list_ids(&f, &flt, ids, &next), 8);
        for (int k = 0; k < 8; k++)
            ASSERT_EQ(ids[k], out[from - 1 - k].id);
        ASSERT_EQ(next, out[from - 8].id);
    }
    flt = (struct job_filter){.status = STORE_ANY, .group = "d", .before_id = out[2].id};
    ASSERT_EQ(list_ids(&f, &flt, ids, &next), 1); /* out[0] is s's */
    ASSERT_EQ(ids[0], out[1].id);
    for (int i = 0; i < N; i++)
        job_fini(&out[i]);
    free(out);
    free(specs);
    fx_close(&f);
}

TEST(workers_announce_refresh_gone_withdraw)
{
    struct fx f;
    fx_open(&f);
    struct worker_info w = {.id = "host:1",
                            .hostname = "host",
                            .pid = 1,
                            .version = "0.1",
                            .queues = "[]",
                            .types = "[\"t\"]",
                            .concurrency = 4,
                            .heartbeat_ms = 1000};
    ASSERT_EQ(store_worker_seen(f.st, "host:1", false, &f.err), JOBD_E_NOTFOUND);
    ASSERT_OK(store_worker_announce(f.st, &w, &f.err), &f.err);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    struct claim_req r = {.worker_id = "host:1", .limit = 1};
    struct job_list l = {0};
    ASSERT_OK(store_claim(f.st, &r, &l, &f.err), &f.err);
    job_list_fini(&l);
    struct worker_list wl = {0};
    ASSERT_OK(store_worker_list(f.st, &wl, &f.err), &f.err);
    ASSERT_EQ(wl.n, 1);
    ASSERT_STR_EQ(wl.v[0].types, "[\"t\"]");
    ASSERT_EQ(wl.v[0].started_at_us, T0);
    ASSERT(!wl.v[0].gone && !wl.v[0].draining);
    ASSERT_EQ(wl.v[0].n_running, 1);
    ASSERT_EQ(wl.v[0].running[0], id);
    worker_list_fini(&wl);
    /* refreshed while draining; then silent for 3 intervals: gone */
    manual_clock_advance(&f.mc, 2 * SEC);
    ASSERT_OK(store_worker_seen(f.st, "host:1", true, &f.err), &f.err);
    ASSERT_OK(store_worker_list(f.st, &wl, &f.err), &f.err);
    ASSERT(wl.v[0].draining && !wl.v[0].gone);
    ASSERT_EQ(wl.v[0].last_seen_at_us, T0 + 2 * SEC);
    worker_list_fini(&wl);
    manual_clock_advance(&f.mc, 3 * SEC + 1);
    ASSERT_OK(store_worker_list(f.st, &wl, &f.err), &f.err);
    ASSERT(wl.v[0].gone);
    worker_list_fini(&wl);
    /* listed for an hour after it is gone, then forgotten at the next announce */
    manual_clock_advance(&f.mc, 3600 * SEC);
    ASSERT_OK(store_worker_list(f.st, &wl, &f.err), &f.err);
    ASSERT_EQ(wl.n, 0);
    worker_list_fini(&wl);
    struct worker_info w2 = w;
    w2.id = "host:2";
    ASSERT_OK(store_worker_announce(f.st, &w2, &f.err), &f.err);
    ASSERT_EQ(store_worker_seen(f.st, "host:1", false, &f.err), JOBD_E_NOTFOUND);
    /* withdrawn: gone from the list at once */
    ASSERT_OK(store_worker_withdraw(f.st, "host:2", &f.err), &f.err);
    ASSERT_OK(store_worker_list(f.st, &wl, &f.err), &f.err);
    ASSERT_EQ(wl.n, 0);
    worker_list_fini(&wl);
    fx_close(&f);
}

TEST(attempts_released_at_shutdown)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    manual_clock_advance(&f.mc, 1 * SEC);
    ASSERT_OK(store_release(f.st, id, a, &f.err), &f.err);
    struct attempt_list l = {0};
    attempts_of(&f, id, &l);
    ASSERT_EQ(l.n, 1);
    check_attempt(&l, 0, 1, ATT_RELEASED, T0, T0 + SEC, NULL);
    a = claim_one(&f, id);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    attempts_of(&f, id, &l);
    ASSERT_EQ(l.n, 2);
    ASSERT_EQ(l.v[1].outcome, ATT_SUCCEEDED);
    attempt_list_fini(&l);
    fx_close(&f);
}

TEST(prune_by_outcome)
{
    struct fx f;
    fx_open(&f);
    int64_t ok = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, ok);
    ASSERT_OK(store_complete(f.st, ok, a, NULL, NULL, &f.err), &f.err);
    int64_t dead = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, dead);
    ASSERT_OK(store_fail(f.st, dead, a, "x", false, 0, NULL, &f.err), &f.err);
    int64_t can = enq(&f, "t", NULL, 0, 0);
    ASSERT_OK(store_cancel(f.st, can, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 10 * SEC);
    int deleted = -1;
    ASSERT_OK(store_prune_status(f.st, false, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 2);
    ASSERT_EQ(status_of(&f, ok), JOB_SUCCEEDED);
    ASSERT_EQ(history_rows(&f), 0); /* the dead job's history went with it */
    ASSERT_OK(store_prune_status(f.st, true, now_of(&f) - 20 * SEC, 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 0); /* not old enough */
    ASSERT_OK(store_prune_status(f.st, true, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    struct job j = {0};
    ASSERT_EQ(store_get(f.st, ok, &j, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}
