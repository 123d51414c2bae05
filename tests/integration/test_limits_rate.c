/*
 * test_limits_rate.c — a rate limit across processes, through the real
 * binary on both stores: 4 `jobd worker` processes of concurrency 16 on a
 * queue limited to 20 starts per 1 s, with 180 quick jobs (~9 s). From the
 * handlers' own start records: never more than 20 starts in a 1 s window
 * aligned to the epoch, and the throughput stays close to 20 a second (the
 * jobs span at most two windows more than 180 / 20).
 */
#include "limitstest.h"

#define JOBS 180
#define RATE 20

BOTH(rate_holds_across_four_workers)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    EXPECT(&s, "PUT", "/v1/queues/rated", "{\"rate\": {\"limit\": 20, \"per\": \"1s\"}}", 200,
           NULL);
    char rec[600], ini[600];
    snprintf(rec, sizeof rec, "%s", test_path("records"));
    lt_setup("quick", "rated", "0", rec, ini, sizeof ini);
    lt_enqueue(&s, "quick", "rated", JOBS);
    pid_t pids[4];
    lt_start_workers(&s, ini, 4, pids);
    int64_t deadline = apitest_now_ms() + 30000;
    while (lt_count(&s, "rated", "succeeded") < JOBS) {
        if (apitest_now_ms() > deadline)
            TEST_FAIL("the jobs did not all finish within 30 s");
        apitest_nap_ms(100);
    }
    lt_stop_workers(4, pids);
    struct lt_rec *v;
    size_t n = lt_read(rec, &v);
    ASSERT_EQ(n, 2 * JOBS);
    int64_t first = -1, last = -1, win = -1;
    int in_win = 0, most = 0;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].start)
            continue;
        int64_t w = v[i].ns / 1000000000; /* the aligned 1 s window it started in */
        if (first < 0)
            first = w;
        last = w;
        in_win = w == win ? in_win + 1 : 1;
        win = w;
        if (in_win > most)
            most = in_win;
        if (in_win > RATE)
            TEST_FAIL("%d starts in the window at %lld s, limit %d", in_win, (long long)w, RATE);
    }
    free(v);
    fprintf(stderr, "rate %s: %d jobs over %lld windows, at most %d in one\n", backend, JOBS,
            (long long)(last - first + 1), most);
    ASSERT_EQ(most, RATE);
    ASSERT(last - first + 1 <= JOBS / RATE + 2);
    srv_stop(&s);
}
