/*
 * fuzz_request.c — libFuzzer target over the API's request path without a
 * socket: routing, auth, query and body validation, error bodies
 * (api_handle). The store pool points at a URL no backend takes, so every
 * request that passes validation ends as a 503: the target explores what
 * happens before the store, fast and deterministically.
 *
 * Input: the first line is "METHOD PATH[?QUERY]"; the rest is the body.
 * Without libFuzzer (JOBD_FUZZ_STANDALONE) main() replays files given on
 * the command line, so the committed corpus runs as a regression test in
 * every build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/metrics.h"
#include "api/storepool.h"
#include "fuzz_main.h"

static struct api_ctx *
ctx_get(void)
{
    static struct api_ctx ctx;
    static int ready;
    if (!ready) {
        struct jobd_error err = {0};
        const char *tokens[] = {"fuzz-token"};
        if (store_pool_new("nostore://fuzz", NULL, &ctx.pool, &err) != 0 ||
            api_auth_from(tokens, 1, &ctx.auth, &err) != 0)
            abort();
        ctx.metrics = api_metrics_new();
        ready = 1;
    }
    return &ctx;
}

/* Splits "a=b&c=d" (in place) into params. */
static size_t
split_query(char *q, struct api_param *v, size_t max)
{
    size_t n = 0;
    char *save = NULL;
    for (char *kv = strtok_r(q, "&", &save); kv && n < max; kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq++ = '\0';
        v[n++] = (struct api_param){kv, eq ? eq : ""};
    }
    return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t head = nl ? (size_t)(nl - data) : size;
    if (head > 4096)
        return 0;
    char line[4097];
    memcpy(line, data, head);
    line[head] = '\0';
    if (strlen(line) != head)
        return 0; /* a NUL in the request line cannot come from libmicrohttpd */
    char *sp = strchr(line, ' ');
    if (sp == NULL)
        return 0;
    *sp = '\0';
    char *path = sp + 1;
    char *qs = strchr(path, '?');
    struct api_param params[32];
    size_t np = 0;
    if (qs) {
        *qs++ = '\0';
        np = split_query(qs, params, 32);
    }
    const char *body = nl ? (const char *)nl + 1 : "";
    size_t body_len = nl ? size - head - 1 : 0;
    /* Half the inputs carry the token, so both sides of auth are explored. */
    struct api_request req = {.method = line,
                              .path = path,
                              .query = params,
                              .n_query = np,
                              .authorization = (size & 1) ? "Bearer fuzz-token" : NULL,
                              .body = body,
                              .body_len = body_len};
    struct api_response r = {0};
    api_handle(ctx_get(), &req, &r);
    if (r.status < 200 || r.status > 599 || (r.body == NULL && r.wait == NULL && r.status != 204))
        abort();
    api_response_fini(&r);
    return 0;
}
