/*
 * test_api_badinput.c — hostile and broken requests against a real
 * `jobd server`: malformed JSON, wrong types, unknown fields, 100,000-deep
 * nesting, invalid UTF-8, oversized bodies, bad names, unknown routes and
 * methods, garbage and truncated requests, a client that stalls. Each must
 * get a 4xx naming the problem (or a closed connection for garbage below
 * HTTP); afterwards the server still answers and the job written before
 * is intact and alone.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "apitest.h"

/* Expects a 400 whose error names field (or has code). */
static void
bad(const struct srv *s, const char *path, const char *body, size_t len, int status,
    const char *code, const char *field)
{
    struct resp r;
    http_req(s, "POST", path, body, len, NULL, &r);
    if (r.status != status)
        TEST_FAIL("%.80s: status %ld, want %d: %.200s", body, r.status, status, r.body);
    json_t *j = resp_json(&r);
    json_t *e = json_object_get(j, "error");
    ASSERT(json_is_string(json_object_get(e, "message")));
    if (code)
        ASSERT_STR_EQ(json_string_value(json_object_get(e, "code")), code);
    if (field)
        ASSERT_STR_EQ(json_string_value(json_object_get(e, "field")), field);
    json_decref(j);
    resp_fini(&r);
}

#define BAD(s, body, code, field) bad((s), "/v1/jobs", (body), strlen(body), 400, (code), (field))

static int
dial(const struct srv *s)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        TEST_FAIL("connect: %s", strerror(errno));
    return fd;
}

/*
 * Sends raw bytes, then reads what comes back until close, a complete
 * response head, or 300 ms of silence (a server may keep a broken
 * connection open until its idle timeout; that is fine, it is not waited for).
 */
static size_t
raw(const struct srv *s, const char *bytes, size_t n, char *buf, size_t len)
{
    int fd = dial(s);
    if (write(fd, bytes, n) < 0) {
    }
    shutdown(fd, SHUT_WR);
    struct timeval tv = {0, 300000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    size_t got = 0;
    ssize_t k;
    while (got + 1 < len && (k = read(fd, buf + got, len - got - 1)) > 0) {
        got += (size_t)k;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n") != NULL)
            break;
    }
    buf[got] = '\0';
    close(fd);
    return got;
}

/* Bodies that are not a job: malformed JSON, wrong types and values, unknown fields, bad UTF-8. */
static void
bad_bodies(const struct srv *s)
{
    /* Malformed JSON and non-objects. */
    BAD(s, "{\"type\":", "malformed_json", NULL);
    BAD(s, "{\"type\":\"x\",}", "malformed_json", NULL);
    BAD(s, "[]", "malformed_json", NULL);
    BAD(s, "\"job\"", "malformed_json", NULL);
    BAD(s, "", "malformed_json", NULL);
    BAD(s, "{\"type\":\"x\"} {}", "malformed_json", NULL);
    BAD(s, "{\"type\":\"x\",\"type\":\"y\"}", "malformed_json", NULL);
    /* Wrong types, bad values, bad names: the field is named. */
    BAD(s, "{\"type\":1}", "invalid_field", "type");
    BAD(s, "{}", "invalid_field", "type");
    BAD(s, "{\"type\":\"x\",\"priority\":\"high\"}", "invalid_field", "priority");
    BAD(s, "{\"type\":\"x\",\"priority\":1.5}", "invalid_field", "priority");
    BAD(s, "{\"type\":\"x\",\"priority\":10000000000}", "invalid_field", "priority");
    BAD(s, "{\"type\":\"x\",\"max_attempts\":0}", "invalid_field", "max_attempts");
    BAD(s, "{\"type\":\"x\",\"queue\":5}", "invalid_field", "queue");
    BAD(s, "{\"type\":\"x\",\"queue\":\"UPPER\"}", "invalid_field", "queue");
    BAD(s, "{\"type\":\"x\",\"queue\":\"\"}", "invalid_field", "queue");
    BAD(s, "{\"type\":\"a b\"}", "invalid_field", "type");
    BAD(s, "{\"type\":\"x\",\"run_at\":\"yesterday\"}", "invalid_field", "run_at");
    BAD(s, "{\"type\":\"x\",\"run_at\":\"2026-02-30T00:00:00Z\"}", "invalid_field", "run_at");
    BAD(s, "{\"type\":\"x\",\"in\":\"5 minutes\"}", "invalid_field", "in");
    BAD(s, "{\"type\":\"x\",\"in\":\"5m\",\"run_at\":\"2030-01-01T00:00:00Z\"}", "invalid_field",
        "in");
    BAD(s, "{\"type\":\"x\",\"timeout\":\"-1s\"}", "invalid_field", "timeout");
    BAD(s, "{\"type\":\"x\",\"idempotency_key\":\"\"}", "invalid_field", "idempotency_key");
    BAD(s, "{\"type\":\"x\\u0000y\"}", "malformed_json", NULL); /* NUL is refused */
    char longname[300];
    snprintf(longname, sizeof longname, "{\"type\":\"%0129d\"}", 0);
    BAD(s, longname, "invalid_field", "type");
    /* Unknown fields are named, never ignored (a job cannot name a command to run). */
    BAD(s, "{\"type\":\"x\",\"exec\":\"/bin/sh\"}", "unknown_field", "exec");
    BAD(s, "{\"type\":\"x\",\"Type\":\"y\"}", "unknown_field", "Type");
    /* Invalid UTF-8, in a field and in the payload. */
    BAD(s, "{\"type\":\"\xff\xfe\"}", "malformed_json", NULL);
    BAD(s, "{\"type\":\"x\",\"payload\":\"\xc3\x28\"}", "malformed_json", NULL);
}

/* Deep nesting and oversized bodies and payloads. */
static void
bad_sizes(const struct srv *s)
{
    /* 100,000-deep nesting, in the payload and at the top. */
    size_t depth = 100000, n = 0;
    char *deep = malloc(depth * 2 + 64);
    n += (size_t)sprintf(deep, "{\"type\":\"x\",\"payload\":");
    for (size_t i = 0; i < depth; i++)
        deep[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        deep[n++] = ']';
    deep[n++] = '}';
    bad(s, "/v1/jobs", deep, n, 400, NULL, NULL);
    bad(s, "/v1/jobs", deep + 23, depth, 400, "malformed_json", NULL); /* only "[[[[..." */
    bad(s, "/v1/claim", deep + 23, depth * 2, 400, "malformed_json", NULL);
    free(deep);
    /* Deep but under the parser's limit: still refused for the payload (depth 64). */
    char mid[400];
    n = (size_t)sprintf(mid, "{\"type\":\"x\",\"payload\":");
    for (int i = 0; i < 100; i++)
        mid[n++] = '[';
    for (int i = 0; i < 100; i++)
        mid[n++] = ']';
    mid[n++] = '}';
    mid[n] = '\0';
    BAD(s, mid, "invalid_field", "payload");

    /* Oversized: a body over 1 MiB, and a payload over 256 KiB inside a legal body. */
    size_t big = 1024 * 1024 + 1;
    char *b = malloc(big + 1);
    memset(b, ' ', big);
    b[big] = '\0';
    bad(s, "/v1/jobs", b, big, 413, "too_large", NULL);
    n = (size_t)sprintf(b, "{\"type\":\"x\",\"payload\":\"");
    memset(b + n, 'a', 300 * 1024);
    n += 300 * 1024;
    n += (size_t)sprintf(b + n, "\"}");
    bad(s, "/v1/jobs", b, n, 413, "too_large", "payload");
    free(b);
}

/* Below HTTP: garbage, a truncated body, a stalled client (its socket is returned, still open). */
static int
bad_wire(const struct srv *s)
{
    /* Below HTTP: garbage, a truncated body, a stalled client. */
    char buf[4096];
    raw(s, "GARBAGE\r\n\r\n", 11, buf, sizeof buf);
    raw(s, "\x00\x01\x02\xff\r\n\r\n", 8, buf, sizeof buf);
    const char *trunc =
        "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n"
        "{\"type\":\"trunc\"";
    raw(s, trunc, strlen(trunc), buf, sizeof buf);
    const char *halfhdr = "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le";
    raw(s, halfhdr, strlen(halfhdr), buf, sizeof buf);
    int stall = dial(s); /* sends half a request and then nothing */
    const char *half = "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (write(stall, half, strlen(half)) < 0) {
    }
    const char *lie =
        "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 5\r\n\r\n"
        "{\"type\":\"lie\"}";
    raw(s, lie, strlen(lie), buf, sizeof buf);
    ASSERT(strstr(buf, "HTTP/1.1 400") != NULL);
    return stall;
}

BOTH(bad_input_battery)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    int64_t keep = create_job(&s, "{\"type\":\"keep.me\",\"payload\":{\"n\":42,\"s\":\"é\"}}");

    bad_bodies(&s);

    bad_sizes(&s);

    /* Routes and methods. */
    EXPECT(&s, "GET", "/v1/jobs/0", NULL, 404, "not_found");
    EXPECT(&s, "GET", "/v1/jobs/-1", NULL, 404, "not_found");
    EXPECT(&s, "GET", "/v1/jobs/99999999999999999999", NULL, 404, "not_found");
    EXPECT(&s, "GET", "/v1/jobs/1/", NULL, 404, "not_found");
    EXPECT(&s, "GET", "/v2/jobs", NULL, 404, "not_found");
    EXPECT(&s, "PATCH", "/v1/jobs/1", NULL, 405, "method_not_allowed");
    EXPECT(&s, "GET", "/v1/jobs/1/cancel", NULL, 405, "method_not_allowed");

    int stall = bad_wire(&s);

    /* Still up, the kept job unchanged and alone. */
    EXPECT(&s, "GET", "/healthz", NULL, 200, NULL);
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%lld", (long long)keep);
    json_t *j = get_json(&s, path);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "type")), "keep.me");
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "payload"), "n")), 42);
    ASSERT_STR_EQ(json_string_value(json_object_get(json_object_get(j, "payload"), "s")), "é");
    json_decref(j);
    j = get_json(&s, "/v1/jobs");
    ASSERT_EQ(json_array_size(json_object_get(j, "jobs")), 1);
    json_decref(j);
    close(stall);
    srv_stop(&s);
}
