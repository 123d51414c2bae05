/*
 * http.c — the http handler runner on libcurl's multi interface (http.h).
 *
 * One thread owns the multi handle and every easy handle; other threads only
 * append to mutex-protected request lists and call curl_multi_wakeup (the
 * one multi call that is thread-safe). Each turn: take requests, let curl
 * move bytes, collect finished transfers. Response bodies are kept up to
 * 64 KiB (beyond that a body is not a result); Retry-After is read from the
 * headers of the final response only (a 100 Continue resets it).
 */
#include "worker/http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/err.h"
#include "core/job.h"
#include "util/capbuf.h"
#include "util/errtext.h"
#include "util/lazylib.h"

int
http_configure(struct handler_conf *h, const char *value, const char *dir, struct jobd_error *err)
{
    (void)dir;
    if (strncmp(value, "http://", 7) != 0 && strncmp(value, "https://", 8) != 0)
        return jobd_error_set(err, JOBD_E_INVALID, "http",
                              "the URL must start with http:// or https://");
    h->url = strdup(value);
    if (h->url == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, "http", "out of memory");
    return JOBD_OK;
}

struct xfer {
    struct run *run;
    CURL *easy;
    struct curl_slist *headers;
    struct headbuf body;
    int64_t retry_after_ms; /* -1 = none */
    enum run_stop stopped;
    char errbuf[CURL_ERROR_SIZE];
    struct xfer *next;
};

struct req {
    struct run *run; /* a new run, or NULL for a stop request */
    int64_t id;
    int32_t attempt;
    enum run_stop why;
    struct req *next;
};

struct http_runner {
    struct run_sink sink;
    CURLM *multi;
    pthread_t thread;
    pthread_mutex_t mu; /* guards reqs and quit */
    struct req *reqs;
    bool quit;
    struct xfer *xfers; /* curl thread only */
};

int64_t
http_retry_after_ms(const char *value, int64_t now_s)
{
    while (*value == ' ' || *value == '\t')
        value++;
    if (*value == '\0')
        return -1;
    if (isdigit((unsigned char)*value)) {
        int64_t s = 0;
        const char *p = value;
        while (isdigit((unsigned char)*p)) {
            if (s > INT64_MAX / 10000)
                return -1;
            s = s * 10 + (*p++ - '0');
        }
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        return *p == '\0' ? s * 1000 : -1;
    }
    time_t t = curl_getdate(value, NULL);
    if (t == (time_t)-1)
        return -1;
    int64_t d = ((int64_t)t - now_s) * 1000;
    return d > 0 ? d : 0;
}

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    if (!headbuf_add(&x->body, p, size * n))
        return 0; /* out of memory: abort the transfer (retryable) */
    return size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t len = size * n;
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        x->retry_after_ms = -1; /* a new response (after 100 Continue, say) */
    } else if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
        char v[128];
        size_t vl = len - 12 < sizeof v - 1 ? len - 12 : sizeof v - 1;
        memcpy(v, p + 12, vl);
        v[vl] = '\0';
        char *e = v + strlen(v);
        while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
            *--e = '\0';
        x->retry_after_ms = http_retry_after_ms(v, (int64_t)time(NULL));
    }
    return len;
}

static void
xfer_free(struct xfer *x)
{
    if (x == NULL)
        return;
    if (x->easy != NULL)
        curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->headers);
    headbuf_fini(&x->body);
    run_free(x->run);
    free(x);
}

static void
deliver_new(struct http_runner *h, struct run *run, enum run_outcome o, const char *msg)
{
    struct run_result *r = run_result_new(run, o, msg);
    if (r != NULL)
        h->sink.deliver(h->sink.ctx, r);
}

static bool
add_header(struct xfer *x, const char *line)
{
    struct curl_slist *l = curl_slist_append(x->headers, line);
    if (l == NULL)
        return false;
    x->headers = l;
    return true;
}

static void
start_xfer(struct http_runner *h, struct run *run)
{
    struct xfer *x = calloc(1, sizeof *x);
    char line[400];
    bool ok = x != NULL;
    if (ok) {
        x->run = run;
        x->retry_after_ms = -1;
        headbuf_init(&x->body, JOB_RESULT_MAX);
        x->easy = curl_easy_init();
        ok = x->easy != NULL;
    }
    ok = ok && add_header(x, "Content-Type: application/json");
    ok = ok && add_header(x, "Expect:");
    snprintf(line, sizeof line, "Idempotency-Key: %s", run->idempotency_key);
    ok = ok && add_header(x, line);
    snprintf(line, sizeof line, "Jobd-Job-Id: %" PRId64, run->id);
    ok = ok && add_header(x, line);
    snprintf(line, sizeof line, "Jobd-Attempt: %" PRId32, run->attempt);
    ok = ok && add_header(x, line);
    if (run->traceparent != NULL) { /* docs/WORKER.md, Trace context */
        snprintf(line, sizeof line, "traceparent: %s", run->traceparent);
        ok = ok && add_header(x, line);
    }
    if (!ok) {
        deliver_new(h, run, RUN_RETRY, "out of memory starting the HTTP call");
        if (x != NULL)
            xfer_free(x);
        else
            run_free(run);
        return;
    }
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_URL, run->handler->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, run->payload);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(run->payload));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "jobd/" JOBD_VERSION);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    if (run->timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)run->timeout_ms);
    if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
        deliver_new(h, run, RUN_RETRY, "cannot start the HTTP call");
        xfer_free(x);
        return;
    }
    x->next = h->xfers;
    h->xfers = x;
}

static void
unlink_xfer(struct http_runner *h, struct xfer *x)
{
    for (struct xfer **pp = &h->xfers; *pp != NULL; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            return;
        }
}

/* The body as a short, printable error detail. */
static void
body_detail(const struct xfer *x, char *buf, size_t len)
{
    size_t n = x->body.len < len - 1 ? x->body.len : len - 1;
    for (size_t i = 0; i < n; i++) {
        char c = x->body.data[i];
        buf[i] = (c == '\0') ? ' ' : c;
    }
    buf[n] = '\0';
}

static struct run_result *
finished(struct xfer *x, CURLcode code)
{
    char msg[JOB_ERROR_MAX];
    struct run_result *r = NULL;
    const char *url = x->run->handler->url;
    if (code == CURLE_OPERATION_TIMEDOUT) {
        snprintf(msg, sizeof msg, "timed out after %" PRId64 "ms calling %s", x->run->timeout_ms,
                 url);
        r = run_result_new(x->run, RUN_RETRY, msg);
        if (r != NULL)
            r->stopped = RUN_STOP_TIMEOUT;
        return r;
    }
    if (code != CURLE_OK) {
        snprintf(msg, sizeof msg, "calling %s: %s", url,
                 x->errbuf[0] != '\0' ? x->errbuf : curl_easy_strerror(code));
        return run_result_new(x->run, RUN_RETRY, msg);
    }
    long status = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && status < 300) {
        r = run_result_new(x->run, RUN_SUCCEEDED, NULL);
        if (r != NULL && !x->body.overflow && x->body.len > 0)
            r->result = run_result_json(x->body.data, x->body.len);
        return r;
    }
    char detail[2048];
    body_detail(x, detail, sizeof detail);
    snprintf(msg, sizeof msg, "HTTP %ld from %s%s%s", status, url, detail[0] ? ": " : "", detail);
    bool dead = status >= 400 && status < 500 && status != 408 && status != 429;
    r = run_result_new(x->run, dead ? RUN_DEAD : RUN_RETRY, msg);
    if (r != NULL && !dead)
        r->retry_after_ms = x->retry_after_ms;
    return r;
}

static bool
take_requests(struct http_runner *h)
{
    pthread_mutex_lock(&h->mu);
    struct req *reqs = h->reqs;
    bool quit = h->quit;
    h->reqs = NULL;
    pthread_mutex_unlock(&h->mu);
    /* reverse: requests were pushed at the head */
    struct req *inorder = NULL;
    while (reqs != NULL) {
        struct req *q = reqs;
        reqs = q->next;
        q->next = inorder;
        inorder = q;
    }
    while (inorder != NULL) {
        struct req *q = inorder;
        inorder = q->next;
        if (q->run != NULL) {
            if (quit)
                run_free(q->run);
            else
                start_xfer(h, q->run);
        } else {
            for (struct xfer *x = h->xfers; x != NULL; x = x->next) {
                if (x->run->id != q->id || x->run->attempt != q->attempt)
                    continue;
                curl_multi_remove_handle(h->multi, x->easy);
                unlink_xfer(h, x);
                char msg[256];
                snprintf(msg, sizeof msg, "%s (HTTP call to %s aborted)", run_stop_text(q->why),
                         x->run->handler->url);
                struct run_result *r = run_result_new(x->run, RUN_RETRY, msg);
                if (r != NULL) {
                    r->stopped = q->why;
                    h->sink.deliver(h->sink.ctx, r);
                }
                xfer_free(x);
                break;
            }
        }
        free(q);
    }
    return quit;
}

static void *
curl_thread(void *arg)
{
    struct http_runner *h = arg;
    for (;;) {
        if (take_requests(h))
            break;
        int running = 0;
        curl_multi_perform(h->multi, &running);
        CURLMsg *m;
        int left = 0;
        while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
            if (m->msg != CURLMSG_DONE)
                continue;
            struct xfer *x = NULL;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            CURLcode code = m->data.result;
            curl_multi_remove_handle(h->multi, x->easy);
            unlink_xfer(h, x);
            struct run_result *r = finished(x, code);
            xfer_free(x);
            if (r != NULL)
                h->sink.deliver(h->sink.ctx, r);
        }
        curl_multi_poll(h->multi, NULL, 0, 1000, NULL);
    }
    while (h->xfers != NULL) {
        struct xfer *x = h->xfers;
        h->xfers = x->next;
        curl_multi_remove_handle(h->multi, x->easy);
        xfer_free(x);
    }
    return NULL;
}

static void
push_req(struct http_runner *h, struct req *q)
{
    pthread_mutex_lock(&h->mu);
    q->next = h->reqs;
    h->reqs = q;
    pthread_mutex_unlock(&h->mu);
    curl_multi_wakeup(h->multi);
}

void
http_runner_start(struct http_runner *h, struct run *run)
{
    struct req *q = calloc(1, sizeof *q);
    if (q == NULL) {
        deliver_new(h, run, RUN_RETRY, "out of memory");
        run_free(run);
        return;
    }
    q->run = run;
    push_req(h, q);
}

void
http_runner_stop(struct http_runner *h, int64_t id, int32_t attempt, enum run_stop why)
{
    struct req *q = calloc(1, sizeof *q);
    if (q == NULL)
        return;
    q->id = id;
    q->attempt = attempt;
    q->why = why;
    push_req(h, q);
}

/* curl_global_init once per process (thread-safe since curl 7.84). */
static void
global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

int
http_runner_new(struct run_sink sink, struct http_runner **out, struct jobd_error *err)
{
    *out = NULL;
    const char *why;
    if (!lazylib_load(&lazylib_curl, &why))
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, NULL, "%s", why);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
    struct http_runner *h = calloc(1, sizeof *h);
    if (h == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    h->sink = sink;
    h->multi = curl_multi_init();
    if (h->multi == NULL) {
        free(h);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "cannot create a curl multi handle");
    }
    pthread_mutex_init(&h->mu, NULL);
    int rc = pthread_create(&h->thread, NULL, curl_thread, h);
    if (rc != 0) {
        curl_multi_cleanup(h->multi);
        pthread_mutex_destroy(&h->mu);
        free(h);
        return jobd_error_set(err, JOBD_E_IO, NULL, "cannot start a thread: %s", errno_text(rc));
    }
    *out = h;
    return JOBD_OK;
}

void
http_runner_free(struct http_runner *h)
{
    if (h == NULL)
        return;
    pthread_mutex_lock(&h->mu);
    h->quit = true;
    pthread_mutex_unlock(&h->mu);
    curl_multi_wakeup(h->multi);
    pthread_join(h->thread, NULL);
    while (h->reqs != NULL) {
        struct req *q = h->reqs;
        h->reqs = q->next;
        run_free(q->run);
        free(q);
    }
    curl_multi_cleanup(h->multi);
    pthread_mutex_destroy(&h->mu);
    free(h);
}
