/*
 * accesslog.h — the HTTP access log: one `http: request` line per request,
 * and which requests get one (docs/LOGGING.md, Access log). By default
 * (notable) the routine traffic is left out, so the log shows what
 * matters: successful reads (the dashboard polls every few seconds), claims
 * that found nothing (idle long polls) and the keep-alives of remote
 * workers (heartbeats, presence) are not written unless slow; every error,
 * aborted answer, slow request and change (a submit, a claim that handed
 * out jobs, a report, an operator action) is. `all` writes every request,
 * `off` none. Pure but for the write: safe from any thread.
 */
#ifndef JOBD_API_ACCESSLOG_H
#define JOBD_API_ACCESSLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/log.h"

/* A request at least this slow (ms) is notable, whatever it is. */
#define ACCESS_SLOW_MS_DEFAULT 1000

/* One answered request; strings borrowed for the call. */
struct access_entry {
    const char *method;
    const char *path;
    int status;
    double ms;      /* from its first byte to its answer sent */
    bool aborted;   /* the answer did not get out whole */
    size_t claimed; /* jobs the answer handed out (POST /v1/claim) */
};

/* Whether e is notable: an error, aborted, at least slow_ms (> 0) long, or
 * anything but a successful read, an idle claim or a keep-alive. */
bool access_log_notable(const struct access_entry *e, int64_t slow_ms);

/* Writes e's line (info, component http) if mode wants it. */
void access_log_write(enum log_access mode, int64_t slow_ms, const struct access_entry *e);

#endif
