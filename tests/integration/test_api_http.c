/*
 * test_api_http.c — the HTTP API of docs/API.md against a real `jobd server`
 * process, on SQLite and on PostgreSQL: every job, queue and worker route and
 * its status codes, idempotency, pagination, tokens, fencing, long-poll
 * claims and group commit. The schedule routes are in test_api_schedules.c.
 */
#include <pthread.h>

#include "apitest.h"

/* Every field of the job object, in the documented form (docs/API.md, The job object). */
/* clang-format off */
static const char *const job_fields[] = {
    "id", "queue", "type", "payload", "status", "priority", "run_at", "attempt", "max_attempts",
    "attempt_floor", "idempotency_key", "schedule", "scheduled_for", "worker_id",
    "lease_expires_at", "timeout_s", "last_error", "result", "created_at", "started_at",
    "finished_at", "cancel_requested", "progress", "depends_on", "on_parent_failure", "workflow",
    "step", "traceparent", "group"};
/* clang-format on */

BOTH(create_get_list)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/jobs",
                  "{\"type\":\"email.send\",\"payload\":{\"to\":\"a@b.c\"},\"priority\":3,"
                  "\"queue\":\"mail\",\"max_attempts\":4,\"timeout\":\"30s\"}",
                  &r),
              201);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    for (size_t i = 0; i < sizeof job_fields / sizeof job_fields[0]; i++)
        if (json_object_get(j, job_fields[i]) == NULL)
            TEST_FAIL("job object lacks %s", job_fields[i]);
    ASSERT_EQ(json_object_size(j), sizeof job_fields / sizeof job_fields[0]);
    ASSERT(json_is_null(json_object_get(j, "progress")));
    ASSERT(json_is_null(json_object_get(j, "traceparent")));
    ASSERT(json_is_false(json_object_get(j, "cancel_requested")));
    ASSERT_EQ(json_integer_value(json_object_get(j, "attempt_floor")), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "queue")), "mail");
    ASSERT_EQ(json_integer_value(json_object_get(j, "priority")), 3);
    ASSERT_EQ(json_integer_value(json_object_get(j, "max_attempts")), 4);
    ASSERT_EQ(json_integer_value(json_object_get(j, "timeout_s")), 30);
    ASSERT(json_is_null(json_object_get(j, "started_at")));
    const char *created = json_string_value(json_object_get(j, "created_at"));
    /* RFC 3339 UTC with milliseconds: 2026-12-02T14:03:17.120Z */
    ASSERT_EQ(strlen(created), 24);
    ASSERT_EQ(created[23], 'Z');
    ASSERT_EQ(created[19], '.');
    ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(j, "payload"), "to")), "a@b.c");
    int64_t id = json_integer_value(json_object_get(j, "id"));
    ASSERT(id > 0);
    json_decref(j);

    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    j = get_json(&s, path);
    ASSERT_EQ(json_integer_value(json_object_get(j, "id")), id);
    json_decref(j);
    EXPECT(&s, "GET", "/v1/jobs/999999", NULL, 404, "not_found");
    EXPECT(&s, "GET", "/v1/jobs/abc", NULL, 404, "not_found");

    /* Defaults; run_at with an offset; in. */
    int64_t b = create_job(&s, "{\"type\":\"t2\",\"run_at\":\"2030-01-01T01:00:00+01:00\"}");
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)b);
    j = get_json(&s, path);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "run_at")), "2030-01-01T00:00:00.000Z");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "queue")), "default");
    ASSERT_EQ(json_integer_value(json_object_get(j, "max_attempts")), 25);
    ASSERT(json_is_object(json_object_get(j, "payload")));
    json_decref(j);
    create_job(&s, "{\"type\":\"t3\",\"in\":\"1h30m\"}");

    j = get_json(&s, "/v1/jobs?queue=mail");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 1);
    ASSERT(json_is_null(json_object_get(j, "next")));
    json_decref(j);
    j = get_json(&s, "/v1/jobs?type=t2&status=pending");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 1);
    json_decref(j);
    j = get_json(&s, "/v1/jobs?status=succeeded");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 0);
    json_decref(j);
    EXPECT(&s, "GET", "/v1/jobs?status=done", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/jobs?limit=0", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/jobs?limit=1001", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/jobs?bogus=1", NULL, 400, "invalid_query");
    EXPECT(&s, "GET", "/v1/jobs?queue=Bad%20Queue", NULL, 400, "invalid_query");
    srv_stop(&s);
}

BOTH(idempotency)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    const char *body =
        "{\"type\":\"pay\",\"payload\":{\"a\":1,\"b\":2},\"idempotency_key\":\"k-1\"}";
    int64_t id = create_job(&s, body);
    /* Same request (keys in another order: payloads compare canonically). */
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/jobs",
                  "{\"idempotency_key\":\"k-1\",\"payload\":{\"b\":2,\"a\":1},\"type\":\"pay\"}",
                  &r),
              200);
    ASSERT(strstr(r.headers, "Idempotent-Replayed: true") != NULL);
    json_t *j = resp_json(&r);
    ASSERT_EQ(json_integer_value(json_object_get(j, "id")), id);
    json_decref(j);
    resp_fini(&r);
    EXPECT(&s, "POST", "/v1/jobs",
           "{\"type\":\"pay\",\"payload\":{\"a\":2},\"idempotency_key\":\"k-1\"}", 409,
           "idempotency_conflict");
    EXPECT(&s, "POST", "/v1/jobs", "{\"type\":\"other\",\"idempotency_key\":\"k-1\"}", 409,
           "idempotency_conflict");

    /* The key as a header. */
    const char *h[] = {"Idempotency-Key: hdr-7", NULL};
    const char *b2 = "{\"type\":\"pay\"}";
    http_req(&s, "POST", "/v1/jobs", b2, strlen(b2), h, &r);
    ASSERT_EQ(r.status, 201);
    j = resp_json(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "idempotency_key")), "hdr-7");
    json_decref(j);
    resp_fini(&r);
    http_req(&s, "POST", "/v1/jobs", b2, strlen(b2), h, &r);
    ASSERT_EQ(r.status, 200);
    ASSERT(strstr(r.headers, "Idempotent-Replayed: true") != NULL);
    resp_fini(&r);
    const char *b3 = "{\"type\":\"pay\",\"idempotency_key\":\"other\"}";
    http_req(&s, "POST", "/v1/jobs", b3, strlen(b3), h, &r);
    ASSERT_EQ(r.status, 400);
    resp_fini(&r);
    j = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 2);
    json_decref(j);
    srv_stop(&s);
}

BOTH(pagination)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    char body[2048 * 4];
    /* 25 jobs in one batch, then walk pages of 10. */
    size_t n = (size_t)snprintf(body, sizeof body, "{\"jobs\":[");
    for (int i = 0; i < 25; i++)
        n += (size_t)snprintf(body + n, sizeof body - n, "%s{\"type\":\"p\",\"payload\":%d}",
                              i ? "," : "", i);
    snprintf(body + n, sizeof body - n, "]}");
    EXPECT(&s, "POST", "/v1/jobs/batch", body, 201, NULL);
    char path[128] = "/v1/jobs?limit=10";
    int64_t last = INT64_MAX;
    int total = 0, pages = 0;
    for (;;) {
        json_t *j = get_json(&s, path);
        json_t *arr = json_object_get(j, "jobs");
        size_t i;
        json_t *e;
        json_array_foreach(arr, i, e) {
            int64_t id = json_integer_value(json_object_get(e, "id"));
            ASSERT(id < last); /* newest first, no repeats */
            last = id;
            total++;
        }
        pages++;
        json_t *next = json_object_get(j, "next");
        if (json_is_null(next)) {
            json_decref(j);
            break;
        }
        ASSERT(json_is_string(next));
        snprintf(path, sizeof path, "/v1/jobs?limit=10&after=%s", json_string_value(next));
        json_decref(j);
        ASSERT(pages < 10);
    }
    ASSERT_EQ(total, 25);
    ASSERT_EQ(pages, 3);
    EXPECT(&s, "GET", "/v1/jobs?after=abc", NULL, 400, "invalid_query");
    srv_stop(&s);
}

/* The lease_token of the first job of the last claim() (docs/API.md, Remote workers). */
static char tok[64];

/* Claims for worker w; returns the number of jobs and the first id/attempt (and tok). */
static size_t
claim(const struct srv *s, const char *body, int64_t *id, int64_t *attempt)
{
    struct resp r;
    long st = req(s, "POST", "/v1/claim", body, &r);
    if (st != 200)
        TEST_FAIL("claim %s: %ld %s", body, st, r.body);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    json_t *arr = json_object_get(j, "jobs");
    size_t n = json_array_size(arr);
    if (n > 0) {
        json_t *e = json_array_get(arr, 0);
        if (id)
            *id = json_integer_value(json_object_get(e, "id"));
        if (attempt)
            *attempt = json_integer_value(json_object_get(e, "attempt"));
        ASSERT(json_is_string(json_object_get(e, "lease_expires_at")));
        json_t *t = json_object_get(e, "lease_token");
        ASSERT(json_is_string(t) && json_string_length(t) == 32);
        snprintf(tok, sizeof tok, "%s", json_string_value(t));
        ASSERT(json_object_get(e, "payload") != NULL);
    }
    json_decref(j);
    return n;
}

BOTH(cancel_retry)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t id = create_job(&s, "{\"type\":\"c\"}");
    char p[96];
    snprintf(p, sizeof p, "/v1/jobs/%lld/cancel", (long long)id);
    EXPECT(&s, "POST", p, NULL, 200, NULL);
    EXPECT(&s, "POST", p, NULL, 409, "invalid_state");
    snprintf(p, sizeof p, "/v1/jobs/%lld/retry", (long long)id);
    EXPECT(&s, "POST", p, NULL, 200, NULL);
    EXPECT(&s, "POST", p, NULL, 409, "invalid_state"); /* pending now */
    EXPECT(&s, "POST", "/v1/jobs/424242/cancel", NULL, 404, "not_found");
    EXPECT(&s, "POST", "/v1/jobs/424242/retry", NULL, 404, "not_found");
    /* Running: cancel is requested (202), the worker learns it at its heartbeat. */
    int64_t cid = 0, att = 0;
    ASSERT_EQ(claim(&s, "{\"worker_id\":\"w\",\"types\":[\"c\"],\"limit\":1}", &cid, &att), 1);
    ASSERT_EQ(cid, id);
    snprintf(p, sizeof p, "/v1/jobs/%lld/cancel", (long long)id);
    struct resp r;
    ASSERT_EQ(req(&s, "POST", p, NULL, &r), 202);
    json_t *j = resp_json(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "running");
    json_decref(j);
    resp_fini(&r);
    snprintf(p, sizeof p, "/v1/jobs/%lld/heartbeat", (long long)id);
    char body[96];
    snprintf(body, sizeof body, "{\"attempt\":%lld,\"lease_token\":\"%s\"}", (long long)att, tok);
    ASSERT_EQ(req(&s, "POST", p, body, &r), 200);
    j = resp_json(&r);
    ASSERT(json_is_true(json_object_get(j, "cancel_requested")));
    json_decref(j);
    resp_fini(&r);
    snprintf(p, sizeof p, "/v1/jobs/%lld/fail", (long long)id);
    snprintf(body, sizeof body, "{\"attempt\":%lld,\"error\":\"stopped\",\"lease_token\":\"%s\"}",
             (long long)att, tok);
    ASSERT_EQ(req(&s, "POST", p, body, &r), 200);
    j = resp_json(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "cancelled");
    json_decref(j);
    resp_fini(&r);
    srv_stop(&s);
}

/* Reads a counter from /metrics. */
static double
metric(const struct srv *s, const char *name)
{
    struct resp r;
    ASSERT_EQ(req(s, "GET", "/metrics", NULL, &r), 200);
    const char *p = r.body;
    double v = -1;
    size_t nl = strlen(name);
    while ((p = strstr(p, name)) != NULL) {
        if ((p == r.body || p[-1] == '\n') && p[nl] == ' ') {
            v = strtod(p + nl + 1, NULL);
            break;
        }
        p += nl;
    }
    resp_fini(&r);
    return v;
}

BOTH(worker_protocol)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t id = create_job(&s, "{\"type\":\"w\",\"payload\":[1,2],\"max_attempts\":2}");
    int64_t low = create_job(&s, "{\"type\":\"w\",\"priority\":-5}");
    (void)low;
    /* Nothing for other types; claim order is priority first. */
    ASSERT_EQ(claim(&s, "{\"worker_id\":\"w1\",\"types\":[\"zzz\"],\"limit\":5}", NULL, NULL), 0);
    int64_t cid = 0, att = 0;
    ASSERT_EQ(claim(&s, "{\"worker_id\":\"w1\",\"types\":[\"w\"],\"limit\":1,\"lease_s\":30}", &cid,
                    &att),
              1);
    ASSERT_EQ(cid, id);
    ASSERT_EQ(att, 1);
    char p[96], body[256];
    snprintf(p, sizeof p, "/v1/jobs/%lld/heartbeat", (long long)id);
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_s\":60,\"lease_token\":\"%s\"}", tok);
    EXPECT(&s, "POST", p, body, 200, NULL);
    EXPECT(&s, "POST", p, "{\"attempt\":1,\"lease_token\":null}", 409, "stale_attempt");
    double fenced0 = metric(&s, "jobd_reports_fenced_total");
    EXPECT(&s, "POST", p, "{\"attempt\":7}", 409, "stale_attempt");
    ASSERT_EQ((long)(metric(&s, "jobd_reports_fenced_total") - fenced0), 1);
    EXPECT(&s, "POST", "/v1/jobs/987654/heartbeat", "{\"attempt\":1}", 404, "not_found");
    EXPECT(&s, "POST", p, "{}", 400, "invalid_field");
    EXPECT(&s, "POST", p, "{\"attempt\":\"1\"}", 400, "invalid_field");

    /* A retryable failure -> pending again (attempt 1 of 2). */
    snprintf(p, sizeof p, "/v1/jobs/%lld/fail", (long long)id);
    struct resp r;
    snprintf(body, sizeof body,
             "{\"attempt\":1,\"error\":\"boom\",\"retry_in_s\":0,\"lease_token\":\"%s\"}", tok);
    ASSERT_EQ(req(&s, "POST", p, body, &r), 200);
    json_t *j = resp_json(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "last_error")), "boom");
    json_decref(j);
    resp_fini(&r);
    /* The old attempt is fenced now. */
    snprintf(p, sizeof p, "/v1/jobs/%lld/complete", (long long)id);
    EXPECT(&s, "POST", p, "{\"attempt\":1}", 409, "stale_attempt");
    ASSERT_EQ(claim(&s, "{\"worker_id\":\"w2\",\"types\":[\"w\"],\"limit\":1}", &cid, &att), 1);
    ASSERT_EQ(cid, id);
    ASSERT_EQ(att, 2);
    snprintf(body, sizeof body,
             "{\"attempt\":2,\"result\":{\"z\":1,\"a\":[true,null]},\"lease_token\":\"%s\"}", tok);
    ASSERT_EQ(req(&s, "POST", p, body, &r), 200);
    j = resp_json(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "succeeded");
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "result"), "z")), 1);
    ASSERT(json_is_string(json_object_get(j, "finished_at")));
    json_decref(j);
    resp_fini(&r);
    EXPECT(&s, "POST", p, body, 200, NULL); /* a repeat: replayed (docs/API.md) */

    /* A permanent failure -> dead at once; then a manual retry. */
    ASSERT_EQ(claim(&s, "{\"worker_id\":\"w1\",\"types\":[\"w\"],\"limit\":3}", &cid, &att), 1);
    snprintf(p, sizeof p, "/v1/jobs/%lld/fail", (long long)cid);
    snprintf(body, sizeof body,
             "{\"attempt\":%lld,\"error\":\"bad\",\"retryable\":false,\"lease_token\":\"%s\"}",
             (long long)att, tok);
    ASSERT_EQ(req(&s, "POST", p, body, &r), 200);
    j = resp_json(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "dead");
    json_decref(j);
    resp_fini(&r);
    EXPECT(&s, "POST", "/v1/claim", "{\"worker_id\":\"w\"}", 400, "invalid_field");
    EXPECT(&s, "POST", "/v1/claim", "{\"worker_id\":\"w\",\"types\":[\"bad type\"]}", 400,
           "invalid_field");
    EXPECT(&s, "POST", "/v1/claim", "{\"worker_id\":\"w\",\"types\":[\"w\"],\"wait_s\":31}", 400,
           "invalid_field");
    EXPECT(&s, "POST", "/v1/claim", "{\"worker_id\":\"w\",\"types\":[\"w\"],\"limit\":0}", 400,
           "invalid_field");
    ASSERT(metric(&s, "jobd_jobs_finished_total{outcome=\"succeeded\"}") >= 1);
    ASSERT(metric(&s, "jobd_jobs_finished_total{outcome=\"retried\"}") >= 1);
    ASSERT(metric(&s, "jobd_jobs_finished_total{outcome=\"dead\"}") >= 1);
    ASSERT(metric(&s, "jobd_job_lateness_seconds_count{queue=\"default\"}") >= 3);
    ASSERT(metric(&s, "jobd_job_duration_seconds_count{queue=\"default\"}") >= 1);
    srv_stop(&s);
}

BOTH(queues)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    create_job(&s, "{\"type\":\"q\",\"queue\":\"alpha\"}");
    /* PostgreSQL's counts are a cache recounted about once a second (docs/API.md). */
    srv_await_queue_count(&s, "alpha", "pending", 1);
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/queues/alpha/pause", NULL, &r), 200);
    json_t *j = resp_json(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "name")), "alpha");
    ASSERT(json_is_true(json_object_get(j, "paused")));
    ASSERT_EQ(json_integer_value(json_object_get(j, "pending")), 1);
    json_decref(j);
    resp_fini(&r);
    /* A paused queue is not claimed from. */
    ASSERT_EQ(claim(&s, "{\"worker_id\":\"w\",\"types\":[\"q\"],\"limit\":1}", NULL, NULL), 0);
    EXPECT(&s, "POST", "/v1/queues/alpha/resume", NULL, 200, NULL);
    ASSERT_EQ(claim(&s,
                    "{\"worker_id\":\"w\",\"types\":[\"q\"],\"queues\":[\"alpha\"],"
                    "\"limit\":1}",
                    NULL, NULL),
              1);
    /* Pausing a queue with no jobs yet is allowed. */
    EXPECT(&s, "POST", "/v1/queues/empty-one/pause", NULL, 200, NULL);
    EXPECT(&s, "POST", "/v1/queues/Bad.Name/pause", NULL, 400, "invalid_field");
    EXPECT(&s, "GET", "/v1/queues/alpha/pause", NULL, 405, "method_not_allowed");
    srv_await_queue_count(&s, "alpha", "running", 1);
    j = get_json(&s, "/v1/queues");
    json_t *arr = json_object_get(j, "queues");
    bool saw_alpha = false, saw_empty = false;
    size_t i;
    json_t *q;
    json_array_foreach(arr, i, q) {
        const char *name = json_string_value(json_object_get(q, "name"));
        if (strcmp(name, "alpha") == 0) {
            saw_alpha = true;
            ASSERT_EQ(json_integer_value(json_object_get(q, "running")), 1);
            ASSERT(json_is_false(json_object_get(q, "paused")));
            /* its one job runs: nothing is due, so no age (docs/API.md, Queues) */
            ASSERT(json_is_null(json_object_get(q, "oldest_pending_age_s")));
        }
        if (strcmp(name, "empty-one") == 0) {
            saw_empty = true;
            ASSERT(json_is_true(json_object_get(q, "paused")));
        }
    }
    ASSERT(saw_alpha && saw_empty);
    json_decref(j);
    ASSERT_EQ((long)metric(&s, "jobd_queue_jobs{queue=\"alpha\",status=\"running\"}"), 1);
    srv_stop(&s);
}

BOTH(batch)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct resp r;
    ASSERT_EQ(req(&s, "POST", "/v1/jobs/batch",
                  "{\"jobs\":[{\"type\":\"b1\"},{\"type\":\"b2\",\"queue\":\"x\"}]}", &r),
              201);
    json_t *j = resp_json(&r);
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 2);
    ASSERT_STR_EQ(
        json_string_value(json_object_get(json_array_get(json_object_get(j, "jobs"), 1), "type")),
        "b2");
    json_decref(j);
    resp_fini(&r);
    /* All or nothing: a bad second item writes nothing and is named. */
    ASSERT_EQ(req(&s, "POST", "/v1/jobs/batch",
                  "{\"jobs\":[{\"type\":\"ok\"},{\"type\":\"no spaces\"}]}", &r),
              400);
    j = resp_json(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(j, "error"), "field")),
                  "jobs[1].type");
    json_decref(j);
    resp_fini(&r);
    EXPECT(&s, "POST", "/v1/jobs/batch", "{\"jobs\":[{\"type\":\"ok\",\"colour\":1}]}", 400,
           "unknown_field");
    EXPECT(&s, "POST", "/v1/jobs/batch", "{\"jobs\":{}}", 400, "invalid_field");
    EXPECT(&s, "POST", "/v1/jobs/batch", "{\"jobs\":[1]}", 400, "invalid_field");
    j = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 2);
    json_decref(j);
    /* 10,001 jobs -> 413 (the body itself is under 16 MiB). */
    size_t cap = 10001 * 16 + 32, n = 0;
    char *big = malloc(cap);
    n += (size_t)snprintf(big + n, cap - n, "{\"jobs\":[");
    for (int i = 0; i < 10001; i++)
        n += (size_t)snprintf(big + n, cap - n, "%s{\"type\":\"t\"}", i ? "," : "");
    snprintf(big + n, cap - n, "]}");
    EXPECT(&s, "POST", "/v1/jobs/batch", big, 413, "too_large");
    free(big);
    /* A body over 16 MiB -> 413 without being buffered. */
    size_t huge = 16 * 1024 * 1024 + 10;
    big = malloc(huge + 1);
    memset(big, ' ', huge);
    big[huge] = '\0';
    http_req(&s, "POST", "/v1/jobs/batch", big, huge, NULL, &r);
    ASSERT_EQ(r.status, 413);
    resp_fini(&r);
    free(big);
    j = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 2);
    json_decref(j);
    srv_stop(&s);
}

BOTH(tokens)
{
    struct srv s;
    FILE *f = fopen(test_path("tokens"), "w");
    fputs("# API tokens\nsecret-one-0123456789\n\n  # the second\n  secret-two-0123456789  \n", f);
    fclose(f);
    char tokpath[600];
    snprintf(tokpath, sizeof tokpath, "%s", test_path("tokens"));
    const char *extra[] = {"--tokens", tokpath, NULL};
    srv_start(&s, backend, extra);
    EXPECT(&s, "GET", "/v1/jobs", NULL, 401, "unauthorized");
    EXPECT(&s, "GET", "/metrics", NULL, 401, "unauthorized");
    EXPECT(&s, "POST", "/v1/jobs", "{\"type\":\"x\"}", 401, "unauthorized");
    EXPECT(&s, "GET", "/healthz", NULL, 200, NULL);
    struct resp r;
    const char *bad[] = {"Authorization: Bearer secret-one-012345678", NULL};
    http_req(&s, "GET", "/v1/jobs", NULL, 0, bad, &r);
    ASSERT_EQ(r.status, 401);
    resp_fini(&r);
    const char *basic[] = {"Authorization: Basic secret-one-0123456789", NULL};
    http_req(&s, "GET", "/v1/jobs", NULL, 0, basic, &r);
    ASSERT_EQ(r.status, 401);
    resp_fini(&r);
    const char *good[] = {"Authorization: Bearer secret-two-0123456789", NULL};
    http_req(&s, "GET", "/v1/jobs", NULL, 0, good, &r);
    ASSERT_EQ(r.status, 200);
    resp_fini(&r);
    const char *good1[] = {"Authorization: Bearer secret-one-0123456789", NULL};
    http_req(&s, "POST", "/v1/jobs", "{\"type\":\"x\"}", 12, good1, &r);
    ASSERT_EQ(r.status, 201);
    resp_fini(&r);
    srv_stop(&s);
}

struct lp_arg {
    const struct srv *s;
    const char *body;
    size_t n;
    int64_t id;
    int64_t elapsed_ms;
};

static void *
lp_thread(void *a)
{
    struct lp_arg *arg = a;
    int64_t t0 = apitest_now_ms();
    arg->n = claim(arg->s, arg->body, &arg->id, NULL);
    arg->elapsed_ms = apitest_now_ms() - t0;
    return NULL;
}

BOTH(long_poll)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    /* Nothing to claim: answers empty when the wait is over. */
    int64_t t0 = apitest_now_ms();
    ASSERT_EQ(
        claim(&s, "{\"worker_id\":\"w\",\"types\":[\"lp\"],\"limit\":1,\"wait_s\":1}", NULL, NULL),
        0);
    int64_t dt = apitest_now_ms() - t0;
    ASSERT(dt >= 900 && dt < 5000);
    /* Woken by an enqueue: answers long before its 20 s wait is over. */
    struct lp_arg a = {.s = &s,
                       .body = "{\"worker_id\":\"w\",\"types\":[\"lp\"],\"limit\":1,"
                               "\"wait_s\":20}"};
    pthread_t th;
    pthread_create(&th, NULL, lp_thread, &a);
    /* Enqueue only once the claim is parked, so the wake-up is what answers it. */
    int64_t deadline = apitest_now_ms() + 10000;
    while (metric(&s, "jobd_claims_waiting") < 1) {
        ASSERT(apitest_now_ms() < deadline);
        apitest_nap_ms(5);
    }
    int64_t id = create_job(&s, "{\"type\":\"lp\"}");
    pthread_join(th, NULL);
    ASSERT_EQ(a.n, 1);
    ASSERT_EQ(a.id, id);
    ASSERT(a.elapsed_ms < 10000);
    /* A job due in the near future wakes a waiter when it becomes due. */
    create_job(&s, "{\"type\":\"lp2\",\"in\":\"1s\"}");
    t0 = apitest_now_ms();
    ASSERT_EQ(claim(&s, "{\"worker_id\":\"w\",\"types\":[\"lp2\"],\"limit\":1,\"wait_s\":15}", NULL,
                    NULL),
              1);
    dt = apitest_now_ms() - t0;
    ASSERT(dt < 5000);
    /* SIGTERM while a claim is parked: it is answered (empty) and the server exits 0. */
    struct lp_arg b = {.s = &s, .body = "{\"worker_id\":\"w\",\"types\":[\"none\"],\"wait_s\":30}"};
    pthread_create(&th, NULL, lp_thread, &b);
    deadline = apitest_now_ms() + 10000;
    while (metric(&s, "jobd_claims_waiting") < 1) {
        ASSERT(apitest_now_ms() < deadline);
        apitest_nap_ms(5);
    }
    srv_stop(&s);
    pthread_join(th, NULL);
    ASSERT_EQ(b.n, 0);
    ASSERT(b.elapsed_ms < 20000);
}

struct burst_arg {
    const struct srv *s;
    int n;
    int idx;
    int ok;
    int key_created, key_conflict, key_other;
    int mixed;       /* 201s whose job is not this request's (payload, or as read back) */
    int64_t ids[64]; /* the plain jobs' ids, as answered */
};

/*
 * Whether a 201's body is the job this request made: its payload names the
 * thread and the request ({"t":idx,"i":i}), and so does the job read back
 * by its id. An answer mixed up inside a group commit fails this.
 */
static bool
own_job(const struct srv *s, const char *body, int idx, int i, int64_t *id)
{
    json_t *j = json_loads(body, 0, NULL);
    json_t *pl = json_object_get(j, "payload");
    *id = json_integer_value(json_object_get(j, "id"));
    bool ok = json_integer_value(json_object_get(pl, "t")) == idx &&
              json_integer_value(json_object_get(pl, "i")) == i && *id > 0;
    json_decref(j);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)*id);
    json_t *g = ok ? get_json(s, path) : NULL;
    pl = json_object_get(g, "payload");
    ok = ok && json_integer_value(json_object_get(pl, "t")) == idx &&
         json_integer_value(json_object_get(pl, "i")) == i;
    json_decref(g);
    return ok;
}

/* n plain jobs, with one conflicting idempotent request in the middle. */
static void *
burst(void *p)
{
    struct burst_arg *a = p;
    for (int i = 0; i < a->n; i++) {
        struct resp r;
        if (i == a->n / 2) {
            char body[96];
            snprintf(body, sizeof body,
                     "{\"type\":\"gc\",\"idempotency_key\":\"shared\",\"payload\":%d}", a->idx);
            long st = req(a->s, "POST", "/v1/jobs", body, &r);
            a->key_created += st == 201;
            a->key_conflict += st == 409;
            a->key_other += st != 201 && st != 409;
            resp_fini(&r);
        }
        char plain[96];
        snprintf(plain, sizeof plain, "{\"type\":\"gc\",\"payload\":{\"t\":%d,\"i\":%d}}", a->idx,
                 i);
        if (req(a->s, "POST", "/v1/jobs", plain, &r) == 201) {
            a->ok++;
            if (!own_job(a->s, r.body, a->idx, i, &a->ids[i]))
                a->mixed++;
        }
        resp_fini(&r);
    }
    return NULL;
}

BOTH(group_commit)
{
    struct srv s;
    const char *extra[] = {"--threads", "8", NULL};
    srv_start(&s, backend, extra);
    enum { T = 8, N = 40 };
    struct burst_arg a[T];
    pthread_t th[T];
    for (int i = 0; i < T; i++) {
        a[i] = (struct burst_arg){.s = &s, .n = N, .idx = i};
        pthread_create(&th[i], NULL, burst, &a[i]);
    }
    int ok = 0, created = 0, conflict = 0, other = 0, mixed = 0;
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        mixed += a[i].mixed;
        ok += a[i].ok;
        created += a[i].key_created;
        conflict += a[i].key_conflict;
        other += a[i].key_other;
    }
    /* Every plain job committed, whatever batch its neighbours' conflicts fell into. */
    ASSERT_EQ(ok, T * N);
    ASSERT_EQ(mixed, 0);            /* each answer is its own request's job */
    for (int i = 0; i < T * N; i++) /* and no two answers share an id */
        for (int k = i + 1; k < T * N; k++)
            ASSERT(a[i / N].ids[i % N] != a[k / N].ids[k % N]);
    ASSERT_EQ(created, 1);
    ASSERT_EQ(conflict, T - 1);
    ASSERT_EQ(other, 0);
    ASSERT_EQ((long)metric(&s, "jobd_jobs_enqueued_total"), T * N + 1);
    double commits = metric(&s, "jobd_enqueue_commits_total");
    fprintf(stderr, "%d enqueues in %.0f commits\n", T * N + T, commits);
    ASSERT(commits >= 1 && commits <= T * N + T);
    json_t *j = get_json(&s, "/v1/jobs?limit=1000&type=gc");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), T * N + 1);
    json_decref(j);
    srv_stop(&s);
}

BOTH(health_metrics_routes)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    struct resp r;
    ASSERT_EQ(req(&s, "GET", "/healthz", NULL, &r), 200);
    ASSERT_STR_EQ(r.body, "ok\n");
    resp_fini(&r);
    ASSERT_EQ(req(&s, "GET", "/metrics", NULL, &r), 200);
    const char *names[] = {"jobd_jobs_enqueued_total",
                           "jobd_jobs_finished_total{outcome=",
                           "jobd_jobs_reaped_total",
                           "jobd_reports_fenced_total",
                           "# TYPE jobd_queue_jobs gauge",
                           "jobd_job_lateness_seconds_bucket",
                           "# TYPE jobd_job_duration_seconds histogram"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strstr(r.body, names[i]) == NULL)
            TEST_FAIL("/metrics lacks %s", names[i]);
    resp_fini(&r);
    EXPECT(&s, "GET", "/v1/nothing", NULL, 404, "not_found");
    EXPECT(&s, "GET", "/", NULL, 404, "not_found");
    EXPECT(&s, "PUT", "/v1/jobs/1", NULL, 405, "method_not_allowed");
    EXPECT(&s, "PUT", "/v1/jobs", NULL, 405, "method_not_allowed");
    EXPECT(&s, "GET", "/v1/claim", NULL, 405, "method_not_allowed");
    EXPECT(&s, "POST", "/healthz", NULL, 405, "method_not_allowed");
    srv_stop(&s);
}

/* The store goes away under a running server: 503, nothing written; back: 200. */
TEST(pg_store_unreachable)
{
    if (!apitest_backend_ok("pg"))
        return;
    struct srv s;
    srv_start(&s, "pg", NULL);
    create_job(&s, "{\"type\":\"before\"}");
    const char *slash = strrchr(s.db, '/');
    char dbname[128];
    snprintf(dbname, sizeof dbname, "%.*s", (int)strcspn(slash + 1, "?"), slash + 1);
    PGconn *c = PQconnectdb(getenv("JOBD_TEST_PG_URL"));
    char sql[512];
    snprintf(sql, sizeof sql, "ALTER DATABASE %s ALLOW_CONNECTIONS false", dbname);
    PQclear(PQexec(c, sql));
    snprintf(sql, sizeof sql,
             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
             "WHERE datname = '%s'",
             dbname);
    PQclear(PQexec(c, sql));
    EXPECT(&s, "POST", "/v1/jobs", "{\"type\":\"during\"}", 503, "store_unavailable");
    EXPECT(&s, "GET", "/healthz", NULL, 503, NULL);
    EXPECT(&s, "GET", "/v1/jobs", NULL, 503, "store_unavailable");
    snprintf(sql, sizeof sql, "ALTER DATABASE %s ALLOW_CONNECTIONS true", dbname);
    PQclear(PQexec(c, sql));
    PQfinish(c);
    EXPECT(&s, "GET", "/healthz", NULL, 200, NULL);
    json_t *j = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 1);
    json_decref(j);
    create_job(&s, "{\"type\":\"after\"}");
    srv_stop(&s);
}

TEST(server_flags)
{
    /* Non-loopback without tokens is refused (usage error), --insecure allows it. */
    const char *bin = getenv("JOBD_BIN");
    char db[700];
    snprintf(db, sizeof db, "sqlite:%s", test_path("f.db"));
    char *argv1[] = {(char *)bin, "server", "--db", db, "--listen", "0.0.0.0:0", NULL};
    pid_t pid = apitest_spawn(argv1, test_path("f1.log"), NULL);
    int st;
    waitpid(pid, &st, 0);
    ASSERT(WIFEXITED(st));
    ASSERT_EQ(WEXITSTATUS(st), 2);
    char *argv2[] = {(char *)bin, "server", "--bogus", NULL};
    pid = apitest_spawn(argv2, test_path("f2.log"), NULL);
    waitpid(pid, &st, 0);
    ASSERT_EQ(WEXITSTATUS(st), 2);
    char *argv3[] = {(char *)bin, "server", "--help", NULL};
    pid = apitest_spawn(argv3, test_path("f3.log"), test_path("f3.out"));
    waitpid(pid, &st, 0);
    ASSERT_EQ(WEXITSTATUS(st), 0);
    /* A store that cannot be reached: exit 3. */
    char *argv4[] = {
        (char *)bin, "server",      "--db", "postgresql://127.0.0.1:1/none?connect_timeout=2",
        "--listen",  "127.0.0.1:0", NULL};
    pid = apitest_spawn(argv4, test_path("f4.log"), NULL);
    waitpid(pid, &st, 0);
    ASSERT_EQ(WEXITSTATUS(st), 3);
    char *argv5[] = {(char *)bin, "server",    "--db",       db,
                     "--listen",  "0.0.0.0:0", "--insecure", NULL};
    pid = apitest_spawn(argv5, test_path("f5.log"), NULL);
    int64_t deadline = apitest_now_ms() + 20000;
    bool up = false;
    while (!up && apitest_now_ms() < deadline) {
        FILE *f = fopen(test_path("f5.log"), "r");
        char line[512];
        while (f && fgets(line, sizeof line, f))
            up = up || strstr(line, "listening on http://0.0.0.0:") != NULL;
        if (f)
            fclose(f);
        if (!up)
            apitest_nap_ms(10);
    }
    ASSERT(up);
    kill(pid, SIGTERM);
    waitpid(pid, &st, 0);
    ASSERT(WIFEXITED(st));
    ASSERT_EQ(WEXITSTATUS(st), 0);
}
