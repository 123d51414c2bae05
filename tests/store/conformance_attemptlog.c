/*
 * conformance_attemptlog.c — the conformance cases of attempt logs
 * (store/attemptlog.h): one per attempt, replaced by a second write of the
 * same attempt, kept only for attempts the job has had (running or over),
 * bounded, said missing by what is missing, and gone with the job when it
 * is pruned or deleted.
 */
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "store/attemptlog.h"
#include "store/operator.h"

static long
log_rows(struct fx *f)
{
    return raw_count(f, is_pg() ? "SELECT count(*) FROM jobd.job_attempt_logs"
                                : "SELECT count(*) FROM job_attempt_logs");
}

/* Writes one log; its outcome. */
static int
put1(struct fx *f, int64_t id, int32_t attempt, const char *text)
{
    struct attempt_log l = {.id = id, .attempt = attempt, .text = text};
    int outcome = -1;
    ASSERT_OK(store_attempt_logs_put(f->st, &l, 1, &outcome, &f->err), &f->err);
    return outcome;
}

TEST(attempt_logs_kept_per_attempt)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(put1(&f, id, a, "first try\nboom\n"), JOBD_OK);
    ASSERT_OK(store_fail(f.st, id, a, "boom", true, 0, NULL, &f.err), &f.err);
    int32_t b = claim_one(&f, id);
    ASSERT(b > a);
    ASSERT_OK(store_complete(f.st, id, b, NULL, NULL, &f.err), &f.err);
    /* written after the attempt's report (a lost lease, a store worker): kept */
    struct attempt_log two[2] = {{.id = id, .attempt = b, .text = "second"},
                                 {.id = id + 1000, .attempt = 1, .text = "nobody's"}};
    int outcome[2] = {-1, -1};
    ASSERT_OK(store_attempt_logs_put(f.st, two, 2, outcome, &f.err), &f.err);
    ASSERT_EQ(outcome[0], JOBD_OK);
    ASSERT_EQ(outcome[1], JOBD_E_NOTFOUND);
    char *t = NULL;
    ASSERT_OK(store_attempt_log_get(f.st, id, a, &t, &f.err), &f.err);
    ASSERT_STR_EQ(t, "first try\nboom\n");
    free(t);
    ASSERT_OK(store_attempt_log_get(f.st, id, b, &t, &f.err), &f.err);
    ASSERT_STR_EQ(t, "second");
    free(t);
    /* a second write of one attempt replaces its log */
    ASSERT_EQ(put1(&f, id, b, "again"), JOBD_OK);
    ASSERT_OK(store_attempt_log_get(f.st, id, b, &t, &f.err), &f.err);
    ASSERT_STR_EQ(t, "again");
    free(t);
    ASSERT_EQ(log_rows(&f), 2);
    /* the sizes, in attempt order, for a listing */
    struct attempt_log_size *sz = NULL;
    size_t n = 0;
    ASSERT_OK(store_attempt_log_sizes(f.st, id, &sz, &n, &f.err), &f.err);
    ASSERT_EQ((long)n, 2L);
    ASSERT_EQ(sz[0].attempt, a);
    ASSERT_EQ(sz[0].bytes, (int64_t)strlen("first try\nboom\n"));
    ASSERT_EQ(sz[1].attempt, b);
    ASSERT_EQ(sz[1].bytes, 5);
    free(sz);
    ASSERT_OK(store_attempt_log_sizes(f.st, id + 1000, &sz, &n, &f.err), &f.err);
    ASSERT(sz == NULL && n == 0);
    fx_close(&f);
}

TEST(attempt_logs_missing_named)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    char *t = NULL;
    /* never claimed: no attempt 1 yet, and nothing is written for it */
    ASSERT_EQ(put1(&f, id, 1, "early"), JOBD_E_NOTFOUND);
    ASSERT_EQ(store_attempt_log_get(f.st, id, 1, &t, &f.err), JOBD_E_NOTFOUND);
    ASSERT_STR_EQ(f.err.field, "attempt");
    ASSERT(t == NULL);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(put1(&f, id, a + 1, "later"), JOBD_E_NOTFOUND);
    ASSERT_EQ(put1(&f, id, 0, "zero"), JOBD_E_NOTFOUND);
    ASSERT_EQ(log_rows(&f), 0);
    ASSERT_EQ(store_attempt_log_get(f.st, id, a, &t, &f.err), JOBD_E_NOTFOUND);
    ASSERT_STR_EQ(f.err.field, "log");
    ASSERT_EQ(store_attempt_log_get(f.st, id + 1000, 1, &t, &f.err), JOBD_E_NOTFOUND);
    ASSERT_STR_EQ(f.err.field, "id");
    fx_close(&f);
}

TEST(attempt_logs_limits)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    char *big = malloc(ATTEMPT_LOG_MAX + 2);
    ASSERT(big != NULL);
    memset(big, 'x', ATTEMPT_LOG_MAX + 1);
    big[ATTEMPT_LOG_MAX + 1] = '\0';
    struct attempt_log l = {.id = id, .attempt = a, .text = big};
    int outcome = 0;
    ASSERT_EQ(store_attempt_logs_put(f.st, &l, 1, &outcome, &f.err), JOBD_E_TOOBIG);
    ASSERT_STR_EQ(f.err.field, "text");
    big[ATTEMPT_LOG_MAX] = '\0'; /* exactly the most */
    ASSERT_EQ(put1(&f, id, a, big), JOBD_OK);
    l.text = "not \xff UTF-8";
    ASSERT_EQ(store_attempt_logs_put(f.st, &l, 1, &outcome, &f.err), JOBD_E_INVALID);
    ASSERT_STR_EQ(f.err.field, "text");
    char *t = NULL;
    ASSERT_OK(store_attempt_log_get(f.st, id, a, &t, &f.err), &f.err);
    ASSERT_EQ((long)strlen(t), (long)ATTEMPT_LOG_MAX);
    free(t);
    free(big);
    fx_close(&f);
}

TEST(attempt_logs_pruned_and_deleted_with_job)
{
    struct fx f;
    fx_open(&f);
    int64_t id = enq(&f, "t", NULL, 0, 0);
    int32_t a = claim_one(&f, id);
    ASSERT_EQ(put1(&f, id, a, "pruned"), JOBD_OK);
    ASSERT_OK(store_complete(f.st, id, a, NULL, NULL, &f.err), &f.err);
    int64_t other = enq(&f, "t", NULL, 0, 0);
    int32_t b = claim_one(&f, other);
    ASSERT_EQ(put1(&f, other, b, "deleted"), JOBD_OK);
    ASSERT_OK(store_fail(f.st, other, b, "boom", false, 0, NULL, &f.err), &f.err);
    ASSERT_EQ(log_rows(&f), 2);
    ASSERT_OK(store_delete(f.st, other, &f.err), &f.err);
    ASSERT_EQ(log_rows(&f), 1);
    manual_clock_advance(&f.mc, 10 * SEC);
    int deleted = 0;
    ASSERT_OK(store_prune(f.st, now_of(&f), 100, &deleted, &f.err), &f.err);
    ASSERT_EQ(deleted, 1);
    ASSERT_EQ(log_rows(&f), 0);
    fx_close(&f);
}
