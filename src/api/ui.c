/*
 * ui.c — serves the dashboard's embedded files (ui.h) at /ui/.
 *
 * The files are static bytes in the binary, so an answer points at them
 * (body_static) instead of copying. Every answer under /ui/, errors too,
 * carries the security headers: a Content-Security-Policy that allows only
 * the server's own scripts, styles and API (no inline code, no framing),
 * and no referrer (a job id in the URL fragment stays here anyway); the
 * HTTP layer adds nosniff to every answer, these too (http.c).
 * `no-cache` with an ETag: a browser revalidates (a cheap 304) so a new
 * jobd binary's dashboard is picked up at once.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/apierr.h"
#include "api/ui.h"

#define UI_CSP "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

bool
api_ui_path(const char *path)
{
    return strcmp(path, "/ui") == 0 || strncmp(path, "/ui/", 4) == 0;
}

static void
add_header(struct api_response *out, const char *name, const char *value)
{
    if (out->n_headers < API_MAX_HEADERS)
        out->headers[out->n_headers++] = (struct api_header){name, value};
}

/* True if an Accept-Encoding value lists gzip, and not with quality 0. */
static bool
accepts_gzip(const char *ae)
{
    for (const char *p = ae; p != NULL && *p != '\0'; p += strcspn(p, ",")) {
        p += strspn(p, " \t,");
        size_t n = strcspn(p, " \t,;");
        if (n != 4 || strncasecmp(p, "gzip", 4) != 0)
            continue;
        const char *q = p + n + strspn(p + n, " \t");
        if (*q != ';')
            return true;
        q += 1 + strspn(q + 1, " \t");
        if (strncasecmp(q, "q=0", 3) != 0)
            return true;
        q += 3; /* "q=0", "q=0.0", "q=0.000" refuse; "q=0.5" accepts */
        size_t zeros = strspn(q, ".0");
        return !(q[zeros] == '\0' || q[zeros] == ',' || q[zeros] == ' ');
    }
    return false;
}

/* True if an If-None-Match value names etag (or is "*"). */
static bool
etag_matches(const char *inm, const char *etag)
{
    if (inm == NULL)
        return false;
    if (strcmp(inm, "*") == 0)
        return true;
    size_t n = strlen(etag);
    for (const char *p = strstr(inm, etag); p != NULL; p = strstr(p + 1, etag))
        if ((p == inm || p[-1] == ' ' || p[-1] == ',' || p[-1] == '/') &&
            (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
            return true;
    return false;
}

static const struct ui_asset *
find_asset(const char *path)
{
    const char *want = strcmp(path, "/ui/") == 0 ? "/ui/index.html" : path;
    for (size_t i = 0; i < ui_n_assets; i++)
        if (strcmp(ui_assets[i].path, want) == 0)
            return &ui_assets[i];
    return NULL;
}

void
api_ui_serve(const struct api_request *req, struct api_response *out)
{
    add_header(out, "Content-Security-Policy", UI_CSP);
    add_header(out, "Referrer-Policy", "no-referrer");
    add_header(out, "X-Frame-Options", "DENY");
    bool get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
    if (!get) {
        out->allow_header = true;
        snprintf(out->allow, sizeof out->allow, "GET, HEAD");
        api_error(out, 405, "method_not_allowed", NULL, "the dashboard allows GET, not %s",
                  req->method);
        return;
    }
    if (strcmp(req->path, "/ui") == 0) {
        add_header(out, "Location", "/ui/");
        api_error(out, 308, "moved", NULL, "the dashboard is at /ui/");
        return;
    }
    const struct ui_asset *a = find_asset(req->path);
    if (a == NULL) {
        api_error(out, 404, "not_found", NULL, "the dashboard has no file %.200s", req->path);
        return;
    }
    add_header(out, "Cache-Control", "no-cache");
    add_header(out, "ETag", a->etag);
    add_header(out, "Vary", "Accept-Encoding");
    out->content_type = a->content_type;
    if (etag_matches(req->if_none_match, a->etag)) {
        out->status = 304;
        return;
    }
    out->status = 200;
    out->body_static = true;
    if (accepts_gzip(req->accept_encoding)) {
        add_header(out, "Content-Encoding", "gzip");
        out->body = (char *)a->gz;
        out->body_len = a->gz_len;
    } else {
        out->body = (char *)a->body;
        out->body_len = a->body_len;
    }
}
