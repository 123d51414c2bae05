/*
 * lazy_curl.c — libcurl's functions that jobd calls, as stubs that load
 * libcurl on first use (see lazylib.h for why; rows as in lazy_pq.c).
 * curl_easy_setopt and curl_easy_getinfo are variadic: they are forwarded
 * by hand below, reading the one argument with the type libcurl itself reads
 * (for setopt that type follows from the option's number range, CURLOPTTYPE_*).
 */
#define CURL_DISABLE_TYPECHECK /* the typecheck macros would rename the stubs */
#include "util/lazylib.h"

#include <stdarg.h>

#include <curl/curl.h>

#define CURL_FUNCS(F, V)                                                                           \
    V(curl_easy_cleanup, (CURL * c), (c))                                                          \
    F(char *, curl_easy_escape, (CURL * c, const char *s, int n), (c, s, n))                       \
    F(CURL *, curl_easy_init, (void), ())                                                          \
    F(CURLcode, curl_easy_perform, (CURL * c), (c))                                                \
    F(const char *, curl_easy_strerror, (CURLcode e), (e))                                         \
    F(char *, curl_escape, (const char *s, int n), (s, n))                                         \
    V(curl_free, (void *p), (p))                                                                   \
    F(time_t, curl_getdate, (const char *p, const time_t *u), (p, u))                              \
    V(curl_global_cleanup, (void), ())                                                             \
    F(CURLcode, curl_global_init, (long f), (f))                                                   \
    F(CURLMcode, curl_multi_add_handle, (CURLM * m, CURL * c), (m, c))                             \
    F(CURLMcode, curl_multi_cleanup, (CURLM * m), (m))                                             \
    F(CURLMsg *, curl_multi_info_read, (CURLM * m, int *q), (m, q))                                \
    F(CURLM *, curl_multi_init, (void), ())                                                        \
    F(CURLMcode, curl_multi_perform, (CURLM * m, int *r), (m, r))                                  \
    F(CURLMcode, curl_multi_poll,                                                                  \
      (CURLM * m, struct curl_waitfd e[], unsigned int ne, int ms, int *r), (m, e, ne, ms, r))     \
    F(CURLMcode, curl_multi_remove_handle, (CURLM * m, CURL * c), (m, c))                          \
    F(CURLMcode, curl_multi_wakeup, (CURLM * m), (m))                                              \
    F(struct curl_slist *, curl_slist_append, (struct curl_slist * l, const char *s), (l, s))      \
    V(curl_slist_free_all, (struct curl_slist * l), (l))

static struct {
    CURL_FUNCS(LAZYLIB_MEMBER_F, LAZYLIB_MEMBER_V)
    __typeof__(&curl_easy_setopt) curl_easy_setopt;
    __typeof__(&curl_easy_getinfo) curl_easy_getinfo;
} api;

static const struct lazylib_sym syms[] = {
    CURL_FUNCS(LAZYLIB_SYM_F, LAZYLIB_SYM_V){"curl_easy_setopt", (void **)&api.curl_easy_setopt},
    {"curl_easy_getinfo", (void **)&api.curl_easy_getinfo},
};

struct lazylib lazylib_curl = {
    .soname = JOBD_SONAME_CURL,
    .needed_for = "HTTP (http handlers, --server and http(s):// stores, the client commands)",
    .syms = syms,
    .nsyms = sizeof syms / sizeof syms[0],
    .once = PTHREAD_ONCE_INIT,
};

#define LAZYLIB lazylib_curl
CURL_FUNCS(LAZYLIB_STUB_F, LAZYLIB_STUB_V)

CURLcode
curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
    lazylib_ready(&lazylib_curl);
    va_list ap;
    va_start(ap, opt);
    CURLcode rc;
    if (opt < CURLOPTTYPE_OBJECTPOINT) {
        long v = va_arg(ap, long);
        rc = api.curl_easy_setopt(c, opt, v);
    } else if (opt < CURLOPTTYPE_FUNCTIONPOINT || opt >= CURLOPTTYPE_BLOB) {
        void *v = va_arg(ap, void *);
        rc = api.curl_easy_setopt(c, opt, v);
    } else if (opt < CURLOPTTYPE_OFF_T) {
        /* Every function pointer type has one representation on the
         * platforms jobd builds on; libcurl reads back the option's own type. */
        void (*v)(void) = va_arg(ap, void (*)(void));
        rc = api.curl_easy_setopt(c, opt, v);
    } else {
        curl_off_t v = va_arg(ap, curl_off_t);
        rc = api.curl_easy_setopt(c, opt, v);
    }
    va_end(ap);
    return rc;
}

/* Every CURLINFO_* takes one pointer to where the answer goes. */
CURLcode
curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
    lazylib_ready(&lazylib_curl);
    va_list ap;
    va_start(ap, info);
    void *out = va_arg(ap, void *);
    va_end(ap);
    return api.curl_easy_getinfo(c, info, out);
}
