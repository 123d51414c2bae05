/*
 * http.c (cli) — see http.h. One easy handle per request: the CLI makes a
 * handful of requests per run, so connection reuse is not worth the state.
 */
#include "cli/http.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "util/lazylib.h"

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

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
    struct cli_http_resp *r = arg;
    size_t len = size * n;
    if (r->len + len > CLI_RESP_MAX)
        return 0; /* aborts the transfer */
    char *b = realloc(r->body, r->len + len + 1);
    if (b == NULL)
        return 0;
    memcpy(b + r->len, p, len);
    r->body = b;
    r->len += len;
    r->body[r->len] = '\0';
    return len;
}

/* Notes "Idempotent-Replayed: true" (any case, any spacing) in the answer's headers. */
static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
    struct cli_http_resp *r = arg;
    static const char name[] = "idempotent-replayed:";
    size_t len = size * n, k = sizeof name - 1;
    if (len > k && strncasecmp(p, name, k) == 0) {
        while (k < len && (p[k] == ' ' || p[k] == '\t'))
            k++;
        r->replayed = len - k >= 4 && strncasecmp(p + k, "true", 4) == 0;
    }
    return len;
}

int
cli_http(const char *cmd, const char *base, const char *method, const char *path, const char *body,
         struct cli_http_resp *out)
{
    memset(out, 0, sizeof *out);
    const char *why;
    if (!lazylib_load(&lazylib_curl, &why)) {
        fprintf(stderr, "jobd %s: %s\n", cmd, why);
        return CLI_FAILED;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "jobd %s: cannot initialise libcurl\n", cmd);
        return CLI_FAILED;
    }
    CURL *h = curl_easy_init();
    size_t ulen = strlen(base) + strlen(path) + 1;
    char *url = malloc(ulen);
    struct curl_slist *hdrs = NULL;
    char *auth = NULL;
    int rc = CLI_FAILED;
    if (h == NULL || url == NULL)
        goto out;
    /* Tolerate a trailing slash on the base URL. */
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/')
        bl--;
    snprintf(url, ulen, "%.*s%s", (int)bl, base, path);
    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Expect:");
    const char *tok = getenv("JOBD_TOKEN");
    if (tok != NULL && *tok != '\0') {
        size_t al = strlen(tok) + 32;
        auth = malloc(al);
        if (auth == NULL)
            goto out;
        snprintf(auth, al, "Authorization: Bearer %s", tok);
        hdrs = curl_slist_append(hdrs, auth);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    if (body != NULL) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    }
    CURLcode cc = curl_easy_perform(h);
    if (cc != CURLE_OK) {
        fprintf(stderr, "jobd %s: cannot reach %s: %s\n", cmd, base, curl_easy_strerror(cc));
        rc = CLI_UNREACHABLE;
        free(out->body);
        out->body = NULL;
        out->len = 0;
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
    if (out->body == NULL)
        out->body = calloc(1, 1);
    rc = out->body ? CLI_OK : CLI_FAILED;
out:
    curl_slist_free_all(hdrs);
    free(auth);
    free(url);
    if (h)
        curl_easy_cleanup(h);
    curl_global_cleanup();
    return rc;
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
    char *e = curl_escape(s, 0);
    char *copy = e ? strdup(e) : NULL;
    curl_free(e);
    return copy;
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
