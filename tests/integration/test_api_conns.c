/*
 * test_api_conns.c — descriptors and slow clients against a real `jobd
 * server` with an embedded worker, started under RLIMIT_NOFILE 1,024 (set
 * here with setrlimit, soft and hard, so the server cannot raise it):
 *
 *   - 1,100 idle TCP connections from 127.0.0.1 do not exhaust it: a client
 *     from 127.0.0.2 is still served (/healthz and an enqueue), and the
 *     embedded worker still starts its handler, so the job succeeds on its
 *     first attempt;
 *   - a client trickling one header byte at a time is cut off at the
 *     whole-request deadline (--request-timeout 2s here), which its bytes
 *     do not extend;
 *   - the server raises its soft descriptor limit to the hard one at start.
 */
#include <sys/resource.h>

#include "apitest.h"
#include "rawhttp.h"

#define IDLE_CONNS 1100

static bool
healthz_from(const char *ip, int port)
{
    char buf[2048];
    raw_exchange(ip, port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                 buf, sizeof buf, 5000);
    return strncmp(buf, "HTTP/1.1 200", 12) == 0;
}

static void
start_with_worker(struct srv *s, const char *timeout)
{
    FILE *f = fopen(test_path("worker.ini"), "w");
    fputs("[worker]\nconcurrency = 2\n\n[handler \"t\"]\nexec = /bin/true\n", f);
    fclose(f);
    char ini[600];
    snprintf(ini, sizeof ini, "%s", test_path("worker.ini"));
    const char *extra[] = {"--worker-config", ini, "--request-timeout", timeout, NULL};
    srv_start(s, "sqlite", extra);
}

TEST(idle_connections_do_not_exhaust_descriptors)
{
    /* This test's own side needs room for 1,100 sockets. */
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_max < IDLE_CONNS + 200) {
        fprintf(stderr, "skip: the hard descriptor limit %llu is too low for the clients\n",
                (unsigned long long)rl.rlim_max);
        return;
    }
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    apitest_child_nofile = 1024;
    struct srv s;
    start_with_worker(&s, "30s");
    static int fds[IDLE_CONNS];
    int opened = 0;
    for (int i = 0; i < IDLE_CONNS; i++)
        if ((fds[i] = raw_connect("127.0.0.1", s.port)) >= 0)
            opened++;
    fprintf(stderr, "%d idle connections opened\n", opened);
    apitest_nap_ms(300); /* let the server accept (and refuse) what it will */
    /* Another address is served. */
    ASSERT(healthz_from("127.0.0.2", s.port));
    char buf[4096];
    raw_exchange("127.0.0.2", s.port,
                 "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                 "Content-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"type\":\"t\"}",
                 buf, sizeof buf, 5000);
    if (strncmp(buf, "HTTP/1.1 201", 12) != 0)
        TEST_FAIL("enqueue from 127.0.0.2: %s", buf);
    /* The embedded worker can still start its handler: succeeded, first attempt. */
    int64_t deadline = apitest_now_ms() + 20000;
    for (;;) {
        raw_exchange("127.0.0.3", s.port,
                     "GET /v1/jobs/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Connection: close\r\n\r\n",
                     buf, sizeof buf, 5000);
        if (strstr(buf, "\"status\":\"succeeded\"") != NULL)
            break;
        if (strstr(buf, "\"status\":\"dead\"") != NULL || apitest_now_ms() > deadline)
            TEST_FAIL("the job did not succeed: %s", buf);
        apitest_nap_ms(50);
    }
    ASSERT(strstr(buf, "\"attempt\":1,") != NULL);
    for (int i = 0; i < IDLE_CONNS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    /* The limits it sized are in its log. */
    FILE *f = fopen(s.log, "r");
    char line[600];
    bool sized = false;
    while (f && fgets(line, sizeof line, f))
        sized |= strstr(line, "descriptor limit 1024") != NULL;
    if (f)
        fclose(f);
    ASSERT(sized);
    srv_stop(&s);
}

TEST(trickled_request_cut_at_deadline)
{
    struct srv s;
    start_with_worker(&s, "2s");
    int fd = raw_connect("127.0.0.4", s.port);
    ASSERT(fd >= 0);
    const char *head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    ASSERT(raw_send(fd, head, strlen(head)));
    int64_t t0 = apitest_now_ms();
    bool closed = false;
    while (!closed && apitest_now_ms() - t0 < 10000) {
        if (!raw_send(fd, "a", 1))
            break;
        char buf[512];
        raw_read(fd, buf, sizeof buf, 250, NULL, &closed);
    }
    int64_t took = apitest_now_ms() - t0;
    close(fd);
    fprintf(stderr, "trickling client cut after %lld ms\n", (long long)took);
    if (took >= 10000)
        TEST_FAIL("a client trickling a byte every 250 ms stayed connected for 10 s");
    ASSERT(took >= 1500);
    /* Others are served meanwhile and after. */
    ASSERT(healthz_from("127.0.0.5", s.port));
    srv_stop(&s);
}

TEST(soft_descriptor_limit_raised_to_hard)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_max < 2048 || rl.rlim_max == RLIM_INFINITY) {
        fprintf(stderr, "skip: hard descriptor limit too low to tell\n");
        return;
    }
    /* Soft 1,024 under the test's hard limit: the server must raise it. */
    struct rlimit low = {1024, rl.rlim_max};
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    struct srv s;
    srv_start(&s, "sqlite", NULL);
    char path[64], line[600], want[64];
    snprintf(path, sizeof path, "/proc/%d/limits", (int)s.pid);
    snprintf(want, sizeof want, "%llu", (unsigned long long)rl.rlim_max);
    FILE *f = fopen(path, "r");
    bool raised = false;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Max open files", 14) == 0) {
            unsigned long long soft = strtoull(line + 26, NULL, 10);
            raised = soft == (unsigned long long)rl.rlim_max;
            fprintf(stderr, "%s", line);
        }
    if (f)
        fclose(f);
    ASSERT(raised);
    srv_stop(&s);
}
