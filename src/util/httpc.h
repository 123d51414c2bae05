/*
 * httpc.h — jobd's one HTTP client (libcurl's easy interface, loaded by
 * util/lazylib.h): what the CLI (cli/http.c) and the remote store
 * (store/remote/conn.c) both send to a jobd API server. One connection
 * object keeps its easy handle, so requests after the first reuse the
 * connection (the remote store's worker loop); the CLI makes one per
 * request. Every request carries `Content-Type: application/json`, the
 * bearer token of $JOBD_TOKEN when set (docs/API.md, Authentication), and
 * no `Expect: 100-continue`; only http:// and https:// are followed.
 *
 * Below core/ (util/): errors are a status and a reason in the caller's
 * buffer, which each caller maps onto its own (exit statuses, store
 * errors). One thread at a time per connection; different connections may
 * run on different threads.
 */
#ifndef JOBD_UTIL_HTTPC_H
#define JOBD_UTIL_HTTPC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct curl_slist;

/* What httpc_init and httpc_request return. */
enum httpc_rc {
    HTTPC_OK = 0,           /* an answer came (any HTTP status) */
    HTTPC_INTERRUPTED = 1,  /* the interrupt flag ended the request (httpc_interruptible) */
    HTTPC_UNREACHABLE = -1, /* no answer: connection refused, timeout, TLS... (why says) */
    HTTPC_NOMEM = -2,
    HTTPC_NOLIB = -3, /* libcurl cannot be loaded (why says) */
};

/* One connection to a server. Fields are the module's; zero before init. */
struct httpc {
    char *base; /* the server's URL, without a trailing '/' */
    void *curl; /* CURL * */
    struct curl_slist *headers;
    const atomic_bool *interrupt[2]; /* httpc_interruptible's */
};

/* One answer; the body is the caller's to free (httpc_resp_fini). */
struct httpc_resp {
    long status; /* HTTP status */
    char *body;  /* NUL-terminated, "" when empty; the first max bytes of it */
    size_t len;
    bool overflow; /* the body was longer than the max asked: only its start is kept */
    bool replayed; /* the answer had "Idempotent-Replayed: true" (docs/API.md) */
};

/*
 * Prepares a connection to base (copied). Each request may take
 * timeout_ms (0: no limit), of which connecting at most connect_ms;
 * user_agent (NULL: libcurl's) names the program. On failure (HTTPC_NOMEM,
 * HTTPC_NOLIB, why filled) h is left for httpc_fini.
 */
int httpc_init(struct httpc *h, const char *base, long connect_ms, long timeout_ms,
               const char *user_agent, char *why, size_t why_len);

/*
 * Sends method (GET, POST, DELETE, PATCH...) to base + path (path with any
 * query, already escaped) with body (JSON text, borrowed; NULL: none; a
 * POST without one sends an empty body). Fills *out (keeping at most max
 * bytes of the body) when an answer came: HTTPC_OK. Otherwise *out is
 * empty and why (the URL and curl's reason) is filled: HTTPC_UNREACHABLE,
 * HTTPC_INTERRUPTED or HTTPC_NOMEM.
 */
int httpc_request(struct httpc *h, const char *method, const char *path, const char *body,
                  size_t max, struct httpc_resp *out, char *why, size_t why_len);

/* Each request from now on may take timeout_ms (0: no limit); a long poll sets its own. */
void httpc_timeout(struct httpc *h, long timeout_ms);

/* From now on a true *interrupt or *also (borrowed; NULL: none) aborts the
 * request under way: a long poll ends for a stop or for news of a cancel. */
void httpc_interruptible(struct httpc *h, const atomic_bool *interrupt, const atomic_bool *also);

/* Frees an answer's body; zeroes *r. */
void httpc_resp_fini(struct httpc_resp *r);

/* Frees what init made (also after a failed init); zeroes *h. */
void httpc_fini(struct httpc *h);

/* s URL-encoded (RFC 3986 unreserved kept), malloc'd; NULL on out-of-memory or without libcurl. */
char *httpc_escape(const char *s);

#endif
