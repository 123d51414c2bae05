/*
 * remote/conn.c — one HTTP connection to a jobd API server
 * (remote/internal.h): util/httpc.h's client (keep-alive, the token from
 * $JOBD_TOKEN), and the mapping of its answers onto store errors (no answer or
 * 503 -> JOBD_E_UNAVAILABLE, 409 -> JOBD_E_STALE, 404 -> JOBD_E_NOTFOUND).
 * The remote store (remote/open.c) has one for the worker's loop, its
 * presence thread (remote/presence.c) another, so neither waits on the
 * other's requests.
 */
#include "store/remote/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"

/* The largest answer we read: a claim of 1000 jobs of small payloads fits. */
#define REMOTE_BODY_MAX (64u * 1024 * 1024)

int
remote_conn_call(struct remote_conn *r, const char *path, json_t *body, json_t **resp,
                 struct jobd_error *err)
{
    if (resp != NULL)
        *resp = NULL;
    char *text = NULL;
    if (body != NULL) {
        text = json_print(body, 0);
        json_decref(body);
        if (text == NULL)
            return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    }
    struct httpc_resp a;
    char why[512];
    int hc = httpc_request(&r->http, text != NULL ? "POST" : "GET", path, text, REMOTE_BODY_MAX, &a,
                           why, sizeof why);
    free(text);
    if (hc == HTTPC_INTERRUPTED) /* a long poll the caller ended */
        return JOBD_OK;
    if (hc == HTTPC_NOMEM)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    if (hc != HTTPC_OK)
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, NULL, "%s", why);
    int rc = JOBD_OK;
    if (a.overflow) {
        rc = jobd_error_set(err, JOBD_E_STORE, NULL, "%s%s: the answer is over %u bytes",
                            r->http.base, path, REMOTE_BODY_MAX);
    } else if (a.status >= 200 && a.status < 300) {
        if (resp != NULL && a.len > 0) {
            *resp = json_loadb(a.body, a.len, JSON_DECODE_ANY, NULL);
            if (*resp == NULL)
                rc = jobd_error_set(err, JOBD_E_STORE, NULL, "%s%s: the answer is not JSON",
                                    r->http.base, path);
        }
    } else {
        const char *msg = "";
        json_t *e = a.len > 0 ? json_loadb(a.body, a.len, 0, NULL) : NULL;
        json_t *m = e != NULL ? json_object_get(json_object_get(e, "error"), "message") : NULL;
        if (json_is_string(m))
            msg = json_string_value(m);
        long status = a.status;
        int code = status == 409                    ? JOBD_E_STALE
                   : status == 404                  ? JOBD_E_NOTFOUND
                   : status == 400 || status == 413 ? JOBD_E_INVALID
                   : status == 401                  ? JOBD_E_UNAUTHORIZED
                   : status == 503                  ? JOBD_E_UNAVAILABLE
                                                    : JOBD_E_STORE;
        rc = jobd_error_set(err, code, NULL, "%s%s: HTTP %ld %s", r->http.base, path, status, msg);
        json_decref(e);
    }
    httpc_resp_fini(&a);
    return rc;
}

int
remote_conn_init(struct remote_conn *r, const char *url, long timeout_ms, struct jobd_error *err)
{
    char why[256];
    int hc = httpc_init(&r->http, url, timeout_ms < 5000 ? timeout_ms : 5000L, timeout_ms,
                        "jobd-worker/" JOBD_VERSION, why, sizeof why);
    if (hc == HTTPC_NOMEM)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    if (hc != HTTPC_OK)
        return jobd_error_set(err, JOBD_E_UNAVAILABLE, "server", "%s", why);
    return JOBD_OK;
}

void
remote_conn_fini(struct remote_conn *r)
{
    httpc_fini(&r->http);
}
