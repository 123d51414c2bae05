/*
 * test_httpc.c — jobd's one HTTP client (util/httpc.c), which the CLI and
 * the remote store share, against a loopback server of this file that keeps
 * the connection open (as jobd's API does) and records what it was sent:
 * method, path, body and headers; a GET after a POST on the same
 * connection sends no body; the replay header; a body over the max; no
 * answer; an interrupt.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test.h"
#include "util/httpc.h"

#define SEEN_MAX 8

/* What the server saw of one request. */
struct seen {
    char line[128]; /* "POST /a HTTP/1.1" */
    char body[128];
    char type[64], auth[64], expect[64], length[16];
};

struct server {
    int fd, port;
    pthread_t thread;
    atomic_int accepted, n;
    struct seen seen[SEEN_MAX];
};

/* The value of header name in the head req (NUL-terminated), or "" into out. */
static void
header(const char *req, const char *name, char *out, size_t len)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = req; (p = strstr(p, "\r\n")) != NULL;) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1 + strspn(p + nl + 1, " ");
            snprintf(out, len, "%.*s", (int)strcspn(v, "\r\n"), v);
            return;
        }
    }
}

/* Answers one request read from c (false when the peer closed). */
static bool
serve_one(struct server *s, int c)
{
    char req[4096];
    size_t n = 0;
    char *eoh = NULL;
    while (eoh == NULL) {
        ssize_t r = read(c, req + n, sizeof req - 1 - n);
        if (r <= 0)
            return false;
        n += (size_t)r;
        req[n] = '\0';
        eoh = strstr(req, "\r\n\r\n");
    }
    int i = atomic_load(&s->n);
    struct seen *w = &s->seen[i < SEEN_MAX ? i : SEEN_MAX - 1];
    memset(w, 0, sizeof *w);
    snprintf(w->line, sizeof w->line, "%.*s", (int)strcspn(req, "\r\n"), req);
    header(req, "Content-Type", w->type, sizeof w->type);
    header(req, "Authorization", w->auth, sizeof w->auth);
    header(req, "Expect", w->expect, sizeof w->expect);
    header(req, "Content-Length", w->length, sizeof w->length);
    size_t want = (size_t)strtoul(w->length, NULL, 10), have = n - (size_t)(eoh + 4 - req);
    while (have < want && n < sizeof req - 1) {
        ssize_t r = read(c, req + n, sizeof req - 1 - n);
        if (r <= 0)
            return false;
        n += (size_t)r;
        have += (size_t)r;
    }
    req[n] = '\0';
    snprintf(w->body, sizeof w->body, "%s", eoh + 4);
    atomic_store(&s->n, i + 1);
    if (strstr(w->line, " /slow ") != NULL) { /* no answer until the client leaves */
        while (read(c, req, sizeof req) > 0)
            ;
        return false;
    }
    static char big[10000];
    memset(big, 'x', sizeof big);
    bool is_big = strstr(w->line, " /big ") != NULL;
    const char *extra = strstr(w->line, " /replayed ") ? "Idempotent-Replayed: true\r\n" : "";
    char head[256];
    int hl = snprintf(head, sizeof head, "HTTP/1.1 %d OK\r\n%sContent-Length: %zu\r\n\r\n",
                      strstr(w->line, " /missing ") ? 404 : 200, extra,
                      is_big ? sizeof big : strlen("{\"ok\":true}"));
    if (write(c, head, (size_t)hl) != hl)
        return false;
    const char *body = is_big ? big : "{\"ok\":true}";
    size_t bl = is_big ? sizeof big : strlen(body);
    return write(c, body, bl) == (ssize_t)bl;
}

static void *
server_main(void *arg)
{
    struct server *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        atomic_fetch_add(&s->accepted, 1);
        while (serve_one(s, c))
            ;
        close(c);
    }
}

static void
server_start(struct server *s)
{
    memset(s, 0, sizeof *s);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT(s->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ASSERT(bind(s->fd, (struct sockaddr *)&a, sizeof a) == 0);
    ASSERT(listen(s->fd, 4) == 0);
    socklen_t al = sizeof a;
    ASSERT(getsockname(s->fd, (struct sockaddr *)&a, &al) == 0);
    s->port = ntohs(a.sin_port);
    ASSERT(pthread_create(&s->thread, NULL, server_main, s) == 0);
}

static void
server_stop(struct server *s)
{
    shutdown(s->fd, SHUT_RDWR);
    close(s->fd);
    pthread_join(s->thread, NULL);
}

/* A connection to s, its base URL written with trailing slashes (they are dropped). */
static void
connect_to(struct server *s, struct httpc *h)
{
    char base[64], why[256];
    snprintf(base, sizeof base, "http://127.0.0.1:%d//", s->port);
    ASSERT_EQ(httpc_init(h, base, 5000, 30000, "jobd-test", why, sizeof why), HTTPC_OK);
}

TEST(methods_bodies_headers_on_one_connection)
{
    setenv("JOBD_TOKEN", "sekrit", 1);
    struct server s;
    server_start(&s);
    struct httpc h;
    connect_to(&s, &h);
    char why[256];
    struct httpc_resp r;
    ASSERT_EQ(httpc_request(&h, "POST", "/a", "{\"x\":1}", 1024, &r, why, sizeof why), HTTPC_OK);
    ASSERT_EQ(r.status, 200);
    ASSERT_STR_EQ(r.body, "{\"ok\":true}");
    ASSERT(!r.replayed && !r.overflow);
    httpc_resp_fini(&r);
    /* the keep-alive handle must not send the POST's body with a GET */
    ASSERT_EQ(httpc_request(&h, "GET", "/b?q=1", NULL, 1024, &r, why, sizeof why), HTTPC_OK);
    httpc_resp_fini(&r);
    ASSERT_EQ(httpc_request(&h, "DELETE", "/c", NULL, 1024, &r, why, sizeof why), HTTPC_OK);
    httpc_resp_fini(&r);
    ASSERT_EQ(httpc_request(&h, "POST", "/d", NULL, 1024, &r, why, sizeof why), HTTPC_OK);
    httpc_resp_fini(&r);
    ASSERT_EQ(httpc_request(&h, "PATCH", "/missing", "{}", 1024, &r, why, sizeof why), HTTPC_OK);
    ASSERT_EQ(r.status, 404); /* any status is an answer */
    httpc_resp_fini(&r);
    httpc_fini(&h);
    server_stop(&s);

    ASSERT_EQ(atomic_load(&s.n), 5);
    ASSERT_EQ(atomic_load(&s.accepted), 1);
    ASSERT_STR_EQ(s.seen[0].line, "POST /a HTTP/1.1");
    ASSERT_STR_EQ(s.seen[0].body, "{\"x\":1}");
    ASSERT_STR_EQ(s.seen[0].type, "application/json");
    ASSERT_STR_EQ(s.seen[0].auth, "Bearer sekrit");
    ASSERT_STR_EQ(s.seen[0].expect, "");
    ASSERT_STR_EQ(s.seen[1].line, "GET /b?q=1 HTTP/1.1");
    ASSERT_STR_EQ(s.seen[1].length, "");
    ASSERT_STR_EQ(s.seen[1].body, "");
    ASSERT_STR_EQ(s.seen[2].line, "DELETE /c HTTP/1.1");
    ASSERT_STR_EQ(s.seen[2].body, "");
    ASSERT_STR_EQ(s.seen[3].line, "POST /d HTTP/1.1");
    ASSERT_STR_EQ(s.seen[3].length, "0");
    ASSERT_STR_EQ(s.seen[4].line, "PATCH /missing HTTP/1.1");
    ASSERT_STR_EQ(s.seen[4].body, "{}");
    unsetenv("JOBD_TOKEN");
}

TEST(replayed_and_overflow)
{
    unsetenv("JOBD_TOKEN");
    struct server s;
    server_start(&s);
    struct httpc h;
    connect_to(&s, &h);
    char why[256];
    struct httpc_resp r;
    ASSERT_EQ(httpc_request(&h, "POST", "/replayed", "{}", 1024, &r, why, sizeof why), HTTPC_OK);
    ASSERT(r.replayed);
    httpc_resp_fini(&r);
    ASSERT_EQ(httpc_request(&h, "GET", "/big", NULL, 100, &r, why, sizeof why), HTTPC_OK);
    ASSERT(r.overflow);
    ASSERT_EQ(r.len, 100);
    ASSERT_EQ(strlen(r.body), 100);
    httpc_resp_fini(&r);
    httpc_fini(&h);
    server_stop(&s);
    ASSERT_STR_EQ(s.seen[0].auth, ""); /* no $JOBD_TOKEN, no header */
}

TEST(no_answer_and_interrupt)
{
    struct httpc h;
    char why[256];
    struct httpc_resp r;
    /* a port nobody listens on: bind one, note it, close it */
    struct server s;
    server_start(&s);
    server_stop(&s);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%d", s.port);
    ASSERT_EQ(httpc_init(&h, base, 5000, 30000, NULL, why, sizeof why), HTTPC_OK);
    ASSERT_EQ(httpc_request(&h, "GET", "/x", NULL, 1024, &r, why, sizeof why), HTTPC_UNREACHABLE);
    ASSERT(strstr(why, base) != NULL);
    ASSERT_NULL(r.body);
    httpc_fini(&h);

    server_start(&s);
    connect_to(&s, &h);
    atomic_bool stop = true;
    httpc_interruptible(&h, &stop, NULL);
    ASSERT_EQ(httpc_request(&h, "POST", "/slow", "{}", 1024, &r, why, sizeof why),
              HTTPC_INTERRUPTED);
    httpc_fini(&h);
    server_stop(&s);
}
