/*
 * xsite.h — what a web page could make a browser send to the API, refused
 * in one place (docs/API.md, Conventions; docs/OPERATIONS.md, Security).
 *
 * A page on any site can make the browser of someone on the server's
 * machine (or network) send requests to it: a `no-cors` POST with a
 * text/plain body needs no preflight, and DNS rebinding (a name of the
 * attacker's that first points at the attacker, then at 127.0.0.1) lets
 * the page read the answers too. Without tokens nothing else stands in the
 * way. Three rules, checked before the body is read:
 *
 *   1. Host: when no tokens are configured, or --allowed-hosts is given,
 *      the Host header must name an IP address, `localhost` or a name of
 *      --allowed-hosts (403 host_not_allowed). Only a DNS name can be
 *      rebound, so any IP address and any port are fine. An HTTP/1.1
 *      request without Host is a 400 missing_host (libmicrohttpd takes
 *      it); an HTTP/1.0 one passes (no browser sends it).
 *      With tokens and no --allowed-hosts the names clients use are not
 *      checked: a rebinding page has no token.
 *   2. Cross-site: `Sec-Fetch-Site: cross-site`, or an `Origin` whose
 *      host[:port] is neither the Host header's nor a name of
 *      --allowed-hosts (`null` included), is refused (403
 *      cross_site_request) on every route but GET/HEAD of the dashboard's
 *      files, so a link to /ui/ from elsewhere still opens it.
 *   3. Content type: a request other than GET/HEAD that carries a body
 *      must say `Content-Type: application/json` (parameters such as
 *      `charset=utf-8` are fine), and one that says another type is
 *      refused even without a body (415 unsupported_media_type). A bodyless
 *      POST without Content-Type (a cancel) passes.
 */
#ifndef JOBD_API_XSITE_H
#define JOBD_API_XSITE_H

#include <stdbool.h>
#include <stddef.h>

#include "jobd.h"

#define XSITE_MAX_HOSTS 32
#define XSITE_NAME_MAX 253 /* a DNS name's longest text; an IPv6 literal is shorter */

/* One name of --allowed-hosts. */
struct xsite_host {
    char name[XSITE_NAME_MAX + 1]; /* lower case; "[v6]" keeps its brackets */
    unsigned port;                 /* 0: any port */
};

/* The names an operator allows (--allowed-hosts); zeroed = none given. No
 * pointers inside: copy it freely. */
struct api_xsite {
    size_t n;
    struct xsite_host hosts[XSITE_MAX_HOSTS];
};

/* What the check looks at: header values (NULL when absent), all borrowed. */
struct xsite_request {
    const char *method;
    const char *path;
    const char *version; /* "HTTP/1.1"; NULL is taken as HTTP/1.1 */
    const char *host;
    const char *origin;
    const char *sec_fetch_site;
    const char *content_type;
    bool has_body; /* Content-Length over 0, or Transfer-Encoding */
    bool tokens;   /* tokens are configured */
};

/* Why a request is refused: the status, the error code and its message. */
struct xsite_refusal {
    int status;
    const char *code; /* static */
    char message[400];
};

/*
 * Parses a comma-separated list of `name` or `name:port` (`[v6]:port` for
 * an IPv6 address; blanks around the commas are ignored) into *out.
 * JOBD_E_INVALID naming the bad entry (a scheme, a path, `*`, an empty
 * entry, a bad port, more than XSITE_MAX_HOSTS names). NULL or "" gives an
 * empty list.
 */
int api_xsite_parse(const char *list, struct api_xsite *out, struct jobd_error *err);

/*
 * True if the request must be refused (the rules above); *out then says
 * how to answer. p may be NULL (no names given). Thread-safe: p is only
 * read.
 */
bool api_xsite_refuse(const struct api_xsite *p, const struct xsite_request *r,
                      struct xsite_refusal *out);

/* Whether rule 1 applies: no tokens, or names given (for the start-up log). */
bool api_xsite_checks_host(const struct api_xsite *p, bool tokens);

#endif
