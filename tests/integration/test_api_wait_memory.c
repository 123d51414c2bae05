/*
 * test_api_wait_memory.c — what 10,000 parked waits (GET
 * /v1/jobs/{id}?wait=60s, docs/API.md, Waiting for a result) cost a real
 * `jobd server`: its resident memory (VmRSS) before and after they are
 * parked, divided by their number, is printed and must stay under a
 * generous bound (WAIT_BYTES_MAX, twice what was measured: ~32 KiB a
 * wait under ASan on both stores, 10,000 parked in 8-12 s on this 2-core
 * machine; nearly all of it is libmicrohttpd's buffer of the open
 * connection, docs/API.md, Waiting for a result). The 10,001st is
 * refused (429 too_many_waits, the default --max-waits), and one cancel
 * answers all 10,000.
 */
#include <sys/resource.h>

#include "apitest.h"
#include "rawhttp.h"

#define WAITS 10000
#define WAIT_BYTES_MAX (64 * 1024)

static long
vm_kib(pid_t pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0)
            kib = strtol(line + strlen(key), NULL, 10);
    if (f)
        fclose(f);
    if (kib < 0)
        TEST_FAIL("no %s in %s", key, path);
    return kib;
}

BOTH(ten_thousand_parked_waits_cost_bounded_memory)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < WAITS + 1000) {
        fprintf(stderr, "skipped: the descriptor limit %llu is under %d\n",
                (unsigned long long)rl.rlim_max, WAITS + 1000);
        return;
    }
    rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 65536 ? rl.rlim_max : 65536;
    ASSERT(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    apitest_child_nofile = (long)rl.rlim_cur;
    struct srv s;
    const char *extra[] = {"--max-connections", "15000", "--max-connections-per-ip", "15000", NULL};
    srv_start(&s, backend, extra);
    int64_t id = create_job(&s, "{\"type\":\"mem\",\"in\":\"1h\"}");
    char request[256];
    snprintf(request, sizeof request,
             "GET /v1/jobs/%lld?wait=60s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", (long long)id);
    /* A few waits first, so the thread, its connection and the first pass's
     * buffers are in the "before". */
    static int fd[WAITS];
    for (int i = 0; i < 10; i++) {
        fd[i] = raw_connect(NULL, s.port);
        ASSERT(fd[i] >= 0 && raw_send(fd[i], request, strlen(request)));
    }
    srv_await_metric(&s, "jobd_results_waiting", 10);
    long before = vm_kib(s.pid, "VmRSS:");
    int64_t t0 = apitest_now_ms();
    for (int i = 10; i < WAITS; i++) {
        fd[i] = raw_connect(NULL, s.port);
        if (fd[i] < 0)
            TEST_FAIL("connection %d: %s", i, strerror(errno));
        ASSERT(raw_send(fd[i], request, strlen(request)));
        if (i % 1000 == 999) /* keep the accept backlog short */
            srv_await_metric(&s, "jobd_results_waiting", i - 500);
    }
    int64_t deadline = apitest_now_ms() + 120000;
    while (srv_metric(&s, "jobd_results_waiting") < WAITS) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("only %g of %d waits parked after 2 min",
                      srv_metric(&s, "jobd_results_waiting"), WAITS);
        apitest_nap_ms(50);
    }
    long after = vm_kib(s.pid, "VmRSS:");
    long per = (after - before) * 1024 / (WAITS - 10);
    fprintf(stderr,
            "%s: %d waits parked in %lld ms; VmRSS %ld KiB -> %ld KiB: %ld bytes per wait "
            "(bound %d)\n",
            backend, WAITS, (long long)(apitest_now_ms() - t0), before, after, per, WAIT_BYTES_MAX);
    ASSERT(per < WAIT_BYTES_MAX);

    /* The default --max-waits is reached: the next is refused. */
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs/%lld?wait=60s", (long long)id);
    EXPECT(&s, "GET", path, NULL, 429, "too_many_waits");

    /* One end answers them all. */
    snprintf(path, sizeof path, "/v1/jobs/%lld/cancel", (long long)id);
    t0 = apitest_now_ms();
    EXPECT(&s, "POST", path, NULL, 200, NULL);
    char buf[4096];
    for (int i = 0; i < WAITS; i++) {
        bool closed;
        raw_read(fd[i], buf, sizeof buf, 30000, "\"status\":\"cancelled\"", &closed);
        if (strncmp(buf, "HTTP/1.1 200", 12) != 0 || strstr(buf, "cancelled") == NULL)
            TEST_FAIL("wait %d answered: %.200s", i, buf);
        close(fd[i]);
    }
    fprintf(stderr, "%s: all %d answered %lld ms after the cancel\n", backend, WAITS,
            (long long)(apitest_now_ms() - t0));
    srv_stop(&s);
}
