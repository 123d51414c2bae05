/*
 * test_sdnotify.c — src/util/sdnotify: the datagram reaches a path socket
 * and an abstract ('@') socket byte for byte; no $NOTIFY_SOCKET is a no-op;
 * a socket name that is neither absolute nor abstract, or one nobody
 * listens on, is an error (-1), not a crash; the watchdog interval is half
 * $WATCHDOG_USEC, and none when $WATCHDOG_PID names another process or the
 * value is not a positive number.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "test.h"
#include "util/sdnotify.h"

/* Binds a datagram socket at name (path, or '@' for abstract); returns its fd. */
static int
listen_at(const char *name)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    ASSERT(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    memcpy(sa.sun_path, name, len);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, salen), 0);
    return fd;
}

static void
expect_message(int fd, const char *want)
{
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
    ASSERT_EQ(n, (ssize_t)strlen(want));
    buf[n] = '\0';
    ASSERT_STR_EQ(buf, want);
}

TEST(sends_to_a_path_socket)
{
    char path[600];
    snprintf(path, sizeof path, "%s/notify.sock", test_tmpdir);
    int fd = listen_at(path);
    setenv("NOTIFY_SOCKET", path, 1);
    ASSERT_EQ(sdnotify_send("READY=1\nSTATUS=serving"), 1);
    expect_message(fd, "READY=1\nSTATUS=serving");
    close(fd);
}

TEST(sends_to_an_abstract_socket)
{
    char name[64];
    snprintf(name, sizeof name, "@jobd-test-sdnotify-unit-%d", (int)getpid());
    int fd = listen_at(name);
    setenv("NOTIFY_SOCKET", name, 1);
    ASSERT_EQ(sdnotify_send("WATCHDOG=1"), 1);
    expect_message(fd, "WATCHDOG=1");
    close(fd);
}

TEST(no_socket_is_a_no_op)
{
    unsetenv("NOTIFY_SOCKET");
    ASSERT_EQ(sdnotify_send("READY=1"), 0);
    setenv("NOTIFY_SOCKET", "", 1);
    ASSERT_EQ(sdnotify_send("READY=1"), 0);
}

TEST(bad_or_absent_sockets_are_errors)
{
    setenv("NOTIFY_SOCKET", "relative/notify.sock", 1);
    ASSERT_EQ(sdnotify_send("READY=1"), -1);
    char path[600];
    snprintf(path, sizeof path, "%s/nobody-listens.sock", test_tmpdir);
    setenv("NOTIFY_SOCKET", path, 1);
    ASSERT_EQ(sdnotify_send("READY=1"), -1);
    char longname[200];
    memset(longname, 'x', sizeof longname - 1);
    longname[0] = '/';
    longname[sizeof longname - 1] = '\0';
    setenv("NOTIFY_SOCKET", longname, 1);
    ASSERT_EQ(sdnotify_send("READY=1"), -1);
}

TEST(watchdog_interval)
{
    unsetenv("WATCHDOG_PID");
    unsetenv("WATCHDOG_USEC");
    ASSERT_EQ(sdnotify_watchdog_ms(), 0);
    setenv("WATCHDOG_USEC", "30000000", 1);
    ASSERT_EQ(sdnotify_watchdog_ms(), 15000);
    setenv("WATCHDOG_USEC", "1000", 1);
    ASSERT_EQ(sdnotify_watchdog_ms(), 1); /* never 0 while a watchdog is due */
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("WATCHDOG_USEC", "400000", 1);
    setenv("WATCHDOG_PID", pid, 1);
    ASSERT_EQ(sdnotify_watchdog_ms(), 200);
    setenv("WATCHDOG_PID", "1", 1);
    ASSERT_EQ(sdnotify_watchdog_ms(), 0); /* meant for another process */
    unsetenv("WATCHDOG_PID");
    setenv("WATCHDOG_USEC", "soon", 1);
    ASSERT_EQ(sdnotify_watchdog_ms(), 0);
    setenv("WATCHDOG_USEC", "-5", 1);
    ASSERT_EQ(sdnotify_watchdog_ms(), 0);
}
