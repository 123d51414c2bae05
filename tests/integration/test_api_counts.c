/*
 * test_api_counts.c — queue counts through a real `jobd server`. On
 * PostgreSQL GET /v1/queues and /metrics read a cache that requests never
 * recount (test_backlog_cost proves that at the store); the server's counts
 * thread (src/api/countsd.c) recounts it in the background, so new jobs
 * show there within about a second with no request causing it. On SQLite
 * the counts are exact at once.
 */
#include "apitest.h"

/* Pending jobs of queue q in GET /v1/queues. */
static int64_t
pending_in(const struct srv *s, const char *q)
{
    json_t *v = get_json(s, "/v1/queues");
    int64_t n = 0;
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(v, "queues"), i, o)
        if (strcmp(json_string_value(json_object_get(o, "name")), q) == 0)
            n = json_integer_value(json_object_get(o, "pending"));
    json_decref(v);
    return n;
}

BOTH(counts_follow_new_jobs_without_a_request_recounting)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    ASSERT_EQ(pending_in(&s, "cq"), 0);
    for (int i = 0; i < 3; i++)
        create_job(&s, "{\"type\":\"c\",\"queue\":\"cq\"}");
    int64_t t0 = apitest_now_ms(), n;
    while ((n = pending_in(&s, "cq")) != 3) {
        if (strcmp(backend, "sqlite") == 0)
            TEST_FAIL("SQLite counts are exact: %lld pending, want 3", (long long)n);
        if (apitest_now_ms() - t0 > 5000) /* about 1 s, with room for a loaded machine */
            TEST_FAIL("the counts still say %lld pending after 5 s, want 3", (long long)n);
        apitest_nap_ms(50);
    }
    fprintf(stderr, "%s: counted after %lld ms\n", backend, (long long)(apitest_now_ms() - t0));
    ASSERT(srv_metric(&s, "jobd_queue_jobs{queue=\"cq\",status=\"pending\"}") == 3);
    srv_stop(&s);
}
