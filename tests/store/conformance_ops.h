/*
 * conformance_ops.h — the conformance cases of the operator operations
 * (store/operator.h, CONTRACT §7). Included at the end of conformance.c so
 * they share its fixture (fx_open, the manual clock, enq, claim_one) and its
 * one test registry; kept apart so neither file grows past reading size.
 *
 * raw_count looks under the interface on purpose: "a job that succeeds at
 * its first attempt writes no history row" and "history goes with its job"
 * are promises about rows, which no store_*() call can show.
 */
#include <sqlite3.h>

#include "store/operator.h"

/* SELECT count(*) ... run directly on the fixture's database. */
static long
raw_count(struct fx *f, const char *sql)
{
    long n = -1;
    if (is_pg()) {
        char url[sizeof f->url];
        PGconn *c = PQconnectdb(libpq_url(f->url, url, sizeof url));
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            n = atol(PQgetvalue(r, 0, 0));
        else
            fprintf(stderr, "%s: %s", sql, PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
    } else {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        if (sqlite3_open(f->url + strlen("sqlite:"), &db) == SQLITE_OK &&
            sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        else
            fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    if (n < 0)
        TEST_FAIL("cannot count: %s", sql);
    return n;
}

static long
history_rows(struct fx *f)
{
    return raw_count(f, is_pg() ? "SELECT count(*) FROM jobd.job_attempts"
                                : "SELECT count(*) FROM job_attempts");
}

static void
attempts_of(struct fx *f, int64_t id, struct attempt_list *l)
{
    attempt_list_fini(l);
    ASSERT_OK(store_job_attempts(f->st, id, l, &f->err), &f->err);
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
