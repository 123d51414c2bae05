/*
 * test_api_framing.c — request smuggling through ambiguous framing, over
 * raw sockets to a real `jobd server` (curl will not send these): two
 * Content-Length headers, Content-Length with Transfer-Encoding: chunked,
 * or a Content-Length that is not a plain number. Each is refused with
 * 400 bad_framing and the connection is closed, and nothing is enqueued —
 * neither the announced body nor what a proxy might read as a second request.
 */
#include "apitest.h"
#include "rawhttp.h"

static void
expect_refused(const struct srv *s, const char *request, const char *code)
{
    char buf[4096];
    raw_exchange(NULL, s->port, request, buf, sizeof buf, 5000);
    if (strncmp(buf, "HTTP/1.1 400", 12) != 0 || (code && strstr(buf, code) == NULL))
        TEST_FAIL("want 400 bad_framing for\n%s\ngot\n%s", request, buf);
    if (strstr(buf, "HTTP/1.1 201") != NULL)
        TEST_FAIL("a smuggled request was served:\n%s", buf);
}

TEST(ambiguous_framing_refused)
{
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    const char *job = "{\"type\":\"smuggled\"}";
    char r[1024];
    /* Two conflicting lengths: 19 covers the job, 0 makes it a second request. */
    snprintf(r, sizeof r,
             "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             "Content-Length: 0\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(job), job);
    expect_refused(&s, r, "bad_framing");
    /* Equal duplicates are refused too: a proxy may have merged or split them. */
    snprintf(r, sizeof r,
             "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\n"
             "Content-Length: %zu\r\n\r\n%s",
             strlen(job), strlen(job), job);
    expect_refused(&s, r, "bad_framing");
    /* A length and chunking. */
    snprintf(r, sizeof r,
             "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n"
             "Transfer-Encoding: chunked\r\n\r\n%zx\r\n%s\r\n0\r\n\r\n",
             strlen(job), job);
    expect_refused(&s, r, "bad_framing");
    /* A list where a number belongs (libmicrohttpd refuses it itself). */
    snprintf(r, sizeof r,
             "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %zu, %zu\r\n\r\n%s",
             strlen(job), strlen(job), job);
    expect_refused(&s, r, NULL);

    /* Plain framings still work: one length, or chunked alone. */
    char buf[4096];
    snprintf(r, sizeof r,
             "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
             "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(job), job);
    raw_exchange(NULL, s.port, r, buf, sizeof buf, 5000);
    if (strncmp(buf, "HTTP/1.1 201", 12) != 0)
        TEST_FAIL("a plain request failed: %s", buf);
    snprintf(r, sizeof r,
             "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
             "Content-Type: application/json\r\nTransfer-Encoding: "
             "chunked\r\n\r\n%zx\r\n%s\r\n0\r\n\r\n",
             strlen(job), job);
    raw_exchange(NULL, s.port, r, buf, sizeof buf, 5000);
    if (strncmp(buf, "HTTP/1.1 201", 12) != 0)
        TEST_FAIL("a chunked request failed: %s", buf);
    /* Exactly those two were enqueued. */
    json_t *l = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(l, "jobs")), 2);
    json_decref(l);
    srv_stop(&s);
}
