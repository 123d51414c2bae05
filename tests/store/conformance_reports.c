/*
 * conformance_reports.c — the conformance cases of the reports of a running
 * attempt (heartbeat, complete, fail; fencing by attempt) and of the reaper
 * that ends attempts whose lease ran out (its backoff, its dead-lettering,
 * its limit).
 */
#include <stdio.h>
#include <stdlib.h>

#include "conformance.h"
#include "store/operator.h"

/* ------------------------------------------------------------------ */
/* heartbeat, complete, fail, fencing                                  */

TEST(heartbeat_extends_lease)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id); /* lease until T0+60s */
    manual_clock_advance(&f.mc, 50 * SEC);
    int64_t until = 0;
    bool cancel = true;
    ASSERT_OK(store_heartbeat(f.st, id, a, 60000, &until, &cancel, &f.err), &f.err);
    ASSERT_EQ(until, T0 + 110 * SEC);
    ASSERT(!cancel);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.lease_expires_at_us, T0 + 110 * SEC);
    ASSERT_EQ(g.status, JOB_RUNNING);
    job_fini(&g);
    /* past the first lease but within the extended one: not reaped */
    manual_clock_advance(&f.mc, 30 * SEC);
    int reaped = -1;
    ASSERT_OK(store_reap(f.st, 100, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 0);
    ASSERT_EQ(status_of(&f, id), JOB_RUNNING);
    /* lease_ms 0 = the default lease */
    ASSERT_OK(store_heartbeat(f.st, id, a, 0, &until, &cancel, &f.err), &f.err);
    ASSERT_EQ(until, T0 + 80 * SEC + JOB_DEFAULT_LEASE_MS * MS);
    fx_close(&f);
}

TEST(heartbeat_stale_cases)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int64_t until = 0;
    bool cancel = false;
    /* pending job, unknown job, wrong attempt */
    ASSERT_EQ(store_heartbeat(f.st, id, 0, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_heartbeat(f.st, id + 99, 1, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(store_heartbeat(f.st, id, a + 1, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_heartbeat(f.st, id, a - 1, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.lease_expires_at_us, T0 + 60 * SEC);
    job_fini(&g);
    fx_close(&f);
}

TEST(complete_succeeds_with_result)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    manual_clock_advance(&f.mc, 3 * SEC);
    struct job j = {0};
    ASSERT_OK(store_complete(f.st, id, a, "{\"ok\":true}", &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(j.result, "{\"ok\":true}");
    ASSERT_EQ(j.finished_at_us, T0 + 3 * SEC);
    ASSERT_EQ(j.started_at_us, T0);
    ASSERT_EQ(j.attempt, 1);
    ASSERT_EQ(j.lease_expires_at_us, 0);
    job_fini(&j);
    /* the finished job is still readable by id */
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_SUCCEEDED);
    ASSERT_STR_EQ(g.result, "{\"ok\":true}");
    ASSERT_EQ(g.finished_at_us, T0 + 3 * SEC);
    ASSERT_STR_EQ(g.type, "t");
    ASSERT_STR_EQ(g.worker_id, "w1");
    job_fini(&g);
    /* a second completion of the same attempt is stale */
    ASSERT_EQ(store_complete(f.st, id, a, NULL, NULL, &f.err), JOBD_E_STALE);
    int64_t until;
    bool cancel;
    ASSERT_EQ(store_heartbeat(f.st, id, a, 1000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_fail(f.st, id, a, "x", true, 0, NULL, &f.err), JOBD_E_STALE);
    fx_close(&f);
}

TEST(complete_without_result)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_SUCCEEDED);
    ASSERT_NULL(g.result);
    job_fini(&g);
    /* unknown job */
    ASSERT_EQ(store_complete(f.st, id + 50, 1, NULL, NULL, &f.err), JOBD_E_STALE);
    fx_close(&f);
}

TEST(fail_retryable_goes_pending)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    manual_clock_advance(&f.mc, 4 * SEC);
    struct job j = {0};
    ASSERT_OK(store_fail(f.st, id, a, "boom", true, 7000, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_PENDING);
    ASSERT_EQ(j.run_at_us, T0 + 4 * SEC + 7 * SEC);
    ASSERT_STR_EQ(j.last_error, "boom");
    ASSERT_EQ(j.attempt, 1);
    ASSERT_EQ(j.lease_expires_at_us, 0);
    ASSERT_EQ(j.finished_at_us, 0);
    ASSERT_NULL(j.worker_id);
    job_fini(&j);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.run_at_us, T0 + 11 * SEC);
    ASSERT_STR_EQ(g.last_error, "boom");
    job_fini(&g);
    /* not due before run_at; the next claim is attempt 2 */
    struct job_list l = {0};
    claim(&f, 1, 0, &l);
    ASSERT_EQ(l.n, 0);
    manual_clock_advance(&f.mc, 7 * SEC);
    ASSERT_EQ(claim_one(&f, id), 2);
    /* the old attempt's reports are fenced */
    ASSERT_EQ(store_complete(f.st, id, a, NULL, NULL, &f.err), JOBD_E_STALE);
    fx_close(&f);
}

TEST(fail_permanent_goes_dead)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    manual_clock_advance(&f.mc, 1 * SEC);
    struct job j = {0};
    ASSERT_OK(store_fail(f.st, id, a, "bad payload", false, 5000, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_DEAD);
    ASSERT_STR_EQ(j.last_error, "bad payload");
    ASSERT_EQ(j.finished_at_us, T0 + 1 * SEC);
    job_fini(&j);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    struct job_list l = {0};
    manual_clock_advance(&f.mc, 3600 * SEC);
    claim(&f, 1, 0, &l);
    ASSERT_EQ(l.n, 0);
    fx_close(&f);
}

TEST(fail_out_of_attempts_goes_dead)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 2};
    int64_t id = enq_spec(&f, &s);
    int32_t a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, "e1", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_PENDING);
    a = claim_one(&f, id);
    ASSERT_EQ(a, 2);
    struct job j = {0};
    ASSERT_OK(store_fail(f.st, id, a, "e2", true, 0, &j, &f.err), &f.err);
    ASSERT_EQ(j.status, JOB_DEAD);
    ASSERT_STR_EQ(j.last_error, "e2");
    ASSERT_EQ(j.attempt, 2);
    job_fini(&j);
    fx_close(&f);
}

TEST(fail_truncates_error_to_tail)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    size_t n = JOB_ERROR_MAX + 1000;
    char *e = malloc(n + 1);
    ASSERT(e != NULL);
    for (size_t i = 0; i < n; i++)
        e[i] = (char)('a' + (i % 26));
    e[n] = '\0';
    ASSERT_OK(store_fail(f.st, id, a, e, true, 0, NULL, &f.err), &f.err);
    struct job g = getj(&f, id);
    ASSERT(g.last_error != NULL);
    ASSERT_EQ(strlen(g.last_error), JOB_ERROR_MAX);
    ASSERT_STR_EQ(g.last_error, e + 1000);
    job_fini(&g);
    free(e);
    /* a NULL error is allowed */
    a = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, a, NULL, false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* the reaper                                                          */

TEST(reaper_requeues_expired_lease)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id); /* lease until T0+60s */
    struct backoff_policy bp = {.base_ms = 1000, .cap_ms = 1500};
    int reaped = -1;
    manual_clock_advance(&f.mc, 60 * SEC); /* lease_expires_at == now: still live */
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 0);
    manual_clock_advance(&f.mc, 1);
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.attempt, 1);
    ASSERT_STR_EQ(g.last_error, "lease expired");
    ASSERT_EQ(g.lease_expires_at_us, 0);
    /* full jitter within [now, now + min(cap, base * 2^attempt)] */
    ASSERT(g.run_at_us >= now_of(&f));
    ASSERT(g.run_at_us <= now_of(&f) + 1500 * MS);
    job_fini(&g);
    /* the dead worker's late reports are fenced and change nothing */
    int64_t until;
    bool cancel;
    ASSERT_EQ(store_heartbeat(f.st, id, a, 60000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_complete(f.st, id, a, "{}", NULL, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_fail(f.st, id, a, "late", false, 0, NULL, &f.err), JOBD_E_STALE);
    g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT_EQ(g.attempt, 1);
    ASSERT_STR_EQ(g.last_error, "lease expired");
    ASSERT_NULL(g.result);
    job_fini(&g);
    /* again reaping finds nothing */
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 0);
    fx_close(&f);
}

/*
 * The reaper's backoff counts attempts since the last manual retry (as the
 * attempts left do), on both backends: a job retried by hand after many
 * attempts starts again from the base delay. With the raw attempt (12
 * here) the ceiling would be base * 2^12 = 4096 s (capped at 1 h), and
 * three jobs landing within 2 s would be a one-in-10^9 chance.
 */
TEST(reaper_backoff_restarts_after_manual_retry)
{
    struct fx f;
    fx_open(&f);
    struct backoff_policy bp = {.base_ms = 1000, .cap_ms = 3600 * 1000};
    int64_t ids[3];
    for (int k = 0; k < 3; k++) { /* one at a time, so claim_one finds it */
        struct job_spec s = {.type = "t", .max_attempts = 2};
        ids[k] = enq_spec(&f, &s);
        for (int round = 0; round < 11; round++) {
            int32_t a = claim_one(&f, ids[k]);
            ASSERT_OK(store_fail(f.st, ids[k], a, "x", false, 0, NULL, &f.err), &f.err);
            ASSERT_OK(store_retry(f.st, ids[k], NULL, &f.err), &f.err);
        }
        ASSERT_EQ(claim_one(&f, ids[k]), 12);
    }
    manual_clock_advance(&f.mc, 61 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 3);
    for (int k = 0; k < 3; k++) {
        struct job g = getj(&f, ids[k]);
        ASSERT_EQ(g.status, JOB_PENDING); /* 1 of 2 attempts counted */
        ASSERT_NULL(g.worker_id);
        ASSERT(g.run_at_us >= now_of(&f));
        ASSERT(g.run_at_us <= now_of(&f) + 2 * SEC); /* base * 2^1 */
        job_fini(&g);
    }
    fx_close(&f);
}

/*
 * A failure that names no delay (store_fail_backoff) takes the reaper's
 * rule from the policy it is given, over the attempts counted since the
 * last manual retry, the floor read by the store in the transaction that
 * writes the failure: as above, attempt 12 after 11 manual retries counts
 * as 1 (ceiling base * 2 = 2 s; with the raw attempt 4096 s, so three jobs
 * within 2 s would be a one-in-10^9 chance). The cap holds, and a stale
 * attempt changes nothing.
 */
TEST(fail_backoff_counts_since_manual_retry)
{
    struct fx f;
    fx_open(&f);
    struct backoff_policy bp = {.base_ms = 1000, .cap_ms = 3600 * 1000};
    for (int k = 0; k < 3; k++) {
        struct job_spec s = {.type = "t", .max_attempts = 2};
        int64_t id = enq_spec(&f, &s);
        for (int round = 0; round < 11; round++) {
            int32_t a = claim_one(&f, id);
            ASSERT_OK(store_fail(f.st, id, a, "x", false, 0, NULL, &f.err), &f.err);
            ASSERT_OK(store_retry(f.st, id, NULL, &f.err), &f.err);
        }
        ASSERT_EQ(claim_one(&f, id), 12);
        struct job out = {0};
        ASSERT_OK(store_fail_backoff(f.st, id, 12, "again", true, &bp, &out, &f.err), &f.err);
        ASSERT_EQ(out.status, JOB_PENDING); /* 1 of 2 attempts counted */
        job_fini(&out);
        struct job g = getj(&f, id);
        ASSERT_EQ(g.status, JOB_PENDING);
        ASSERT_STR_EQ(g.last_error, "again");
        ASSERT(g.run_at_us >= now_of(&f));
        ASSERT(g.run_at_us <= now_of(&f) + 2 * SEC); /* base * 2^1 */
        job_fini(&g);
        ASSERT_EQ(store_fail_backoff(f.st, id, 12, "late", true, &bp, NULL, &f.err), JOBD_E_STALE);
        ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err); /* out of the way */
    }
    /* the cap: attempt 3 of a fresh job would be 8 s, capped at 1.5 s */
    struct backoff_policy capped = {.base_ms = 1000, .cap_ms = 1500};
    int64_t id = enq(&f, "t", NULL, 0, 0);
    for (int32_t a = 1; a <= 3; a++) {
        manual_clock_advance(&f.mc, 2 * SEC); /* past any earlier delay */
        ASSERT_EQ(claim_one(&f, id), a);
        ASSERT_OK(store_fail_backoff(f.st, id, a, "x", true, &capped, NULL, &f.err), &f.err);
    }
    struct job g = getj(&f, id);
    ASSERT_EQ(g.status, JOB_PENDING);
    ASSERT(g.run_at_us <= now_of(&f) + 1500 * MS);
    job_fini(&g);
    fx_close(&f);
}

/* A claim says the job's attempt_floor, so a worker's backoff restarts after a retry too. */
TEST(claim_tells_the_attempt_floor)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 1};
    int64_t id = enq_spec(&f, &s);
    struct job_list l = {0};
    claim(&f, 1, 60000, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].attempt_floor, 0);
    ASSERT_OK(store_fail(f.st, id, l.v[0].attempt, "x", false, 0, NULL, &f.err), &f.err);
    job_list_fini(&l);
    ASSERT_OK(store_retry(f.st, id, NULL, &f.err), &f.err);
    claim(&f, 1, 60000, &l);
    ASSERT_EQ(l.n, 1);
    ASSERT_EQ(l.v[0].attempt, 2);
    ASSERT_EQ(l.v[0].attempt_floor, 1);
    ASSERT_EQ(job_attempts_counted(l.v[0].attempt, l.v[0].attempt_floor), 1);
    job_list_fini(&l);
    fx_close(&f);
}

TEST(stale_after_reclaim)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a1 = claim_one(&f, id);
    manual_clock_advance(&f.mc, 61 * SEC);
    struct backoff_policy bp = {.base_ms = 1, .cap_ms = 1};
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    manual_clock_advance(&f.mc, 1 * SEC);
    int32_t a2 = claim_one(&f, id);
    ASSERT_EQ(a2, a1 + 1);
    struct job before = getj(&f, id);
    int64_t until;
    bool cancel;
    ASSERT_EQ(store_heartbeat(f.st, id, a1, 600000, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_complete(f.st, id, a1, "{\"x\":1}", NULL, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_fail(f.st, id, a1, "old", false, 0, NULL, &f.err), JOBD_E_STALE);
    struct job after = getj(&f, id);
    ASSERT_EQ(after.status, JOB_RUNNING);
    ASSERT_EQ(after.attempt, a2);
    ASSERT_EQ(after.lease_expires_at_us, before.lease_expires_at_us);
    ASSERT_STR_EQ(after.last_error, before.last_error);
    ASSERT_NULL(after.result);
    job_fini(&before);
    job_fini(&after);
    /* the live attempt still completes */
    ASSERT_OK(store_complete(f.st, id, a2, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_SUCCEEDED);
    fx_close(&f);
}

TEST(reaper_dead_letters_after_max_attempts)
{
    struct fx f;
    fx_open(&f);
    struct job_spec s = {.type = "t", .max_attempts = 3};
    int64_t id = enq_spec(&f, &s);
    struct backoff_policy bp = {.base_ms = 1000, .cap_ms = 2000};
    for (int i = 1; i <= 3; i++) {
        ASSERT_EQ(claim_one(&f, id), i);
        manual_clock_advance(&f.mc, 61 * SEC);
        int reaped = 0;
        ASSERT_OK(store_reap(f.st, 100, &bp, &reaped, &f.err), &f.err);
        ASSERT_EQ(reaped, 1);
        struct job g = getj(&f, id);
        ASSERT_EQ(g.attempt, i);
        ASSERT_EQ(g.status, i < 3 ? JOB_PENDING : JOB_DEAD);
        ASSERT_STR_EQ(g.last_error, "lease expired");
        if (i == 3)
            ASSERT_EQ(g.finished_at_us, now_of(&f));
        job_fini(&g);
        manual_clock_advance(&f.mc, 2 * SEC); /* past any backoff */
    }
    struct job_list l = {0};
    claim(&f, 10, 0, &l);
    ASSERT_EQ(l.n, 0);
    fx_close(&f);
}

TEST(reaper_leaves_live_leases_and_respects_limit)
{
    struct fx f;
    fx_open(&f);
    int64_t ids[5];
    for (int i = 0; i < 5; i++)
        ids[i] = enq(&f, "t", NULL, 0, 0);
    struct job_list l = {0};
    claim(&f, 3, 10000, &l); /* three with 10 s leases */
    ASSERT_EQ(l.n, 3);
    job_list_fini(&l);
    claim(&f, 2, 60000, &l); /* two with 60 s leases */
    ASSERT_EQ(l.n, 2);
    job_list_fini(&l);
    manual_clock_advance(&f.mc, 11 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 2, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 2);
    ASSERT_OK(store_reap(f.st, 100, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    ASSERT_OK(store_reap(f.st, 100, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 0);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(status_of(&f, ids[i]), JOB_PENDING);
    for (int i = 3; i < 5; i++)
        ASSERT_EQ(status_of(&f, ids[i]), JOB_RUNNING);
    fx_close(&f);
}

/* ------------------------------------------------------------------ */
/* repeated reports (store_lease_replayed; docs/API.md, Repeated reports) */

/* A token hash for job id's attempt a: any 64 hex digits will do. */
static void
hash_for(int64_t id, int32_t a, char h[65])
{
    snprintf(h, 65, "%016llx%016x%032x", (unsigned long long)id, (unsigned)a, 0xabcu);
}

/* Claims id (as the API does, with a token hash h) and returns its attempt. */
static int32_t
claim_with_token(struct fx *f, int64_t id, char h[65])
{
    int32_t a = claim_one(f, id);
    struct lease_token_ref ref = {.id = id, .attempt = a};
    hash_for(id, a, ref.hash);
    memcpy(h, ref.hash, 65);
    ASSERT_OK(store_lease_set(f->st, &ref, 1, &f->err), &f->err);
    return a;
}

/* Whether (kind, id, a, h) is a repeat; checks the queue it answers. */
static bool
is_replay(struct fx *f, enum lease_report kind, int64_t id, int32_t a, const char *h)
{
    char *queue = NULL;
    int rc = store_lease_replayed(f->st, id, a, kind, h, &queue, &f->err);
    if (rc == JOBD_OK)
        ASSERT_STR_EQ(queue, "default");
    else
        ASSERT_EQ(rc, JOBD_E_STALE);
    free(queue);
    return rc == JOBD_OK;
}

TEST(repeated_complete_is_known)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    char h[65], other[65];
    int32_t a = claim_with_token(&f, id, h);
    hash_for(id, a + 7, other);
    /* Running: nothing to repeat yet. */
    ASSERT(!is_replay(&f, LEASE_REPORT_COMPLETE, id, a, h));
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    ASSERT(is_replay(&f, LEASE_REPORT_COMPLETE, id, a, h));
    /* Another token, another attempt, or the other report: not a repeat. */
    ASSERT(!is_replay(&f, LEASE_REPORT_COMPLETE, id, a, other));
    ASSERT(!is_replay(&f, LEASE_REPORT_COMPLETE, id, a + 1, h));
    ASSERT(!is_replay(&f, LEASE_REPORT_FAIL, id, a, h));
    ASSERT(!is_replay(&f, LEASE_REPORT_COMPLETE, id + 99, a, h));
    /* Still known once archived (PostgreSQL moves succeeded rows later). */
    int moved = 0;
    if (is_pg())
        ASSERT_OK(store_archive(f.st, now_of(&f) + 1, 100, &moved, &f.err), &f.err);
    ASSERT(is_replay(&f, LEASE_REPORT_COMPLETE, id, a, h));
    fx_close(&f);
}

TEST(repeated_fail_is_known)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    char h[65], h2[65];
    int32_t a = claim_with_token(&f, id, h);
    ASSERT_OK(store_fail(f.st, id, a, "boom", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_PENDING);
    ASSERT(is_replay(&f, LEASE_REPORT_FAIL, id, a, h));
    ASSERT(!is_replay(&f, LEASE_REPORT_COMPLETE, id, a, h));
    /* The job moves on: the next attempt's own reports are not repeats of
     * the first's, and the first's repeat stays known. */
    int32_t b = claim_with_token(&f, id, h2);
    ASSERT_EQ(b, a + 1);
    ASSERT(!is_replay(&f, LEASE_REPORT_FAIL, id, b, h2));
    ASSERT(!is_replay(&f, LEASE_REPORT_FAIL, id, b, h));
    ASSERT(is_replay(&f, LEASE_REPORT_FAIL, id, a, h));
    /* A permanent failure ends the job dead: repeated too. */
    ASSERT_OK(store_fail(f.st, id, b, "fatal", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(status_of(&f, id), JOB_DEAD);
    ASSERT(is_replay(&f, LEASE_REPORT_FAIL, id, b, h2));
    ASSERT(!is_replay(&f, LEASE_REPORT_COMPLETE, id, b, h2));
    fx_close(&f);
}

TEST(reaped_or_released_attempt_is_no_repeat)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    char h[65], h2[65];
    int32_t a = claim_with_token(&f, id, h); /* 60 s lease */
    manual_clock_advance(&f.mc, 61 * SEC);
    int reaped = 0;
    ASSERT_OK(store_reap(f.st, 10, NULL, &reaped, &f.err), &f.err);
    ASSERT_EQ(reaped, 1);
    /* Its worker's late report is no repeat: the reaper ended it. */
    ASSERT(!is_replay(&f, LEASE_REPORT_FAIL, id, a, h));
    ASSERT(!is_replay(&f, LEASE_REPORT_COMPLETE, id, a, h));
    manual_clock_advance(&f.mc, 3600 * SEC);
    int32_t b = claim_with_token(&f, id, h2);
    ASSERT_OK(store_release(f.st, id, b, &f.err), &f.err);
    ASSERT(!is_replay(&f, LEASE_REPORT_FAIL, id, b, h2));
    /* An attempt claimed on the store itself has no token: never a repeat. */
    int32_t c = claim_one(&f, id);
    ASSERT_OK(store_fail(f.st, id, c, "x", true, 0, NULL, &f.err), &f.err);
    ASSERT(!is_replay(&f, LEASE_REPORT_FAIL, id, c, h2));
    fx_close(&f);
}
