/*
 * test_accesslog.c — which requests the access log writes by default
 * (api/accesslog.h; docs/LOGGING.md, Access log): not successful reads,
 * idle claims (however long they waited) or keep-alives; every error,
 * aborted answer, slow request and change. And that `all` writes every
 * request and `off` none, seen on stderr.
 */
#include <fcntl.h>
#include <unistd.h>

#include "api/accesslog.h"
#include "test.h"

#define SLOW 1000

static bool
notable(const char *method, const char *path, int status, double ms, size_t claimed)
{
    struct access_entry e = {
        .method = method, .path = path, .status = status, .ms = ms, .claimed = claimed};
    return access_log_notable(&e, SLOW);
}

TEST(routine_traffic_is_left_out)
{
    ASSERT(!notable("GET", "/v1/queues", 200, 3, 0));
    ASSERT(!notable("GET", "/ui/app.js", 304, 1, 0));
    ASSERT(!notable("HEAD", "/healthz", 200, 1, 0));
    ASSERT(!notable("GET", "/metrics", 200, 999.9, 0));
    /* An idle long poll: left out however long it waited. */
    ASSERT(!notable("POST", "/v1/claim", 200, 30000, 0));
    ASSERT(!notable("POST", "/v1/jobs/12/heartbeat", 200, 2, 0));
    ASSERT(!notable("POST", "/v1/workers/host%3A1/presence", 200, 2, 0));
}

TEST(errors_slow_and_changes_stay)
{
    ASSERT(notable("GET", "/v1/jobs/99", 404, 1, 0));
    ASSERT(notable("GET", "/v1/queues", 503, 1, 0));
    ASSERT(notable("POST", "/v1/claim", 401, 1, 0));
    ASSERT(notable("POST", "/v1/jobs/12/heartbeat", 409, 1, 0));
    ASSERT(notable("GET", "/v1/jobs", 200, SLOW, 0)); /* at the threshold: slow */
    ASSERT(notable("POST", "/v1/jobs/12/heartbeat", 200, 1500, 0));
    ASSERT(notable("POST", "/v1/claim", 200, 2, 1)); /* handed out a job */
    ASSERT(notable("POST", "/v1/jobs", 201, 1, 0));  /* a submit */
    ASSERT(notable("POST", "/v1/jobs/12/complete", 200, 1, 0));
    ASSERT(notable("POST", "/v1/queues/default/pause", 200, 1, 0));
    ASSERT(notable("DELETE", "/v1/jobs/12", 200, 1, 0));
    /* Look-alikes of the keep-alive routes are not keep-alives. */
    ASSERT(notable("POST", "/v1/jobs/heartbeat", 200, 1, 0));
    ASSERT(notable("POST", "/v1/workers/presence", 200, 1, 0));
    struct access_entry cut = {
        .method = "GET", .path = "/v1/jobs", .status = 200, .ms = 1, .aborted = true};
    ASSERT(access_log_notable(&cut, SLOW));
    /* slow_ms 0: no request counts as slow. */
    struct access_entry slow = {.method = "GET", .path = "/v1/jobs", .status = 200, .ms = 1e6};
    ASSERT(!access_log_notable(&slow, 0));
}

/* The lines written to stderr for two requests under mode, in buf. */
static void
written(enum log_access mode, char *buf, size_t len)
{
    int p[2];
    ASSERT(pipe(p) == 0);
    int saved = dup(2);
    dup2(p[1], 2);
    close(p[1]);
    struct access_entry get = {.method = "GET", .path = "/v1/queues", .status = 200, .ms = 1};
    struct access_entry bad = {.method = "GET", .path = "/v1/nope", .status = 404, .ms = 1};
    access_log_write(mode, SLOW, &get);
    access_log_write(mode, SLOW, &bad);
    dup2(saved, 2);
    close(saved);
    ssize_t n = read(p[0], buf, len - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(p[0]);
}

TEST(modes_on_stderr)
{
    char buf[4096];
    written(LOG_ACCESS_NOTABLE, buf, sizeof buf);
    ASSERT(strstr(buf, "path=/v1/nope status=404") != NULL);
    ASSERT(strstr(buf, "path=/v1/queues") == NULL);
    written(LOG_ACCESS_ALL, buf, sizeof buf);
    ASSERT(strstr(buf, "info http: request method=GET path=/v1/queues status=200 ms=") != NULL);
    ASSERT(strstr(buf, "path=/v1/nope status=404") != NULL);
    written(LOG_ACCESS_OFF, buf, sizeof buf);
    ASSERT_EQ(strlen(buf), 0);
}
