/*
 * test_api_departed.c — a long-poll claim whose client has gone, through a
 * real `jobd server` on both stores: the client parks a claim over a raw
 * socket and closes it before any job arrives. The job that arrives next
 * must not be claimed for it (no lease held for a departed client, no
 * attempt burnt): it stays pending with attempt 0 and the next live claim
 * gets it as attempt 1. Also POST /v1/jobs/{id}/release (an attempt given
 * back unused), a claim answer whose client closed before it went out, and
 * one its client never read (the connection reset after it arrived).
 */
#include "apitest.h"
#include "rawhttp.h"

static json_t *
job_of(const struct srv *s, int64_t id)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)id);
    return get_json(s, path);
}

BOTH(departed_long_poll_claims_nothing)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int fd = raw_post_json(s.port, "/v1/claim",
                           "{\"worker_id\":\"gone\",\"types\":[\"dp\"],\"limit\":1,\"wait_s\":20}");
    ASSERT(fd >= 0);
    srv_await_metric(&s, "jobd_claims_waiting", 1);
    close(fd);
    apitest_nap_ms(50);
    int64_t id = create_job(&s, "{\"type\":\"dp\"}");
    /* The parked claim is answered (to nobody) once the job's wake-up is seen. */
    int64_t deadline = apitest_now_ms() + 10000;
    while (srv_metric(&s, "jobd_claims_waiting") > 0) {
        ASSERT(apitest_now_ms() < deadline);
        apitest_nap_ms(5);
    }
    json_t *j = job_of(&s, id);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
    ASSERT_EQ(json_integer_value(json_object_get(j, "attempt")), 0);
    ASSERT(json_is_null(json_object_get(j, "worker_id")));
    json_decref(j);
    /* A live claim gets it, as its first attempt. */
    struct resp r;
    ASSERT_EQ(
        req(&s, "POST", "/v1/claim", "{\"worker_id\":\"here\",\"types\":[\"dp\"],\"limit\":1}", &r),
        200);
    j = resp_json(&r);
    json_t *c = json_array_get(json_object_get(j, "jobs"), 0);
    ASSERT(c != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(c, "id")), id);
    ASSERT_EQ(json_integer_value(json_object_get(c, "attempt")), 1);
    json_decref(j);
    resp_fini(&r);
    srv_stop(&s);
}

/* POSTs {"attempt": attempt} to /v1/jobs/ID/VERB; returns the status, job in *out. */
static long
report(const struct srv *s, int64_t id, const char *verb, const char *body, json_t **out)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld/%s", (long long)id, verb);
    struct resp r;
    long st = req(s, "POST", path, body, &r);
    if (out != NULL)
        *out = st == 200 ? resp_json(&r) : NULL;
    resp_fini(&r);
    return st;
}

static int64_t
claim_one(const struct srv *s, const char *type)
{
    char body[128];
    snprintf(body, sizeof body, "{\"worker_id\":\"w\",\"types\":[\"%s\"],\"limit\":1}", type);
    struct resp r;
    ASSERT_EQ(req(s, "POST", "/v1/claim", body, &r), 200);
    json_t *j = resp_json(&r);
    json_t *c = json_array_get(json_object_get(j, "jobs"), 0);
    int64_t attempt = c ? json_integer_value(json_object_get(c, "attempt")) : 0;
    json_decref(j);
    resp_fini(&r);
    return attempt;
}

BOTH(release_gives_the_attempt_back)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t id = create_job(&s, "{\"type\":\"rl\",\"max_attempts\":2}");
    ASSERT_EQ(claim_one(&s, "rl"), 1);
    json_t *j = NULL;
    ASSERT_EQ(report(&s, id, "release", "{\"attempt\":1}", &j), 200);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
    ASSERT(json_is_null(json_object_get(j, "worker_id")));
    json_decref(j);
    ASSERT_EQ(report(&s, id, "release", "{\"attempt\":1}", NULL), 409);
    ASSERT_EQ(report(&s, 999999, "release", "{\"attempt\":1}", NULL), 404);
    ASSERT_EQ(report(&s, id, "release", "{}", NULL), 400);
    /* The fencing token still grows, but the released attempt was not consumed:
     * after one real failure of two allowed, the job is pending again, not dead. */
    ASSERT_EQ(claim_one(&s, "rl"), 2);
    ASSERT_EQ(report(&s, id, "fail", "{\"attempt\":2,\"error\":\"x\",\"retry_in_s\":0}", &j), 200);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "pending");
    json_decref(j);
    srv_stop(&s);
}

BOTH(claim_answer_to_a_closed_client_is_given_back)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t id = create_job(&s, "{\"type\":\"cl\",\"max_attempts\":1}");
    /* The request and the client's close arrive together. */
    int fd = raw_post_json(s.port, "/v1/claim",
                           "{\"worker_id\":\"gone\",\"types\":[\"cl\"],\"limit\":1}");
    ASSERT(fd >= 0);
    close(fd);
    /* Whenever the server sees it, the job ends up pending and unconsumed (a
     * loaded machine may take a while to hand it back: up to 10 s). It is
     * pending before the claim too: first wait for the claim to have run
     * (its worker is known once it has), not for a fixed while. */
    int64_t deadline = apitest_now_ms() + 30000;
    for (;;) {
        json_t *w = get_json(&s, "/v1/workers");
        json_t *list = json_object_get(w, "workers");
        bool seen = false;
        for (size_t i = 0; i < json_array_size(list); i++)
            seen = seen || strcmp(json_string_value(json_object_get(json_array_get(list, i), "id")),
                                  "gone") == 0;
        json_decref(w);
        if (seen)
            break;
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the claim of the closed client never ran");
        apitest_nap_ms(20);
    }
    deadline = apitest_now_ms() + 10000;
    for (;;) {
        json_t *j = job_of(&s, id);
        bool back = strcmp(json_string_value(json_object_get(j, "status")), "pending") == 0 &&
                    json_is_null(json_object_get(j, "worker_id"));
        json_decref(j);
        if (back)
            break;
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the job claimed for a closed client was not given back");
        apitest_nap_ms(50);
    }
    /* max_attempts 1 and still runnable: a live claim gets it and can succeed. */
    int64_t att = claim_one(&s, "cl");
    ASSERT(att >= 1);
    char done[64];
    snprintf(done, sizeof done, "{\"attempt\":%lld}", (long long)att);
    ASSERT_EQ(report(&s, id, "complete", done, NULL), 200);
    srv_stop(&s);
}

/* Sends a claim for type on a raw connection; returns the socket. */
static int
raw_claim(const struct srv *s, const char *type)
{
    char body[160];
    snprintf(body, sizeof body, "{\"worker_id\":\"raw\",\"types\":[\"%s\"],\"limit\":1}", type);
    int fd = raw_post_json(s->port, "/v1/claim", body);
    ASSERT(fd >= 0);
    return fd;
}

/* Waits up to 10 s for job id to have status (and, if pending, no worker). */
static bool
job_becomes(const struct srv *s, int64_t id, const char *status)
{
    for (int64_t deadline = apitest_now_ms() + 10000; apitest_now_ms() < deadline;) {
        json_t *j = job_of(s, id);
        bool is = strcmp(json_string_value(json_object_get(j, "status")), status) == 0;
        json_decref(j);
        if (is)
            return true;
        apitest_nap_ms(50);
    }
    return false;
}

/*
 * The deterministic half of the case above: the answer surely reached the
 * client's socket (the job is running), and the client closes without
 * reading it, which resets the connection. The server takes the reset for
 * an answer never read and gives the job back, attempt not counted. A
 * client that read its answer and then closed keeps its job.
 */
BOTH(claim_answer_left_unread_is_given_back)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t id = create_job(&s, "{\"type\":\"ur\",\"max_attempts\":1}");
    int fd = raw_claim(&s, "ur");
    if (!job_becomes(&s, id, "running"))
        TEST_FAIL("the raw claim did not take job %lld", (long long)id);
    apitest_nap_ms(200); /* the answer is in our socket, unread */
    close(fd);
    if (!job_becomes(&s, id, "pending"))
        TEST_FAIL("the unread claim answer's job was not given back");
    /* Read, then closed: the job stays with that client. */
    int64_t kept = create_job(&s, "{\"type\":\"rd\"}");
    fd = raw_claim(&s, "rd");
    char buf[4096];
    bool closed = false;
    raw_read(fd, buf, sizeof buf, 10000, "\"jobs\"", &closed);
    ASSERT(strstr(buf, "\"jobs\"") != NULL);
    raw_read(fd, buf, sizeof buf, 200, NULL, &closed); /* the rest of the body, if any */
    close(fd);
    apitest_nap_ms(500);
    json_t *j = job_of(&s, kept);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "status")), "running");
    json_decref(j);
    /* The given-back job: max_attempts 1 and still runnable. */
    int64_t att = claim_one(&s, "ur");
    ASSERT(att >= 2);
    char done[64];
    snprintf(done, sizeof done, "{\"attempt\":%lld}", (long long)att);
    ASSERT_EQ(report(&s, id, "complete", done, NULL), 200);
    srv_stop(&s);
}
