/*
 * test_api_workflow_ops.c — the routes on a workflow after its submit
 * (docs/API.md, Workflows) against a real `jobd server`, on SQLite and on
 * PostgreSQL: steps added at run time before a waiting step (201, their
 * jobs by ref; 400 naming the step or the before ref, 409 for a step no
 * longer waiting or a workflow that ended, 404); cancel (running steps get
 * a cancel request, the others are cancelled), retry (back to pending or
 * waiting as the parents say) and delete (409 while a step runs, then 204
 * and its jobs gone).
 */
#include "apitest.h"

static const char diamond[] = "{\"name\":\"etl\",\"steps\":["
                              "{\"ref\":\"a\",\"type\":\"wa\"},"
                              "{\"ref\":\"b\",\"type\":\"wb\",\"depends_on\":[\"a\"]},"
                              "{\"ref\":\"c\",\"type\":\"wb\",\"depends_on\":[\"a\"]},"
                              "{\"ref\":\"d\",\"type\":\"wd\",\"depends_on\":[\"b\",\"c\"]}]}";

static json_t *
post_json(const struct srv *s, const char *path, const char *body, long want)
{
    struct resp r;
    long st = req(s, "POST", path, body, &r);
    if (st != want)
        TEST_FAIL("POST %s: %ld %s", path, st, r.body);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    return j;
}

static int64_t
ref_id(json_t *sub, const char *ref)
{
    return json_integer_value(json_object_get(json_object_get(sub, "jobs"), ref));
}

/* Claims one job of type t, which must be id; its claim entry (caller's). */
static json_t *
claim(const struct srv *s, const char *t, int64_t id)
{
    char body[160];
    snprintf(body, sizeof body, "{\"worker_id\":\"w\",\"types\":[\"%s\"],\"limit\":1}", t);
    json_t *j = post_json(s, "/v1/claim", body, 200);
    json_t *e = json_incref(json_array_get(json_object_get(j, "jobs"), 0));
    json_decref(j);
    ASSERT(e != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(e, "id")), id);
    return e;
}

static void
complete(const struct srv *s, json_t *e)
{
    char body[160], p[96];
    snprintf(body, sizeof body, "{\"attempt\":%lld,\"lease_token\":\"%s\"}",
             (long long)json_integer_value(json_object_get(e, "attempt")),
             json_string_value(json_object_get(e, "lease_token")));
    snprintf(p, sizeof p, "/v1/jobs/%lld/complete",
             (long long)json_integer_value(json_object_get(e, "id")));
    json_decref(post_json(s, p, body, 200));
    json_decref(e);
}

static void
run(const struct srv *s, const char *t, int64_t id)
{
    complete(s, claim(s, t, id));
}

static const char *
job_status(const struct srv *s, int64_t id)
{
    static char st[32];
    char p[64];
    snprintf(p, sizeof p, "/v1/jobs/%lld", (long long)id);
    json_t *j = get_json(s, p);
    snprintf(st, sizeof st, "%s", json_string_value(json_object_get(j, "status")));
    json_decref(j);
    return st;
}

static void
expect_counts(json_t *w, const char *status, int waiting, int pending, int running, int ok,
              int cancelled)
{
    ASSERT_STR_EQ(json_string_value(json_object_get(w, "status")), status);
    json_t *c = json_object_get(w, "counts");
    ASSERT_EQ(json_integer_value(json_object_get(c, "waiting")), waiting);
    ASSERT_EQ(json_integer_value(json_object_get(c, "pending")), pending);
    ASSERT_EQ(json_integer_value(json_object_get(c, "running")), running);
    ASSERT_EQ(json_integer_value(json_object_get(c, "succeeded")), ok);
    ASSERT_EQ(json_integer_value(json_object_get(c, "cancelled")), cancelled);
}

/* POST path body: want 400/409 naming field. */
static void
refused(const struct srv *s, const char *path, const char *body, long want, const char *code,
        const char *field)
{
    struct resp r;
    ASSERT_EQ(req(s, "POST", path, body, &r), want);
    json_t *j = resp_json(&r);
    json_t *e = json_object_get(j, "error");
    if (strcmp(json_string_value(json_object_get(e, "code")), code) != 0 ||
        strcmp(json_string_value(json_object_get(e, "field")), field) != 0)
        TEST_FAIL("%s: %s", body, r.body);
    json_decref(j);
    resp_fini(&r);
}

BOTH(workflow_steps_added_before_a_waiting_step)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    json_t *sub = post_json(&s, "/v1/workflows", diamond, 201);
    int64_t id = json_integer_value(json_object_get(sub, "id"));
    char p[96];
    snprintf(p, sizeof p, "/v1/workflows/%lld/steps", (long long)id);
    json_t *add = post_json(&s, p,
                            "{\"steps\":[{\"ref\":\"x2\",\"type\":\"wx\",\"depends_on\":[\"x1\"]},"
                            "{\"ref\":\"x1\",\"type\":\"wx\",\"depends_on\":[\"a\"]}],"
                            "\"before\":[\"d\"]}",
                            201);
    ASSERT_EQ(json_object_size(json_object_get(add, "jobs")), 2);
    ASSERT(json_object_get(add, "id") == NULL);
    int64_t x1 = ref_id(add, "x1"), x2 = ref_id(add, "x2");
    ASSERT(x1 > 0 && x2 > x1);
    ASSERT_STR_EQ(job_status(&s, x1), "waiting");

    refused(&s, p, "{\"steps\":[{\"ref\":\"y\",\"type\":\"t\",\"depends_on\":[\"zz\"]}]}", 400,
            "invalid_field", "steps[0].depends_on");
    refused(&s, p, "{\"steps\":[{\"ref\":\"b\",\"type\":\"t\"}]}", 400, "invalid_field",
            "steps[0].ref");
    refused(&s, p, "{\"steps\":[{\"ref\":\"y\",\"type\":\"t\"}],\"before\":[\"zz\"]}", 400,
            "invalid_field", "before[0]");
    refused(&s, p, "{\"steps\":[{\"ref\":\"y\",\"type\":\"t\"}],\"before\":[\"d\",\"a\"]}", 409,
            "step_not_waiting", "before[1]");
    refused(&s, p, "{\"steps\":[{\"ref\":\"y\",\"type\":\"t\"}],\"after\":[]}", 400,
            "unknown_field", "after");
    EXPECT(&s, "POST", "/v1/workflows/987654/steps", "{\"steps\":[{\"ref\":\"y\",\"type\":\"t\"}]}",
           404, "not_found");

    run(&s, "wa", ref_id(sub, "a"));
    run(&s, "wb", ref_id(sub, "b"));
    run(&s, "wb", ref_id(sub, "c"));
    ASSERT_STR_EQ(job_status(&s, ref_id(sub, "d")), "waiting");
    run(&s, "wx", x1);
    run(&s, "wx", x2);
    ASSERT_STR_EQ(job_status(&s, ref_id(sub, "d")), "pending");
    snprintf(p, sizeof p, "/v1/workflows/%lld", (long long)id);
    json_t *w = get_json(&s, p);
    json_t *d = json_array_get(json_object_get(w, "steps"), 3);
    ASSERT_EQ(json_array_size(json_object_get(d, "depends_on")), 4);
    ASSERT_EQ(json_array_size(json_object_get(w, "steps")), 6);
    json_decref(w);
    run(&s, "wd", ref_id(sub, "d"));
    snprintf(p, sizeof p, "/v1/workflows/%lld/steps", (long long)id);
    refused(&s, p, "{\"steps\":[{\"ref\":\"y\",\"type\":\"t\"}]}", 409, "workflow_finished",
            "status");
    json_decref(add);
    json_decref(sub);
    srv_stop(&s);
}

BOTH(workflow_cancel_retry_delete)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    json_t *sub = post_json(&s, "/v1/workflows", diamond, 201);
    int64_t id = json_integer_value(json_object_get(sub, "id"));
    json_t *a = claim(&s, "wa", ref_id(sub, "a"));
    char p[96];
    snprintf(p, sizeof p, "/v1/workflows/%lld/cancel", (long long)id);
    json_t *w = post_json(&s, p, NULL, 200);
    ASSERT_EQ(json_integer_value(json_object_get(w, "id")), id);
    ASSERT_EQ(json_array_size(json_object_get(w, "steps")), 4);
    expect_counts(w, "running", 0, 0, 1, 0, 3);
    json_decref(w);
    snprintf(p, sizeof p, "/v1/jobs/%lld", (long long)ref_id(sub, "a"));
    json_t *ja = get_json(&s, p);
    ASSERT(json_is_true(json_object_get(ja, "cancel_requested")));
    json_decref(ja);

    snprintf(p, sizeof p, "/v1/workflows/%lld", (long long)id);
    EXPECT(&s, "DELETE", p, NULL, 409, "workflow_running");
    complete(&s, a); /* the handler finished before it heard of the cancel */
    w = get_json(&s, p);
    expect_counts(w, "failed", 0, 0, 0, 1, 3);
    json_decref(w);

    snprintf(p, sizeof p, "/v1/workflows/%lld/retry", (long long)id);
    w = post_json(&s, p, NULL, 200);
    expect_counts(w, "running", 1, 2, 0, 1, 0);
    json_decref(w);
    run(&s, "wb", ref_id(sub, "b"));
    run(&s, "wb", ref_id(sub, "c"));
    run(&s, "wd", ref_id(sub, "d"));

    snprintf(p, sizeof p, "/v1/workflows/%lld", (long long)id);
    w = get_json(&s, p);
    expect_counts(w, "succeeded", 0, 0, 0, 4, 0);
    json_decref(w);
    EXPECT(&s, "DELETE", p, NULL, 204, NULL);
    EXPECT(&s, "GET", p, NULL, 404, "not_found");
    EXPECT(&s, "DELETE", p, NULL, 404, "not_found");
    snprintf(p, sizeof p, "/v1/jobs/%lld", (long long)ref_id(sub, "d"));
    EXPECT(&s, "GET", p, NULL, 404, "not_found");
    EXPECT(&s, "POST", "/v1/workflows/987654/cancel", NULL, 404, "not_found");
    EXPECT(&s, "POST", "/v1/workflows/987654/retry", NULL, 404, "not_found");
    json_decref(sub);
    srv_stop(&s);
}
