/*
 * test_api_departed.c — a long-poll claim whose client has gone, through a
 * real `jobd server` on both stores: the client parks a claim over a raw
 * socket and closes it before any job arrives. The job that arrives next
 * must not be claimed for it (no lease held for a departed client, no
 * attempt burnt): it stays pending with attempt 0 and the next live claim
 * gets it as attempt 1.
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
    const char *body = "{\"worker_id\":\"gone\",\"types\":[\"dp\"],\"limit\":1,\"wait_s\":20}";
    char request[512];
    snprintf(request, sizeof request, "POST /v1/claim HTTP/1.1\r\nHost: x\r\n"
             "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", strlen(body),
             body);
    int fd = raw_connect(NULL, s.port);
    ASSERT(fd >= 0);
    ASSERT(raw_send(fd, request, strlen(request)));
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
    ASSERT_EQ(req(&s, "POST", "/v1/claim",
                  "{\"worker_id\":\"here\",\"types\":[\"dp\"],\"limit\":1}", &r), 200);
    j = resp_json(&r);
    json_t *c = json_array_get(json_object_get(j, "jobs"), 0);
    ASSERT(c != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(c, "id")), id);
    ASSERT_EQ(json_integer_value(json_object_get(c, "attempt")), 1);
    json_decref(j);
    resp_fini(&r);
    srv_stop(&s);
}
