/*
 * httpc.c — see httpc.h. The easy handle is kept between requests for
 * keep-alive, so every option a request sets is set again by the next one
 * (a GET after a POST must not send the POST's body again).
 */
#include "util/httpc.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/lazylib.h"

/* The answer being read: a body that grows (doubling) up to max, and the replay flag. */
struct reading {
    struct httpc_resp *r;
    size_t cap, max;
    bool oom;
};

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
    struct reading *rd = ud;
    struct httpc_resp *r = rd->r;
    size_t len = size * n, take = len;
    if (r->len + take > rd->max) {
        take = rd->max - r->len;
        r->overflow = true;
    }
    if (r->len + take + 1 > rd->cap) {
        size_t cap = rd->cap ? rd->cap : 4096;
        while (cap < r->len + take + 1)
            cap *= 2;
        char *b = realloc(r->body, cap);
        if (b == NULL) {
            rd->oom = true;
            return 0; /* aborts the transfer */
        }
        r->body = b;
        rd->cap = cap;
    }
    memcpy(r->body + r->len, p, take);
    r->len += take;
    r->body[r->len] = '\0';
    return len;
}

/* Notes "Idempotent-Replayed: true" (any case, any spacing) among the answer's headers. */
static size_t
on_header(char *p, size_t size, size_t n, void *ud)
{
    struct reading *rd = ud;
    static const char name[] = "idempotent-replayed:";
    size_t len = size * n, k = sizeof name - 1;
    if (len > k && strncasecmp(p, name, k) == 0) {
        while (k < len && (p[k] == ' ' || p[k] == '\t'))
            k++;
        rd->r->replayed = len - k >= 4 && strncasecmp(p + k, "true", 4) == 0;
    }
    return len;
}

/* curl's progress callback while interruptible: non-zero aborts the request. */
static int
on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const atomic_bool *const *interrupt = ud;
    return (interrupt[0] != NULL && atomic_load(interrupt[0])) ||
                   (interrupt[1] != NULL && atomic_load(interrupt[1]))
               ? 1
               : 0;
}

static void
global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The headers every request carries; NULL on out-of-memory. */
static struct curl_slist *
request_headers(void)
{
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    struct curl_slist *h2 = h != NULL ? curl_slist_append(h, "Expect:") : NULL;
    const char *token = getenv("JOBD_TOKEN");
    if (h2 != NULL && token != NULL && *token != '\0') {
        size_t len = strlen(token) + 32;
        char *auth = malloc(len);
        if (auth != NULL) {
            snprintf(auth, len, "Authorization: Bearer %s", token);
            h2 = curl_slist_append(h, auth); /* copies it */
            free(auth);
        } else {
            h2 = NULL;
        }
    }
    if (h2 == NULL)
        curl_slist_free_all(h);
    return h2;
}

int
httpc_init(struct httpc *h, const char *base, long connect_ms, long timeout_ms,
           const char *user_agent, char *why, size_t why_len)
{
    memset(h, 0, sizeof *h);
    const char *reason;
    if (!lazylib_load(&lazylib_curl, &reason)) {
        snprintf(why, why_len, "%s", reason);
        return HTTPC_NOLIB;
    }
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
    h->base = strdup(base);
    h->curl = curl_easy_init();
    h->headers = request_headers();
    if (h->base == NULL || h->curl == NULL || h->headers == NULL) {
        snprintf(why, why_len, "out of memory");
        return HTTPC_NOMEM;
    }
    size_t len = strlen(h->base);
    while (len > 0 && h->base[len - 1] == '/')
        h->base[--len] = '\0';
    CURL *c = h->curl;
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->headers);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    if (user_agent != NULL)
        curl_easy_setopt(c, CURLOPT_USERAGENT, user_agent);
    return HTTPC_OK;
}

/* Sets the method and body of the next request on c, undoing the last one's. */
static void
set_method(CURL *c, const char *method, const char *body)
{
    bool post = strcmp(method, "POST") == 0;
    if (body != NULL || post) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body != NULL ? body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)(body != NULL ? strlen(body) : 0));
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    bool plain = post || strcmp(method, "GET") == 0;
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, plain ? NULL : method);
}

int
httpc_request(struct httpc *h, const char *method, const char *path, const char *body, size_t max,
              struct httpc_resp *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    size_t ulen = strlen(h->base) + strlen(path) + 1;
    char *url = malloc(ulen);
    if (url == NULL) {
        snprintf(why, why_len, "out of memory");
        return HTTPC_NOMEM;
    }
    snprintf(url, ulen, "%s%s", h->base, path);
    CURL *c = h->curl;
    struct reading rd = {.r = out, .max = max};
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    set_method(c, method, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &rd);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &rd);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode cc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
    int rc = HTTPC_OK;
    if (cc == CURLE_OK && out->body == NULL && (out->body = calloc(1, 1)) == NULL)
        rd.oom = true;
    if (rd.oom) {
        snprintf(why, why_len, "out of memory");
        rc = HTTPC_NOMEM;
    } else if (cc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(why, why_len, "%s: interrupted", url);
        rc = HTTPC_INTERRUPTED;
    } else if (cc != CURLE_OK) {
        snprintf(why, why_len, "%s: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(cc));
        rc = HTTPC_UNREACHABLE;
    } else {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    }
    if (rc != HTTPC_OK)
        httpc_resp_fini(out);
    free(url);
    return rc;
}

void
httpc_timeout(struct httpc *h, long timeout_ms)
{
    curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
}

void
httpc_interruptible(struct httpc *h, const atomic_bool *interrupt, const atomic_bool *also)
{
    h->interrupt[0] = interrupt;
    h->interrupt[1] = also;
    bool on = interrupt != NULL || also != NULL;
    curl_easy_setopt(h->curl, CURLOPT_NOPROGRESS, on ? 0L : 1L);
    curl_easy_setopt(h->curl, CURLOPT_XFERINFOFUNCTION, on ? on_progress : NULL);
    curl_easy_setopt(h->curl, CURLOPT_XFERINFODATA, (void *)h->interrupt);
}

void
httpc_resp_fini(struct httpc_resp *r)
{
    free(r->body);
    memset(r, 0, sizeof *r);
}

void
httpc_fini(struct httpc *h)
{
    if (h->curl != NULL)
        curl_easy_cleanup(h->curl);
    if (h->headers != NULL)
        curl_slist_free_all(h->headers);
    free(h->base);
    memset(h, 0, sizeof *h);
}

char *
httpc_escape(const char *s)
{
    const char *why;
    if (!lazylib_load(&lazylib_curl, &why))
        return NULL;
    char *e = curl_escape(s, 0);
    char *copy = e != NULL ? strdup(e) : NULL;
    curl_free(e);
    return copy;
}
