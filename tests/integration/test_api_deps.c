/*
 * test_api_deps.c — dependencies over HTTP (docs/API.md, Dependencies)
 * against a real `jobd server`, on SQLite and on PostgreSQL: depends_on and
 * on_parent_failure on POST /v1/jobs and in a batch, the waiting status in
 * the job object, the listing and the queue counts, an unknown parent
 * refused with 400 naming it, and a parent that waiting jobs depend on not
 * deleted (409).
 */
#include "apitest.h"

BOTH(depends_on)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t p = create_job(&s, "{\"type\":\"extract\",\"queue\":\"etl\",\"in\":\"1h\"}");
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)p);
    json_t *j = get_json(&s, path); /* no parents: [], "cancel", and no workflow */
    ASSERT_EQ(json_array_size(json_object_get(j, "depends_on")), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "on_parent_failure")), "cancel");
    ASSERT(json_is_null(json_object_get(j, "workflow")));
    ASSERT(json_is_null(json_object_get(j, "step")));
    json_decref(j);
    char body[256];
    snprintf(body, sizeof body,
             "{\"type\":\"load\",\"queue\":\"etl\",\"depends_on\":[%lld],"
             "\"on_parent_failure\":\"run\"}",
             (long long)p);
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/jobs", body, &r), 201);
    j = resp_json(&r);
    resp_fini(&r);
    int64_t c = json_integer_value(json_object_get(j, "id"));
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "waiting");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "on_parent_failure")), "run");
    json_t *d = json_object_get(j, "depends_on");
    ASSERT_EQ(json_array_size(d), 1);
    ASSERT_EQ(json_integer_value(json_array_get(d, 0)), p);
    json_decref(j);
    /* GET shows the same; the listing by status finds it */
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)c);
    j = get_json(&s, path);
    ASSERT_EQ(json_integer_value(json_array_get(json_object_get(j, "depends_on"), 0)), p);
    json_decref(j);
    j = get_json(&s, "/v1/jobs?status=waiting");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 1);
    json_decref(j);
    /* a batch item may depend on a job that exists */
    snprintf(body, sizeof body,
             "{\"jobs\":[{\"type\":\"a\"},{\"type\":\"b\",\"depends_on\":[%lld]}]}", (long long)c);
    ASSERT_EQ(req(&s, "POST", "/v1/jobs/batch", body, &r), 201);
    j = resp_json(&r);
    resp_fini(&r);
    ASSERT_STR_EQ(
        json_string_value(json_object_get(json_array_get(json_object_get(j, "jobs"), 1), "status")),
        "waiting");
    json_decref(j);
    /* unknown parent: 400 naming it, nothing written */
    ASSERT_EQ(req(&s, "POST", "/v1/jobs", "{\"type\":\"x\",\"depends_on\":[987654]}", &r), 400);
    ASSERT(strstr(r.body, "987654") != NULL);
    ASSERT(strstr(r.body, "\"depends_on\"") != NULL);
    resp_fini(&r);
    EXPECT(&s, "POST", "/v1/jobs", "{\"type\":\"x\",\"depends_on\":[\"1\"]}", 400, NULL);
    EXPECT(&s, "POST", "/v1/jobs", "{\"type\":\"x\",\"on_parent_failure\":\"maybe\"}", 400, NULL);
    /* the parent of a waiting job is not deleted; the waiting job is */
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)p);
    EXPECT(&s, "DELETE", path, NULL, 409, "has_waiting_dependents");
    /* a waiting job is cancellable */
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)c);
    ASSERT_EQ(req(&s, "POST", path, "{}", &r), 200);
    ASSERT(strstr(r.body, "\"cancelled\"") != NULL);
    resp_fini(&r);
    srv_stop(&s);
}
