/*
 * accesslog.c — see accesslog.h. The routes are matched on the path as
 * received (the router has not run yet for a request refused early, and a
 * 404 is an error anyway).
 */
#include "api/accesslog.h"

#include <string.h>

static bool
starts_ends(const char *s, const char *head, const char *tail)
{
    size_t n = strlen(s), h = strlen(head), t = strlen(tail);
    return n > h + t && strncmp(s, head, h) == 0 && strcmp(s + n - t, tail) == 0;
}

/* Routine traffic: a successful read, a claim that found nothing, a keep-alive. */
static bool
routine(const struct access_entry *e, bool slow)
{
    const char *m = e->method, *p = e->path;
    if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
        return !slow;
    if (strcmp(m, "POST") != 0)
        return false;
    /* A long poll waits by design: an idle one is routine however long. */
    if (strcmp(p, "/v1/claim") == 0)
        return e->claimed == 0;
    return !slow &&
           (starts_ends(p, "/v1/jobs/", "/heartbeat") || starts_ends(p, "/v1/jobs/", "/progress") ||
            starts_ends(p, "/v1/workers/", "/presence"));
}

bool
access_log_notable(const struct access_entry *e, int64_t slow_ms)
{
    if (e->aborted || e->status >= 400 || e->status < 100)
        return true;
    bool slow = slow_ms > 0 && e->ms >= (double)slow_ms;
    return !routine(e, slow);
}

void
access_log_write(enum log_access mode, int64_t slow_ms, const struct access_entry *e)
{
    if (mode == LOG_ACCESS_OFF || !log_enabled(LOGL_INFO))
        return;
    if (mode == LOG_ACCESS_NOTABLE && !access_log_notable(e, slow_ms))
        return;
    struct log_field f[] = {LF_STR("method", e->method), LF_STR("path", e->path),
                            LF_INT("status", e->status), LF_DBL("ms", e->ms),
                            LF_STR("aborted", "true")};
    log_write(LOGL_INFO, "http", "request", f, e->aborted ? 5 : 4);
}
