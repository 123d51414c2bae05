/*
 * test_xsite.c — the three rules of src/api/xsite.h without a socket: the
 * Host check (IP addresses, localhost, --allowed-hosts; on without tokens
 * or with names given), the cross-site check (Sec-Fetch-Site, Origin
 * against Host and the names; the dashboard's files browsable from a
 * link), the content type of bodies, and the parsing of --allowed-hosts.
 * The same rules through the real server: tests/integration/test_xsite.sh.
 */
#include "api/xsite.h"
#include "test.h"

/* A request as a browser on the server's machine would send it. */
static struct xsite_request
req(const char *method, const char *path, const char *host)
{
    return (struct xsite_request){
        .method = method, .path = path, .version = "HTTP/1.1", .host = host};
}

/* The refusal's code, or "" if the request passes. */
static const char *
verdict(const struct api_xsite *p, const struct xsite_request *r)
{
    static struct xsite_refusal why;
    memset(&why, 0, sizeof why);
    if (!api_xsite_refuse(p, r, &why))
        return "";
    ASSERT(why.message[0] != '\0');
    return why.code;
}

static struct api_xsite
names(const char *list)
{
    struct api_xsite x;
    struct jobd_error err = {0};
    ASSERT_OK(api_xsite_parse(list, &x, &err), &err);
    return x;
}

TEST(parse_allowed_hosts)
{
    struct api_xsite x = names(" jobd.example.org, Jobd.Internal:8443 ,[::1]:9,10.0.0.7");
    ASSERT_EQ(x.n, 4);
    ASSERT_STR_EQ(x.hosts[0].name, "jobd.example.org");
    ASSERT_EQ(x.hosts[0].port, 0);
    ASSERT_STR_EQ(x.hosts[1].name, "jobd.internal");
    ASSERT_EQ(x.hosts[1].port, 8443);
    ASSERT_STR_EQ(x.hosts[2].name, "[::1]");
    ASSERT_EQ(x.hosts[2].port, 9);
    ASSERT_EQ(names(NULL).n, 0);
    ASSERT_EQ(names("").n, 0);
    const char *bad[] = {"http://a.example",
                         "a.example/ui",
                         "*",
                         "*.example.org",
                         "a,,b",
                         "a,",
                         "a:0",
                         "a:65536",
                         "a:x",
                         "[::1",
                         "[]",
                         "a b",
                         ":80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct api_xsite y;
        struct jobd_error err = {0};
        if (api_xsite_parse(bad[i], &y, &err) != JOBD_E_INVALID)
            TEST_FAIL("'%s' was taken", bad[i]);
        ASSERT(strstr(err.msg, "--allowed-hosts") != NULL);
    }
    char many[2048] = "h0";
    for (int i = 1; i <= XSITE_MAX_HOSTS; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), ",h%d", i);
    struct api_xsite y;
    ASSERT_EQ(api_xsite_parse(many, &y, NULL), JOBD_E_INVALID);
}

TEST(host_without_tokens)
{
    struct xsite_request r = req("GET", "/v1/jobs", "127.0.0.1:8080");
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    const char *ok[] = {"localhost:8080", "LOCALHOST", "[::1]:8080", "192.168.1.5", "10.0.0.7:1"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        r.host = ok[i];
        if (verdict(NULL, &r)[0] != '\0')
            TEST_FAIL("Host %s was refused", ok[i]);
    }
    /* A DNS name can be rebound to 127.0.0.1: refused, whatever the port. */
    const char *refused[] = {"evil.example:8080",
                             "evil.example",
                             "localhost.evil.example",
                             "127.0.0.1.nip.io:8080",
                             "[::1",
                             "a b",
                             "x:99999",
                             ""};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        r.host = refused[i];
        if (strcmp(verdict(NULL, &r), "host_not_allowed") != 0)
            TEST_FAIL("Host '%s' was not refused", refused[i]);
    }
    r.host = NULL;
    ASSERT_STR_EQ(verdict(NULL, &r), "missing_host");
    r.version = "HTTP/1.0";
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    /* The dashboard's files too: a rebinding page could read them. */
    r = req("GET", "/ui/", "evil.example:8080");
    ASSERT_STR_EQ(verdict(NULL, &r), "host_not_allowed");
}

TEST(host_with_names_and_tokens)
{
    struct api_xsite x = names("jobd.example.org,jobd.internal:8443");
    struct xsite_request r = req("POST", "/v1/jobs/1/cancel", "jobd.example.org");
    ASSERT_STR_EQ(verdict(&x, &r), "");
    r.host = "JOBD.example.org:9999"; /* a name without a port: any port */
    ASSERT_STR_EQ(verdict(&x, &r), "");
    r.host = "jobd.internal:8443";
    ASSERT_STR_EQ(verdict(&x, &r), "");
    r.host = "jobd.internal:8080";
    ASSERT_STR_EQ(verdict(&x, &r), "host_not_allowed");
    r.host = "jobd.internal";
    ASSERT_STR_EQ(verdict(&x, &r), "host_not_allowed");
    r.host = "127.0.0.1:8080";
    ASSERT_STR_EQ(verdict(&x, &r), "");
    /* With tokens and no names, any name (a rebinding page has no token)... */
    r.tokens = true;
    r.host = "anything.example:8080";
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    ASSERT(!api_xsite_checks_host(NULL, true));
    /* ...unless names are given. */
    ASSERT_STR_EQ(verdict(&x, &r), "host_not_allowed");
    ASSERT(api_xsite_checks_host(&x, true));
    ASSERT(api_xsite_checks_host(NULL, false));
}

TEST(cross_site)
{
    struct xsite_request r = req("POST", "/v1/jobs", "127.0.0.1:8080");
    r.content_type = "application/json";
    r.has_body = true;
    r.origin = "http://127.0.0.1:8080"; /* the dashboard's own calls */
    r.sec_fetch_site = "same-origin";
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    /* Another port of the same address is another origin (and "same-site"). */
    r.origin = "http://127.0.0.1:9999";
    r.sec_fetch_site = "same-site";
    ASSERT_STR_EQ(verdict(NULL, &r), "cross_site_request");
    const char *refused[] = {
        "null",    "http://localhost:8080",  "http://evil.example", "127.0.0.1:8080",
        "http://", "http://127.0.0.1:8080/x"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        r.origin = refused[i];
        r.sec_fetch_site = NULL;
        if (strcmp(verdict(NULL, &r), "cross_site_request") != 0)
            TEST_FAIL("Origin '%s' was not refused", refused[i]);
    }
    /* The scheme is not compared: behind a TLS proxy the page is https while
     * jobd sees http, and one port serves one protocol anyway. */
    r.origin = "https://127.0.0.1:8080";
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    /* Sec-Fetch-Site alone, on any method and route of the API. */
    r = req("GET", "/v1/jobs", "127.0.0.1:8080");
    r.sec_fetch_site = "cross-site";
    ASSERT_STR_EQ(verdict(NULL, &r), "cross_site_request");
    r.sec_fetch_site = "none"; /* typed in the address bar */
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    /* A link to the dashboard from another site still opens it. */
    r = req("GET", "/ui/", "127.0.0.1:8080");
    r.sec_fetch_site = "cross-site";
    r.origin = "http://wiki.example";
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    r.method = "POST";
    ASSERT_STR_EQ(verdict(NULL, &r), "cross_site_request");
    /* A proxy's public name, given with --allowed-hosts (tokens: no Host check). */
    struct api_xsite x = names("jobd.example.org");
    r = req("DELETE", "/v1/jobs/3", "127.0.0.1:8080");
    r.tokens = true;
    r.origin = "https://jobd.example.org";
    ASSERT_STR_EQ(verdict(&x, &r), "");
    ASSERT_STR_EQ(verdict(NULL, &r), "cross_site_request");
}

TEST(content_type)
{
    struct xsite_request r = req("POST", "/v1/jobs", "127.0.0.1:8080");
    r.has_body = true;
    const char *ok[] = {"application/json", "application/json; charset=utf-8",
                        " Application/JSON ;charset=UTF-8", "application/json\t"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        r.content_type = ok[i];
        if (verdict(NULL, &r)[0] != '\0')
            TEST_FAIL("Content-Type '%s' was refused", ok[i]);
    }
    const char *refused[] = {"text/plain",
                             "text/plain;charset=UTF-8",
                             "application/x-www-form-urlencoded",
                             "multipart/form-data; b=x",
                             "application/jsonp",
                             "application/json-seq",
                             "",
                             "json"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        r.content_type = refused[i];
        if (strcmp(verdict(NULL, &r), "unsupported_media_type") != 0)
            TEST_FAIL("Content-Type '%s' was taken", refused[i]);
    }
    /* No Content-Type: a body is refused, a bodyless POST (a cancel) passes. */
    r.content_type = NULL;
    ASSERT_STR_EQ(verdict(NULL, &r), "unsupported_media_type");
    r.has_body = false;
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    /* A declared type that is not JSON is refused even without a body. */
    r.content_type = "text/plain";
    ASSERT_STR_EQ(verdict(NULL, &r), "unsupported_media_type");
    r.method = "DELETE";
    ASSERT_STR_EQ(verdict(NULL, &r), "unsupported_media_type");
    r.method = "PUT";
    ASSERT_STR_EQ(verdict(NULL, &r), "unsupported_media_type");
    /* GET and HEAD carry no body the API reads. */
    r.method = "GET";
    ASSERT_STR_EQ(verdict(NULL, &r), "");
    r.method = "HEAD";
    ASSERT_STR_EQ(verdict(NULL, &r), "");
}

TEST(order_and_messages)
{
    /* Host first, then cross-site, then the content type. */
    struct xsite_request r = req("POST", "/v1/jobs/bulk", "evil.example:8080");
    r.origin = "http://evil.example:8080";
    r.content_type = "text/plain";
    r.has_body = true;
    struct xsite_refusal why;
    ASSERT(api_xsite_refuse(NULL, &r, &why));
    ASSERT_EQ(why.status, 403);
    ASSERT_STR_EQ(why.code, "host_not_allowed");
    ASSERT(strstr(why.message, "evil.example:8080") != NULL);
    ASSERT(strstr(why.message, "--allowed-hosts") != NULL);
    r.host = "127.0.0.1:8080";
    ASSERT(api_xsite_refuse(NULL, &r, &why));
    ASSERT_EQ(why.status, 403);
    ASSERT_STR_EQ(why.code, "cross_site_request");
    ASSERT(strstr(why.message, "http://evil.example:8080") != NULL);
    r.origin = NULL;
    ASSERT(api_xsite_refuse(NULL, &r, &why));
    ASSERT_EQ(why.status, 415);
    ASSERT(strstr(why.message, "text/plain") != NULL);
    /* A long hostile value is cut, not overflowed. */
    char big[4096];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    r.content_type = big;
    ASSERT(api_xsite_refuse(NULL, &r, &why));
    ASSERT(strlen(why.message) < sizeof why.message);
    r.host = big;
    ASSERT(api_xsite_refuse(NULL, &r, &why));
    ASSERT_STR_EQ(why.code, "host_not_allowed");
}
