/*
 * test_api_input_rules.c — input rules of issue 11 through a real `jobd
 * server`: idempotency keys that are empty, blank, padded or hold control
 * characters (body, header, batch); zero and sub-millisecond timeouts; and
 * numbers too big for an int64 or a double in a payload, refused with a
 * code of their own naming where they are. Each refusal is a 400 naming
 * the field, and nothing is enqueued.
 */
#include "apitest.h"
#include "rawhttp.h"

/* POST body to path; expects 400 with code and field. */
static void
refused(const struct srv *s, const char *path, const char *body, const char *const *hdrs,
        const char *code, const char *field)
{
    struct resp r;
    http_req(s, "POST", path, body, strlen(body), hdrs, &r);
    if (r.status != 400)
        TEST_FAIL("%s: status %ld, want 400: %s", body, r.status, r.body);
    json_t *v = resp_json(&r);
    json_t *e = json_object_get(v, "error");
    const char *c = json_string_value(json_object_get(e, "code"));
    const char *f = json_string_value(json_object_get(e, "field"));
    if (strcmp(c ? c : "", code) != 0 || strcmp(f ? f : "", field) != 0)
        TEST_FAIL("%s: got %s/%s, want %s/%s: %s", body, c, f, code, field, r.body);
    json_decref(v);
    resp_fini(&r);
}

static size_t
n_jobs(const struct srv *s)
{
    json_t *l = get_json(s, "/v1/jobs");
    size_t n = json_array_size(json_object_get(l, "jobs"));
    json_decref(l);
    return n;
}

TEST(idempotency_keys_refused)
{
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    const char *bodies[] = {
        "{\"type\":\"t\",\"idempotency_key\":\"\"}",
        "{\"type\":\"t\",\"idempotency_key\":\" \"}",
        "{\"type\":\"t\",\"idempotency_key\":\"   \"}",
        "{\"type\":\"t\",\"idempotency_key\":\"order-1 \"}",
        "{\"type\":\"t\",\"idempotency_key\":\" order-1\"}",
        "{\"type\":\"t\",\"idempotency_key\":\"order\\t1\"}",
        "{\"type\":\"t\",\"idempotency_key\":\"order-1\\n\"}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++)
        refused(&s, "/v1/jobs", bodies[i], NULL, "invalid_field", "idempotency_key");
    refused(&s, "/v1/jobs/batch",
            "{\"jobs\":[{\"type\":\"t\"},{\"type\":\"t\","
            "\"idempotency_key\":\"k \"}]}",
            NULL, "invalid_field", "jobs[1].idempotency_key");
    /* The header: empty, and a tab inside (HTTP allows it in a value). */
    const char *empty[] = {"Idempotency-Key;", NULL};
    refused(&s, "/v1/jobs", "{\"type\":\"t\"}", empty, "invalid_field", "idempotency_key");
    char buf[4096];
    raw_exchange(NULL, s.port,
                 "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                 "Content-Type: application/json\r\nIdempotency-Key: order\t1\r\nContent-Length: "
                 "12\r\n\r\n{\"type\":\"t\"}",
                 buf, sizeof buf, 5000);
    if (strncmp(buf, "HTTP/1.1 400", 12) != 0 || strstr(buf, "idempotency_key") == NULL)
        TEST_FAIL("a key with a tab in the header: %s", buf);
    ASSERT_EQ(n_jobs(&s), 0);
    /* A clean key still works, and replays. */
    create_job(&s, "{\"type\":\"t\",\"idempotency_key\":\"order-1\"}");
    ASSERT_EQ(n_jobs(&s), 1);
    srv_stop(&s);
}

TEST(zero_and_sub_millisecond_timeouts_refused)
{
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    refused(&s, "/v1/jobs", "{\"type\":\"t\",\"timeout\":\"0s\"}", NULL, "invalid_field",
            "timeout");
    refused(&s, "/v1/jobs", "{\"type\":\"t\",\"timeout\":\"0ms\"}", NULL, "invalid_field",
            "timeout");
    refused(&s, "/v1/jobs", "{\"type\":\"t\",\"timeout_s\":0}", NULL, "invalid_field", "timeout_s");
    refused(&s, "/v1/jobs", "{\"type\":\"t\",\"timeout_s\":0.0004}", NULL, "invalid_field",
            "timeout_s");
    refused(&s, "/v1/jobs/batch", "{\"jobs\":[{\"type\":\"t\",\"timeout\":\"0s\"}]}", NULL,
            "invalid_field", "jobs[0].timeout");
    ASSERT_EQ(n_jobs(&s), 0);
    /* Absent and null mean none; 1ms is the least. */
    const char *ok[] = {"{\"type\":\"t\"}", "{\"type\":\"t\",\"timeout\":null}",
                        "{\"type\":\"t\",\"timeout_s\":null}"};
    for (size_t i = 0; i < 3; i++) {
        struct resp r;
        ASSERT_EQ(req(&s, "POST", "/v1/jobs", ok[i], &r), 201);
        json_t *j = resp_json(&r);
        ASSERT(json_is_null(json_object_get(j, "timeout_s")));
        json_decref(j);
        resp_fini(&r);
    }
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/jobs", "{\"type\":\"t\",\"timeout\":\"1ms\"}", &r), 201);
    json_t *j = resp_json(&r);
    ASSERT(json_real_value(json_object_get(j, "timeout_s")) == 0.001);
    json_decref(j);
    resp_fini(&r);
    srv_stop(&s);
}

TEST(big_numbers_refused_naming_where)
{
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    refused(&s, "/v1/jobs", "{\"type\":\"t\",\"payload\":{\"n\":18446744073709551616}}", NULL,
            "number_out_of_range", "payload.n");
    refused(&s, "/v1/jobs", "{\"type\":\"t\",\"payload\":-9223372036854775809}", NULL,
            "number_out_of_range", "payload");
    refused(&s, "/v1/jobs", "{\"type\":\"t\",\"payload\":{\"a\":[1,{\"x\":\"]\"},1e999]}}", NULL,
            "number_out_of_range", "payload.a[2]");
    refused(&s, "/v1/jobs/batch",
            "{\"jobs\":[{\"type\":\"t\"},{\"type\":\"t\",\"payload\":"
            "{\"ids\":[1,2,99999999999999999999]}}]}",
            NULL, "number_out_of_range", "jobs[1].payload.ids[2]");
    ASSERT_EQ(n_jobs(&s), 0);
    /* The int64 extremes are kept exactly. */
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/jobs",
                  "{\"type\":\"t\",\"payload\":[9223372036854775807,"
                  "-9223372036854775808]}",
                  &r),
              201);
    ASSERT(strstr(r.body, "[9223372036854775807,-9223372036854775808]") != NULL);
    resp_fini(&r);
    srv_stop(&s);
}
