/*
 * conformance_failbatch.c — store_fail_batch (store/store.h): a batch of
 * failure reports must end each job exactly as the same reports sent one by
 * one with store_fail would, in one transaction.
 */
#include "conformance.h"

#include "store/operator.h"

/* The job's status, run_at and last_error, read through the interface. */
static void
check_failed(struct fx *f, int64_t id, enum job_status want, int64_t run_at_us, const char *error)
{
    struct job j = {0};
    ASSERT_OK(store_get(f->st, id, &j, &f->err), &f->err);
    ASSERT_EQ(j.status, want);
    if (want == JOB_PENDING)
        ASSERT_EQ(j.run_at_us, run_at_us);
    ASSERT(j.last_error != NULL && strcmp(j.last_error, error) == 0);
    job_fini(&j);
}

TEST(fail_batch_ends_each_job_as_fail_would)
{
    struct fx f;
    fx_open(&f);
    struct job_spec once = {.type = "t", .max_attempts = 1};
    int64_t retry = enq(&f, "t", NULL, 0, 0), last = enq_spec(&f, &once);
    int64_t perm = enq(&f, "t", NULL, 0, 0), can = enq(&f, "t", NULL, 0, 0);
    int64_t gone = enq(&f, "t", NULL, 0, 0);
    int32_t a_retry = claim_one(&f, retry), a_last = claim_one(&f, last);
    int32_t a_perm = claim_one(&f, perm), a_can = claim_one(&f, can);
    int32_t a_gone = claim_one(&f, gone);
    ASSERT_OK(store_cancel(f.st, can, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 2 * SEC);
    struct fail_report r[] = {
        {retry, a_retry, "try again", true, 5000},
        {retry, a_retry, "sent twice", true, 5000}, /* the same attempt again: stale */
        {last, a_last, "out of attempts", true, 5000},
        {perm, a_perm, "bad input", false, 0},
        {can, a_can, "stopped", true, 0},
        {gone, a_gone + 1, "not its attempt", true, 0},
        {9999999, 1, "no such job", true, 0},
    };
    size_t n = sizeof r / sizeof r[0];
    int outcome[sizeof r / sizeof r[0]];
    enum job_status status[sizeof r / sizeof r[0]];
    ASSERT_OK(store_fail_batch(f.st, r, n, outcome, status, &f.err), &f.err);
    int want[] = {JOBD_OK, JOBD_E_STALE, JOBD_OK, JOBD_OK, JOBD_OK, JOBD_E_STALE, JOBD_E_STALE};
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(outcome[i], want[i]);
    ASSERT_EQ(status[0], JOB_PENDING);
    ASSERT_EQ(status[2], JOB_DEAD);
    ASSERT_EQ(status[3], JOB_DEAD);
    ASSERT_EQ(status[4], JOB_CANCELLED);
    check_failed(&f, retry, JOB_PENDING, T0 + 2 * SEC + 5 * SEC, "try again");
    check_failed(&f, last, JOB_DEAD, 0, "out of attempts");
    check_failed(&f, perm, JOB_DEAD, 0, "bad input");
    check_failed(&f, can, JOB_CANCELLED, 0, "stopped");
    struct job j = {0};
    ASSERT_OK(store_get(f.st, gone, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_RUNNING); /* a stale report changes nothing */
    job_fini(&j);
    /* each applied report wrote one history row, as store_fail does */
    struct attempt_list l = {0};
    ASSERT_OK(store_job_attempts(f.st, retry, &l, &f.err), &f.err);
    ASSERT_EQ(l.n, 1);
    ASSERT(strcmp(l.v[0].error, "try again") == 0);
    attempt_list_fini(&l);
    fx_close(&f);
}

TEST(fail_batch_cleans_error_text_as_fail_does)
{
    struct fx f;
    fx_open(&f);
    int64_t a = enq(&f, "t", NULL, 0, 0), b = enq(&f, "t", NULL, 0, 0);
    int32_t aa = claim_one(&f, a), ab = claim_one(&f, b);
    /* invalid UTF-8 and an error longer than the store keeps */
    char *long_err = malloc(JOB_ERROR_MAX + 100);
    ASSERT(long_err != NULL);
    memset(long_err, 'x', JOB_ERROR_MAX + 99);
    memcpy(long_err + JOB_ERROR_MAX + 94, "TAIL", 4);
    long_err[JOB_ERROR_MAX + 99] = '\0';
    struct fail_report r[] = {{a, aa, "bad \xff byte", true, 0}, {b, ab, long_err, true, 0}};
    int outcome[2];
    ASSERT_OK(store_fail_batch(f.st, r, 2, outcome, NULL, &f.err), &f.err);
    ASSERT_EQ(outcome[0], JOBD_OK);
    ASSERT_EQ(outcome[1], JOBD_OK);
    struct job j = {0};
    ASSERT_OK(store_get(f.st, a, &j, &f.err), &f.err);
    ASSERT(j.last_error != NULL && strncmp(j.last_error, "bad ", 4) == 0);
    job_fini(&j);
    ASSERT_OK(store_get(f.st, b, &j, &f.err), &f.err);
    ASSERT(strlen(j.last_error) <= JOB_ERROR_MAX);
    ASSERT(strstr(j.last_error, "TAIL") != NULL); /* the tail is kept */
    job_fini(&j);
    free(long_err);
    fx_close(&f);
}
