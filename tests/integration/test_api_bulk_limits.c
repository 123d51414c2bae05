/*
 * test_api_bulk_limits.c — what one bulk action may cost the server (issue
 * 27, item 8), through the real binary: with --max-bulk 1 a second bulk
 * action while one runs is 429 with Retry-After, and an action whose client
 * went away stops after the batch under way instead of running to its end
 * (its place is then free again).
 */
#include "apitest.h"
#include "rawhttp.h"

#define BIG_JOBS 50000

/* A bulk action that matches nothing: its status says whether a place was free. */
static long
quick_bulk(const struct srv *s, struct resp *r)
{
    return req(s, "POST", "/v1/jobs/bulk", "{\"action\":\"retry\",\"filter\":{\"queue\":\"none\"}}",
               r);
}

static int64_t
cancelled_in_big(const struct srv *s)
{
    json_t *o = get_json(s, "/v1/queues");
    int64_t n = -1;
    size_t i;
    json_t *q;
    json_array_foreach(json_object_get(o, "queues"), i, q) {
        if (strcmp(json_string_value(json_object_get(q, "name")), "big") == 0)
            n = json_integer_value(json_object_get(q, "cancelled"));
    }
    json_decref(o);
    return n;
}

TEST(second_bulk_is_429_and_a_gone_client_stops_its_action)
{
    struct srv s;
    const char *extra[] = {"--max-bulk", "1", NULL};
    srv_start(&s, "sqlite", extra);
    srv_sqlite_fill(&s, "big", BIG_JOBS);
    /* the long action, from a client that does not read its answer yet */
    static const char body[] = "{\"action\":\"cancel\",\"filter\":{\"queue\":\"big\"},"
                               "\"limit\":100000}";
    char request[512];
    int len = snprintf(request, sizeof request,
                       "POST /v1/jobs/bulk HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                       strlen(body), body);
    int fd = raw_connect(NULL, s.port);
    ASSERT(fd >= 0);
    ASSERT(raw_send(fd, request, (size_t)len));
    /*
     * Wait until it runs (its first batches are counted) before asking for
     * a second place: a bulk sent earlier could take the only place first
     * and leave the long one refused, a race the loaded machine lost.
     */
    int64_t deadline = apitest_now_ms() + 30000;
    while (cancelled_in_big(&s) <= 0) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the long bulk action never started");
        apitest_nap_ms(2);
    }
    /* while it runs, another is refused with Retry-After */
    struct resp r;
    long st = quick_bulk(&s, &r);
    if (st != 429)
        TEST_FAIL("no 429 while a bulk action ran: %ld (%lld of %d cancelled)", st,
                  (long long)cancelled_in_big(&s), BIG_JOBS);
    char code[64];
    ASSERT_STR_EQ(err_code(&r, code, sizeof code), "too_many_bulk");
    ASSERT(strstr(r.headers, "Retry-After: 5") != NULL);
    resp_fini(&r);
    /* its client goes: the action stops, and its place is free again */
    close(fd);
    deadline = apitest_now_ms() + 30000;
    for (;;) {
        st = quick_bulk(&s, &r);
        resp_fini(&r);
        if (st == 200)
            break;
        ASSERT_EQ(st, 429);
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the bulk action of a gone client kept its place");
        apitest_nap_ms(5);
    }
    int64_t cancelled = cancelled_in_big(&s);
    if (cancelled >= BIG_JOBS)
        TEST_FAIL("the action ran to its end (%lld cancelled) after its client went",
                  (long long)cancelled);
    srv_stop(&s);
}
