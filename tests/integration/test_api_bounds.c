/*
 * test_api_bounds.c — the lists that once had no bounds (issue 27, item 5),
 * through the real binary on both stores: GET /v1/schedules and
 * GET /v1/workers page (?limit=, ?after=, "next"), the schedule list leaves
 * payloads out unless ?full=1, an announce with an oversized field is 400
 * naming it, --max-schedules and --max-workers refuse with 409
 * limit_reached (a gone worker's row makes room first), and `jobd schedule
 * ls` and `jobd workers` read every page of more than 1,000 rows.
 */
#include "apitest.h"

#include "store/operator.h"
#include "store/store.h"

/* GETs path and checks the names of its list key against want ("a,b") and its next. */
static void
expect_page(const struct srv *s, const char *path, const char *key, const char *field,
            const char *want, const char *want_next)
{
    json_t *o = get_json(s, path);
    char got[512] = "";
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(o, key), i, e) {
        size_t n = strlen(got);
        snprintf(got + n, sizeof got - n, "%s%s", n ? "," : "",
                 json_string_value(json_object_get(e, field)));
    }
    ASSERT_STR_EQ(got, want);
    json_t *next = json_object_get(o, "next");
    if (want_next == NULL) {
        if (!json_is_null(next))
            TEST_FAIL("%s: next is %s, want null", path, json_string_value(next));
    } else {
        ASSERT_STR_EQ(json_string_value(next), want_next);
    }
    json_decref(o);
}

BOTH(schedules_page_and_cap)
{
    struct srv s;
    const char *extra[] = {"--max-schedules", "5", NULL};
    srv_start(&s, backend, extra);
    char body[256];
    for (int i = 0; i < 5; i++) {
        snprintf(body, sizeof body,
                 "{\"name\":\"s%d\",\"cron\":\"0 3 * * *\",\"type\":\"t\",\"payload\":{\"n\":%d}}",
                 i, i);
        EXPECT(&s, "POST", "/v1/schedules", body, 201, NULL);
    }
    /* the cap: a new name is refused, replacing one is not */
    EXPECT(&s, "POST", "/v1/schedules", "{\"name\":\"s5\",\"cron\":\"0 3 * * *\",\"type\":\"t\"}",
           409, "limit_reached");
    EXPECT(&s, "PUT", "/v1/schedules/s5", "{\"cron\":\"0 3 * * *\",\"type\":\"t\"}", 409,
           "limit_reached");
    EXPECT(&s, "PUT", "/v1/schedules/s4", "{\"cron\":\"0 4 * * *\",\"type\":\"t\"}", 200, NULL);
    EXPECT(&s, "POST", "/v1/schedules", "{\"name\":\"s1\",\"cron\":\"0 3 * * *\",\"type\":\"t\"}",
           409, "conflict");
    EXPECT(&s, "DELETE", "/v1/schedules/s4", NULL, 204, NULL);
    EXPECT(&s, "PUT", "/v1/schedules/s5", "{\"cron\":\"0 3 * * *\",\"type\":\"t\"}", 201, NULL);
    /* pages by name; no payload unless full=1 */
    expect_page(&s, "/v1/schedules", "schedules", "name", "s0,s1,s2,s3,s5", NULL);
    expect_page(&s, "/v1/schedules?limit=2", "schedules", "name", "s0,s1", "s1");
    expect_page(&s, "/v1/schedules?limit=2&after=s1", "schedules", "name", "s2,s3", "s3");
    expect_page(&s, "/v1/schedules?limit=2&after=s3", "schedules", "name", "s5", NULL);
    expect_page(&s, "/v1/schedules?after=s5", "schedules", "name", "", NULL);
    json_t *o = get_json(&s, "/v1/schedules");
    ASSERT_NULL(json_object_get(json_array_get(json_object_get(o, "schedules"), 0), "payload"));
    json_decref(o);
    o = get_json(&s, "/v1/schedules?full=1&limit=1&after=s0");
    json_t *p = json_object_get(json_array_get(json_object_get(o, "schedules"), 0), "payload");
    ASSERT_EQ(json_integer_value(json_object_get(p, "n")), 1);
    json_decref(o);
    EXPECT(&s, "GET", "/v1/schedules?limit=0", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/schedules?limit=1001", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/schedules?full=yes", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/schedules?status=x", NULL, 400, "invalid_query");
    srv_stop(&s);
}

static void
announce(const struct srv *s, const char *id, int hb_ms, long want, const char *code)
{
    char body[256];
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"hostname\":\"h\",\"heartbeat_ms\":%d}", id,
             hb_ms);
    EXPECT(s, "POST", "/v1/workers", body, want, code);
}

/* An announce body with field set to a string of n 'x' (or, for a list, n names). */
static char *
oversized(const char *field, size_t n, bool list)
{
    size_t cap = n * 8 + 256;
    char *b = malloc(cap);
    size_t at =
        (size_t)snprintf(b, cap, "{%s\"heartbeat_ms\":1000,\"%s\":%s",
                         strcmp(field, "id") ? "\"id\":\"w\"," : "", field, list ? "[" : "\"");
    for (size_t i = 0; i < n; i++)
        at += list ? (size_t)snprintf(b + at, cap - at, "%s\"q%zu\"", i ? "," : "", i)
                   : (size_t)snprintf(b + at, cap - at, "x");
    snprintf(b + at, cap - at, "%s}", list ? "]" : "\"");
    return b;
}

BOTH(workers_page_fields_and_cap)
{
    struct srv s;
    const char *extra[] = {"--max-workers", "3", NULL};
    srv_start(&s, backend, extra);
    /* each field has a bound, and the 400 names it */
    static const struct {
        const char *field;
        size_t n;
        bool list;
    } big[] = {{"hostname", 256, false},
               {"version", 65, false},
               {"id", 129, false},
               {"queues", 257, true},
               {"types", 257, true}};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        char *b = oversized(big[i].field, big[i].n, big[i].list);
        struct resp r;
        ASSERT_EQ(req(&s, "POST", "/v1/workers", b, &r), 400);
        json_t *e = resp_json(&r);
        ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(e, "error"), "field")),
                      big[i].field);
        json_decref(e);
        resp_fini(&r);
        free(b);
    }
    EXPECT(&s, "POST", "/v1/workers", "{\"id\":\"w\",\"heartbeat_ms\":1000,\"types\":[\"a b\"]}",
           400, NULL);
    /* at most 3 kept: a fourth is refused while all three are live... */
    announce(&s, "w1", 600000, 200, NULL);
    announce(&s, "w2", 600000, 200, NULL);
    announce(&s, "w3", 1, 200, NULL);      /* gone after 3 ms */
    announce(&s, "w1", 600000, 200, NULL); /* a known id again is fine */
    expect_page(&s, "/v1/workers?limit=2", "workers", "id", "w1,w2", "w2");
    expect_page(&s, "/v1/workers?limit=2&after=w2", "workers", "id", "w3", NULL);
    EXPECT(&s, "GET", "/v1/workers?limit=x", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/workers?full=1", NULL, 400, "invalid_query");
    /* ...and a gone worker's row makes room for a new one */
    int64_t deadline = apitest_now_ms() + 20000;
    for (;;) {
        json_t *o = get_json(&s, "/v1/workers?after=w2");
        json_t *w3 = json_array_get(json_object_get(o, "workers"), 0);
        bool gone = strcmp(json_string_value(json_object_get(w3, "state")), "gone") == 0;
        json_decref(o);
        if (gone)
            break;
        if (apitest_now_ms() > deadline)
            TEST_FAIL("w3 never went");
        apitest_nap_ms(5);
    }
    announce(&s, "w4", 600000, 200, NULL);
    expect_page(&s, "/v1/workers", "workers", "id", "w1,w2,w4", NULL);
    announce(&s, "w5", 600000, 409, "limit_reached");
    srv_stop(&s);
}

/* Lines of the last cli_run's stdout, and whether each is a JSON object with key. */
static size_t
out_lines_with(const char *key)
{
    FILE *f = fopen(test_path("cli.out"), "r");
    if (f == NULL)
        TEST_FAIL("no cli.out");
    char line[4096];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, NULL);
        if (json_object_get(o, key) == NULL)
            TEST_FAIL("line %zu has no %s: %s", n + 1, key, line);
        json_decref(o);
        n++;
    }
    fclose(f);
    return n;
}

BOTH(cli_reads_every_page)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    /* 1,001 schedules and workers, written straight to the store */
    struct store *st;
    struct jobd_error err = {0};
    ASSERT_OK(store_open(s.db, &st, &err), &err);
    for (int i = 0; i < 1001; i++) {
        char name[32], payload[32];
        snprintf(name, sizeof name, "s%04d", i);
        snprintf(payload, sizeof payload, "{\"n\":%d}", i);
        struct schedule_spec spec = {
            .name = name, .cron = "0 3 * * *", .type = "t", .payload = payload};
        ASSERT_OK(store_schedule_put(st, &spec, false, NULL, NULL, &err), &err);
        struct worker_info w = {
            .id = name, .hostname = "h", .heartbeat_ms = 600000, .concurrency = 1};
        ASSERT_OK(store_worker_announce(st, &w, &err), &err);
    }
    store_close(st);
    char envs[128], out[256];
    snprintf(envs, sizeof envs, "JOBD_SERVER=%s", s.base);
    const char *env[] = {envs, NULL};
    const char *ls[] = {"schedule", "ls", NULL};
    ASSERT_EQ(cli_run(env, ls, out, sizeof out), 0);
    ASSERT_EQ(out_lines_with("payload"), 1001);
    const char *workers[] = {"workers", NULL};
    ASSERT_EQ(cli_run(env, workers, out, sizeof out), 0);
    ASSERT_EQ(out_lines_with("hostname"), 1001);
    srv_stop(&s);
}
