/*
 * http.c (cli) — see http.h, over jobd's one HTTP client (util/httpc.h). One
 * connection per request: the CLI makes a handful of requests per run, so
 * connection reuse is not worth the state.
 */
#include "cli/http.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "util/httpc.h"

#define CLI_RESP_MAX (64u * 1024 * 1024)

const char *
cli_server_url(const char *flag_value)
{
    if (flag_value != NULL && *flag_value != '\0')
        return flag_value;
    const char *env = getenv("JOBD_SERVER");
    if (env != NULL && *env != '\0')
        return env;
    return "http://127.0.0.1:8080";
}

int
cli_http(const char *cmd, const char *base, const char *method, const char *path, const char *body,
         struct cli_http_resp *out)
{
    memset(out, 0, sizeof *out);
    struct httpc h;
    char why[512];
    int hc = httpc_init(&h, base, 10000, 120000, NULL, why, sizeof why);
    struct httpc_resp a = {0};
    if (hc == HTTPC_OK)
        hc = httpc_request(&h, method, path, body, CLI_RESP_MAX, &a, why, sizeof why);
    httpc_fini(&h);
    if (hc == HTTPC_UNREACHABLE) {
        fprintf(stderr, "jobd %s: cannot reach %s\n", cmd, why);
        return CLI_UNREACHABLE;
    }
    if (hc != HTTPC_OK) {
        fprintf(stderr, "jobd %s: %s\n", cmd, why);
        return CLI_FAILED;
    }
    if (a.overflow) {
        fprintf(stderr, "jobd %s: the answer of %s is over %u bytes\n", cmd, base, CLI_RESP_MAX);
        httpc_resp_fini(&a);
        return CLI_FAILED;
    }
    *out = (struct cli_http_resp){
        .status = a.status, .body = a.body, .len = a.len, .replayed = a.replayed};
    return CLI_OK;
}

int
cli_http_exit(long status)
{
    if (status == 400)
        return CLI_USAGE;
    return status == 503 ? CLI_UNREACHABLE : CLI_FAILED;
}

int
cli_http_fail(const char *cmd, const struct cli_http_resp *r)
{
    json_t *o = json_loadb(r->body ? r->body : "", r->len, 0, NULL);
    json_t *e = json_object_get(json_object_get(o, "error"), "message");
    if (json_is_string(e))
        fprintf(stderr, "jobd %s: %s (HTTP %ld)\n", cmd, json_string_value(e), r->status);
    else
        fprintf(stderr, "jobd %s: the server answered HTTP %ld\n", cmd, r->status);
    json_decref(o);
    return cli_http_exit(r->status);
}

char *
cli_http_escape(const char *s)
{
    return httpc_escape(s);
}

bool
cli_query_add(char *q, size_t qlen, const char *key, const char *v)
{
    if (v == NULL)
        return true;
    char *e = cli_http_escape(v);
    if (e == NULL)
        return false;
    size_t used = strlen(q);
    int n = snprintf(q + used, qlen - used, "%s%s=%s", used ? "&" : "?", key, e);
    free(e);
    return n > 0 && (size_t)n < qlen - used;
}

/* Sends and prints the body of a 2xx answer; returns the exit status. */
int
cli_send_print(const char *cmd, const char *server, const char *method, const char *path,
               const char *body)
{
    return cli_send_print_status(cmd, server, method, path, body, NULL);
}

int
cli_send_print_status(const char *cmd, const char *server, const char *method, const char *path,
                      const char *body, struct cli_http_resp *resp_info)
{
    struct cli_http_resp r;
    int rc = cli_http(cmd, server, method, path, body, &r);
    if (rc != CLI_OK)
        return rc;
    if (resp_info != NULL)
        *resp_info = (struct cli_http_resp){.status = r.status, .replayed = r.replayed};
    if (r.status < 200 || r.status > 299) {
        rc = cli_http_fail(cmd, &r);
    } else {
        fputs(r.body, stdout);
        if (r.len == 0 || r.body[r.len - 1] != '\n')
            fputc('\n', stdout);
    }
    free(r.body);
    return rc;
}
