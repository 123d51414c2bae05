/*
 * rawhttp.h — raw TCP clients for tests that need what curl will not send
 * (conflicting framing headers, trickled or silent connections) or a chosen
 * source address (127.0.0.2 … stand for other clients, since every loopback
 * client would otherwise share 127.0.0.1).
 */
#ifndef JOBD_TESTS_RAWHTTP_H
#define JOBD_TESTS_RAWHTTP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A connected socket from src_ip (NULL = any) to 127.0.0.1:port, or -1. */
static inline int
raw_connect(const char *src_ip, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (src_ip != NULL) {
        struct sockaddr_in src = {.sin_family = AF_INET};
        inet_pton(AF_INET, src_ip, &src.sin_addr);
        if (bind(fd, (struct sockaddr *)&src, sizeof src) != 0) {
            close(fd);
            return -1;
        }
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static inline bool
raw_send(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* Sends POST path with a JSON body on a fresh connection; the socket (its
 * answer left unread), or -1. */
static inline int
raw_post_json(int port, const char *path, const char *body)
{
    char request[1024];
    int len = snprintf(request, sizeof request,
                       "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                       path, strlen(body), body);
    int fd = len > 0 && (size_t)len < sizeof request ? raw_connect(NULL, port) : -1;
    if (fd >= 0 && !raw_send(fd, request, (size_t)len)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/*
 * Reads what arrives within timeout_ms into buf (NUL-terminated), until the
 * peer closes or stop (if not NULL) appears. Returns bytes read; *closed
 * tells whether the peer closed (EOF or reset).
 */
static inline size_t
raw_read(int fd, char *buf, size_t cap, int timeout_ms, const char *stop, bool *closed)
{
    size_t got = 0;
    *closed = false;
    buf[0] = '\0';
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left =
            timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0)
            return got;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n <= 0) {
            *closed = true;
            return got;
        }
        got += (size_t)n;
        buf[got] = '\0';
        if ((stop != NULL && strstr(buf, stop) != NULL) || got + 1 >= cap)
            return got;
    }
}

/* One request on a fresh connection from src_ip; the answer into buf. */
static inline size_t
raw_exchange(const char *src_ip, int port, const char *request, char *buf, size_t cap,
             int timeout_ms)
{
    int fd = raw_connect(src_ip, port);
    if (fd < 0) {
        buf[0] = '\0';
        return 0;
    }
    bool closed;
    size_t n = raw_send(fd, request, strlen(request))
                   ? raw_read(fd, buf, cap, timeout_ms, NULL, &closed)
                   : 0;
    close(fd);
    return n;
}

#endif
