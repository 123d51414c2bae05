/*
 * test_api_progress.c — POST /v1/jobs/{id}/progress (issue 28 item 3;
 * docs/API.md, The job object) through a real `jobd server` on both stores:
 * fenced like a heartbeat (attempt and lease token), bounded, shown in the
 * job object of GET /v1/jobs/{id} and of the list while its attempt runs,
 * and gone (null) once the next attempt starts.
 */
#include "apitest.h"

/* Claims one job of type: its id and lease token. */
static int64_t
claim_one(const struct srv *s, const char *type, char tok[64])
{
    char body[160];
    snprintf(body, sizeof body, "{\"worker_id\":\"w\",\"types\":[\"%s\"],\"lease_s\":100}", type);
    struct resp r;
    ASSERT_EQ(req(s, "POST", "/v1/claim", body, &r), 200);
    json_t *v = resp_json(&r);
    resp_fini(&r);
    json_t *o = json_array_get(json_object_get(v, "jobs"), 0);
    ASSERT(o != NULL);
    snprintf(tok, 64, "%s", json_string_value(json_object_get(o, "lease_token")));
    int64_t id = json_integer_value(json_object_get(o, "id"));
    json_decref(v);
    return id;
}

/* The job's progress object (a new reference; json null when none). */
static json_t *
progress_of(const struct srv *s, int64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    json_t *j = get_json(s, path);
    json_t *p = json_object_get(j, "progress");
    ASSERT(p != NULL); /* always present, null or an object */
    json_incref(p);
    json_decref(j);
    return p;
}

BOTH(progress_route)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t id = create_job(&s, "{\"type\":\"pg\"}");
    json_t *p = progress_of(&s, id);
    ASSERT(json_is_null(p));
    json_decref(p);
    char tok[64], path[96], body[2400];
    ASSERT_EQ(claim_one(&s, "pg", tok), id);
    snprintf(path, sizeof path, "/v1/jobs/%lld/progress", (long long)id);
    /* fenced: no token, another attempt */
    EXPECT(&s, "POST", path, "{\"attempt\":1,\"percent\":5}", 409, "stale_attempt");
    snprintf(body, sizeof body, "{\"attempt\":2,\"lease_token\":\"%s\",\"percent\":5}", tok);
    EXPECT(&s, "POST", path, body, 409, "stale_attempt");
    EXPECT(&s, "POST", "/v1/jobs/999999/progress",
           "{\"attempt\":1,\"lease_token\":\"0123456789abcdef0123456789abcdef\"}", 404,
           "not_found");
    /* bounds */
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\",\"percent\":101}", tok);
    EXPECT(&s, "POST", path, body, 400, "invalid_field");
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\",\"percent\":\"x\"}", tok);
    EXPECT(&s, "POST", path, body, 400, "invalid_field");
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\",\"message\":\"%01100d\"}",
             tok, 0);
    EXPECT(&s, "POST", path, body, 400, "invalid_field");
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\",\"what\":1}", tok);
    EXPECT(&s, "POST", path, body, 400, "unknown_field");
    p = progress_of(&s, id);
    ASSERT(json_is_null(p)); /* nothing refused was kept */
    json_decref(p);
    /* a report: answered as a heartbeat, shown in the job */
    snprintf(body, sizeof body,
             "{\"attempt\":1,\"lease_token\":\"%s\",\"percent\":37.5,\"message\":\"step 3 of 8\","
             "\"data\":{\"rows\":300}}",
             tok);
    struct resp r;
    ASSERT_EQ(req(&s, "POST", path, body, &r), 200);
    json_t *a = resp_json(&r);
    resp_fini(&r);
    ASSERT(json_is_string(json_object_get(a, "lease_expires_at")));
    ASSERT(json_is_false(json_object_get(a, "cancel_requested")));
    json_decref(a);
    p = progress_of(&s, id);
    ASSERT(json_number_value(json_object_get(p, "percent")) == 37.5);
    ASSERT_STR_EQ(json_string_value(json_object_get(p, "message")), "step 3 of 8");
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(p, "data"), "rows")), 300);
    ASSERT(json_is_string(json_object_get(p, "at")));
    json_decref(p);
    /* in the list too */
    json_t *l = get_json(&s, "/v1/jobs?type=pg");
    json_t *j0 = json_array_get(json_object_get(l, "jobs"), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(j0, "progress"), "message")),
                  "step 3 of 8");
    json_decref(l);
    /* the next attempt starts with none */
    snprintf(body, sizeof body,
             "{\"attempt\":1,\"lease_token\":\"%s\",\"error\":\"x\",\"retry_in_s\":0}", tok);
    snprintf(path, sizeof path, "/v1/jobs/%lld/fail", (long long)id);
    EXPECT(&s, "POST", path, body, 200, NULL);
    ASSERT_EQ(claim_one(&s, "pg", tok), id);
    p = progress_of(&s, id);
    ASSERT(json_is_null(p));
    json_decref(p);
    snprintf(path, sizeof path, "/v1/jobs/%lld/progress", (long long)id);
    snprintf(body, sizeof body, "{\"attempt\":2,\"lease_token\":\"%s\",\"percent\":100}", tok);
    EXPECT(&s, "POST", path, body, 200, NULL);
    p = progress_of(&s, id);
    ASSERT_EQ(json_integer_value(json_object_get(p, "percent")), 100);
    ASSERT(json_is_null(json_object_get(p, "message")));
    json_decref(p);
    srv_stop(&s);
}
