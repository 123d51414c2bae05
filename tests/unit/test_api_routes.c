/*
 * test_api_routes.c — the socket-free core of the API: the route table
 * against docs/API.md (both ways), routing (404/405/Allow), auth, limits,
 * error bodies, JSON of a job, /metrics text, all without a store (the
 * pool points at a URL no backend takes, so store access answers 503 —
 * which also shows that validation happens before the store is touched).
 */
#include <jansson.h>
#include <sys/stat.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/handlers.h"
#include "api/jobjson.h"
#include "api/metrics.h"
#include "api/storepool.h"
#include "test.h"

TEST(routes_match_docs_both_ways)
{
    const char *src = getenv("JOBD_SRC");
    ASSERT(src != NULL);
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/API.md", src);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        TEST_FAIL("cannot open %s", path);
    char documented[64][128];
    int nd = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "### `", 5) != 0)
            continue;
        char *end = strchr(line + 5, '`');
        ASSERT(end != NULL && nd < 64);
        snprintf(documented[nd++], sizeof documented[0], "%.*s", (int)(end - line - 5), line + 5);
    }
    fclose(f);
    int missing = 0;
    for (size_t i = 0; i < api_n_routes; i++) {
        char r[128];
        snprintf(r, sizeof r, "%s %s", api_routes[i].method, api_routes[i].pattern);
        bool found = false;
        for (int k = 0; k < nd && !found; k++)
            found = strcmp(documented[k], r) == 0;
        if (!found) {
            fprintf(stderr, "served but not in docs/API.md: %s\n", r);
            missing++;
        }
    }
    for (int k = 0; k < nd; k++) {
        bool found = false;
        for (size_t i = 0; i < api_n_routes && !found; i++) {
            char r[128];
            snprintf(r, sizeof r, "%s %s", api_routes[i].method, api_routes[i].pattern);
            found = strcmp(documented[k], r) == 0;
        }
        if (!found) {
            fprintf(stderr, "in docs/API.md but not served: %s\n", documented[k]);
            missing++;
        }
    }
    ASSERT_EQ(missing, 0);
    ASSERT_EQ(nd, (int)api_n_routes);
}

struct fixture {
    struct store_pool *pool;
    struct api_auth *auth;
    struct api_metrics *metrics;
    struct api_ctx ctx;
};

static void
fixture_init(struct fixture *fx, bool tokens)
{
    memset(fx, 0, sizeof *fx);
    struct jobd_error err = {0};
    ASSERT_OK(store_pool_new("nostore://nowhere", NULL, &fx->pool, &err), &err);
    if (tokens) {
        const char *t[] = {"alpha", "beta-longer-token"};
        ASSERT_OK(api_auth_from(t, 2, &fx->auth, &err), &err);
    }
    fx->metrics = api_metrics_new();
    fx->ctx = (struct api_ctx){.pool = fx->pool, .auth = fx->auth, .metrics = fx->metrics};
}

static void
fixture_fini(struct fixture *fx)
{
    store_pool_free(fx->pool);
    api_auth_free(fx->auth);
    api_metrics_free(fx->metrics);
}

/* Handles one request; returns the status and the error code in code. */
static int
call(struct fixture *fx, const char *method, const char *path, const char *body, const char *auth,
     char *code, size_t codelen, struct api_response *keep)
{
    struct api_request req = {.method = method,
                              .path = path,
                              .authorization = auth,
                              .body = body ? body : "",
                              .body_len = body ? strlen(body) : 0};
    struct api_response r = {0};
    api_handle(&fx->ctx, &req, &r);
    int status = r.status;
    code[0] = '\0';
    json_t *v = json_loadb(r.body ? r.body : "", r.body_len, 0, NULL);
    const char *c = json_string_value(json_object_get(json_object_get(v, "error"), "code"));
    if (c)
        snprintf(code, codelen, "%s", c);
    if (c) {
        /* Every error body has exactly code, message, field. */
        json_t *e = json_object_get(v, "error");
        ASSERT_EQ(json_object_size(e), 3);
        ASSERT(json_is_string(json_object_get(e, "message")));
        json_t *fld = json_object_get(e, "field");
        ASSERT(fld != NULL && (json_is_null(fld) || json_is_string(fld)));
    }
    json_decref(v);
    if (keep)
        *keep = r;
    else
        api_response_fini(&r);
    return status;
}

TEST(routing_and_errors)
{
    struct fixture fx;
    fixture_init(&fx, false);
    char code[64];
    struct api_response r;
    ASSERT_EQ(call(&fx, "GET", "/nope", NULL, NULL, code, sizeof code, NULL), 404);
    ASSERT_STR_EQ(code, "not_found");
    ASSERT_EQ(call(&fx, "PUT", "/v1/jobs/7", NULL, NULL, code, sizeof code, &r), 405);
    ASSERT_STR_EQ(code, "method_not_allowed");
    ASSERT(r.allow_header);
    ASSERT_STR_EQ(r.allow, "GET, DELETE");
    api_response_fini(&r);
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs/batch", NULL, NULL, code, sizeof code, &r), 405);
    ASSERT_STR_EQ(r.allow, "POST");
    api_response_fini(&r);
    ASSERT_EQ(call(&fx, "GET", "/v1/queues/x/pause", NULL, NULL, code, sizeof code, NULL), 405);
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs/00", NULL, NULL, code, sizeof code, NULL), 404);
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs/1x", NULL, NULL, code, sizeof code, NULL), 404);
    ASSERT_EQ(call(&fx, "GET", "/v1//jobs", NULL, NULL, code, sizeof code, NULL), 404);
    ASSERT_EQ(call(&fx, "GET", "", NULL, NULL, code, sizeof code, NULL), 404);
    /* Validation before the store: 400s even though there is no store. */
    ASSERT_EQ(call(&fx, "POST", "/v1/jobs", "{", NULL, code, sizeof code, NULL), 400);
    ASSERT_STR_EQ(code, "malformed_json");
    ASSERT_EQ(
        call(&fx, "POST", "/v1/jobs", "{\"type\":\"x\",\"zz\":1}", NULL, code, sizeof code, NULL),
        400);
    ASSERT_STR_EQ(code, "unknown_field");
    ASSERT_EQ(call(&fx, "POST", "/v1/jobs", "{\"type\":\"x y\"}", NULL, code, sizeof code, NULL),
              400);
    ASSERT_STR_EQ(code, "invalid_field");
    /* A valid request with the store away: 503, nothing written. */
    ASSERT_EQ(call(&fx, "POST", "/v1/jobs", "{\"type\":\"x\"}", NULL, code, sizeof code, NULL),
              503);
    ASSERT_STR_EQ(code, "store_unavailable");
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs/1", NULL, NULL, code, sizeof code, NULL), 503);
    ASSERT_EQ(call(&fx, "GET", "/healthz", NULL, NULL, code, sizeof code, &r), 503);
    ASSERT_STR_EQ(r.content_type, "text/plain; charset=utf-8");
    api_response_fini(&r);
    /* /metrics still renders the counters without a store. */
    ASSERT_EQ(call(&fx, "GET", "/metrics", NULL, NULL, code, sizeof code, &r), 200);
    ASSERT(strstr(r.body, "jobd_jobs_enqueued_total 0\n") != NULL);
    api_response_fini(&r);
    fixture_fini(&fx);
}

TEST(auth_rules)
{
    struct fixture fx;
    fixture_init(&fx, true);
    char code[64];
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs", NULL, NULL, code, sizeof code, NULL), 401);
    ASSERT_STR_EQ(code, "unauthorized");
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs", NULL, "Bearer alph", code, sizeof code, NULL), 401);
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs", NULL, "Bearer alphaa", code, sizeof code, NULL), 401);
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs", NULL, "alpha", code, sizeof code, NULL), 401);
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs", NULL, "Bearer ", code, sizeof code, NULL), 401);
    /* Valid tokens pass auth (and then meet the missing store). */
    ASSERT_EQ(call(&fx, "GET", "/v1/jobs", NULL, "Bearer alpha", code, sizeof code, NULL), 503);
    ASSERT_EQ(
        call(&fx, "GET", "/v1/jobs", NULL, "bearer beta-longer-token", code, sizeof code, NULL),
        503);
    /* /healthz needs no token; an unknown route without a valid token is 401 (no
     * route probing), with one 404. */
    ASSERT_EQ(call(&fx, "GET", "/healthz", NULL, NULL, code, sizeof code, NULL), 503);
    ASSERT_EQ(call(&fx, "GET", "/nope", NULL, NULL, code, sizeof code, NULL), 401);
    ASSERT_EQ(call(&fx, "DELETE", "/v1/jobs/7", NULL, NULL, code, sizeof code, NULL), 401);
    ASSERT_EQ(call(&fx, "GET", "/nope", NULL, "Bearer alpha", code, sizeof code, NULL), 404);
    ASSERT(api_auth_check(NULL, NULL));
    fixture_fini(&fx);
}

TEST(tokens_file)
{
    FILE *f = fopen("tokens", "w");
    fputs("# comment\n\n  tok-a-0123456789  \nab#cdefghijklmnop\n  # indented comment\n"
          "tok-w-0123456789 write\ntok-k-0123456789\tworker\ntok-r-0123456789 read \n"
          "tok-d-0123456789 admin\n",
          f);
    fclose(f);
    chmod("tokens", 0600);
    struct api_auth *a = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(api_auth_load("tokens", &a, &err), &err);
    ASSERT_EQ(api_auth_count(a), 6);
    ASSERT_NULL(api_auth_warning(a));
    ASSERT_EQ(api_auth_role(a, "Bearer tok-a-0123456789"), API_ROLE_ADMIN);
    /* '#' inside a token is part of it, not a comment. */
    ASSERT_EQ(api_auth_role(a, "Bearer ab#cdefghijklmnop"), API_ROLE_ADMIN);
    ASSERT_EQ(api_auth_role(a, "Bearer ab"), API_ROLE_NONE);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-w-0123456789"), API_ROLE_WRITE);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-k-0123456789"), API_ROLE_WORKER);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-r-0123456789"), API_ROLE_READ);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-d-0123456789"), API_ROLE_ADMIN);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-c-0123456789"), API_ROLE_NONE);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-a-012345678"), API_ROLE_NONE);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-a-01234567890"), API_ROLE_NONE);
    ASSERT_EQ(api_auth_role(a, "Bearer "), API_ROLE_NONE);
    api_auth_free(a);
    /* Readable by others: loads, with a warning. */
    chmod("tokens", 0644);
    ASSERT_OK(api_auth_load("tokens", &a, &err), &err);
    ASSERT(api_auth_warning(a) != NULL && strstr(api_auth_warning(a), "chmod 600"));
    api_auth_free(a);
    f = fopen("empty", "w");
    fputs("# nothing\n", f);
    fclose(f);
    ASSERT_EQ(api_auth_load("empty", &a, &err), JOBD_E_INVALID);
    ASSERT_EQ(api_auth_load("does-not-exist", &a, &err), JOBD_E_IO);
    f = fopen("spaces", "w");
    fputs("tok-a-0123456789 admin extra\n", f);
    fclose(f);
    ASSERT_EQ(api_auth_load("spaces", &a, &err), JOBD_E_INVALID);
    ASSERT(strstr(err.msg, "spaces:1:") != NULL);
    /* Short tokens, unknown roles and duplicates are refused naming file:line. */
    const char *bad[][2] = {{"# x\nshort-token\n", "short:2:"},
                            {"tok-a-0123456789 root\n", "short:1: unknown role 'root'"},
                            {"tok-a-0123456789\ntok-a-0123456789 read\n", "short:2:"},
                            {"tok-a-0123456789 # comment\n", "short:1: unknown role '#'"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen("short", "w");
        fputs(bad[i][0], f);
        fclose(f);
        ASSERT_EQ(api_auth_load("short", &a, &err), JOBD_E_INVALID);
        if (strstr(err.msg, bad[i][1]) == NULL)
            TEST_FAIL("%s: %s", bad[i][1], err.msg);
    }
}

/* A failed reload's table (docs/OPERATIONS.md, Reloading): nothing is granted. */
TEST(tokens_narrowed)
{
    FILE *f = fopen("tokens", "w");
    fputs("tok-a-0123456789\ntok-w-0123456789 write\ntok-r-0123456789 read\n"
          "tok-k-0123456789 worker\n",
          f);
    fclose(f);
    struct api_auth *old = NULL, *a = NULL;
    struct jobd_error err = {0};
    ASSERT_OK(api_auth_load("tokens", &old, &err), &err);
    /* a revoked, w lowered to read, r raised to admin, k on a bad line, n added */
    f = fopen("tokens", "w");
    fputs("tok-w-0123456789 read\ntok-r-0123456789 admin\ntok-k-0123456789 reader\n"
          "tok-n-0123456789\n",
          f);
    fclose(f);
    ASSERT_EQ(api_auth_load("tokens", &a, &err), JOBD_E_INVALID);
    memset(&err, 0, sizeof err);
    ASSERT_OK(api_auth_narrow(old, "tokens", &a, &err), &err);
    ASSERT(strstr(err.msg, "tokens:3: unknown role 'reader'") != NULL);
    ASSERT_EQ(api_auth_count(a), 2);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-a-0123456789"), API_ROLE_NONE);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-w-0123456789"), API_ROLE_READ);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-r-0123456789"), API_ROLE_READ);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-k-0123456789"), API_ROLE_NONE);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-n-0123456789"), API_ROLE_NONE);
    api_auth_free(a);
    /* Unreadable: no token stays, and a token is still required. */
    ASSERT_OK(api_auth_narrow(old, "does-not-exist", &a, &err), &err);
    ASSERT(strstr(err.msg, "cannot read tokens file") != NULL);
    ASSERT_EQ(api_auth_count(a), 0);
    ASSERT(api_auth_required(a));
    ASSERT_EQ(api_auth_role(a, NULL), API_ROLE_NONE);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-a-0123456789"), API_ROLE_NONE);
    api_auth_free(a);
    /* Nothing in force (a server without tokens): nothing stays either. */
    ASSERT_OK(api_auth_narrow(NULL, "tokens", &a, &err), &err);
    ASSERT_EQ(api_auth_role(a, "Bearer tok-w-0123456789"), API_ROLE_NONE);
    api_auth_free(a);
    api_auth_free(old);
}

TEST(body_limits)
{
    ASSERT_EQ(api_body_limit("POST", "/v1/jobs"), 1024 * 1024);
    ASSERT_EQ(api_body_limit("POST", "/v1/jobs/batch"), 16 * 1024 * 1024);
    ASSERT_EQ(api_body_limit("GET", "/unknown"), 1024 * 1024);
    struct fixture fx;
    fixture_init(&fx, false);
    size_t n = 1024 * 1024 + 1;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    big[n] = '\0';
    char code[64];
    ASSERT_EQ(call(&fx, "POST", "/v1/jobs", big, NULL, code, sizeof code, NULL), 413);
    ASSERT_STR_EQ(code, "too_large");
    /* Under the batch limit, the same bytes are parsed (and are not JSON). */
    ASSERT_EQ(call(&fx, "POST", "/v1/jobs/batch", big, NULL, code, sizeof code, NULL), 400);
    free(big);
    fixture_fini(&fx);
}

TEST(job_json_exact)
{
    struct job j = {0};
    j.id = 42;
    j.queue = strdup("default");
    j.type = strdup("email.send");
    j.payload = strdup("{\"to\":\"a@b.c\"}");
    j.status = JOB_RUNNING;
    j.run_at_us = 1796220197120000; /* 2026-12-02T14:03:17.120Z */
    j.attempt = 1;
    j.max_attempts = 25;
    j.worker_id = strdup("w-1");
    j.lease_expires_at_us = j.run_at_us + 60000000;
    j.timeout_ms = 1500;
    j.created_at_us = j.run_at_us;
    j.started_at_us = j.run_at_us + 5000;
    char *s = jobjson_dump_take(jobjson_job(&j));
    ASSERT_STR_EQ(s, "{\"id\":42,\"queue\":\"default\",\"type\":\"email.send\","
                     "\"payload\":{\"to\":\"a@b.c\"},\"status\":\"running\",\"priority\":0,"
                     "\"run_at\":\"2026-12-02T14:03:17.120Z\",\"attempt\":1,\"max_attempts\":25,"
                     "\"attempt_floor\":0,"
                     "\"idempotency_key\":null,\"schedule\":null,\"scheduled_for\":null,"
                     "\"worker_id\":\"w-1\",\"lease_expires_at\":\"2026-12-02T14:04:17.120Z\","
                     "\"cancel_requested\":false,"
                     "\"timeout_s\":1.5,\"last_error\":null,\"result\":null,"
                     "\"created_at\":\"2026-12-02T14:03:17.120Z\","
                     "\"started_at\":\"2026-12-02T14:03:17.125Z\",\"finished_at\":null,"
                     "\"depends_on\":[],\"on_parent_failure\":\"cancel\",\"workflow\":null,"
                     "\"step\":null,\"traceparent\":null,\"group\":null,\"progress\":null}");
    free(s);
    /* docs/API.md, The job object: progress {percent, message, data, at} */
    j.progress = calloc(1, sizeof *j.progress);
    ASSERT(j.progress != NULL);
    j.progress->has_percent = true;
    j.progress->percent = 40;
    j.progress->message = strdup("3 of 8");
    j.progress->data = strdup("{\"n\":3}");
    j.progress->at_us = j.started_at_us;
    s = jobjson_dump_take(jobjson_job(&j));
    ASSERT(strstr(s, ",\"progress\":{\"percent\":40,\"message\":\"3 of 8\",\"data\":{\"n\":3},"
                     "\"at\":\"2026-12-02T14:03:17.125Z\"}}") != NULL);
    free(s);
    job_progress_free(j.progress);
    j.progress = NULL;
    s = jobjson_dump_take(jobjson_claimed(&j));
    ASSERT_STR_EQ(
        s,
        "{\"id\":42,\"attempt\":1,\"attempt_floor\":0,\"type\":\"email.send\","
        "\"queue\":\"default\","
        "\"payload\":{\"to\":\"a@b.c\"},\"idempotency_key\":null,\"timeout_s\":1.5,"
        "\"lease_expires_at\":\"2026-12-02T14:04:17.120Z\",\"traceparent\":null,\"group\":null}");
    free(s);
    /* docs/API.md, Trace context: in the job object and the claim answer */
    j.traceparent = strdup("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    s = jobjson_dump_take(jobjson_job(&j));
    ASSERT(strstr(s, ",\"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\","
                     "\"group\":null,\"progress\":null}") != NULL);
    free(s);
    s = jobjson_dump_take(jobjson_claimed(&j));
    ASSERT(strstr(s, ",\"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\","
                     "\"group\":null}") != NULL);
    free(s);
    /* docs/MODEL.md, Groups: in the job object and the claim answer */
    j.group = strdup("cust-0042");
    s = jobjson_dump_take(jobjson_job(&j));
    ASSERT(strstr(s, ",\"group\":\"cust-0042\",\"progress\":null}") != NULL);
    free(s);
    s = jobjson_dump_take(jobjson_claimed(&j));
    ASSERT(strstr(s, ",\"group\":\"cust-0042\"}") != NULL);
    free(s);
    job_fini(&j);
}

/* jobjson_job_text prints what jobjson_dump_take(jobjson_job(j)) prints, whatever j holds. */
static void
same_job_text(const struct job *j)
{
    char *tree = jobjson_dump_take(jobjson_job(j));
    char *text = jobjson_job_text(j);
    ASSERT(tree != NULL && text != NULL);
    ASSERT_STR_EQ(text, tree);
    free(tree);
    free(text);
}

TEST(job_text_is_the_job_object_printed)
{
    struct job j = {0};
    same_job_text(&j); /* all absent: nulls, 0s, [] */
    j.id = INT64_MAX;
    j.queue = strdup("q\"\\\n\t\x01\x1f"
                     "é€😀");
    j.type = strdup("t/\x7f</script>");
    j.payload = strdup("{\"b\":[1,2.5,-0.0,1e300,\"x\\u0000y\"],\"a\":{\"c\":null,\"d\":true}}");
    j.status = JOB_RUNNING;
    j.cancel_requested = true;
    j.priority = -7;
    j.run_at_us = 1796220197120001;
    j.attempt = 3;
    j.max_attempts = 25;
    j.attempt_floor = 2;
    j.idempotency_key = strdup("k\r\b\f");
    j.schedule = strdup("every-minute");
    j.scheduled_for_us = -86400000000; /* before 1970 */
    j.worker_id = strdup("w-1");
    j.lease_expires_at_us = 1796220257120000;
    j.timeout_ms = 1500;
    j.last_error = strdup("boom \"quoted\"");
    j.result = strdup("not json {"); /* corrupt: shown as a string */
    j.created_at_us = 1;
    j.started_at_us = 1796220197125000;
    j.finished_at_us = 1796220197126999;
    int64_t deps[] = {1, INT64_MAX, 3};
    j.depends_on = deps;
    j.n_depends_on = 3;
    j.run_on_parent_failure = true;
    j.workflow = 9;
    j.step = strdup("s1");
    j.traceparent = strdup("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    j.group = strdup("cust-0042");
    same_job_text(&j);
    j.timeout_ms = 3000;
    j.status = JOB_PENDING; /* cancel_requested shows only while running */
    j.id = -5;
    same_job_text(&j);
    j.progress = calloc(1, sizeof *j.progress);
    ASSERT(j.progress != NULL);
    j.progress->has_percent = true;
    j.progress->percent = 12.5;
    j.progress->message = strdup("m\n");
    j.progress->data = strdup("{\"n\":3}");
    j.progress->at_us = j.started_at_us;
    same_job_text(&j);
    j.depends_on = NULL; /* not the job's: a local array */
    j.n_depends_on = 0;
    job_fini(&j);
}

TEST(spec_from_json)
{
    json_t *o = json_loads("{\"type\":\"t\",\"payload\":{\"b\":1,\"a\":[1,2]},\"queue\":\"q\","
                           "\"priority\":-3,\"in\":\"1m\",\"max_attempts\":2,"
                           "\"idempotency_key\":\"k\",\"timeout\":\"2s\"}",
                           0, NULL);
    struct job_spec spec;
    struct spec_owned own = {0};
    struct jobd_error err = {0};
    ASSERT_OK(jobjson_spec(o, NULL, NULL, NULL, 1000000, &spec, &own, &err), &err);
    ASSERT_STR_EQ(spec.type, "t");
    ASSERT_STR_EQ(spec.payload, "{\"a\":[1,2],\"b\":1}");
    ASSERT_STR_EQ(spec.queue, "q");
    ASSERT_EQ(spec.priority, -3);
    ASSERT_EQ(spec.run_at_us, 1000000 + 60 * 1000000LL);
    ASSERT_EQ(spec.max_attempts, 2);
    ASSERT_EQ(spec.timeout_ms, 2000);
    jobjson_spec_fini(&own);
    /* The header key must agree with the body's. */
    ASSERT_EQ(jobjson_spec(o, NULL, "other", NULL, 0, &spec, &own, &err), JOBD_E_INVALID);
    ASSERT_STR_EQ(err.field, "idempotency_key");
    jobjson_spec_fini(&own);
    json_decref(o);
    o = json_loads("{\"type\":\"t\",\"timeout_s\":0.25}", 0, NULL);
    ASSERT_OK(jobjson_spec(o, "jobs[2].", NULL, NULL, 0, &spec, &own, &err), &err);
    ASSERT_EQ(spec.timeout_ms, 250);
    json_decref(o);
    o = json_loads("{\"type\":\"t\",\"max_attempts\":true}", 0, NULL);
    ASSERT_EQ(jobjson_spec(o, "jobs[2].", NULL, NULL, 0, &spec, &own, &err), JOBD_E_INVALID);
    ASSERT_STR_EQ(err.field, "jobs[2].max_attempts");
    json_decref(o);
    /* Found by fuzz_spec: what jobd accepts it must print and read back, so
     * the worker's deadline cannot overflow and run_at stays within year 9999. */
    static const struct {
        const char *body, *field;
    } bad[] = {
        {"{\"type\":\"t\",\"timeout\":\"106751991167d\"}", "jobs[0].timeout"},
        {"{\"type\":\"t\",\"timeout\":\"367d\"}", "jobs[0].timeout"},
        {"{\"type\":\"t\",\"timeout_s\":31622401}", "jobs[0].timeout_s"},
        {"{\"type\":\"t\",\"in\":\"3000000d\"}", "jobs[0].in"},
        {"{\"type\":\"t\",\"run_at\":\"9999-12-31T23:00:00-01:00\"}", "jobs[0].run_at"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o = json_loads(bad[i].body, 0, NULL);
        ASSERT_EQ(jobjson_spec(o, "jobs[0].", NULL, NULL, 1796220197120000, &spec, &own, &err),
                  JOBD_E_INVALID);
        ASSERT_STR_EQ(err.field, bad[i].field);
        jobjson_spec_fini(&own);
        json_decref(o);
    }
    o = json_loads("{\"type\":\"t\",\"timeout\":\"366d\",\"in\":\"2900000d\"}", 0, NULL);
    ASSERT_OK(jobjson_spec(o, NULL, NULL, NULL, 1796220197120000, &spec, &own, &err), &err);
    ASSERT_EQ(spec.timeout_ms, JOB_TIMEOUT_MAX_MS);
    jobjson_spec_fini(&own);
    json_decref(o);
}

TEST(metrics_text)
{
    struct api_metrics *m = api_metrics_new();
    api_metrics_enqueued(m, 3);
    api_metrics_finished(m, OUTCOME_DEAD);
    api_metrics_fenced(m, 1);
    api_metrics_lateness(m, "mail", 0.003);
    api_metrics_lateness(m, "mail", 0.2);
    api_metrics_lateness(m, "mail", 100000);
    api_metrics_duration(m, "bulk", 2);
    struct queue_stat q = {
        .name = "mail", .paused = false, .count = {4, 1, 0, 2, 0}, .oldest_pending_age_s = 12.5};
    struct metrics_workers w = {.active = 3, .draining = 1, .gone = 0};
    char *t = api_metrics_render(m, &q, 1, &w);
    ASSERT(strstr(t, "jobd_jobs_enqueued_total 3\n"));
    ASSERT(strstr(t, "jobd_jobs_finished_total{outcome=\"dead\"} 1\n"));
    ASSERT(strstr(t, "jobd_jobs_finished_total{outcome=\"succeeded\"} 0\n"));
    ASSERT(strstr(t, "jobd_reports_fenced_total 1\n"));
    ASSERT(strstr(t, "jobd_queue_jobs{queue=\"mail\",status=\"pending\"} 4\n"));
    ASSERT(strstr(t, "jobd_queue_jobs{queue=\"mail\",status=\"dead\"} 2\n"));
    ASSERT(strstr(t, "# TYPE jobd_queue_oldest_due_age_seconds gauge\n"));
    ASSERT(strstr(t, "jobd_queue_oldest_due_age_seconds{queue=\"mail\"} 12.500\n"));
    ASSERT(strstr(t, "# TYPE jobd_workers gauge\n"));
    ASSERT(strstr(t, "jobd_workers{state=\"active\"} 3\n"));
    ASSERT(strstr(t, "jobd_workers{state=\"draining\"} 1\n"));
    ASSERT(strstr(t, "jobd_workers{state=\"gone\"} 0\n"));
    /* Buckets are cumulative, by queue; +Inf equals the count. */
    ASSERT(strstr(t, "jobd_job_lateness_seconds_bucket{queue=\"mail\",le=\"0.005\"} 1\n"));
    ASSERT(strstr(t, "jobd_job_lateness_seconds_bucket{queue=\"mail\",le=\"0.25\"} 2\n"));
    ASSERT(strstr(t, "jobd_job_lateness_seconds_bucket{queue=\"mail\",le=\"3600\"} 2\n"));
    ASSERT(strstr(t, "jobd_job_lateness_seconds_bucket{queue=\"mail\",le=\"+Inf\"} 3\n"));
    ASSERT(strstr(t, "jobd_job_lateness_seconds_count{queue=\"mail\"} 3\n"));
    ASSERT(strstr(t, "jobd_job_lateness_seconds_count{queue=\"*\"} 0\n"));
    ASSERT(strstr(t, "jobd_job_duration_seconds_count{queue=\"bulk\"} 1\n"));
    ASSERT(strstr(t, "# TYPE jobd_job_duration_seconds histogram\n"));
    free(t);
    api_metrics_free(m);
}

/* Past METRICS_QUEUES_MAX queues, the histograms share queue="*": bounded. */
TEST(metrics_queue_label_bounded)
{
    struct api_metrics *m = api_metrics_new();
    char name[32];
    for (int i = 0; i < METRICS_QUEUES_MAX + 10; i++) {
        snprintf(name, sizeof name, "q%d", i);
        api_metrics_lateness(m, name, 1);
        api_metrics_lateness(m, name, 1); /* the same queue again: no new series */
    }
    char *t = api_metrics_render(m, NULL, 0, NULL);
    int series = 0;
    for (const char *p = t; (p = strstr(p, "jobd_job_lateness_seconds_count{")) != NULL; p++)
        series++;
    ASSERT_EQ(series, METRICS_QUEUES_MAX + 1);
    ASSERT(strstr(t, "jobd_job_lateness_seconds_count{queue=\"q0\"} 2\n"));
    ASSERT(strstr(t, "jobd_job_lateness_seconds_count{queue=\"*\"} 20\n"));
    ASSERT(strstr(t, "jobd_workers") == NULL); /* the store did not answer: left out */
    free(t);
    api_metrics_free(m);
}
