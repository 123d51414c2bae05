/*
 * test_api_workflows.c — workflows over HTTP (docs/API.md, Workflows)
 * against a real `jobd server`, on SQLite and on PostgreSQL: a diamond
 * submitted (201, its jobs by ref), its steps' jobs naming the workflow
 * and step, the read's status and counts as the steps run, to succeeded
 * and to failed; the list by status and name, paged; an idempotent submit answered 200 with the same answer;
 * cycles, unknown and duplicate refs refused with 400 naming the step,
 * writing nothing; 404 naming the id.
 */
#include "apitest.h"

static const char diamond[] =
    "{\"name\":\"etl\",%s\"steps\":["
    "{\"ref\":\"a\",\"type\":\"wa\"},"
    "{\"ref\":\"b\",\"type\":\"wb\",\"depends_on\":[\"a\"]},"
    "{\"ref\":\"c\",\"type\":\"wb\",\"depends_on\":[\"a\"],\"queue\":\"q2\"},"
    "{\"ref\":\"d\",\"type\":\"wd\",\"depends_on\":[\"b\",\"c\"]}]}";

/* Submits the diamond (key: a JSON member with its comma, or ""); want the status. */
static json_t *
submit(const struct srv *s, const char *key, long want)
{
    char body[600];
    snprintf(body, sizeof body, diamond, key);
    struct resp r;
    long st = req(s, "POST", "/v1/workflows", body, &r);
    if (st != want)
        TEST_FAIL("submit: %ld %s", st, r.body);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    return j;
}

static int64_t
ref_id(json_t *sub, const char *ref)
{
    return json_integer_value(json_object_get(json_object_get(sub, "jobs"), ref));
}

/* Claims type t (one job, which must be id) and ends it: complete or fail for good. */
static void
run(const struct srv *s, const char *t, int64_t id, bool ok)
{
    char body[160], p[96];
    snprintf(body, sizeof body, "{\"worker_id\":\"w\",\"types\":[\"%s\"],\"limit\":1}", t);
    struct resp r;
    ASSERT_EQ(req(s, "POST", "/v1/claim", body, &r), 200);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    json_t *e = json_array_get(json_object_get(j, "jobs"), 0);
    ASSERT(e != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(e, "id")), id);
    snprintf(
        body, sizeof body,
        ok ? "{\"attempt\":%lld,\"lease_token\":\"%s\"}"
           : "{\"attempt\":%lld,\"error\":\"boom\",\"retryable\":false,\"lease_token\":\"%s\"}",
        (long long)json_integer_value(json_object_get(e, "attempt")),
        json_string_value(json_object_get(e, "lease_token")));
    json_decref(j);
    snprintf(p, sizeof p, "/v1/jobs/%lld/%s", (long long)id, ok ? "complete" : "fail");
    ASSERT_EQ(req(s, "POST", p, body, &r), 200);
    resp_fini(&r);
}

static json_t *
get_wf(const struct srv *s, int64_t id)
{
    char p[64];
    snprintf(p, sizeof p, "/v1/workflows/%lld", (long long)id);
    return get_json(s, p);
}

static void
expect_counts(json_t *w, const char *status, int waiting, int pending, int ok, int dead,
              int cancelled)
{
    ASSERT_STR_EQ(json_string_value(json_object_get(w, "status")), status);
    json_t *c = json_object_get(w, "counts");
    ASSERT_EQ(json_integer_value(json_object_get(c, "waiting")), waiting);
    ASSERT_EQ(json_integer_value(json_object_get(c, "pending")), pending);
    ASSERT_EQ(json_integer_value(json_object_get(c, "running")), 0);
    ASSERT_EQ(json_integer_value(json_object_get(c, "succeeded")), ok);
    ASSERT_EQ(json_integer_value(json_object_get(c, "dead")), dead);
    ASSERT_EQ(json_integer_value(json_object_get(c, "cancelled")), cancelled);
    ASSERT_EQ(json_is_null(json_object_get(w, "finished_at")), strcmp(status, "running") == 0);
}

/* GET /v1/workflows after the two workflows of workflow_submit_and_read:
 * newest first, without steps; by status and name; paged. */
static void
list_checks(const struct srv *sp, int64_t id)
{
    char p[96];
    json_t *j;
    j = get_json(sp, "/v1/workflows");
    json_t *ws = json_object_get(j, "workflows");
    ASSERT_EQ(json_array_size(ws), 2);
    ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(ws, 0), "status")), "failed");
    ASSERT_STR_EQ(json_string_value(json_object_get(json_array_get(ws, 1), "status")), "succeeded");
    ASSERT_EQ(json_integer_value(json_object_get(json_array_get(ws, 1), "id")), id);
    ASSERT(json_object_get(json_array_get(ws, 0), "steps") == NULL);
    ASSERT_EQ(json_integer_value(
                  json_object_get(json_object_get(json_array_get(ws, 0), "counts"), "cancelled")),
              3);
    ASSERT(json_is_null(json_object_get(j, "next")));
    json_decref(j);
    j = get_json(sp, "/v1/workflows?status=succeeded&name=etl");
    ASSERT_EQ(json_array_size(json_object_get(j, "workflows")), 1);
    json_decref(j);
    j = get_json(sp, "/v1/workflows?name=nope");
    ASSERT_EQ(json_array_size(json_object_get(j, "workflows")), 0);
    json_decref(j);
    j = get_json(sp, "/v1/workflows?limit=1");
    ASSERT_EQ(json_array_size(json_object_get(j, "workflows")), 1);
    const char *nx = json_string_value(json_object_get(j, "next"));
    ASSERT(nx != NULL);
    snprintf(p, sizeof p, "/v1/workflows?limit=1&after=%s", nx);
    json_decref(j);
    j = get_json(sp, p);
    ASSERT_EQ(json_integer_value(
                  json_object_get(json_array_get(json_object_get(j, "workflows"), 0), "id")),
              id);
    json_decref(j);
    EXPECT(sp, "GET", "/v1/workflows?status=done", NULL, 400, "invalid_query");
    EXPECT(sp, "GET", "/v1/workflows?limit=0", NULL, 400, "invalid_query");
    EXPECT(sp, "GET", "/v1/workflows?after=x", NULL, 400, "invalid_query");
    EXPECT(sp, "GET", "/v1/workflows?queue=a", NULL, 400, "invalid_query");
}

BOTH(workflow_submit_and_read)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    json_t *sub = submit(&s, "\"idempotency_key\":\"k1\",", 201);
    int64_t id = json_integer_value(json_object_get(sub, "id"));
    ASSERT(id > 0);
    ASSERT_EQ(json_object_size(json_object_get(sub, "jobs")), 4);
    /* the same key again: 200, the same answer */
    json_t *again = submit(&s, "\"idempotency_key\":\"k1\",", 200);
    ASSERT(json_equal(sub, again));
    json_decref(again);

    /* each step is a job naming its workflow and step, its parents mapped */
    char p[96];
    snprintf(p, sizeof p, "/v1/jobs/%lld", (long long)ref_id(sub, "c"));
    json_t *j = get_json(&s, p);
    ASSERT_EQ(json_integer_value(json_object_get(j, "workflow")), id);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "step")), "c");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "waiting");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "queue")), "q2");
    ASSERT_EQ(json_integer_value(json_array_get(json_object_get(j, "depends_on"), 0)),
              ref_id(sub, "a"));
    json_decref(j);

    json_t *w = get_wf(&s, id);
    ASSERT_EQ(json_integer_value(json_object_get(w, "id")), id);
    ASSERT_STR_EQ(json_string_value(json_object_get(w, "name")), "etl");
    ASSERT(json_is_string(json_object_get(w, "created_at")));
    expect_counts(w, "running", 3, 1, 0, 0, 0);
    json_t *steps = json_object_get(w, "steps");
    ASSERT_EQ(json_array_size(steps), 4);
    json_t *d = json_array_get(steps, 3);
    ASSERT_STR_EQ(json_string_value(json_object_get(d, "ref")), "d");
    ASSERT_EQ(json_integer_value(json_object_get(d, "job_id")), ref_id(sub, "d"));
    ASSERT_STR_EQ(json_string_value(json_object_get(d, "type")), "wd");
    ASSERT_STR_EQ(json_string_value(json_object_get(d, "status")), "waiting");
    json_t *dd = json_object_get(d, "depends_on");
    ASSERT_EQ(json_array_size(dd), 2);
    ASSERT_STR_EQ(json_string_value(json_array_get(dd, 0)), "b");
    ASSERT_STR_EQ(json_string_value(json_array_get(dd, 1)), "c");
    json_decref(w);

    run(&s, "wa", ref_id(sub, "a"), true);
    w = get_wf(&s, id);
    expect_counts(w, "running", 1, 2, 1, 0, 0);
    json_decref(w);
    run(&s, "wb", ref_id(sub, "b"), true);
    run(&s, "wb", ref_id(sub, "c"), true);
    run(&s, "wd", ref_id(sub, "d"), true);
    w = get_wf(&s, id);
    expect_counts(w, "succeeded", 0, 0, 4, 0, 0);
    json_decref(w);
    json_decref(sub);

    /* a step that fails for good: its descendants are cancelled, the workflow failed */
    sub = submit(&s, "", 201);
    run(&s, "wa", ref_id(sub, "a"), false);
    w = get_wf(&s, json_integer_value(json_object_get(sub, "id")));
    expect_counts(w, "failed", 0, 0, 0, 1, 3);
    json_decref(w);
    json_decref(sub);
    EXPECT(&s, "GET", "/v1/workflows/987654", NULL, 404, "not_found");

    list_checks(&s, id);
    srv_stop(&s);
}

BOTH(workflow_refused)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    static const struct {
        const char *body, *field;
    } bad[] = {
        {"{\"name\":\"x\",\"steps\":[{\"ref\":\"a\",\"type\":\"t\"},"
         "{\"ref\":\"b\",\"type\":\"t\",\"depends_on\":[\"zz\"]}]}",
         "steps[1].depends_on"},
        {"{\"name\":\"x\",\"steps\":[{\"ref\":\"a\",\"type\":\"t\"},{\"ref\":\"a\",\"type\":\"t\"}]"
         "}",
         "steps[1].ref"},
        {"{\"name\":\"x\",\"steps\":[{\"ref\":\"a\",\"type\":\"t\",\"depends_on\":[\"b\"]},"
         "{\"ref\":\"b\",\"type\":\"t\",\"depends_on\":[\"a\"]}]}",
         "steps[0].depends_on"},
        {"{\"name\":\"x\",\"steps\":[{\"ref\":\"a\",\"type\":\"t\"},{\"ref\":\"b\",\"type\":\"\"}]"
         "}",
         "steps[1].type"},
        {"{\"name\":\"x\",\"steps\":[{\"ref\":\"a\",\"type\":\"t\",\"idempotency_key\":\"k\"}]}",
         "steps[0].idempotency_key"},
        {"{\"name\":\"x\",\"steps\":[]}", "steps"},
        {"{\"steps\":[{\"ref\":\"a\",\"type\":\"t\"}]}", "name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct resp r;
        ASSERT_EQ(req(&s, "POST", "/v1/workflows", bad[i].body, &r), 400);
        json_t *j = resp_json(&r);
        const char *field =
            json_string_value(json_object_get(json_object_get(j, "error"), "field"));
        if (field == NULL || strcmp(field, bad[i].field) != 0)
            TEST_FAIL("case %zu: %s", i, r.body);
        json_decref(j);
        resp_fini(&r);
    }
    /* nothing was written */
    json_t *j = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 0);
    json_decref(j);
    EXPECT(&s, "GET", "/v1/workflows/1", NULL, 404, "not_found");
    srv_stop(&s);
}
