/*
 * httpstub.h — a tiny HTTP/1.1 server on a loopback port for tests of the
 * http handler (header-only). One thread accepts connections one at a time
 * (Connection: close) and answers by path:
 *   /ok      200 with a JSON body echoing the request's jobd headers and body
 *   /text    200 with a non-JSON body
 *   /bad     400            /gone    410
 *   /err     500            /busy    429 with Retry-After: 7
 *   /date    503 with Retry-After as an HTTP date 120 s ahead
 *   /slow    never answers (the handler's timeout must fire)
 * Every request is counted in stub->hits.
 */
#ifndef JOBD_TEST_HTTPSTUB_H
#define JOBD_TEST_HTTPSTUB_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct httpstub {
    int fd;
    int port;
    pthread_t thread;
    atomic_int hits;
    atomic_bool quit;
};

static void
httpstub_header(const char *req, const char *name, char *out, size_t len)
{
    out[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = req; (p = strstr(p, "\r\n")) != NULL;) {
        p += 2;
        if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            size_t n = strcspn(v, "\r\n");
            if (n >= len)
                n = len - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return;
        }
    }
}

/* Reads a request into req (cap bytes): the head, then Content-Length bytes
 * of body; false when the peer closed or the request does not fit. */
static bool
httpstub_read(int c, char *req, size_t cap, char **body, long *clen)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = read(c, req + n, cap - 1 - n);
        if (r <= 0)
            return false;
        n += (size_t)r;
        req[n] = '\0';
        char *eoh = strstr(req, "\r\n\r\n");
        if (eoh != NULL) {
            char cl[32];
            httpstub_header(req, "Content-Length", cl, sizeof cl);
            *clen = atol(cl);
            *body = eoh + 4;
            if ((long)(n - (size_t)(*body - req)) >= *clen)
                return true;
        }
        if (n >= cap - 1)
            return false;
    }
}

static void
httpstub_serve(struct httpstub *s, int c)
{
    char req[65536];
    char *body = NULL;
    long clen = 0;
    if (!httpstub_read(c, req, sizeof req, &body, &clen))
        return;
    atomic_fetch_add(&s->hits, 1);
    char path[256] = "";
    sscanf(req, "POST %255s", path);
    char key[300], id[64], att[64], ct[128], resp[70000], extra[200] = "";
    httpstub_header(req, "Idempotency-Key", key, sizeof key);
    httpstub_header(req, "Jobd-Job-Id", id, sizeof id);
    httpstub_header(req, "Jobd-Attempt", att, sizeof att);
    httpstub_header(req, "Content-Type", ct, sizeof ct);
    int status = 200;
    char payload[65000];
    snprintf(payload, sizeof payload, "%.*s", (int)clen, body);
    char rbody[66600];
    snprintf(rbody, sizeof rbody,
             "{\"key\":\"%s\",\"id\":\"%s\",\"attempt\":\"%s\",\"ct\":\"%s\","
             "\"payload\":%s}",
             key, id, att, ct, payload[0] ? payload : "null");
    if (strcmp(path, "/trace") == 0) { /* the traceparent header, or "" */
        char tp[128];
        httpstub_header(req, "traceparent", tp, sizeof tp);
        snprintf(rbody, sizeof rbody, "{\"tp\":\"%s\"}", tp);
    } else if (strcmp(path, "/text") == 0) {
        snprintf(rbody, sizeof rbody, "fine, thanks");
    } else if (strcmp(path, "/bad") == 0) {
        status = 400;
        snprintf(rbody, sizeof rbody, "no such recipient");
    } else if (strcmp(path, "/gone") == 0) {
        status = 410;
        snprintf(rbody, sizeof rbody, "gone");
    } else if (strcmp(path, "/err") == 0) {
        status = 500;
        snprintf(rbody, sizeof rbody, "database on fire");
    } else if (strcmp(path, "/busy") == 0) {
        status = 429;
        snprintf(rbody, sizeof rbody, "slow down");
        snprintf(extra, sizeof extra, "Retry-After: 7\r\n");
    } else if (strcmp(path, "/date") == 0) {
        status = 503;
        snprintf(rbody, sizeof rbody, "maintenance");
        time_t t = time(NULL) + 120;
        struct tm tm;
        gmtime_r(&t, &tm);
        char d[64];
        strftime(d, sizeof d, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        snprintf(extra, sizeof extra, "Retry-After: %s\r\n", d);
    } else if (strcmp(path, "/slow") == 0) {
        while (!atomic_load(&s->quit)) {
            char b[16];
            struct timeval tv = {0, 50000};
            setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            if (read(c, b, sizeof b) == 0)
                return; /* the client gave up */
        }
        return;
    }
    int len = snprintf(resp, sizeof resp,
                       "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n%s"
                       "Connection: close\r\n\r\n%s",
                       status, strlen(rbody), extra, rbody);
    ssize_t w = write(c, resp, (size_t)len);
    (void)w;
}

static void *
httpstub_main(void *arg)
{
    struct httpstub *s = arg;
    while (!atomic_load(&s->quit)) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        httpstub_serve(s, c);
        close(c);
    }
    return NULL;
}

/* Starts the stub on 127.0.0.1:<free port>; returns 0 or -1. */
static inline int
httpstub_start(struct httpstub *s)
{
    memset(s, 0, sizeof *s);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct timeval tv = {0, 100000}; /* accept wakes to see quit */
    setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (bind(s->fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(s->fd, 64) != 0 ||
        getsockname(s->fd, (struct sockaddr *)&a, &al) != 0)
        return -1;
    s->port = ntohs(a.sin_port);
    return pthread_create(&s->thread, NULL, httpstub_main, s) == 0 ? 0 : -1;
}

static inline void
httpstub_stop(struct httpstub *s)
{
    atomic_store(&s->quit, true);
    pthread_join(s->thread, NULL);
    close(s->fd);
}

/* A loopback port where nothing listens (bound, then closed). */
static inline int
httpstub_dead_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd);
    return ntohs(a.sin_port);
}

#endif
