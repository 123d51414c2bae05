/*
 * sdnotify.c — see sdnotify.h. A fresh SOCK_DGRAM socket per message keeps
 * it stateless: messages are rare (start, reload, stop, a watchdog ping
 * every few seconds), and nothing is left open across a fork/exec of a
 * handler (SOCK_CLOEXEC besides).
 */
#include "util/sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
sdnotify_send(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (path == NULL || path[0] == '\0')
        return 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || len >= sizeof sa.sun_path) {
        errno = EINVAL;
        return -1;
    }
    memcpy(sa.sun_path, path, len);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* abstract namespace: the name is not NUL-terminated */
    socklen_t salen =
        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/' ? 1 : 0));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
    int saved = errno;
    close(fd);
    errno = saved;
    return n < 0 ? -1 : 1;
}

int64_t
sdnotify_watchdog_ms(void)
{
    const char *usec = getenv("WATCHDOG_USEC");
    if (usec == NULL || usec[0] == '\0')
        return 0;
    const char *pid = getenv("WATCHDOG_PID");
    if (pid != NULL && pid[0] != '\0') {
        char *end;
        long p = strtol(pid, &end, 10);
        if (*end != '\0' || p != (long)getpid())
            return 0;
    }
    char *end;
    long long us = strtoll(usec, &end, 10);
    if (*end != '\0' || us <= 0)
        return 0;
    int64_t ms = us / 2000; /* half the timeout, as sd_watchdog_enabled(3) advises */
    return ms < 1 ? 1 : ms;
}
