/*
 * test_api_trace.c — trace context on enqueue (issue 28 item 7; docs/API.md,
 * Trace context) through a real `jobd server` on both stores: the
 * traceparent field of POST /v1/jobs and of each batch item, the traceparent
 * header of POST /v1/jobs (the field wins when both are given), kept in the
 * job object and handed out in the claim answer; a bad value is 400 naming
 * the field (jobs[i].traceparent in a batch) and writes nothing.
 */
#include "apitest.h"

#define TP1 "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TP2 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"

/* The error field of an error answer, into buf. */
static const char *
err_field(const struct resp *r, char *buf, size_t len)
{
    json_t *v = resp_json(r);
    const char *f = json_string_value(json_object_get(json_object_get(v, "error"), "field"));
    snprintf(buf, len, "%s", f ? f : "(none)");
    json_decref(v);
    return buf;
}

/* The traceparent of job id ("" for null). */
static void
expect_tp(const struct srv *s, int64_t id, const char *want)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    json_t *j = get_json(s, path);
    json_t *t = json_object_get(j, "traceparent");
    ASSERT(t != NULL); /* always present */
    if (want == NULL)
        ASSERT(json_is_null(t));
    else
        ASSERT_STR_EQ(json_string_value(t), want);
    json_decref(j);
}

/* POSTs body to path with headers h, expects status; the new job's id (0 if none). */
static int64_t
post(const struct srv *s, const char *path, const char *body, const char **h, long want,
     const char *want_field)
{
    struct resp r;
    http_req(s, "POST", path, body, strlen(body), h, &r);
    if (r.status != want)
        TEST_FAIL("POST %s: status %ld, want %ld: %.300s", path, r.status, want, r.body);
    int64_t id = 0;
    if (want_field != NULL) {
        char f[96], c[64];
        ASSERT_STR_EQ(err_field(&r, f, sizeof f), want_field);
        ASSERT_STR_EQ(err_code(&r, c, sizeof c), "invalid_field");
    } else if (want == 201 && strcmp(path, "/v1/jobs") == 0) {
        json_t *j = resp_json(&r);
        id = json_integer_value(json_object_get(j, "id"));
        json_decref(j);
    }
    resp_fini(&r);
    return id;
}

BOTH(trace_enqueue)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    /* the field, the header, both (the field wins), neither */
    int64_t by_field =
        post(&s, "/v1/jobs", "{\"type\":\"tr\",\"traceparent\":\"" TP1 "\"}", NULL, 201, NULL);
    expect_tp(&s, by_field, TP1);
    const char *h[] = {"traceparent: " TP2, NULL};
    int64_t by_header = post(&s, "/v1/jobs", "{\"type\":\"tr\"}", h, 201, NULL);
    expect_tp(&s, by_header, TP2);
    int64_t both =
        post(&s, "/v1/jobs", "{\"type\":\"tr\",\"traceparent\":\"" TP1 "\"}", h, 201, NULL);
    expect_tp(&s, both, TP1);
    int64_t none = post(&s, "/v1/jobs", "{\"type\":\"tr\",\"traceparent\":null}", NULL, 201, NULL);
    expect_tp(&s, none, NULL);

    /* bad values: 400 naming the field, nothing written */
    post(&s, "/v1/jobs", "{\"type\":\"tr\",\"traceparent\":\"00-xyz\"}", NULL, 400, "traceparent");
    post(&s, "/v1/jobs", "{\"type\":\"tr\",\"traceparent\":7}", NULL, 400, "traceparent");
    const char *bad_h[] = {"traceparent: 00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                           NULL};
    post(&s, "/v1/jobs", "{\"type\":\"tr\"}", bad_h, 400, "traceparent");
    post(&s, "/v1/jobs/batch",
         "{\"jobs\":[{\"type\":\"tr\"},{\"type\":\"tr\",\"traceparent\":\"" TP2 "\"},"
         "{\"type\":\"tr\"},{\"type\":\"tr\",\"traceparent\":\"01-" TP1 "\"}]}",
         NULL, 400, "jobs[3].traceparent");
    json_t *l = get_json(&s, "/v1/jobs?type=tr");
    ASSERT_EQ(json_array_size(json_object_get(l, "jobs")), 4);
    json_decref(l);

    /* a batch keeps each item's */
    struct resp r;
    const char *b = "{\"jobs\":[{\"type\":\"tb\",\"traceparent\":\"" TP1 "\"},{\"type\":\"tb\"},"
                    "{\"type\":\"tb\",\"traceparent\":\"" TP2 "\"}]}";
    http_req(&s, "POST", "/v1/jobs/batch", b, strlen(b), NULL, &r);
    ASSERT_EQ(r.status, 201);
    json_t *v = resp_json(&r);
    resp_fini(&r);
    json_t *jobs = json_object_get(v, "jobs");
    ASSERT_EQ(json_array_size(jobs), 3);
    const char *want[] = {TP1, NULL, TP2};
    for (size_t i = 0; i < 3; i++) {
        int64_t id = json_integer_value(json_object_get(json_array_get(jobs, i), "id"));
        expect_tp(&s, id, want[i]);
    }
    json_decref(v);

    /* the claim answer carries it */
    struct resp c;
    ASSERT_EQ(
        req(&s, "POST", "/v1/claim", "{\"worker_id\":\"w\",\"types\":[\"tb\"],\"limit\":3}", &c),
        200);
    v = resp_json(&c);
    resp_fini(&c);
    jobs = json_object_get(v, "jobs");
    ASSERT_EQ(json_array_size(jobs), 3);
    int seen = 0;
    for (size_t i = 0; i < 3; i++) {
        json_t *t = json_object_get(json_array_get(jobs, i), "traceparent");
        ASSERT(t != NULL);
        if (json_is_string(t)) {
            ASSERT(strcmp(json_string_value(t), TP1) == 0 ||
                   strcmp(json_string_value(t), TP2) == 0);
            seen++;
        }
    }
    ASSERT_EQ(seen, 2);
    json_decref(v);
    srv_stop(&s);
}
