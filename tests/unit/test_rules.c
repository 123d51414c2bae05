/*
 * test_rules.c — the model rules both stores share (core/rules.h): claim
 * order, enqueue defaults, counted attempts, the error tail on a UTF-8
 * boundary, and which operator action each status allows.
 */
#include <stdlib.h>

#include "core/err.h"
#include "core/rules.h"
#include "test.h"

TEST(claim_order_priority_run_at_id)
{
    struct job v[] = {
        {.id = 5, .priority = 0, .run_at_us = 10}, {.id = 4, .priority = 0, .run_at_us = 10},
        {.id = 3, .priority = 9, .run_at_us = 50}, {.id = 2, .priority = 0, .run_at_us = 5},
        {.id = 1, .priority = -1, .run_at_us = 0},
    };
    qsort(v, 5, sizeof *v, job_claim_order_cmp);
    const int64_t want[] = {3, 2, 4, 5, 1};
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(v[i].id, want[i]);
}

TEST(spec_defaults)
{
    struct job_spec s = {.type = "t", .priority = 3, .idempotency_key = "k"};
    struct job_spec d = job_spec_with_defaults(&s);
    ASSERT_STR_EQ(d.payload, "{}");
    ASSERT_STR_EQ(d.queue, JOB_DEFAULT_QUEUE);
    ASSERT_EQ(d.max_attempts, JOB_DEFAULT_MAX_ATTEMPTS);
    ASSERT_EQ(d.priority, 3);
    ASSERT_STR_EQ(d.idempotency_key, "k");
    ASSERT_EQ(d.run_at_us, 0);
    struct job_spec g = {.type = "t", .payload = "[1]", .queue = "q", .max_attempts = 2};
    d = job_spec_with_defaults(&g);
    ASSERT_STR_EQ(d.payload, "[1]");
    ASSERT_STR_EQ(d.queue, "q");
    ASSERT_EQ(d.max_attempts, 2);
}

TEST(attempts_counted_since_manual_retry)
{
    ASSERT_EQ(job_attempts_counted(1, 0), 1);
    ASSERT_EQ(job_attempts_counted(27, 25), 2);
}

/* A manual retry starts the backoff over (rnd NULL: the ceiling itself). */
TEST(retry_delay_restarts_after_manual_retry)
{
    ASSERT_EQ(job_retry_delay_ms(1, 0, 1000, 3600000, NULL, NULL), 2000);
    ASSERT_EQ(job_retry_delay_ms(10, 0, 1000, 3600000, NULL, NULL), 1024000);
    /* attempt 26 is the first after a retry of a job that died at 25 */
    ASSERT_EQ(job_retry_delay_ms(26, 25, 1000, 3600000, NULL, NULL),
              job_retry_delay_ms(1, 0, 1000, 3600000, NULL, NULL));
    ASSERT_EQ(job_retry_delay_ms(27, 25, 1000, 3600000, NULL, NULL), 4000);
    uint64_t seed = 7;
    for (int i = 0; i < 100; i++)
        ASSERT(job_retry_delay_ms(26, 25, 1000, 3600000, backoff_rand_splitmix, &seed) <= 2000);
}

TEST(error_tail_keeps_the_end_on_a_character_boundary)
{
    ASSERT_NULL(job_error_tail(NULL));
    ASSERT_STR_EQ(job_error_tail("short"), "short");
    /* "é" is two bytes: a cut inside one moves forward to the next character */
    size_t n = JOB_ERROR_MAX + 1;
    char *e = malloc(n + 1);
    ASSERT(e != NULL);
    e[0] = 'x';
    for (size_t i = 1; i + 1 < n; i += 2) {
        e[i] = (char)0xC3;
        e[i + 1] = (char)0xA9;
    }
    e[n] = '\0';
    const char *t = job_error_tail(e);
    ASSERT((unsigned char)t[0] == 0xC3);
    ASSERT(strlen(t) <= JOB_ERROR_MAX);
    free(e);
}

TEST(actions_and_refusals)
{
    ASSERT(job_action_allowed(JOB_ACTION_CANCEL, JOB_PENDING));
    ASSERT(job_action_allowed(JOB_ACTION_CANCEL, JOB_RUNNING));
    ASSERT(!job_action_allowed(JOB_ACTION_CANCEL, JOB_DEAD));
    ASSERT(job_action_allowed(JOB_ACTION_RETRY, JOB_DEAD));
    ASSERT(job_action_allowed(JOB_ACTION_RETRY, JOB_CANCELLED));
    ASSERT(!job_action_allowed(JOB_ACTION_RETRY, JOB_SUCCEEDED));
    struct jobd_error err = {0};
    ASSERT_EQ(job_error_refused(&err, JOB_ACTION_RETRY, 7, JOB_SUCCEEDED), JOBD_E_STATE);
    ASSERT_STR_EQ(err.field, "status");
    ASSERT_STR_EQ(err.msg, "cannot retry job 7: it is succeeded");
    ASSERT_EQ(job_error_stale(&err, 7, 3), JOBD_E_STALE);
    ASSERT_STR_EQ(err.field, "attempt");
}

TEST(attempts_left_counts_since_the_last_manual_retry)
{
    ASSERT(job_has_attempts_left(1, 0, 2));
    ASSERT(!job_has_attempts_left(2, 0, 2));
    ASSERT(job_has_attempts_left(5, 4, 2)); /* retried by hand after attempt 4 */
    ASSERT(!job_has_attempts_left(6, 4, 2));
    ASSERT(!job_has_attempts_left(1, 0, 1));
}
