/*
 * test_api_lease.c — lease tokens of remote workers (issue 27 item 4;
 * docs/API.md, Remote workers), through a real `jobd server` on both
 * stores. A worker token could forge another worker's report: reports were
 * fenced by `attempt` only, which any token reads from GET /v1/jobs/{id}.
 * Now each job a claim hands out carries a random lease_token (kept hashed)
 * that its heartbeat, complete, fail and release must carry: without it,
 * or with another job's, the report changes nothing and is 409. And a
 * claim's or heartbeat's lease_s is cut to --max-lease.
 */
#include <sys/stat.h>

#include "apitest.h"

/* Claims one job of type for worker w: its id and lease token. */
static int64_t
claim_one(const struct srv *s, const char *type, char tok[64], json_t **job)
{
    char body[160];
    snprintf(body, sizeof body, "{\"worker_id\":\"w\",\"types\":[\"%s\"],\"lease_s\":100}", type);
    struct resp r;
    ASSERT_EQ(req(s, "POST", "/v1/claim", body, &r), 200);
    json_t *v = resp_json(&r);
    resp_fini(&r);
    json_t *o = json_array_get(json_object_get(v, "jobs"), 0);
    ASSERT(o != NULL);
    const char *t = json_string_value(json_object_get(o, "lease_token"));
    ASSERT(t != NULL && strlen(t) == 32);
    snprintf(tok, 64, "%s", t);
    int64_t id = json_integer_value(json_object_get(o, "id"));
    if (job != NULL)
        *job = json_incref(o);
    json_decref(v);
    return id;
}

static void
expect_status(const struct srv *s, int64_t id, const char *status, int64_t attempt)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    json_t *j = get_json(s, path);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), status);
    ASSERT_EQ(json_integer_value(json_object_get(j, "attempt")), attempt);
    json_decref(j);
}

BOTH(forged_reports_are_refused)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t a = create_job(&s, "{\"type\":\"lt\"}");
    int64_t b = create_job(&s, "{\"type\":\"lt\"}");
    char ta[64], tb[64];
    ASSERT_EQ(claim_one(&s, "lt", ta, NULL), a);
    ASSERT_EQ(claim_one(&s, "lt", tb, NULL), b);
    ASSERT(strcmp(ta, tb) != 0);
    /* What a forger knows: the attempt, from GET /v1/jobs/{id}. */
    char path[96], body[160];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)a);
    json_t *j = get_json(&s, path);
    int64_t att = json_integer_value(json_object_get(j, "attempt"));
    json_decref(j);
    const char *what[] = {"heartbeat", "complete", "fail", "release"};
    const char *extra[] = {"", "", ",\"error\":\"forged\",\"retryable\":false", ""};
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "/v1/jobs/%lld/%s", (long long)a, what[k]);
        snprintf(body, sizeof body, "{\"attempt\":%lld,\"lease_token\":null%s}", (long long)att,
                 extra[k]);
        EXPECT(&s, "POST", path, body, 409, "stale_attempt");
        snprintf(body, sizeof body, "{\"attempt\":%lld,\"lease_token\":\"%s\"%s}", (long long)att,
                 tb, extra[k]); /* another job's token */
        EXPECT(&s, "POST", path, body, 409, "stale_attempt");
        snprintf(body, sizeof body, "{\"attempt\":%lld,\"lease_token\":\"%s\"%s}", (long long)att,
                 "0123456789abcdef0123456789abcdef", extra[k]);
        EXPECT(&s, "POST", path, body, 409, "stale_attempt");
        expect_status(&s, a, "running", att); /* nothing changed */
    }
    /* The holder's own reports go through. */
    snprintf(path, sizeof path, "/v1/jobs/%lld/heartbeat", (long long)a);
    snprintf(body, sizeof body, "{\"attempt\":%lld,\"lease_token\":\"%s\"}", (long long)att, ta);
    EXPECT(&s, "POST", path, body, 200, NULL);
    snprintf(path, sizeof path, "/v1/jobs/%lld/complete", (long long)a);
    EXPECT(&s, "POST", path, body, 200, NULL);
    expect_status(&s, a, "succeeded", att);
    /* A token is its attempt's: after a release, the next claim's is another. */
    snprintf(path, sizeof path, "/v1/jobs/%lld/release", (long long)b);
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\"}", tb);
    EXPECT(&s, "POST", path, body, 200, NULL);
    char tb2[64];
    ASSERT_EQ(claim_one(&s, "lt", tb2, NULL), b);
    ASSERT(strcmp(tb, tb2) != 0);
    snprintf(path, sizeof path, "/v1/jobs/%lld/complete", (long long)b);
    snprintf(body, sizeof body, "{\"attempt\":2,\"lease_token\":\"%s\"}", tb);
    EXPECT(&s, "POST", path, body, 409, "stale_attempt");
    snprintf(body, sizeof body, "{\"attempt\":2,\"lease_token\":\"%s\"}", tb2);
    EXPECT(&s, "POST", path, body, 200, NULL);
    srv_stop(&s);
}

BOTH(lease_is_capped)
{
    static const char *const extra[] = {"--max-lease", "5s", NULL};
    struct srv s;
    srv_start(&s, backend, extra);
    int64_t id = create_job(&s, "{\"type\":\"cap\"}");
    char tok[64];
    json_t *o = NULL;
    ASSERT_EQ(claim_one(&s, "cap", tok, &o), id); /* lease_s 100 */
    int64_t left = json_integer_value(json_object_get(o, "lease_remaining_ms"));
    json_decref(o);
    if (left <= 0 || left > 5000)
        TEST_FAIL("a claim for lease_s 100 under --max-lease 5s left %lld ms", (long long)left);
    /* A heartbeat's lease_s is cut too: the lease runs out within the cap. */
    char path[96], body[160];
    snprintf(path, sizeof path, "/v1/jobs/%lld/heartbeat", (long long)id);
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_s\":3600,\"lease_token\":\"%s\"}", tok);
    EXPECT(&s, "POST", path, body, 200, NULL);
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    json_t *j = get_json(&s, path);
    const char *exp = json_string_value(json_object_get(j, "lease_expires_at"));
    ASSERT(exp != NULL);
    struct tm tm = {0};
    int ms = 0;
    ASSERT(sscanf(exp, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &ms) == 7);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    double until = difftime(timegm(&tm), time(NULL));
    json_decref(j);
    if (until > 7)
        TEST_FAIL("a heartbeat for lease_s 3600 under --max-lease 5s: the lease ends in %.0f s",
                  until);
    srv_stop(&s);
}


#define ADMIN_TOKEN "lease-admin-0123456789"
#define QA_TOKEN "lease-worker-qa-0123456789"

/* One request as token tok; returns the status, keeps r. */
static long
as(const struct srv *s, const char *tok, const char *method, const char *path, const char *body,
   struct resp *r)
{
    char hdr[128];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", tok);
    const char *hdrs[] = {hdr, NULL};
    http_req(s, method, path, body, body ? strlen(body) : 0, hdrs, r);
    return r->status;
}

/* Enqueues a job of type qt in queue q as the admin; its id. */
static int64_t
job_in(const struct srv *s, const char *q)
{
    char body[96];
    snprintf(body, sizeof body, "{\"type\":\"qt\",\"queue\":\"%s\"}", q);
    struct resp r;
    ASSERT_EQ(as(s, ADMIN_TOKEN, "POST", "/v1/jobs", body, &r), 201);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    int64_t id = json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    return id;
}

/* Job id's status, read as the admin. */
static void
expect_status_as(const struct srv *s, int64_t id, const char *status)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    struct resp r;
    ASSERT_EQ(as(s, ADMIN_TOKEN, "GET", path, NULL, &r), 200);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), status);
    json_decref(j);
}

/* A token limited to queues (`worker queues=qa`) claims and reports there only. */
BOTH(queue_limited_token)
{
    FILE *f = fopen(test_path("tokens"), "w");
    ASSERT(f != NULL);
    fprintf(f, "%s\n%s worker queues=qa,qc\n", ADMIN_TOKEN, QA_TOKEN);
    fclose(f);
    chmod(test_path("tokens"), 0600);
    char tokpath[600];
    snprintf(tokpath, sizeof tokpath, "%s", test_path("tokens"));
    const char *extra[] = {"--tokens", tokpath, NULL};
    struct srv s;
    srv_start(&s, backend, extra);
    int64_t b = job_in(&s, "qb");
    struct resp r;
    /* Naming another queue: 403; naming none: its queues only. */
    ASSERT_EQ(as(&s, QA_TOKEN, "POST", "/v1/claim",
                 "{\"worker_id\":\"w\",\"types\":[\"qt\"],\"queues\":[\"qa\",\"qb\"]}", &r),
              403);
    resp_fini(&r);
    ASSERT_EQ(as(&s, QA_TOKEN, "POST", "/v1/claim", "{\"worker_id\":\"w\",\"types\":[\"qt\"]}", &r),
              200);
    json_t *j = resp_json(&r);
    resp_fini(&r);
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 0); /* qb's job is not for it */
    json_decref(j);
    int64_t a = job_in(&s, "qa");
    ASSERT_EQ(as(&s, QA_TOKEN, "POST", "/v1/claim",
                 "{\"worker_id\":\"w\",\"types\":[\"qt\"],\"limit\":5}", &r),
              200);
    j = resp_json(&r);
    resp_fini(&r);
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 1);
    json_t *o = json_array_get(json_object_get(j, "jobs"), 0);
    ASSERT_EQ(json_integer_value(json_object_get(o, "id")), a);
    char body[160], path[96];
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\"}",
             json_string_value(json_object_get(o, "lease_token")));
    json_decref(j);
    snprintf(path, sizeof path, "/v1/jobs/%lld/complete", (long long)a);
    ASSERT_EQ(as(&s, QA_TOKEN, "POST", path, body, &r), 200);
    resp_fini(&r);
    /* A job of another queue, claimed by a token of every queue: the
     * limited token cannot report on it, even holding its lease token. */
    ASSERT_EQ(as(&s, ADMIN_TOKEN, "POST", "/v1/claim",
                 "{\"worker_id\":\"w2\",\"types\":[\"qt\"],\"queues\":[\"qb\"]}", &r),
              200);
    j = resp_json(&r);
    resp_fini(&r);
    o = json_array_get(json_object_get(j, "jobs"), 0);
    ASSERT_EQ(json_integer_value(json_object_get(o, "id")), b);
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\"}",
             json_string_value(json_object_get(o, "lease_token")));
    json_decref(j);
    snprintf(path, sizeof path, "/v1/jobs/%lld/heartbeat", (long long)b);
    ASSERT_EQ(as(&s, QA_TOKEN, "POST", path, body, &r), 403);
    resp_fini(&r);
    snprintf(path, sizeof path, "/v1/jobs/%lld/complete", (long long)b);
    ASSERT_EQ(as(&s, QA_TOKEN, "POST", path, body, &r), 403);
    resp_fini(&r);
    expect_status_as(&s, b, "running");
    ASSERT_EQ(as(&s, ADMIN_TOKEN, "POST", path, body, &r), 200);
    resp_fini(&r);
    srv_stop(&s);
}

/*
 * POSTs a report; wants status, the replay header when replayed (and not
 * otherwise), and the job (200) or stale_attempt (409) in the answer.
 */
static void
report_as(const struct srv *s, int64_t id, const char *what, const char *body, long status,
          bool replay)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld/%s", (long long)id, what);
    struct resp r;
    long got = req(s, "POST", path, body, &r);
    if (got != status)
        TEST_FAIL("POST %s %s: status %ld, want %ld: %.300s", path, body, got, status, r.body);
    bool has = strstr(r.headers, "Idempotent-Replayed: true") != NULL;
    if (has != replay)
        TEST_FAIL("POST %s %s: Idempotent-Replayed %s", path, body, has ? "sent" : "missing");
    if (status == 200) {
        json_t *j = resp_json(&r);
        ASSERT_EQ(json_integer_value(json_object_get(j, "id")), id);
        json_decref(j);
    } else {
        char c[64];
        ASSERT_STR_EQ(err_code(&r, c, sizeof c), "stale_attempt");
    }
    resp_fini(&r);
}

/*
 * A report repeated after it landed (its answer lost to a network error)
 * answers 200 with Idempotent-Replayed: true; any other report of a
 * finished attempt stays 409 (docs/API.md, Repeated reports).
 */
BOTH(repeated_reports_replay)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t a = create_job(&s, "{\"type\":\"rp\"}");
    char ta[64], body[200], other[200];
    ASSERT_EQ(claim_one(&s, "rp", ta, NULL), a);
    snprintf(body, sizeof body, "{\"attempt\":1,\"lease_token\":\"%s\",\"result\":{\"n\":1}}", ta);
    report_as(&s, a, "complete", body, 200, false);
    report_as(&s, a, "complete", body, 200, true);
    report_as(&s, a, "complete", body, 200, true);
    expect_status(&s, a, "succeeded", 1);
    /* Another report, attempt or token: 409 as before. */
    snprintf(other, sizeof other, "{\"attempt\":1,\"lease_token\":\"%s\",\"error\":\"x\"}", ta);
    report_as(&s, a, "fail", other, 409, false);
    snprintf(other, sizeof other, "{\"attempt\":2,\"lease_token\":\"%s\"}", ta);
    report_as(&s, a, "complete", other, 409, false);
    report_as(&s, a, "complete", "{\"attempt\":1,\"lease_token\":null}", 409, false);
    report_as(&s, a, "complete",
              "{\"attempt\":1,\"lease_token\":\"0123456789abcdef0123456789abcdef\"}", 409, false);
    snprintf(other, sizeof other, "{\"attempt\":1,\"lease_token\":\"%s\"}", ta);
    report_as(&s, a, "heartbeat", other, 409, false);

    /* A failure: repeated, it answers the job as it is now. */
    int64_t b = create_job(&s, "{\"type\":\"rp\",\"max_attempts\":2}");
    char tb[64], tb2[64];
    ASSERT_EQ(claim_one(&s, "rp", tb, NULL), b);
    snprintf(body, sizeof body,
             "{\"attempt\":1,\"lease_token\":\"%s\",\"error\":\"boom\",\"retry_in_s\":0}", tb);
    report_as(&s, b, "fail", body, 200, false);
    report_as(&s, b, "fail", body, 200, true);
    expect_status(&s, b, "pending", 1);
    snprintf(other, sizeof other, "{\"attempt\":1,\"lease_token\":\"%s\"}", tb);
    report_as(&s, b, "complete", other, 409, false);
    /* The next attempt runs; the first's repeat is still known, and changes nothing. */
    ASSERT_EQ(claim_one(&s, "rp", tb2, NULL), b);
    report_as(&s, b, "fail", body, 200, true);
    expect_status(&s, b, "running", 2);
    snprintf(other, sizeof other, "{\"attempt\":2,\"lease_token\":\"%s\",\"error\":\"fatal\"}",
             tb2);
    report_as(&s, b, "fail", other, 200, false);
    report_as(&s, b, "fail", other, 200, true);
    expect_status(&s, b, "dead", 2);
    srv_stop(&s);
}
