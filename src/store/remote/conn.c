/*
 * remote/conn.c — one HTTP connection to a jobd API server
 * (remote/internal.h): a curl easy handle with keep-alive, the token from
 * $JOBD_TOKEN, and the mapping of answers onto store errors (no answer or
 * 503 -> JOBD_E_UNAVAILABLE, 409 -> JOBD_E_STALE, 404 -> JOBD_E_NOTFOUND).
 * The remote store (remote/open.c) has one for the worker's loop, its
 * presence thread (remote/presence.c) another, so neither waits on the
 * other's requests.
 */
#include "store/remote/internal.h"

#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "util/lazylib.h"

/* The largest answer we read: a claim of 1000 jobs of small payloads fits. */
#define REMOTE_BODY_MAX (64u * 1024 * 1024)

/*
 * An answer's bytes: the first REMOTE_BODY_MAX kept (the rest dropped, as
 * a headbuf does), in a buffer that grows with the answer. A headbuf of
 * that cap took its 64 MiB at the first byte of every answer: a syscall
 * pair per call, and under ASan a tenth of a second to poison, which put
 * that much between a cancel heard and the heartbeat that stops the job.
 */
struct body_buf {
    char *data; /* NUL-terminated once anything arrived */
    size_t len, cap;
};

static size_t
on_body(char *p, size_t size, size_t n, void *ud)
{
    struct body_buf *b = ud;
    size_t len = size * n;
    size_t take = len < REMOTE_BODY_MAX - b->len ? len : REMOTE_BODY_MAX - b->len;
    if (b->len + take + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + take + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (d == NULL)
            return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, take);
    b->len += take;
    b->data[b->len] = '\0';
    return len;
}

/* curl's progress callback during a long poll: non-zero aborts the call. */
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

int
remote_conn_call(struct remote_conn *r, const char *path, json_t *body, json_t **resp,
                 struct jobd_error *err)
{
    if (resp != NULL)
        *resp = NULL;
    char url[2048];
    snprintf(url, sizeof url, "%s%s", r->url, path);
    char *text = NULL;
    if (body != NULL) {
        text = json_print(body, 0);
        json_decref(body);
        if (text == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    struct body_buf b = {0};
    CURL *c = r->curl;
    curl_easy_setopt(c, CURLOPT_URL, url);
    if (text != NULL) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(text));
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode cc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, NULL);
    if (cc == CURLE_ABORTED_BY_CALLBACK) { /* a long poll the caller ended */
        free(text);
        free(b.data);
        return JOBD_OK;
    }
    free(text);
    int rc = JOBD_OK;
    long status = 0;
    if (cc != CURLE_OK) {
        rc = jobd_error_set(err, JOBD_E_UNAVAILABLE, NULL, "%s: %s", url,
                            errbuf[0] ? errbuf : curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && status < 300) {
        if (resp != NULL && b.len > 0) {
            *resp = json_loadb(b.data, b.len, JSON_DECODE_ANY, NULL);
            if (*resp == NULL)
                rc = jobd_error_set(err, JOBD_E_STORE, NULL, "%s: the answer is not JSON", url);
        }
        goto out;
    }
    const char *msg = "";
    json_t *e = b.len > 0 ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    json_t *m = e != NULL ? json_object_get(json_object_get(e, "error"), "message") : NULL;
    if (json_is_string(m))
        msg = json_string_value(m);
    int code = status == 409                    ? JOBD_E_STALE
               : status == 404                  ? JOBD_E_NOTFOUND
               : status == 400 || status == 413 ? JOBD_E_INVALID
               : status == 401                  ? JOBD_E_UNAUTHORIZED
               : status == 503                  ? JOBD_E_UNAVAILABLE
                                                : JOBD_E_STORE;
    rc = jobd_error_set(err, code, NULL, "%s: HTTP %ld %s", url, status, msg);
    json_decref(e);
out:
    free(b.data);
    return rc;
}

static void
global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

int
remote_conn_init(struct remote_conn *r, const char *url, long timeout_ms, struct jobd_error *err)
{
    const char *why;
    memset(r, 0, sizeof *r);
    if (!lazylib_load(&lazylib_curl, &why))
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, "server", "%s", why);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init);
    r->url = strdup(url);
    r->curl = curl_easy_init();
    if (r->url == NULL || r->curl == NULL) {
        remote_conn_fini(r);
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    size_t len = strlen(r->url);
    while (len > 0 && r->url[len - 1] == '/')
        r->url[--len] = '\0';
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    const char *token = getenv("JOBD_TOKEN");
    if (h != NULL && token != NULL && *token != '\0') {
        char auth[1024];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
        struct curl_slist *h2 = curl_slist_append(h, auth);
        h = h2 != NULL ? h2 : h;
    }
    r->headers = h;
    CURL *c = r->curl;
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, r->headers);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 5000 ? timeout_ms : 5000L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "jobd-worker/" JOBD_VERSION);
    return JOBD_OK;
}


void
remote_conn_interruptible(struct remote_conn *r, const atomic_bool *interrupt,
                          const atomic_bool *also)
{
    r->interrupt[0] = interrupt;
    r->interrupt[1] = also;
    bool on = interrupt != NULL || also != NULL;
    curl_easy_setopt(r->curl, CURLOPT_NOPROGRESS, on ? 0L : 1L);
    curl_easy_setopt(r->curl, CURLOPT_XFERINFOFUNCTION, on ? on_progress : NULL);
    curl_easy_setopt(r->curl, CURLOPT_XFERINFODATA, (void *)r->interrupt);
}

void
remote_conn_fini(struct remote_conn *r)
{
    if (r->curl != NULL)
        curl_easy_cleanup(r->curl);
    curl_slist_free_all(r->headers);
    free(r->url);
    memset(r, 0, sizeof *r);
}
