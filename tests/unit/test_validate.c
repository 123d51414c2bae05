/*
 * test_validate.c — the naming and range rules of job specs.
 */
#include "core/err.h"
#include "core/job.h"
#include "core/timefmt.h"
#include "test.h"

TEST(type_names)
{
    struct jobd_error e = {0};
    ASSERT_OK(job_validate_type("email.send", "type", &e), &e);
    ASSERT_OK(job_validate_type("a:B-9_x.y", "type", &e), &e);
    ASSERT_EQ(job_validate_type("", "type", &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "type");
    ASSERT_EQ(job_validate_type("has space", "type", &e), JOBD_E_INVALID);
    char longname[200];
    memset(longname, 'a', sizeof longname);
    longname[129] = '\0';
    ASSERT_EQ(job_validate_type(longname, "type", &e), JOBD_E_INVALID);
    longname[128] = '\0';
    ASSERT_OK(job_validate_type(longname, "type", &e), &e);
}

TEST(queue_names)
{
    struct jobd_error e = {0};
    ASSERT_OK(job_validate_queue("mail_out-2", "queue", &e), &e);
    ASSERT_EQ(job_validate_queue("Mail", "queue", &e), JOBD_E_INVALID);
    ASSERT_EQ(job_validate_queue("a.b", "queue", &e), JOBD_E_INVALID);
    ASSERT_EQ(job_validate_queue("", "queue", &e), JOBD_E_INVALID);
}

TEST(spec_fields_are_named_with_prefix)
{
    struct jobd_error e = {0};
    struct job_spec s = {.type = "ok", .queue = "BAD"};
    ASSERT_EQ(job_spec_validate(&s, "jobs[3].", &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "jobs[3].queue");
    s.queue = NULL;
    s.priority = 2000000;
    ASSERT_EQ(job_spec_validate(&s, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "priority");
    s.priority = 0;
    s.max_attempts = -1;
    ASSERT_EQ(job_spec_validate(&s, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "max_attempts");
    s.max_attempts = 0;
    s.idempotency_key = "";
    ASSERT_EQ(job_spec_validate(&s, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "idempotency_key");
    s.idempotency_key = "k1";
    ASSERT_OK(job_spec_validate(&s, NULL, &e), &e);
}

/* Found by fuzz_spec: a timeout of 106751991167d overflowed the worker's
 * deadline (ms * 1000), and a run_at after 9999 printed as a year jobd
 * cannot read back. Both are refused at the door now, naming the field. */
TEST(timeout_and_run_at_bounds)
{
    struct jobd_error e = {0};
    struct job_spec s = {.type = "t", .timeout_ms = JOB_TIMEOUT_MAX_MS, .run_at_us = TIME_MAX_US};
    ASSERT_OK(job_spec_validate(&s, NULL, &e), &e);
    s.timeout_ms = JOB_TIMEOUT_MAX_MS + 1;
    ASSERT_EQ(job_spec_validate(&s, "jobs[1].", &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "jobs[1].timeout");
    ASSERT(strstr(e.msg, "366d") != NULL);
    s.timeout_ms = 0;
    s.run_at_us = TIME_MAX_US + 1;
    ASSERT_EQ(job_spec_validate(&s, NULL, &e), JOBD_E_INVALID);
    ASSERT_STR_EQ(e.field, "run_at");
}

TEST(payload_size_limit)
{
    struct jobd_error e = {0};
    size_t n = 256 * 1024 + 1;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[0] = '"';
    big[n - 1] = '"';
    big[n] = '\0';
    struct job_spec s = {.type = "t", .payload = big};
    ASSERT_EQ(job_spec_validate(&s, NULL, &e), JOBD_E_TOOBIG);
    ASSERT_STR_EQ(e.field, "payload");
    free(big);
}
