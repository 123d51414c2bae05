/*
 * conformance_progress.c — the conformance cases of progress
 * (store/progress.h): fenced like a heartbeat and extending the lease like
 * one, shown only while the attempt that reported it is the job's (the next
 * claim clears it), bounded, and gone with the job when it is pruned.
 */
#include <stdlib.h>

#include "conformance.h"
#include "store/progress.h"

/* The job with its progress attached. */
static struct job
getp(struct fx *f, int64_t id)
{
    struct job j = getj(f, id);
    ASSERT_OK(store_progress_attach(f->st, &j, 1, &f->err), &f->err);
    return j;
}

static long
progress_rows(struct fx *f)
{
    return raw_count(f, is_pg() ? "SELECT count(*) FROM jobd.job_progress"
                                : "SELECT count(*) FROM job_progress");
}

TEST(progress_reported_and_read)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    struct job j = getp(&f, id);
    ASSERT(j.progress == NULL); /* never claimed */
    job_fini(&j);
    int32_t a = claim_one(&f, id);
    j = getp(&f, id);
    ASSERT(j.progress == NULL); /* nothing reported yet */
    job_fini(&j);
    manual_clock_advance(&f.mc, 5 * SEC);
    struct progress_report p = {
        .has_percent = true, .percent = 42.5, .message = "copying", .data = "{\"files\":3}"};
    int64_t until = 0;
    bool cancel = true;
    ASSERT_OK(store_progress(f.st, id, a, &p, 60000, &until, &cancel, &f.err), &f.err);
    ASSERT_EQ(until, T0 + 65 * SEC); /* extended as a heartbeat */
    ASSERT(!cancel);
    j = getp(&f, id);
    ASSERT(j.progress != NULL);
    ASSERT_EQ(j.progress->attempt, a);
    ASSERT(j.progress->has_percent);
    ASSERT(j.progress->percent == 42.5);
    ASSERT_STR_EQ(j.progress->message, "copying");
    ASSERT_STR_EQ(j.progress->data, "{\"files\":3}");
    ASSERT_EQ(j.progress->at_us, T0 + 5 * SEC);
    ASSERT_EQ(j.lease_expires_at_us, T0 + 65 * SEC);
    job_fini(&j);
    /* a report replaces the whole of it; a shorter lease never shortens */
    struct progress_report q = {.message = "almost"};
    ASSERT_OK(store_progress(f.st, id, a, &q, 1000, &until, &cancel, &f.err), &f.err);
    ASSERT_EQ(until, T0 + 65 * SEC);
    j = getp(&f, id);
    ASSERT(j.progress != NULL && !j.progress->has_percent && j.progress->data == NULL);
    ASSERT_STR_EQ(j.progress->message, "almost");
    job_fini(&j);
    /* a cancel request is told as a heartbeat tells it */
    ASSERT_OK(store_cancel(f.st, id, NULL, &f.err), &f.err);
    ASSERT_OK(store_progress(f.st, id, a, &q, 0, &until, &cancel, &f.err), &f.err);
    ASSERT(cancel);
    /* the attempt's progress stays with the job it finished */
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    j = getp(&f, id);
    ASSERT(j.progress != NULL);
    ASSERT_STR_EQ(j.progress->message, "almost");
    job_fini(&j);
    fx_close(&f);
}

TEST(progress_fenced)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    struct progress_report p = {.has_percent = true, .percent = 10};
    int64_t until = 0;
    bool cancel = false;
    /* pending: no attempt runs */
    ASSERT_EQ(store_progress(f.st, id, 1, &p, 0, &until, &cancel, &f.err), JOBD_E_STALE);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(store_progress(f.st, id, a + 1, &p, 0, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(store_progress(f.st, id + 1000, 1, &p, 0, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(progress_rows(&f), 0); /* a stale report writes nothing */
    ASSERT_OK(store_fail(f.st, id, a, "boom", true, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(store_progress(f.st, id, a, &p, 0, &until, &cancel, &f.err), JOBD_E_STALE);
    ASSERT_EQ(progress_rows(&f), 0);
    fx_close(&f);
}

TEST(progress_cleared_by_next_attempt)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    struct progress_report p = {.has_percent = true, .percent = 90, .message = "first"};
    int64_t until = 0;
    bool cancel = false;
    ASSERT_OK(store_progress(f.st, id, a, &p, 0, &until, &cancel, &f.err), &f.err);
    ASSERT_OK(store_fail(f.st, id, a, "boom", true, 0, NULL, &f.err), &f.err);
    int32_t b = claim_one(&f, id);
    ASSERT(b > a);
    struct job j = getp(&f, id);
    ASSERT(j.progress == NULL); /* the new attempt has said nothing yet */
    job_fini(&j);
    /* in a list too, with jobs that never ran beside it */
    int64_t other = enq(&f, "t", NULL, 0, T0 + 100 * SEC);
    struct job_filter flt = {.status = STORE_ANY};
    struct job_list l = {0};
    int64_t next = 0;
    ASSERT_OK(store_list(f.st, &flt, &l, &next, &f.err), &f.err);
    ASSERT_OK(store_progress_attach(f.st, l.v, l.n, &f.err), &f.err);
    for (size_t i = 0; i < l.n; i++)
        ASSERT(l.v[i].progress == NULL);
    struct progress_report q = {.message = "second"};
    ASSERT_OK(store_progress(f.st, id, b, &q, 0, &until, &cancel, &f.err), &f.err);
    ASSERT_OK(store_progress_attach(f.st, l.v, l.n, &f.err), &f.err);
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].id == id) {
            ASSERT(l.v[i].progress != NULL);
            ASSERT_STR_EQ(l.v[i].progress->message, "second");
        } else {
            ASSERT_EQ(l.v[i].id, other);
            ASSERT(l.v[i].progress == NULL);
        }
    job_list_fini(&l);
    fx_close(&f);
}

TEST(progress_limits)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    int64_t until = 0;
    bool cancel = false;
    struct progress_report p = {.has_percent = true, .percent = 100.5};
    ASSERT_EQ(store_progress(f.st, id, a, &p, 0, &until, &cancel, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "percent");
    p.percent = -1;
    ASSERT_EQ(store_progress(f.st, id, a, &p, 0, &until, &cancel, &f.err), JOBD_E_INVALID);
    p.percent = 100;
    char *msg = malloc(JOB_PROGRESS_MESSAGE_MAX + 2);
    ASSERT(msg != NULL);
    memset(msg, 'm', JOB_PROGRESS_MESSAGE_MAX + 1);
    msg[JOB_PROGRESS_MESSAGE_MAX + 1] = '\0';
    p.message = msg;
    ASSERT_EQ(store_progress(f.st, id, a, &p, 0, &until, &cancel, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "message");
    msg[JOB_PROGRESS_MESSAGE_MAX] = '\0'; /* exactly the most */
    ASSERT_OK(store_progress(f.st, id, a, &p, 0, &until, &cancel, &f.err), &f.err);
    char *data = malloc(JOB_PROGRESS_DATA_MAX + 2);
    ASSERT(data != NULL);
    memset(data, '1', JOB_PROGRESS_DATA_MAX + 1);
    data[JOB_PROGRESS_DATA_MAX + 1] = '\0';
    p.data = data;
    ASSERT_EQ(store_progress(f.st, id, a, &p, 0, &until, &cancel, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "data");
    struct job j = getp(&f, id);
    ASSERT(j.progress != NULL && j.progress->percent == 100);
    ASSERT_EQ((long)strlen(j.progress->message), (long)JOB_PROGRESS_MESSAGE_MAX);
    job_fini(&j);
    free(msg);
    free(data);
    fx_close(&f);
}

TEST(progress_pruned_with_job)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    struct progress_report p = {.has_percent = true, .percent = 50};
    int64_t until = 0;
    bool cancel = false;
    ASSERT_OK(store_progress(f.st, id, a, &p, 0, &until, &cancel, &f.err), &f.err);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    ASSERT_EQ(progress_rows(&f), 1);
    manual_clock_advance(&f.mc, 10 * SEC);
    int deleted = 0;
    ASSERT_OK(store_prune(f.st, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    ASSERT_EQ(progress_rows(&f), 0);
    fx_close(&f);
}
