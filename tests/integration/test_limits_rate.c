/*
 * test_limits_rate.c — a rate limit across processes, through the real
 * binary on both stores: 4 `jobd worker` processes of concurrency 16 on a
 * queue limited to 20 starts per 1 s, with 180 quick jobs (~9 s).
 *
 * A job starts when it is claimed (its started_at); its handler process
 * begins a little later, and under load that lag can carry a handler
 * claimed at the end of one window into the next. So the handlers' own
 * records are checked against the store's: every handler began after its
 * job's claim (the store did not stamp claims later than they happened),
 * and in every 1 s window aligned to the epoch at most 20 jobs were claimed
 * and at most 20 handlers of jobs claimed in that window began. The
 * throughput stays close to 20 a second: the claims span at most two
 * windows more than 180 / 20.
 */
#include "core/timefmt.h"
#include "limitstest.h"

#define JOBS 180
#define RATE 20
#define SEC_NS INT64_C(1000000000)

/* started_at (us) of every job of queue q, by id (ids < max_id). */
static void
started_at(const struct srv *s, const char *q, int64_t *by_id, int64_t max_id)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/jobs?queue=%s&limit=1000", q);
    json_t *o = get_json(s, path), *j;
    size_t i;
    json_array_foreach(json_object_get(o, "jobs"), i, j) {
        int64_t id = json_integer_value(json_object_get(j, "id")), us = 0;
        const char *t = json_string_value(json_object_get(j, "started_at"));
        struct jobd_error e = {0};
        ASSERT(id > 0 && id < max_id && t != NULL);
        ASSERT_OK(time_parse_rfc3339(t, &us, "started_at", &e), &e);
        by_id[id] = us;
    }
    json_decref(o);
}

/* Per window (from first): claims, and handlers of that window's claims begun in it. */
struct win {
    int claimed, begun;
};

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
    static int64_t claim_us[JOBS + 16];
    started_at(&s, "rated", claim_us, JOBS + 16);
    struct lt_rec *v;
    size_t n = lt_read(rec, &v);
    ASSERT_EQ(n, 2 * JOBS);
    int64_t first = INT64_MAX, last = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].start) {
            ASSERT(v[i].id > 0 && v[i].id < JOBS + 16 && claim_us[v[i].id] > 0);
            int64_t w = claim_us[v[i].id] / 1000000;
            first = w < first ? w : first;
            last = w > last ? w : last;
        }
    struct win *wins = calloc((size_t)(last - first + 1), sizeof *wins);
    int lagged = 0;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].start)
            continue;
        int64_t c = claim_us[v[i].id], w = c / 1000000 - first;
        if (v[i].ns / 1000 < c - 1000) /* started_at has milliseconds */
            TEST_FAIL("job %lld: its handler began %lld us before its claim", (long long)v[i].id,
                      (long long)(c - v[i].ns / 1000));
        wins[w].claimed++;
        if (v[i].ns / SEC_NS - first == w)
            wins[w].begun++;
        else
            lagged++;
    }
    int most = 0;
    for (int64_t w = 0; w <= last - first; w++) {
        if (wins[w].claimed > RATE || wins[w].begun > RATE)
            TEST_FAIL("window %lld s: %d claimed, %d handlers of those began in it; limit %d",
                      (long long)(first + w), wins[w].claimed, wins[w].begun, RATE);
        most = wins[w].claimed > most ? wins[w].claimed : most;
    }
    free(wins);
    free(v);
    fprintf(stderr,
            "rate %s: %d jobs over %lld windows, at most %d in one, %d handlers began "
            "in the next window\n",
            backend, JOBS, (long long)(last - first + 1), most, lagged);
    ASSERT_EQ(most, RATE);
    ASSERT(last - first + 1 <= JOBS / RATE + 2);
    srv_stop(&s);
}
