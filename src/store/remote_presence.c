/*
 * remote_presence.c — worker presence (store/operator.h) for a worker that
 * talks to an API server (jobd worker --server): the presence calls go to
 * POST /v1/workers, /v1/workers/{id}/presence and /v1/workers/{id}/withdraw,
 * which write the same rows a --db worker writes itself.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "store/operator.h"
#include "store/remote.h"

/* The path /v1/workers/ID/what with ID escaped, in buf; false if it does not fit. */
static bool
worker_path(const char *id, const char *what, char *buf, size_t len)
{
    char *e = curl_easy_escape(NULL, id, 0);
    if (e == NULL)
        return false;
    int n = snprintf(buf, len, "/v1/workers/%s/%s", e, what);
    curl_free(e);
    return n > 0 && (size_t)n < len;
}

static int
rp_announce(struct store *st, const struct worker_info *w, struct jobd_error *err)
{
    json_t *queues = json_loads(w->queues ? w->queues : "[]", 0, NULL);
    json_t *types = json_loads(w->types ? w->types : "[]", 0, NULL);
    json_t *body = json_pack("{s:s, s:s, s:I, s:s, s:o, s:o, s:i, s:I}", "id", w->id,
                             "hostname", w->hostname ? w->hostname : "", "pid",
                             (json_int_t)w->pid, "version", w->version ? w->version : "",
                             "queues", queues ? queues : json_array(), "types",
                             types ? types : json_array(), "concurrency", (int)w->concurrency,
                             "heartbeat_ms", (json_int_t)w->heartbeat_ms);
    if (body == NULL)
        return jobd_error_set(err, JOBD_E_NOMEM, NULL, "out of memory");
    return remote_call(st, "/v1/workers", body, NULL, err);
}

static int
rp_seen(struct store *st, const char *id, bool draining, struct jobd_error *err)
{
    char path[512];
    if (!worker_path(id, "presence", path, sizeof path))
        return jobd_error_set(err, JOBD_E_INVALID, "id", "worker id too long");
    return remote_call(st, path, json_pack("{s:b}", "draining", draining), NULL, err);
}

static int
rp_withdraw(struct store *st, const char *id, struct jobd_error *err)
{
    char path[512];
    if (!worker_path(id, "withdraw", path, sizeof path))
        return jobd_error_set(err, JOBD_E_INVALID, "id", "worker id too long");
    return remote_call(st, path, json_object(), NULL, err);
}

const struct store_operator_ops remote_operator_ops = {
    .worker_announce = rp_announce,
    .worker_seen = rp_seen,
    .worker_withdraw = rp_withdraw,
};
