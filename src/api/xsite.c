/*
 * xsite.c — see xsite.h: the Host, cross-site and content-type rules that
 * keep web pages from driving the API through a visitor's browser. Pure
 * string work on header values, so the HTTP layer (http.c) can refuse a
 * request from its headers alone, before reading its body, and a unit test
 * can drive every rule without a socket.
 */
#include "api/xsite.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/ui.h"
#include "core/err.h"

/* A name or address and its port, as parsed from a Host or an Origin. */
struct authority {
    char name[XSITE_NAME_MAX + 1];
    unsigned port; /* 0: none given */
};

static bool
name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* Parses the digits of a port (1-65535) from s[0..len). */
static bool
parse_port(const char *s, size_t len, unsigned *port)
{
    if (len == 0 || len > 5)
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *port = v;
    return v >= 1 && v <= 65535;
}

/* Parses "name", "name:port", "[v6]" or "[v6]:port" (s[0..len)), lower-cased. */
static bool
parse_authority(const char *s, size_t len, struct authority *a)
{
    size_t n;
    if (len == 0)
        return false;
    if (s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (close == NULL)
            return false;
        n = (size_t)(close - s) + 1;
        for (size_t i = 1; i + 1 < n; i++)
            if (!isxdigit((unsigned char)s[i]) && s[i] != ':' && s[i] != '.')
                return false;
    } else {
        for (n = 0; n < len && s[n] != ':'; n++)
            if (!name_char(s[n]))
                return false;
    }
    if (n < (s[0] == '[' ? 3u : 1u) || n > XSITE_NAME_MAX) /* not "" nor "[]" */
        return false;
    for (size_t i = 0; i < n; i++)
        a->name[i] = (char)tolower((unsigned char)s[i]);
    a->name[n] = '\0';
    a->port = 0;
    if (n == len)
        return true;
    return s[n] == ':' && parse_port(s + n + 1, len - n - 1, &a->port);
}

/* True if name is an IPv4 address or a bracketed IPv6 one: no DNS, no rebinding. */
static bool
is_address(const char *name)
{
    unsigned char buf[16];
    size_t n = strlen(name);
    if (n > 2 && name[0] == '[' && name[n - 1] == ']') {
        char inner[XSITE_NAME_MAX + 1];
        snprintf(inner, sizeof inner, "%.*s", (int)(n - 2), name + 1);
        return inet_pton(AF_INET6, inner, buf) == 1;
    }
    return inet_pton(AF_INET, name, buf) == 1;
}

/* True if a is one of the names given (a name without a port: any port). */
static bool
listed(const struct api_xsite *p, const struct authority *a)
{
    for (size_t i = 0; p != NULL && i < p->n; i++)
        if (strcmp(p->hosts[i].name, a->name) == 0 &&
            (p->hosts[i].port == 0 || p->hosts[i].port == a->port))
            return true;
    return false;
}

/* One entry of the list, s[0..len), trimmed; appended to out. */
static int
parse_entry(const char *s, size_t len, struct api_xsite *out, struct jobd_error *err)
{
    while (len > 0 && (*s == ' ' || *s == '\t'))
        s++, len--;
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len == 0)
        return jobd_error_set(err, JOBD_E_INVALID, "allowed-hosts",
                              "--allowed-hosts has an empty entry (names are separated by "
                              "single commas)");
    struct authority a;
    if (!parse_authority(s, len, &a))
        return jobd_error_set(err, JOBD_E_INVALID, "allowed-hosts",
                              "--allowed-hosts: '%.*s' is not a host name or address with an "
                              "optional :port (no scheme, path or wildcard)",
                              (int)(len > 200 ? 200 : len), s);
    if (out->n == XSITE_MAX_HOSTS)
        return jobd_error_set(err, JOBD_E_INVALID, "allowed-hosts",
                              "--allowed-hosts lists more than %d names", XSITE_MAX_HOSTS);
    memcpy(out->hosts[out->n].name, a.name, sizeof a.name);
    out->hosts[out->n++].port = a.port;
    return JOBD_OK;
}

int
api_xsite_parse(const char *list, struct api_xsite *out, struct jobd_error *err)
{
    memset(out, 0, sizeof *out);
    if (list == NULL || list[0] == '\0')
        return JOBD_OK;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        int rc = parse_entry(p, len, out, err);
        if (rc != JOBD_OK)
            return rc;
        if (p[len] == '\0')
            return JOBD_OK;
        p += len + 1;
    }
}

bool
api_xsite_checks_host(const struct api_xsite *p, bool tokens)
{
    return !tokens || (p != NULL && p->n > 0);
}

static bool refuse(struct xsite_refusal *out, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fills out and returns true. */
static bool
refuse(struct xsite_refusal *out, int status, const char *code, const char *fmt, ...)
{
    out->status = status;
    out->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof out->message, fmt, ap);
    va_end(ap);
    return true;
}

/* Rule 1 (xsite.h): the Host names this server, or may name anything. */
static bool
host_refused(const struct api_xsite *p, const struct xsite_request *r, struct xsite_refusal *out)
{
    if (r->host == NULL && (r->version == NULL || strcmp(r->version, "HTTP/1.0") != 0))
        return refuse(out, 400, "missing_host", "an HTTP/1.1 request must have a Host header");
    if (r->host == NULL || !api_xsite_checks_host(p, r->tokens))
        return false;
    struct authority a;
    if (!parse_authority(r->host, strlen(r->host), &a))
        return refuse(out, 403, "host_not_allowed",
                      "the Host header '%.100s' is not a host "
                      "name or address with an optional :port",
                      r->host);
    if (is_address(a.name) || strcmp(a.name, "localhost") == 0 || listed(p, &a))
        return false;
    return refuse(out, 403, "host_not_allowed",
                  "this server does not answer to the name in "
                  "Host: '%.100s' (only IP addresses, localhost and --allowed-hosts); add a "
                  "name it is reached by to --allowed-hosts",
                  r->host);
}

/* The part of an Origin after "scheme://", if it is one; else NULL. */
static const char *
origin_authority(const char *origin)
{
    const char *p = origin;
    if (!isalpha((unsigned char)*p))
        return NULL;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    return strncmp(p, "://", 3) == 0 ? p + 3 : NULL;
}

/* Rule 2 (xsite.h): a page of another origin, or of another site, sent it. */
static bool
cross_site(const struct api_xsite *p, const struct xsite_request *r, struct xsite_refusal *out)
{
    bool browse =
        (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0) && api_ui_path(r->path);
    if (browse)
        return false;
    if (r->sec_fetch_site != NULL && strcasecmp(r->sec_fetch_site, "cross-site") == 0)
        return refuse(out, 403, "cross_site_request",
                      "a request a web page of another site "
                      "made (Sec-Fetch-Site: cross-site) is refused");
    if (r->origin == NULL)
        return false;
    const char *auth = origin_authority(r->origin);
    struct authority o, h;
    if (auth != NULL && parse_authority(auth, strlen(auth), &o)) {
        if (r->host != NULL && parse_authority(r->host, strlen(r->host), &h) &&
            strcmp(o.name, h.name) == 0 && o.port == h.port)
            return false; /* same origin: the dashboard's own calls */
        if (listed(p, &o))
            return false;
    }
    return refuse(out, 403, "cross_site_request",
                  "a request made by the web page at Origin "
                  "'%.100s' is refused: the API answers pages of its own origin only (Host "
                  "'%.100s'); a name it is reached by through a proxy goes in --allowed-hosts",
                  r->origin, r->host != NULL ? r->host : "");
}

/* True if a Content-Type value's media type is application/json. */
static bool
is_json(const char *ct)
{
    ct += strspn(ct, " \t");
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    return n == 16 && strncasecmp(ct, "application/json", 16) == 0;
}

/* Rule 3 (xsite.h): a body is JSON, and says so. */
static bool
not_json(const struct xsite_request *r, struct xsite_refusal *out)
{
    if (strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0)
        return false;
    if (r->content_type != NULL && !is_json(r->content_type))
        return refuse(out, 415, "unsupported_media_type",
                      "the request must be JSON sent with "
                      "Content-Type: application/json, not '%.100s'",
                      r->content_type);
    if (r->content_type == NULL && r->has_body)
        return refuse(out, 415, "unsupported_media_type",
                      "a request body must come with "
                      "Content-Type: application/json (curl: -H 'Content-Type: "
                      "application/json')");
    return false;
}

bool
api_xsite_refuse(const struct api_xsite *p, const struct xsite_request *r,
                 struct xsite_refusal *out)
{
    return host_refused(p, r, out) || cross_site(p, r, out) || not_json(r, out);
}
