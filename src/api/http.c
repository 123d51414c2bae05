/*
 * http.c — libmicrohttpd glue: the daemon (thread-pool mode), body intake
 * with per-route limits, the access log, and suspend/resume for long-poll
 * claims. Everything about meaning is in api_handle(); this file only moves
 * bytes.
 *
 * Bodies: the route's limit is known from method and path before any byte
 * arrives. A body that grows past it is discarded as it arrives (never
 * buffered past the limit) and answered 413 when it ends: answering while
 * the client still sends makes most clients see a reset instead of the 413.
 * Only a client that waits for "100 Continue", or announces a body so large
 * that reading it is not worth it (DISCARD_MAX), gets its 413 at once.
 * Bodies also share a memory budget (membudget.h; 503 beyond it), and each
 * connection has a deadline for receiving a whole request (deadline.h).
 * What a web page could make a browser send (a wrong Host, a cross-site
 * Origin, a body that is not JSON) is refused from the headers, its body
 * dropped unread (xsite.h). Every answer carries nosniff.
 *
 * Claim answers that are never read: a client that closes its connection
 * while holding unread bytes resets it (RST) instead of closing it (FIN).
 * So each connection keeps the jobs of its last claim answer (conn_state)
 * until its next request; if it is reset within CLAIM_UNREAD_GRACE_US of
 * the answer, the answer was not read and its jobs are given back at once
 * (store_release: attempt not counted). The daemon runs with MHD_USE_TURBO,
 * which among other things does not shutdown(SHUT_WR) a socket before
 * closing it: the socket's TCP state at close then still says how the peer
 * ended (CLOSE_WAIT after its FIN, CLOSE after its reset), where our own
 * FIN would turn both into CLOSE.
 *
 * The threads wait in poll(), not epoll: libmicrohttpd 0.9.75 (Debian 12)
 * races with itself when a daemon with epoll is quiesced (shutdown and
 * SIGHUP do that): MHD_quiesce_daemon and a pool thread both take the
 * listen socket out of the thread's epoll set, and whichever loses gets
 * ENOENT and aborts the process ("Failed to remove listen FD from epoll
 * set"). With poll() quiescing only signals the threads. Each of the pool's
 * threads polls its own share of the connections, so poll() costs little.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/accesslog.h"
#include "api/api.h"
#include "api/apierr.h"
#include "api/auth.h"
#include "api/deadline.h"
#include "api/events.h"
#include "api/longpoll.h"
#include "api/membudget.h"
#include "api/xsite.h"
#include "core/err.h"
#include "util/check.h"
#include "util/clock.h"
#include "util/lazylib.h"
#include "util/log.h"

#define MAX_QUERY 32
#define DISCARD_MAX (64ull * 1024 * 1024) /* read and drop at most this much */
/* A reset this soon after a claim answer means it was not read (see above). */
#define CLAIM_UNREAD_GRACE_US (10 * 1000000LL)

struct api_server {
    struct MHD_Daemon *d;
    struct api_ctx *ctx;
    enum log_access access_log; /* accesslog.h */
    int64_t access_slow_ms;
    MHD_socket quiesced_fd;
    pthread_mutex_t mu;
    pthread_cond_t idle_cv;  /* signalled when active drops to 0 */
    int active;              /* requests begun and not yet completed */
    struct deadlines *dl;    /* the whole-request deadline (deadline.h) */
    struct membudget bodies; /* memory of bodies being received (membudget.h) */
    struct api_xsite xsite;  /* --allowed-hosts (xsite.h) */
};

/* Per-request state (libmicrohttpd's con_cls). */
/*
 * Where a request is: on_request's state machine, one field instead of a
 * flag for each state (any two of which set at once was a bug).
 *
 *   RECEIVING --> TOO_BIG | OVER_BUDGET   body dropped; answered 413 / 503
 *   RECEIVING --> HANDLED                 in full: the handler ran; counted
 *                 HANDLED <--> DEFERRED   suspended for a group commit
 *                 HANDLED <--> WAITING    suspended for a long-poll claim
 *
 * From HANDLED on, the request counts in api_server.active (a drain waits
 * for it) until on_completed.
 */
enum req_phase {
    REQ_RECEIVING = 0,
    REQ_TOO_BIG,     /* over its limit, or out of memory: answered 413 */
    REQ_OVER_BUDGET, /* the bodies' memory budget is spent: answered 503 */
    REQ_HANDLED,     /* received in full and handed to api_handle */
    REQ_DEFERRED,    /* suspended for resp.deferred (a group commit) */
    REQ_WAITING,     /* suspended for a long-poll claim */
};

struct req_state {
    int64_t start_mono_us;
    char method[16];
    char path[256];
    char *body;
    size_t len, cap, limit;
    bool refused; /* dropped: xsite.h refuses it (answered with why) */
    struct xsite_refusal why;
    size_t reserved; /* bytes reserved from api_server.bodies */
    enum req_phase phase;
    struct api_response resp; /* kept while waiting */
    int status;               /* for the access log */
    bool close;               /* answer with Connection: close */
    bool retry_after;         /* answer with Retry-After: 1 */
};

/* Per-connection state (libmicrohttpd's socket_context). */
struct conn_state {
    struct dl_conn *dl;       /* the deadline watchdog's entry, or NULL */
    struct api_response held; /* only claimed/n_claimed: the last claim answer's jobs */
    int64_t answered_mono_us; /* when that answer went out */
};

struct query_collect {
    struct api_param v[MAX_QUERY];
    size_t n;
    bool overflow;
};

static enum MHD_Result
collect_query(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    struct query_collect *q = cls;
    if (q->n == MAX_QUERY) {
        q->overflow = true;
        return MHD_NO;
    }
    q->v[q->n++] = (struct api_param){key, value};
    return MHD_YES;
}

static enum MHD_Result
send_response(struct MHD_Connection *conn, struct req_state *s, struct api_response *r)
{
    const char *ct = r->content_type ? r->content_type : "application/json";
    struct MHD_Response *mr;
    if (r->body != NULL && r->body_static) {
        mr = MHD_create_response_from_buffer(r->body_len, r->body, MHD_RESPMEM_PERSISTENT);
    } else if (r->body != NULL) {
        mr = MHD_create_response_from_buffer(r->body_len, r->body, MHD_RESPMEM_MUST_FREE);
        if (mr != NULL)
            r->body = NULL; /* libmicrohttpd frees it */
    } else {
        mr = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (mr == NULL)
        return MHD_NO;
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, ct);
    /* Every answer: a browser must never read JSON as a script or a page. */
    MHD_add_response_header(mr, "X-Content-Type-Options", "nosniff");
    if (r->replayed)
        MHD_add_response_header(mr, "Idempotent-Replayed", "true");
    if (r->allow_header)
        MHD_add_response_header(mr, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (s->close)
        MHD_add_response_header(mr, MHD_HTTP_HEADER_CONNECTION, "close");
    if (s->retry_after)
        MHD_add_response_header(mr, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    for (size_t i = 0; i < r->n_headers; i++)
        MHD_add_response_header(mr, r->headers[i].name, r->headers[i].value);
    s->status = r->status;
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)r->status, mr);
    MHD_destroy_response(mr);
    return ok;
}

static ssize_t
events_read_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    ssize_t n = events_client_read(cls, buf, max);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void
events_free_cb(void *cls)
{
    events_client_free(cls);
}

static void
suspend_conn(void *arg)
{
    MHD_suspend_connection(arg);
}

static void resume_conn(void *arg);
static bool conn_alive(void *arg);

/*
 * GET /v1/events: a text/event-stream the events thread feeds (events.h).
 * The response owns the client from here; the content callback suspends
 * the connection while there is nothing to send.
 */
static enum MHD_Result
send_events(struct MHD_Connection *conn, struct req_state *s, struct api_response *r)
{
    struct ev_client *c = r->events;
    struct MHD_Response *mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024,
                                                                events_read_cb, c, events_free_cb);
    if (mr == NULL)
        return MHD_NO; /* r->events is freed with the request */
    r->events = NULL;
    events_client_attach(c, conn, suspend_conn, resume_conn, conn_alive);
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(mr, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(mr, "X-Accel-Buffering", "no");
    MHD_add_response_header(mr, "X-Content-Type-Options", "nosniff");
    s->status = 200;
    enum MHD_Result ok = MHD_queue_response(conn, 200, mr);
    MHD_destroy_response(mr);
    return ok;
}

static enum MHD_Result
send_error(struct MHD_Connection *conn, struct req_state *s, int status, const char *code,
           const char *msg)
{
    struct api_response r = {0};
    api_error(&r, status, code, NULL, "%s", msg);
    enum MHD_Result ok = send_response(conn, s, &r);
    api_response_fini(&r);
    return ok;
}

struct framing {
    int n_length;    /* Content-Length headers */
    bool length_bad; /* one that is not plain digits */
    bool chunked;    /* any Transfer-Encoding */
};

static enum MHD_Result
count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    struct framing *f = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        f->n_length++;
        if (value == NULL || value[0] == '\0' || strspn(value, "0123456789") != strlen(value))
            f->length_bad = true;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->chunked = true;
    }
    return MHD_YES;
}

/*
 * Request smuggling: a proxy in front may pick another framing than ours
 * when there are two lengths, a length and chunking, or a length that is
 * not a plain number. NULL if the framing is unambiguous, else why not.
 */
static const char *
framing_problem(struct MHD_Connection *conn)
{
    struct framing f = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, &f);
    if (f.n_length > 1)
        return "the request has more than one Content-Length header";
    if (f.n_length == 1 && f.chunked)
        return "the request has both Content-Length and Transfer-Encoding";
    if (f.length_bad)
        return "Content-Length must be a decimal number";
    return NULL;
}

static void
resume_conn(void *arg)
{
    MHD_resume_connection(arg);
}

/*
 * False once the client of a suspended connection has closed it (EOF or an
 * error on a peek). Bytes waiting (a pipelined request) mean it is still there.
 */
static bool
conn_alive(void *arg)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(arg, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci == NULL)
        return true;
    char c;
    ssize_t n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return false;
    return n > 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Drops what was collected of the body (the rest is discarded as it comes). */
static void
drop_body(struct api_server *srv, struct req_state *s)
{
    free(s->body);
    s->body = NULL;
    s->len = s->cap = 0;
    membudget_give(&srv->bodies, s->reserved);
    s->reserved = 0;
}

/* Collects body bytes; drops the body once it is over the limit or the budget. */
static void
take_body(struct api_server *srv, struct req_state *s, const char *data, size_t n)
{
    if (s->phase != REQ_RECEIVING || s->refused)
        return;
    if (n > s->limit - s->len) {
        s->phase = REQ_TOO_BIG;
        drop_body(srv, s);
        return;
    }
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n)
            cap *= 2;
        if (cap > s->limit)
            cap = s->limit;
        if (!membudget_take(&srv->bodies, cap - s->cap)) {
            s->phase = REQ_OVER_BUDGET; /* answered 503 with Retry-After */
            drop_body(srv, s);
            return;
        }
        s->reserved += cap - s->cap;
        char *b = realloc(s->body, cap);
        if (b == NULL) {
            s->phase = REQ_TOO_BIG; /* answered as 413; the server stays up */
            drop_body(srv, s);
            return;
        }
        s->body = b;
        s->cap = cap;
    }
    memcpy(s->body + s->len, data, n);
    s->len += n;
}

static struct conn_state *
conn_state(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

/* The connection's entry in the deadline watchdog (NULL if none). */
static struct dl_conn *
conn_deadline(struct MHD_Connection *conn)
{
    struct conn_state *cs = conn_state(conn);
    return cs != NULL ? cs->dl : NULL;
}

/* Forgets the held claim answer: the client came back, or it was given back. */
static void
conn_forget_claims(struct conn_state *cs)
{
    if (cs == NULL)
        return;
    free(cs->held.claimed);
    cs->held.claimed = NULL;
    cs->held.n_claimed = 0;
}

/* A request header's value, or NULL. */
static const char *
header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/*
 * The rules of xsite.h (Host, cross-site, content type), from the headers
 * alone: true, with s->why, if the request is refused. Its body is then
 * dropped as it arrives, never read.
 */
static bool
xsite_refused(struct api_server *srv, struct MHD_Connection *conn, const char *method,
              const char *url, const char *version, struct req_state *s)
{
    const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    bool body = (cl != NULL && strspn(cl, "0") != strlen(cl)) ||
                header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
    struct xsite_request r = {
        .method = method,
        .path = url,
        .version = version,
        .host = header(conn, MHD_HTTP_HEADER_HOST),
        .origin = header(conn, "Origin"),
        .sec_fetch_site = header(conn, "Sec-Fetch-Site"),
        .content_type = header(conn, MHD_HTTP_HEADER_CONTENT_TYPE),
        .has_body = body,
        .tokens = api_auth_count(api_ctx_auth(srv->ctx)) > 0,
    };
    return api_xsite_refuse(&srv->xsite, &r, &s->why);
}

static enum MHD_Result
first_call(struct api_server *srv, struct MHD_Connection *conn, const char *url, const char *method,
           const char *version, void **con_cls)
{
    struct req_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return MHD_NO;
    *con_cls = s;
    conn_forget_claims(conn_state(conn)); /* the client is back: it had its answer */
    s->start_mono_us = clock_mono_now_us();
    snprintf(s->method, sizeof s->method, "%s", method);
    snprintf(s->path, sizeof s->path, "%s", url);
    s->limit = api_body_limit(method, url);
    const char *bad = framing_problem(conn);
    if (bad != NULL) {
        /* The bytes after the headers cannot be trusted to be this request's
         * body: answer and close rather than read on. */
        s->close = true;
        return send_error(conn, s, 400, "bad_framing", bad);
    }
    const char *expect = header(conn, MHD_HTTP_HEADER_EXPECT);
    bool waits = expect != NULL && strcasecmp(expect, "100-continue") == 0;
    const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long n = cl != NULL ? strtoull(cl, NULL, 10) : 0; /* digits: checked */
    if (xsite_refused(srv, conn, method, url, version, s)) {
        s->refused = true; /* answered once the body has gone by, as a 413 is */
        if (waits || n > DISCARD_MAX)
            return send_error(conn, s, s->why.status, s->why.code, s->why.message);
        return MHD_YES;
    }
    if (n > s->limit && (waits || n > DISCARD_MAX)) {
        char msg[96];
        snprintf(msg, sizeof msg, "the request body is over %zu bytes", s->limit);
        return send_error(conn, s, 413, "too_large", msg);
    }
    return MHD_YES;
}

/*
 * Sends the response, unless it hands out claimed jobs to a client that has
 * gone: those are given back at once (attempt not consumed) and the
 * connection is closed.
 */
static enum MHD_Result
send_claims(struct api_server *srv, struct MHD_Connection *conn, struct req_state *s)
{
    if (s->resp.n_claimed > 0 && !conn_alive(conn)) {
        api_release_claimed(srv->ctx, &s->resp);
        return MHD_NO;
    }
    return send_response(conn, s, &s->resp);
}

/* The answer to a body dropped on its way in: over its limit, or over the budget. */
static enum MHD_Result
answer_dropped(struct MHD_Connection *conn, struct req_state *s)
{
    if (s->phase == REQ_TOO_BIG) {
        char msg[96];
        snprintf(msg, sizeof msg, "the request body is over %zu bytes", s->limit);
        return send_error(conn, s, 413, "too_large", msg);
    }
    s->retry_after = true;
    return send_error(conn, s, 503, "busy",
                      "the server is receiving too many large requests "
                      "at once; retry shortly");
}

/* Whether the peer reset the connection (closed it with our bytes unread). */
static bool
peer_reset(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    return ci != NULL && getsockopt(ci->connect_fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 &&
           ti.tcpi_state == TCP_CLOSE;
}

/* The connection closes: a claim answer it reset soon after is given back. */
static void
conn_closed(struct api_server *srv, struct MHD_Connection *conn, struct conn_state *cs)
{
    if (cs->held.n_claimed > 0 &&
        clock_mono_now_us() - cs->answered_mono_us < CLAIM_UNREAD_GRACE_US && peer_reset(conn)) {
        log_at(LOGL_INFO, "http",
               "a claim answer was not read (connection reset); giving its jobs back",
               LF_INT("jobs", (int64_t)cs->held.n_claimed));
        api_release_claimed(srv->ctx, &cs->held);
    }
    conn_forget_claims(cs);
    deadlines_remove(srv->dl, cs->dl);
    free(cs);
}

/* Keeps each connection's state while it is open (deadline, last claim answer). */
static void
on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
              enum MHD_ConnectionNotificationCode code)
{
    struct api_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn_state *cs = calloc(1, sizeof *cs);
        if (cs != NULL && ci != NULL)
            cs->dl = deadlines_add(srv->dl, ci->connect_fd);
        *socket_context = cs; /* NULL on out-of-memory: no deadline, no watch */
    } else if (*socket_context != NULL) {
        conn_closed(srv, conn, *socket_context);
        *socket_context = NULL;
    }
}

/* The answer of a request suspended for a group commit or a long poll, now resumed. */
static enum MHD_Result
answer_resumed(struct api_server *srv, struct MHD_Connection *conn, struct req_state *s)
{
    if (s->phase == REQ_DEFERRED) {
        /* Resumed by the committer: the enqueue is written (or failed). */
        struct api_deferred *d = s->resp.deferred;
        s->resp.deferred = NULL;
        s->phase = REQ_HANDLED;
        d->finish(d, &s->resp);
        d->free(d);
        return send_response(conn, s, &s->resp);
    }
    /* Resumed by the long-poll thread: the answer is ready. */
    lp_waiter_take_response(s->resp.wait, &s->resp);
    s->phase = REQ_HANDLED;
    return send_claims(srv, conn, s);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
           const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
    struct api_server *srv = cls;
    struct req_state *s = *con_cls;
    if (s == NULL)
        return first_call(srv, conn, url, method, version, con_cls);
    if (*upload_data_size == 0)
        deadlines_received(srv->dl, conn_deadline(conn)); /* the whole request is in */
    if (s->status != 0) {
        *upload_data_size = 0; /* answered early (413); the rest is discarded */
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        take_body(srv, s, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (s->phase == REQ_DEFERRED || s->phase == REQ_WAITING)
        return answer_resumed(srv, conn, s);
    if (s->refused)
        return send_error(conn, s, s->why.status, s->why.code, s->why.message);
    if (s->phase == REQ_TOO_BIG || s->phase == REQ_OVER_BUDGET)
        return answer_dropped(conn, s);
    /* Received in full: from here the request counts as in flight for a drain. */
    assert(s->phase == REQ_RECEIVING);
    pthread_mutex_lock(&srv->mu);
    srv->active++;
    s->phase = REQ_HANDLED;
    pthread_mutex_unlock(&srv->mu);
    struct query_collect q = {.n = 0};
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_query, &q);
    if (q.overflow)
        return send_error(conn, s, 400, "invalid_query", "too many query parameters");
    struct api_request req = {
        .method = method,
        .path = url,
        .query = q.v,
        .n_query = q.n,
        .authorization = header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
        .idempotency_key = header(conn, "Idempotency-Key"),
        .traceparent = header(conn, "traceparent"),
        .accept_encoding = header(conn, MHD_HTTP_HEADER_ACCEPT_ENCODING),
        .if_none_match = header(conn, MHD_HTTP_HEADER_IF_NONE_MATCH),
        .last_event_id = header(conn, "Last-Event-ID"),
        .body = s->body ? s->body : "",
        .body_len = s->len,
    };
    api_handle(srv->ctx, &req, &s->resp);
    free(s->body);
    s->body = NULL;
    if (s->resp.deferred != NULL) {
        /* Suspend before starting, so the resume can never come first. */
        s->phase = REQ_DEFERRED;
        MHD_suspend_connection(conn);
        s->resp.deferred->client_alive = conn_alive;
        s->resp.deferred->start(s->resp.deferred, resume_conn, conn);
        return MHD_YES;
    }
    if (s->resp.wait != NULL && srv->ctx->longpoll != NULL) {
        /* Suspend before parking, so the resume can never come first. */
        s->phase = REQ_WAITING;
        MHD_suspend_connection(conn);
        longpoll_add(srv->ctx->longpoll, s->resp.wait, resume_conn, conn_alive, conn);
        return MHD_YES;
    }
    if (s->resp.wait != NULL)
        lp_waiter_take_response(s->resp.wait, &s->resp);
    if (s->resp.events != NULL)
        return send_events(conn, s, &s->resp);
    return send_claims(srv, conn, s);
}

static void
on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
    struct api_server *srv = cls;
    struct req_state *s = *con_cls;
    deadlines_rearm(srv->dl, conn_deadline(conn)); /* the next request's clock */
    if (s == NULL)
        return;
    if (srv->access_log != LOG_ACCESS_OFF) {
        struct access_entry e = {
            .method = s->method,
            .path = s->path,
            .status = s->status,
            .ms = (double)(clock_mono_now_us() - s->start_mono_us) / 1000.0,
            .aborted = toe != MHD_REQUEST_TERMINATED_COMPLETED_OK,
            .claimed = s->resp.n_claimed,
        };
        access_log_write(srv->access_log, srv->access_slow_ms, &e);
    }
    struct conn_state *cs = conn_state(conn);
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK) {
        api_release_claimed(srv->ctx, &s->resp); /* the answer did not get out */
    } else if (s->resp.n_claimed > 0 && cs != NULL) {
        /* Out, but maybe never read: held until the client's next request. */
        conn_forget_claims(cs);
        cs->held.claimed = s->resp.claimed;
        cs->held.n_claimed = s->resp.n_claimed;
        cs->answered_mono_us = clock_mono_now_us();
        s->resp.claimed = NULL;
        s->resp.n_claimed = 0;
    }
    bool counted = s->phase >= REQ_HANDLED; /* in api_server.active */
    size_t reserved = s->reserved;
    free(s->body);
    api_response_fini(&s->resp);
    free(s);
    *con_cls = NULL;
    membudget_give(&srv->bodies, reserved);
    if (reserved >= MEMBUDGET_TRIM_AT)
        membudget_trim();
    if (counted) {
        pthread_mutex_lock(&srv->mu);
        if (--srv->active == 0)
            pthread_cond_broadcast(&srv->idle_cv);
        pthread_mutex_unlock(&srv->mu);
    }
}

/* Resolves host:port into a socket address; "localhost" and numeric only. */
static int
resolve(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len,
        struct jobd_error *err)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    const char *h = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
    if (inet_pton(AF_INET, h, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        *len = sizeof *in4;
        return JOBD_OK;
    }
    if (inet_pton(AF_INET6, h, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *len = sizeof *in6;
        return JOBD_OK;
    }
    return jobd_error_set(err, JOBD_E_INVALID, "listen",
                          "listen host '%s' must be a numeric IPv4/IPv6 address or localhost",
                          host);
}

int
api_server_start(const struct api_server_config *cfg, struct api_ctx *ctx, struct api_server **out,
                 int *bound_port, struct jobd_error *err)
{
    *out = NULL;
    const char *why;
    if (!lazylib_load(&lazylib_mhd, &why))
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, "listen", "%s", why);
    struct sockaddr_storage ss;
    socklen_t sslen;
    int rc = resolve(cfg->host, cfg->port, &ss, &sslen, err);
    if (rc != JOBD_OK)
        return rc;
    struct api_server *srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    srv->ctx = ctx;
    srv->access_log = cfg->access_log;
    srv->access_slow_ms = cfg->access_slow_ms > 0 ? cfg->access_slow_ms : ACCESS_SLOW_MS_DEFAULT;
    srv->quiesced_fd = MHD_INVALID_SOCKET;
    srv->bodies.max = cfg->body_memory ? cfg->body_memory : MEMBUDGET_DEFAULT;
    if (cfg->xsite != NULL)
        srv->xsite = *cfg->xsite;
    rc = deadlines_start(cfg->request_timeout_ms > 0 ? cfg->request_timeout_ms
                                                     : API_REQUEST_TIMEOUT_MS_DEFAULT,
                         &srv->dl, err);
    if (rc != JOBD_OK) {
        free(srv);
        return rc;
    }
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->idle_cv, NULL);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_TURBO; /* see the top */
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    srv->d = MHD_start_daemon(
        flags, (uint16_t)cfg->port, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&ss, MHD_OPTION_THREAD_POOL_SIZE, cfg->threads ? cfg->threads : 4u,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        srv, MHD_OPTION_CONNECTION_TIMEOUT, API_IDLE_TIMEOUT_S, MHD_OPTION_LISTEN_BACKLOG_SIZE,
        511u, MHD_OPTION_CONNECTION_LIMIT,
        cfg->max_connections ? cfg->max_connections : API_MAX_CONNECTIONS_DEFAULT,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_connections_per_ip, MHD_OPTION_END);
    if (srv->d == NULL) {
        deadlines_stop(srv->dl);
        pthread_cond_destroy(&srv->idle_cv);
        pthread_mutex_destroy(&srv->mu);
        free(srv);
        return jobd_error_set(err, JOBD_E_IO, "listen", "cannot listen on %s:%d (in use?)",
                              cfg->host, cfg->port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    *bound_port = cfg->port;
    if (info != NULL && getsockname(info->listen_fd, (struct sockaddr *)&got, &gl) == 0)
        *bound_port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                                      : ((struct sockaddr_in *)&got)->sin_port);
    (void)sslen;
    *out = srv;
    return JOBD_OK;
}

void
api_server_quiesce(struct api_server *s)
{
    if (s != NULL && s->quiesced_fd == MHD_INVALID_SOCKET)
        s->quiesced_fd = MHD_quiesce_daemon(s->d);
}

bool
api_server_drain(struct api_server *s, int timeout_ms)
{
    if (s == NULL)
        return true;
    /* idle_cv is on the default clock, CLOCK_REALTIME. */
    struct timespec deadline = clock_deadline_in(CLOCK_REALTIME, (int64_t)timeout_ms * 1000);
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    while (s->active > 0 && rc == 0)
        rc = pthread_cond_timedwait(&s->idle_cv, &s->mu, &deadline);
    bool idle = s->active == 0;
    pthread_mutex_unlock(&s->mu);
    return idle;
}

void
api_server_stop(struct api_server *s)
{
    if (s == NULL)
        return;
    MHD_stop_daemon(s->d); /* every connection unregistered from s->dl */
    deadlines_stop(s->dl);
    if (s->quiesced_fd != MHD_INVALID_SOCKET)
        close(s->quiesced_fd);
    pthread_cond_destroy(&s->idle_cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
