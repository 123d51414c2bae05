/*
 * test_api_counts.c — queue counts through a real `jobd server`. On
 * PostgreSQL GET /v1/queues and /metrics read a cache that requests never
 * recount (test_backlog_cost proves that at the store); the server's counts
 * thread (src/api/countsd.c) recounts it in the background, so new jobs
 * show there within about a second with no request causing it. On SQLite
 * the counts are exact at once.
 */
#include "apitest.h"

BOTH(counts_follow_new_jobs_without_a_request_recounting)
{
    struct srv s;
    srv_start(&s, backend, NULL);
    ASSERT_EQ(srv_queue_count(&s, "cq", "pending"), 0);
    for (int i = 0; i < 3; i++)
        create_job(&s, "{\"type\":\"c\",\"queue\":\"cq\"}");
    if (strcmp(backend, "sqlite") == 0)
        ASSERT_EQ(srv_queue_count(&s, "cq", "pending"), 3); /* exact at once */
    /* About 1 s on PostgreSQL; 5 s leave room for a loaded machine. */
    int64_t ms = srv_await_queue_count(&s, "cq", "pending", 3);
    fprintf(stderr, "%s: counted after %lld ms\n", backend, (long long)ms);
    ASSERT(srv_metric(&s, "jobd_queue_jobs{queue=\"cq\",status=\"pending\"}") == 3);
    srv_stop(&s);
}
