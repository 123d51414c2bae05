/*
 * ssetest.h — a raw client of GET /v1/events for the tests of the stream
 * (test_api_events.c, test_api_events_rows.c): the body de-chunked, its
 * events parsed and checked, and SQL run on the server's store.
 */
#ifndef JOBD_TESTS_SSETEST_H
#define JOBD_TESTS_SSETEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <sqlite3.h>
#include <string.h>

#include "apitest.h"
#include "rawhttp.h"

#define PROMPT_MS 10000

/* A raw client of the stream: the body de-chunked, its events parsed. */
struct sse {
    int fd;
    int status;
    char *raw; /* bytes after the headers, still chunked */
    size_t rlen, rcap, rpos;
    char *body; /* de-chunked */
    size_t blen, bcap;
    bool closed;
};

static inline void
grow(char **b, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    *b = realloc(*b, c);
    ASSERT(*b != NULL);
    *cap = c;
}

/* Moves whole chunks of raw into body. */
static inline void
dechunk(struct sse *s)
{
    for (;;) {
        const char *p = s->raw + s->rpos;
        size_t left = s->rlen - s->rpos;
        const char *eol = memmem(p, left, "\r\n", 2);
        if (eol == NULL)
            return;
        size_t n = strtoul(p, NULL, 16);
        size_t hdr = (size_t)(eol - p) + 2;
        if (left < hdr + n + 2)
            return;
        grow(&s->body, &s->bcap, s->blen + n + 1);
        memcpy(s->body + s->blen, p + hdr, n);
        s->blen += n;
        s->body[s->blen] = '\0';
        s->rpos += hdr + n + 2;
    }
}

/* Reads what arrives within ms. */
static inline void
sse_pump(struct sse *s, int ms)
{
    char buf[65536];
    struct pollfd p = {.fd = s->fd, .events = POLLIN};
    while (!s->closed && poll(&p, 1, ms) > 0) {
        ssize_t n = recv(s->fd, buf, sizeof buf, 0);
        if (n <= 0) {
            s->closed = true;
            break;
        }
        grow(&s->raw, &s->rcap, s->rlen + (size_t)n + 1);
        memcpy(s->raw + s->rlen, buf, (size_t)n);
        s->rlen += (size_t)n;
        ms = 0;
    }
    dechunk(s);
}

/* Opens GET /v1/events?query with Last-Event-ID last (< 0: none); the status. */
static inline int
sse_open(struct sse *s, const struct srv *srv, const char *query, long long last, int rcvbuf)
{
    memset(s, 0, sizeof *s);
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT(s->fd >= 0);
    if (rcvbuf > 0)
        setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)srv->port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ASSERT_EQ(connect(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[512], lh[64] = "";
    if (last >= 0)
        snprintf(lh, sizeof lh, "Last-Event-ID: %lld\r\n", last);
    snprintf(req, sizeof req, "GET /v1/events%s%s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n",
             query && *query ? "?" : "", query ? query : "", lh);
    ASSERT(raw_send(s->fd, req, strlen(req)));
    if (rcvbuf > 0)
        return 0; /* this one never reads */
    char head[8192];
    size_t got = 0;
    int64_t deadline = apitest_now_ms() + PROMPT_MS;
    const char *end = NULL;
    while ((end = got ? strstr(head, "\r\n\r\n") : NULL) == NULL) {
        ASSERT(apitest_now_ms() < deadline);
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t n = recv(s->fd, head + got, sizeof head - 1 - got, 0);
        ASSERT(n > 0);
        got += (size_t)n;
        head[got] = '\0';
    }
    s->status = atoi(head + 9);
    size_t hl = (size_t)(end - head) + 4;
    grow(&s->raw, &s->rcap, got - hl + 1);
    memcpy(s->raw, head + hl, got - hl);
    s->rlen = got - hl;
    if (s->status == 200) {
        ASSERT(strstr(head, "Content-Type: text/event-stream") != NULL);
        ASSERT(strstr(head, "Transfer-Encoding: chunked") != NULL);
        dechunk(s);
    } else {
        grow(&s->body, &s->bcap, s->rlen + 1);
        memcpy(s->body, s->raw, s->rlen);
        s->blen = s->rlen;
        s->body[s->blen] = '\0';
    }
    return s->status;
}

static inline void
sse_close(struct sse *s)
{
    close(s->fd);
    free(s->raw);
    free(s->body);
    memset(s, 0, sizeof *s);
}

/* The events received so far (a new JSON array), each frame's id checked against its data. */
static inline json_t *
sse_events(const struct sse *s)
{
    json_t *out = json_array();
    const char *p = s->body ? s->body : "";
    long long id = -1;
    while (*p) {
        const char *eol = strchr(p, '\n');
        if (eol == NULL)
            break;
        if (strncmp(p, "id: ", 4) == 0) {
            id = atoll(p + 4);
        } else if (strncmp(p, "data: ", 6) == 0) {
            json_error_t je;
            json_t *e = json_loadb(p + 6, (size_t)(eol - p - 6), 0, &je);
            if (e == NULL)
                TEST_FAIL("an event is not JSON: %.*s", (int)(eol - p), p);
            ASSERT_EQ(json_integer_value(json_object_get(e, "event")), id);
            json_array_append_new(out, e);
        }
        p = eol + 1;
    }
    return out;
}

/* Waits until n events have come; the events (new array). */
static inline json_t *
sse_await(struct sse *s, size_t n)
{
    int64_t deadline = apitest_now_ms() + PROMPT_MS;
    for (;;) {
        json_t *v = sse_events(s);
        if (json_array_size(v) >= n)
            return v;
        json_decref(v);
        if (apitest_now_ms() > deadline)
            TEST_FAIL("%zu events did not come within %d ms: %s", n, PROMPT_MS,
                      s->body ? s->body : "");
        sse_pump(s, 50);
    }
}

/* Checks event i of v: job, from (NULL: null), to. Returns its id. */
static inline long long
check_event(json_t *v, size_t i, int64_t job, const char *from, const char *to)
{
    json_t *e = json_array_get(v, i);
    ASSERT(e != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(e, "job")), job);
    json_t *f = json_object_get(e, "from");
    if (from == NULL)
        ASSERT(json_is_null(f));
    else
        ASSERT_STR_EQ(json_string_value(f), from);
    ASSERT_STR_EQ(json_string_value(json_object_get(e, "to")), to);
    json_t *wf = json_object_get(e, "workflow");
    ASSERT(json_is_null(wf) || json_integer_value(wf) > 0);
    ASSERT(json_is_string(json_object_get(e, "at")));
    ASSERT(json_is_string(json_object_get(e, "queue")));
    ASSERT(json_is_string(json_object_get(e, "type")));
    ASSERT(json_is_integer(json_object_get(e, "attempt")));
    return json_integer_value(json_object_get(e, "event"));
}

/* The events of job among v (a new array), in order. */
static inline json_t *
events_of(json_t *v, int64_t job)
{
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
        if (json_integer_value(json_object_get(e, "job")) == job)
            json_array_append(out, e);
    return out;
}

/* Waits for n events in all, then a moment more: none more come. The events. */
static inline json_t *
sse_exactly(struct sse *s, size_t n)
{
    json_decref(sse_await(s, n));
    sse_pump(s, 300);
    json_t *v = sse_events(s);
    ASSERT_EQ(json_array_size(v), n);
    return v;
}

/* Runs SQL on the server's store (the test's own connection). */
static inline void
store_sql(const struct srv *s, const char *pg_sql, const char *sqlite_sql)
{
    if (strncmp(s->db, "sqlite:", 7) == 0) {
        sqlite3 *db = NULL;
        ASSERT_EQ(sqlite3_open(s->db + 7, &db), SQLITE_OK);
        sqlite3_busy_timeout(db, 5000);
        char *msg = NULL;
        int rc = sqlite3_exec(db, sqlite_sql, NULL, NULL, &msg);
        if (rc != SQLITE_OK)
            TEST_FAIL("sqlite: %s", msg ? msg : "?");
        sqlite3_close(db);
    } else {
        ASSERT_EQ(pgtest_exec(s->db, pg_sql), 0);
    }
}

#endif
