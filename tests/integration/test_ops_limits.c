/*
 * test_ops_limits.c — PUT /v1/queues/{name} through the real binary on
 * both stores: the answer is the queue object with max_running and rate, a
 * field left out keeps its limit and null removes it, a limited queue
 * without jobs is listed, pause/resume keep the limits, and every bad
 * value is a 400 naming its field. Enforcement across worker processes is
 * test_ops_limits_run.c.
 */
#include "apitest.h"

/* PUT body on queue q; expects 200 and returns the queue object (owned). */
static json_t *
put_limits(const struct srv *s, const char *q, const char *body)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/queues/%s", q);
    struct resp r;
    long st = req(s, "PUT", path, body, &r);
    if (st != 200)
        TEST_FAIL("PUT %s %s: %ld %s", path, body, st, r.body);
    json_t *v = resp_json(&r);
    resp_fini(&r);
    return v;
}

/* The queue q in GET /v1/queues (owned), or NULL. */
static json_t *
listed(const struct srv *s, const char *q)
{
    json_t *o = get_json(s, "/v1/queues"), *found = NULL, *e;
    size_t i;
    json_array_foreach(json_object_get(o, "queues"), i, e) {
        if (strcmp(json_string_value(json_object_get(e, "name")), q) == 0)
            found = json_incref(e);
    }
    json_decref(o);
    return found;
}

static void
expect_limits(json_t *q, json_int_t max_running, json_int_t rate, const char *per)
{
    json_t *mr = json_object_get(q, "max_running"), *rt = json_object_get(q, "rate");
    ASSERT(mr != NULL && rt != NULL);
    if (max_running == 0)
        ASSERT(json_is_null(mr));
    else
        ASSERT_EQ(json_integer_value(mr), max_running);
    if (rate == 0) {
        ASSERT(json_is_null(rt));
        return;
    }
    ASSERT_EQ(json_integer_value(json_object_get(rt, "limit")), rate);
    ASSERT_STR_EQ(json_string_value(json_object_get(rt, "per")), per);
}

BOTH(limits_put_list_and_remove)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    json_t *q = put_limits(&s, "mail",
                           "{\"max_running\": 5, \"rate\": {\"limit\": 20, "
                           "\"per\": \"1m\"}}");
    ASSERT_STR_EQ(json_string_value(json_object_get(q, "name")), "mail");
    ASSERT(json_is_false(json_object_get(q, "paused")));
    expect_limits(q, 5, 20, "1m");
    json_decref(q);
    q = listed(&s, "mail"); /* no jobs, yet listed */
    ASSERT(q != NULL);
    expect_limits(q, 5, 20, "1m");
    json_decref(q);
    /* Omitted: kept. */
    q = put_limits(&s, "mail", "{\"max_running\": 2}");
    expect_limits(q, 2, 20, "1m");
    json_decref(q);
    q = put_limits(&s, "mail", "{}");
    expect_limits(q, 2, 20, "1m");
    json_decref(q);
    /* Pausing and resuming keep them. */
    EXPECT(&s, "POST", "/v1/queues/mail/pause", "{}", 200, NULL);
    EXPECT(&s, "POST", "/v1/queues/mail/resume", "{}", 200, NULL);
    q = listed(&s, "mail");
    expect_limits(q, 2, 20, "1m");
    json_decref(q);
    /* Null: removed. */
    q = put_limits(&s, "mail", "{\"rate\": null}");
    expect_limits(q, 2, 0, NULL);
    json_decref(q);
    q = put_limits(&s, "mail",
                   "{\"max_running\": null, \"rate\": {\"limit\": 1, \"per\": "
                   "\"1h30m\"}}");
    expect_limits(q, 0, 1, "1h30m");
    json_decref(q);
    /* Every queue object has both fields. */
    create_job(&s, "{\"type\": \"t\", \"queue\": \"plain\"}");
    int64_t deadline = apitest_now_ms() + 5000; /* PostgreSQL's counts may be 1 s old */
    while ((q = listed(&s, "plain")) == NULL && apitest_now_ms() < deadline)
        apitest_nap_ms(50);
    expect_limits(q, 0, 0, NULL);
    json_decref(q);
    srv_stop(&s);
}

BOTH(limits_bad_values_name_their_field)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    static const struct {
        const char *body, *code, *field;
    } bad[] = {
        {"{\"max_running\": 0}", "invalid_field", "max_running"},
        {"{\"max_running\": -3}", "invalid_field", "max_running"},
        {"{\"max_running\": 1000001}", "invalid_field", "max_running"},
        {"{\"max_running\": \"5\"}", "invalid_field", "max_running"},
        {"{\"max_running\": 2.5}", "invalid_field", "max_running"},
        {"{\"rate\": 5}", "invalid_field", "rate"},
        {"{\"rate\": {\"per\": \"1s\"}}", "invalid_field", "rate.limit"},
        {"{\"rate\": {\"limit\": 0, \"per\": \"1s\"}}", "invalid_field", "rate.limit"},
        {"{\"rate\": {\"limit\": 5}}", "invalid_field", "rate.per"},
        {"{\"rate\": {\"limit\": 5, \"per\": 1}}", "invalid_field", "rate.per"},
        {"{\"rate\": {\"limit\": 5, \"per\": \"soon\"}}", "invalid_field", "rate.per"},
        {"{\"rate\": {\"limit\": 5, \"per\": \"500ms\"}}", "invalid_field", "rate.per"},
        {"{\"rate\": {\"limit\": 5, \"per\": \"2d\"}}", "invalid_field", "rate.per"},
        {"{\"rate\": {\"limit\": 5, \"per\": \"1s\", \"burst\": 2}}", "unknown_field",
         "rate.burst"},
        {"{\"max_runing\": 5}", "unknown_field", "max_runing"},
        {"[1]", "malformed_json", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct resp r;
        long st = req(&s, "PUT", "/v1/queues/q1", bad[i].body, &r);
        json_t *v = resp_json(&r);
        json_t *e = json_object_get(v, "error");
        const char *code = json_string_value(json_object_get(e, "code"));
        const char *field = json_string_value(json_object_get(e, "field"));
        if (st != 400 || code == NULL || strcmp(code, bad[i].code) != 0 ||
            (bad[i].field != NULL && (field == NULL || strcmp(field, bad[i].field) != 0)))
            TEST_FAIL("PUT %s: %ld %s, want 400 %s naming %s", bad[i].body, st, r.body, bad[i].code,
                      bad[i].field ? bad[i].field : "-");
        json_decref(v);
        resp_fini(&r);
    }
    EXPECT(&s, "PUT", "/v1/queues/Bad", "{\"max_running\": 1}", 400, "invalid_field");
    ASSERT(listed(&s, "q1") == NULL); /* nothing refused was written */
    srv_stop(&s);
}

/* Runs `jobd ARGS...` against s; returns its exit status and stdout in out. */
static int
cli(const struct srv *s, const char *const *args, char *out, size_t len)
{
    char envs[128];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s->base);
    const char *env[] = {envs, NULL};
    return cli_run(env, args, out, len);
}

TEST(limits_cli)
{
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    char out[4096], err[4096];
    const char *set[] = {"queues", "limit", "mail", "--max-running", "3", "--rate=10/1m", NULL};
    ASSERT_EQ(cli(&s, set, out, sizeof out), 0);
    json_t *q = cli_parse_json(out);
    expect_limits(q, 3, 10, "1m");
    json_decref(q);
    const char *unset[] = {"queues", "limit", "mail", "--rate", "none", NULL};
    ASSERT_EQ(cli(&s, unset, out, sizeof out), 0);
    q = cli_parse_json(out);
    expect_limits(q, 3, 0, NULL);
    json_decref(q);
    const char *pause[] = {"queues", "pause", "mail", NULL};
    ASSERT_EQ(cli(&s, pause, out, sizeof out), 0);
    q = cli_parse_json(out);
    ASSERT(json_is_true(json_object_get(q, "paused")));
    expect_limits(q, 3, 0, NULL);
    json_decref(q);
    const char *resume[] = {"queues", "resume", "mail", NULL};
    ASSERT_EQ(cli(&s, resume, out, sizeof out), 0);
    q = cli_parse_json(out);
    ASSERT(json_is_false(json_object_get(q, "paused")));
    json_decref(q);
    /* The listing (JSON lines when piped) carries the limits. */
    const char *ls[] = {"queues", NULL};
    ASSERT_EQ(cli(&s, ls, out, sizeof out), 0);
    ASSERT(strstr(out, "\"max_running\":3") != NULL);
    /* Usage errors (2) before anything is sent; the server's refusal is 1. */
    static const char *const bad[][6] = {
        {"queues", "limit", "mail", NULL},
        {"queues", "limit", "mail", "--rate", "10", NULL},
        {"queues", "limit", "mail", "--rate", "x/1s", NULL},
        {"queues", "limit", "mail", "--max-running", "0", NULL},
        {"queues", "limit", "--max-running", "2", NULL},
        {"queues", "pause", NULL},
        {"queues", "pause", "mail", "--max-running", "2", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (cli(&s, bad[i], out, sizeof out) != 2)
            TEST_FAIL("jobd %s %s %s: want exit 2; stderr: %s", bad[i][0], bad[i][1],
                      bad[i][2] ? bad[i][2] : "", cli_last_err(err, sizeof err));
    const char *refused[] = {"queues", "limit", "mail", "--rate", "5/100ms", NULL};
    ASSERT_EQ(cli(&s, refused, out, sizeof out), 2); /* a 400 is a usage error too */
    ASSERT(strstr(cli_last_err(err, sizeof err), "rate.per") != NULL);
    srv_stop(&s);
}
