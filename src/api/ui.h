/*
 * ui.h — the dashboard's files, built into the binary (cmake/ui_assets.cmake
 * generates ui_assets.c from ui/), and the one function that serves them at
 * /ui/ on the API listener.
 *
 * Serving needs no token: the page itself holds no data and asks for a
 * token; every API call it makes carries one. Every answer under /ui/
 * carries a Content-Security-Policy without inline script or style, so a
 * value that slipped into markup still could not run.
 */
#ifndef JOBD_API_UI_H
#define JOBD_API_UI_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api.h"

/* One embedded file; everything static, generated at build time. */
struct ui_asset {
    const char *path; /* "/ui/app.js" */
    const char *content_type;
    const unsigned char *body;
    size_t body_len;
    const unsigned char *gz; /* the same bytes gzip-compressed */
    size_t gz_len;
    const char *etag; /* quoted, from the content */
};

extern const struct ui_asset ui_assets[];
extern const size_t ui_n_assets;

/* True if path is the dashboard's ("/ui" or under "/ui/"). */
bool api_ui_path(const char *path);

/*
 * Answers a request for a path under /ui/ (api_ui_path is true): the file
 * (index.html for "/ui/"), gzip-compressed when the client accepts it, 304
 * when If-None-Match has its ETag, a redirect from "/ui" to "/ui/", 404 for
 * no such file, 405 for a method other than GET and HEAD. out's body is
 * static (body_static) for a file. Never needs the store or a token.
 */
void api_ui_serve(const struct api_request *req, struct api_response *out);

#endif
