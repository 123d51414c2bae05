/*
 * conformance_cancel.c — the conformance cases of cancel (pending, and a
 * running job asked to stop), release (an attempt given back unused) and
 * manual retry.
 */
#include "conformance.h"

/* ------------------------------------------------------------------ */
/* cancel and retry                                                    */

TEST(cancel_pending)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, T0 + 100 * SEC);
    manual_clock_advance(&f.mc, 1 * SEC);
    struct job j = {0};
    ASSERT_OK(store_cancel(f.st, id, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    ASSERT_EQ(j.finished_at_us, T0 + 1 * SEC);
    job_fini(&j);
    ASSERT_EQ(status_of(&f, id), JOB_CANCELLED);
    manual_clock_advance(&f.mc, 200 * SEC);
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    /* terminal: cancelling again is not allowed */
    ASSERT_EQ(store_cancel(f.st, id, &j, &f.err), JOBD_E_STATE);
    ASSERT_EQ(store_cancel(f.st, id + 1000, &j, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

TEST(cancel_running_requests_then_fail_cancels)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    struct job j = {0};
    ASSERT_OK(store_cancel(f.st, id, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_RUNNING);
    ASSERT(j.cancel_requested);
    ASSERT_EQ(j.attempt, a);
    job_fini(&j);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_RUNNING);
    ASSERT(g.cancel_requested);
    job_fini(&g);
    /* requesting twice is harmless */
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    int64_t until = 0;
    bool cancel = false;
    manual_clock_advance(&f.mc, 5 * SEC);
    ASSERT_OK(store_heartbeat(f.st, id, a, 60000, &until, &cancel, &f.err), &f.err);
    ASSERT(cancel);
    ASSERT_EQ(until, T0 + 65 * SEC);
    /* the worker stops the handler and reports a (retryable) failure */
    ASSERT_OK(store_fail(f.st, id, a, "cancelled by user", true, 1000, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_CANCELLED);
    ASSERT_EQ(j.finished_at_us, T0 + 5 * SEC);
    job_fini(&j);
    ASSERT_EQ(status_of(&f, id), JOB_CANCELLED);
    ASSERT_EQ(store_cancel(f.st, id, NULL, &f.err), JOBD_E_STATE);
    fx_close(&f);
}

TEST(cancel_requested_job_reaped_is_cancelled)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    claim_one(&f, id);
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 61 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    ASSERT_EQ(status_of(&f, id), JOB_CANCELLED);
    fx_close(&f);
}

TEST(release_gives_the_attempt_back)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 2, .run_at_us = T0 + 30 * SEC};
    int64_t id = enq_spec(&f, &s);
    manual_clock_advance(&f.mc, 40 * SEC);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(a, 1);
    manual_clock_advance(&f.mc, 2 * SEC);
    ASSERT_OK(store_release(f.st, id, a, &f.err), &f.err);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.attempt, 1);               /* the fencing token never goes back */
    ASSERT_EQ(g.run_at_us, T0 + 42 * SEC); /* due now */
    ASSERT_NULL(g.worker_id);
    ASSERT_EQ(g.lease_expires_at_us, 0);
    ASSERT_EQ(g.finished_at_us, 0);
    job_fini(&g);
    /* the old attempt is fenced off; the next claim is attempt 2 */
    ASSERT_EQ(store_complete(f.st, id, a, NULL, NULL, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_release(f.st, id, a, &f.err), JOBD_E_STALE);
    a = claim_one(&f, id);
    ASSERT_EQ(a, 2);
    /* the released attempt did not count: max_attempts 2 still leaves a retry */
    ASSERT_OK(store_fail(f.st, id, a, "x", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_PENDING);
    a = claim_one(&f, id);
    ASSERT_EQ(a, 3);
    ASSERT_OK(store_fail(f.st, id, a, "x", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    fx_close(&f);
}

TEST(release_is_fenced)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    ASSERT_EQ(store_release(f.st, id, 0, &f.err), JOBD_E_STALE); /* pending */
    ASSERT_STR_EQ(f.err.field, "attempt");
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(store_release(f.st, id, a + 1, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_release(f.st, id + 1000, 1, &f.err), JOBD_E_STALE);
    ASSERT_EQ(status_of(&f, id), JOB_RUNNING);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(store_release(f.st, id, a, &f.err), JOBD_E_STALE); /* finished */
    ASSERT_EQ(status_of(&f, id), JOB_SUCCEEDED);
    fx_close(&f);
}

TEST(release_of_cancel_requested_job_cancels)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    ASSERT_OK(store_release(f.st, id, a, &f.err), &f.err);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_CANCELLED);
    ASSERT_EQ(g.finished_at_us, T0);
    job_fini(&g);
    fx_close(&f);
}

TEST(cancel_terminal_is_state_error)
{
    struct fx f;
    fx_open(&f);
    int64_t ok = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, ok);
    ASSERT_OK(store_complete(f.st, ok, a, NULL, NULL, &f.err), &f.err);
    int64_t dead = enq(&f, "t", NULL, 0, 0);
    a = claim_one(&f, dead);
    ASSERT_OK(store_fail(f.st, dead, a, "x", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(store_cancel(f.st, ok, NULL, &f.err), JOBD_E_STATE);
    ASSERT_EQ(store_cancel(f.st, dead, NULL, &f.err), JOBD_E_STATE);
    ASSERT_EQ(status_of(&f, ok), JOB_SUCCEEDED);
    ASSERT_EQ(status_of(&f, dead), JOB_DEAD);
    fx_close(&f);
}

TEST(retry_dead_gives_fresh_attempts)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 2};
    int64_t id = enq_spec(&f, &s);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, "e", true, 0, NULL, &f.err), &f.err);
    a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, "e", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);

    manual_clock_advance(&f.mc, 100 * SEC);
    struct job j = {0};
    ASSERT_OK(store_retry(f.st, id, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.run_at_us, T0 + 100 * SEC);
    ASSERT_EQ(j.attempt, 2); /* never decreases */
    ASSERT_EQ(j.max_attempts, 2);
    ASSERT_EQ(j.finished_at_us, 0);
    ASSERT_NULL(j.worker_id); /* no worker holds it */
    ASSERT_EQ(j.started_at_us, 0);
    job_fini(&j);
    /* two fresh attempts: 3 fails retryably -> pending, 4 -> dead */
    a = claim_one(&f, id);
    ASSERT_EQ(a, 3);
    ASSERT_OK(store_fail(f.st, id, a, "e", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_PENDING);
    a = claim_one(&f, id);
    ASSERT_EQ(a, 4);
    ASSERT_OK(store_fail(f.st, id, a, "e", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    /* and again, through the reaper this time */
    ASSERT_OK(store_retry(f.st, id, NULL, &f.err), &f.err);
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    for (int i = 5; i <= 6; i++) {
        ASSERT_EQ(claim_one(&f, id), i);
        manual_clock_advance(&f.mc, 61 * SEC);
        int reaped = 0;
        ASSERT_OK(store_reap(f.st, 10, &bp, &reaped, &f.err), &f.err);
        ASSERT_EQ(reaped, 1);
        manual_clock_advance(&f.mc, 1 * SEC);
    }
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    fx_close(&f);
}

TEST(retry_cancelled_and_state_errors)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, T0 + 3600 * SEC);
    ASSERT_EQ(store_retry(f.st, id, NULL, &f.err), JOBD_E_STATE); /* pending */
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    manual_clock_advance(&f.mc, 5 * SEC);
    struct job j = {0};
    ASSERT_OK(store_retry(f.st, id, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.run_at_us, T0 + 5 * SEC); /* due now, not at its old run_at */
    ASSERT_EQ(j.attempt, 0);
    job_fini(&j);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(a, 1);
    ASSERT_EQ(store_retry(f.st, id, NULL, &f.err), JOBD_E_STATE); /* running */
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(store_retry(f.st, id, NULL, &f.err), JOBD_E_STATE); /* succeeded */
    ASSERT_EQ(store_retry(f.st, id + 1000, NULL, &f.err), JOBD_E_NOTFOUND);
    fx_close(&f);
}

/* store_cancels_requested: only running jobs with a cancel requested, in one call. */
TEST(cancels_requested_reads_running_cancelled_only)
{
    struct fx f;
    fx_open(&f);
    int64_t run = enq(&f, "t", NULL, 0, 0);
    claim_one(&f, run);
    int64_t other = enq(&f, "t", NULL, 0, 0);
    claim_one(&f, other);
    int64_t pend = enq(&f, "t", NULL, 0, T0 + 100 * SEC);
    int64_t ids[5] = {run, other, pend, run, run + 100000};
    bool got[5] = {true, true, true, true, true};
    ASSERT_OK(store_cancels_requested(f.st, ids, 5, got, &f.err), &f.err);
    for (int i = 0; i < 5; i++)
        ASSERT(!got[i]);
    ASSERT_OK(store_cancel(f.st, run, NULL, &f.err), &f.err);
    ASSERT_OK(store_cancel(f.st, pend, NULL, &f.err), &f.err); /* cancelled at once */
    ASSERT_OK(store_cancels_requested(f.st, ids, 5, got, &f.err), &f.err);
    ASSERT(got[0]);
    ASSERT(!got[1]);
    ASSERT(!got[2]);
    ASSERT(got[3]); /* asked twice, answered twice */
    ASSERT(!got[4]);
    ASSERT_OK(store_cancels_requested(f.st, ids, 0, got, &f.err), &f.err);
    fx_close(&f);
}
