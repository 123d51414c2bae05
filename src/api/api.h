/*
 * api.h — the HTTP API of `jobd server` (docs/API.md), split in two:
 *
 *   - a socket-free core: api_handle() turns one request (method, path,
 *     query, a few headers, body) into one response. Routing, auth,
 *     validation, JSON and store calls all live behind it, so unit tests and
 *     the libFuzzer target drive it without HTTP;
 *   - the libmicrohttpd glue (http.c: api_server_start/stop) that feeds it.
 *
 * One struct api_ctx is shared by every HTTP thread; everything in it is
 * either immutable after setup or has its own lock (store pool, group
 * committer, long-poll waiters, metrics counters).
 */
#ifndef JOBD_API_API_H
#define JOBD_API_API_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jobd.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/wakeup.h"

struct api_auth;
struct api_metrics;
struct api_xsite;
struct store_pool;
struct committer;
struct longpoll;
struct jobwait;
struct cancelwait;
struct claim_presence;
struct events;
struct ev_client;

/* Shared state of the API. Pointers borrowed; NULL members disable a feature. */
struct api_ctx {
    struct store_pool *pool;         /* per-thread store connections (required) */
    struct api_auth *auth;           /* NULL or no tokens = no auth; may be swapped while
                                      serving (SIGHUP), so read it with api_ctx_auth */
    struct api_metrics *metrics;     /* NULL = not counted */
    struct committer *committer;     /* NULL = enqueue directly (no group commit) */
    struct longpoll *longpoll;       /* NULL = claim never waits */
    struct jobwait *jobwait;         /* NULL = ?wait= ends at once (api/jobwait.h) */
    struct cancelwait *cancelwait;   /* NULL = GET /v1/cancels never waits (api/cancelwait.h) */
    struct events *events;           /* NULL = GET /v1/events is 503 (api/events.h) */
    struct wakeup *wake;             /* signalled after committed enqueues; may be NULL */
    struct claim_presence *presence; /* NULL = a claim is no presence (claimpresence.h) */
    const struct jobd_clock *clock;  /* for `in` and request times; NULL = real clock */
    bool defer_enqueue;              /* the caller takes out->deferred (the HTTP layer does):
                                      POST /v1/jobs then answers after its group commit
                                      without holding the calling thread */
    int64_t backoff_base_ms;         /* .../fail without retry_in_s; 0 = the default (5 s) */
    int64_t backoff_cap_ms;          /* 0 = the default (15 m) */
    int64_t max_lease_ms;            /* claims' and heartbeats' lease_s cap; 0 = 1 h */
    /* Bounds on what clients can make the store keep (docs/OPERATIONS.md,
     * Security): schedules, and presence rows of workers; 0 = no bound. */
    int64_t max_schedules;
    int64_t max_workers;
    /* Bulk actions (POST /v1/jobs/bulk) running at once at most (0 = no
     * bound), and how many run (h_bulk.c; atomic). */
    int max_bulk;
    atomic_int bulk_running;
};

/* The tokens in force: an atomic load, since `jobd server` swaps ctx->auth
 * on SIGHUP while requests run (it keeps the old table alive until stop). */
static inline const struct api_auth *
api_ctx_auth(const struct api_ctx *ctx)
{
    return __atomic_load_n(&ctx->auth, __ATOMIC_ACQUIRE);
}

/* One query parameter (both strings borrowed, already URL-decoded). */
struct api_param {
    const char *key;
    const char *value;
};

/* A request. All pointers borrowed for the call; body need not be NUL-terminated. */
struct api_request {
    const char *method;
    const char *path; /* without the query string */
    const struct api_param *query;
    size_t n_query;
    const char *authorization;   /* the Authorization header or NULL */
    const char *idempotency_key; /* the Idempotency-Key header or NULL */
    const char *traceparent;     /* the traceparent header or NULL (docs/API.md, Trace context) */
    const char *accept_encoding; /* the Accept-Encoding header or NULL (/ui/) */
    const char *if_none_match;   /* the If-None-Match header or NULL (/ui/) */
    const char *last_event_id;   /* the Last-Event-ID header or NULL (GET /v1/events) */
    const char *body;
    size_t body_len;
};

struct lp_waiter;
struct api_response;

/* A job an answer hands out: given back (store_release) if the answer
 * cannot be delivered. */
struct api_claimed {
    int64_t id;
    int32_t attempt;
};

/*
 * An answer that another thread completes later (POST /v1/jobs waiting for
 * its group commit). The HTTP layer suspends the connection, calls start,
 * and once resume(arg) has been called (exactly once, from any thread,
 * possibly before start returns) calls finish to fill the response, then
 * free. free alone (without start) is also allowed.
 */
struct api_deferred {
    void (*start)(struct api_deferred *d, void (*resume)(void *arg), void *arg);
    void (*finish)(struct api_deferred *d, struct api_response *out);
    void (*free)(struct api_deferred *d);
    /* Set by the caller before start (NULL: it cannot tell): false once the
     * client of arg has gone, so a long action may stop early. Thread-safe. */
    bool (*client_alive)(void *arg);
};

/* An extra response header; both strings static. */
struct api_header {
    const char *name;
    const char *value;
};

#define API_MAX_HEADERS 8

/* A response. body is malloc'd and owned by the response (api_response_fini),
 * unless body_static says it points at static bytes (the dashboard's files). */
struct api_response {
    int status;
    const char *content_type; /* static string */
    char *body;
    size_t body_len;
    bool body_static;                           /* body is static: never freed */
    struct api_header headers[API_MAX_HEADERS]; /* added as is (n_headers of them) */
    size_t n_headers;
    bool replayed;     /* add `Idempotent-Replayed: true` */
    bool allow_header; /* 405: add Allow: with allow */
    char allow[64];
    struct lp_waiter *wait;        /* long-poll claim: not answered yet (owned) */
    struct api_deferred *deferred; /* answered later (owned; see api_deferred) */
    struct ev_client *events;      /* a stream of events (owned; api/events.h): the
                                      HTTP layer sends it as text/event-stream */
    struct api_claimed *claimed;   /* jobs this answer hands out (owned), n_claimed */
    size_t n_claimed;
};

/*
 * Handles one request: route, authorize, validate, call the store, answer.
 * Never fails: every problem becomes an error response. out must be zeroed;
 * free it with api_response_fini. Thread-safe (per ctx rules above).
 * When out->wait is set the answer comes later (see longpoll.h): the caller
 * must hand the waiter to longpoll_add or, without a long-poll thread, to
 * longpoll_finish_now. out->deferred is only ever set if ctx->defer_enqueue
 * (an enqueue's group commit, a ?wait= with ctx->jobwait).
 */
void api_handle(struct api_ctx *ctx, const struct api_request *req, struct api_response *out);

/* The body limit of a route (bytes), looked up by method and path before the
 * body arrives: 16 MiB for POST /v1/jobs/batch, 1 MiB otherwise. */
size_t api_body_limit(const char *method, const char *path);

void api_response_fini(struct api_response *r);

/*
 * Gives back, unused, the jobs r hands out (r->claimed), because its answer
 * cannot be delivered: the client has gone. Each goes back to pending with
 * its attempt not consumed; one already reported or reaped meanwhile is left
 * alone. Clears r->claimed. Blocks on the store (h_release.c).
 */
void api_release_claimed(struct api_ctx *ctx, struct api_response *r);

/* ---- the HTTP server (http.c) ---- */

struct api_server;

/* Defaults of the connection limits below (jobd server sizes them from its
 * descriptor limit instead). */
#define API_MAX_CONNECTIONS_DEFAULT 4096u
#define API_REQUEST_TIMEOUT_MS_DEFAULT 60000
#define API_IDLE_TIMEOUT_S 60u

struct api_server_config {
    const char *host;                /* numeric IPv4/IPv6 address or "localhost" */
    int port;                        /* 0 = any free port */
    unsigned threads;                /* HTTP worker threads; 0 = 4 */
    enum log_access access_log;      /* which requests get a line on stderr (accesslog.h) */
    int64_t access_slow_ms;          /* a request this slow gets one; 0 = the default, 1 s */
    unsigned max_connections;        /* open at once; 0 = API_MAX_CONNECTIONS_DEFAULT */
    unsigned max_connections_per_ip; /* open at once from one address; 0 = no limit */
    int64_t request_timeout_ms;      /* to receive a whole request (headers and body),
                                      however the bytes trickle in; 0 = the default */
    size_t body_memory;              /* bodies being received at once may hold this
                                      much; beyond, 503; 0 = MEMBUDGET_DEFAULT */
    const struct api_xsite *xsite;   /* --allowed-hosts (copied; NULL = none): the
                                      Host and cross-site rules of xsite.h */
};

/*
 * Binds and starts serving ctx (borrowed; must outlive the server).
 * *bound_port receives the actual port. JOBD_E_IO with err on failure.
 */
int api_server_start(const struct api_server_config *cfg, struct api_ctx *ctx,
                     struct api_server **out, int *bound_port, struct jobd_error *err);
/* Stops accepting connections (in-flight requests still finish). */
void api_server_quiesce(struct api_server *s);
/*
 * Waits up to timeout_ms until no request is in progress: every request
 * received in full has been answered and sent (a resumed long poll still
 * has to send its answer). A client still sending its request is not
 * waited for. True if idle. Call after api_server_quiesce and longpoll_stop.
 */
bool api_server_drain(struct api_server *s, int timeout_ms);
/* Stops serving and frees. NULL-safe. Call longpoll_stop first (and
 * longpoll_free after), so no connection stays suspended. */
void api_server_stop(struct api_server *s);

#endif
