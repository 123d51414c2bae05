/*
 * test_pg_counts.c — the PostgreSQL queue counts cache (pg/counts.c): a
 * refresh of a filled cache counts jobs_done in ranges of heap blocks, each
 * its own statement (VACUUM of jobd.jobs waits behind a snapshot held
 * across all the finished jobs: docs/DESIGN.md, queue counts). Here: the
 * ranges add up to the exact counts with several of them, the last one
 * open-ended, rows that arrive and rows that leave; a fresh cache is left
 * alone. (That each range is its own statement is not asserted: the
 * database's transaction counter also counts autovacuum's and parallel
 * workers', so it cannot tell them apart reliably.)
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "pgtest.h"
#include "store/operator.h"
#include "store/pg/internal.h"
#include "store/store.h"
#include "test.h"
#include "util/clock.h"

static void
pq_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

static int64_t
pq_i64(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        TEST_FAIL("%s: %s", sql, PQerrorMessage(c));
    int64_t v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

/* The cache's count for (queue, status). */
static int64_t
counted(struct store *st, const char *queue, enum job_status status)
{
    struct jobd_error err = {0};
    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(st, &qs, &nq, &err), &err);
    int64_t n = 0;
    for (size_t i = 0; i < nq; i++)
        if (strcmp(qs[i].name, queue) == 0)
            n = qs[i].count[status];
    free(qs);
    return n;
}

/* finished jobs with a padded payload (~11 a heap block), ids from id0 */
static void
finish_jobs(PGconn *c, const char *queue, const char *status, int n, int id0)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority, run_at,"
             "  attempt, attempt_floor, max_attempts, cancel_requested, created_at, finished_at)"
             "  SELECT %d + i, '%s', 't', json_build_object('pad', repeat('x', 600)), '%s', 0,"
             "  now(), 1, 0, 25, false, now(), now() FROM generate_series(1, %d) i",
             id0, queue, status, n);
    pq_ok(c, sql);
}

TEST(pg_counts_refresh_adds_up_over_ranges)
{
    TEST_NEED_PG();
    char url[1100];
    if (pgtest_fresh_db(url, sizeof url) != 0)
        TEST_FAIL("no PostgreSQL database (JOBD_TEST_PG_URL)");
    struct jobd_error err = {0};
    struct store *st = NULL;
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    struct manual_clock mc; /* the cache ages only when told */
    manual_clock_init(&mc, clock_real_now_us());
    store_set_clock(st, &mc.clock);
    PGconn *c = ((struct store_pg *)st)->conn;
    bool recounted = false;

    /* A cache never filled: filled on the request path, in one statement. */
    finish_jobs(c, "b", "dead", 7, 2000000);
    ASSERT_EQ(counted(st, "b", JOB_DEAD), 7);
    manual_clock_advance(&mc, 60 * 1000000LL);
    ASSERT_OK(store_counts_refresh(st, 1000, &recounted, &err), &err);
    ASSERT(recounted);
    ASSERT_EQ(counted(st, "b", JOB_DEAD), 7);

    /* Enough finished jobs for several ranges, others in another queue and
     * status; the cache a minute old. */
    finish_jobs(c, "a", "succeeded", 90000, 1000000);
    finish_jobs(c, "b", "cancelled", 5, 3000000);
    pq_ok(c, "INSERT INTO jobd.jobs (queue, type, payload, status, priority, run_at,"
             "  max_attempts, created_at) VALUES ('b', 't', '{}', 'pending', 0, now(), 25, now())");
    int64_t blocks = pq_i64(c, "SELECT max(pg_relation_size(relid)) / 8192"
                               "  FROM pg_partition_tree('jobd.jobs_done') WHERE isleaf");
    int64_t ranges = (blocks + PG_COUNTS_CHUNK_BLOCKS - 1) / PG_COUNTS_CHUNK_BLOCKS;
    ASSERT(ranges >= 2); /* else no count would cross a range's end */
    printf("  jobs_done: %lld blocks, %lld ranges\n", (long long)blocks, (long long)ranges);
    manual_clock_advance(&mc, 60 * 1000000LL);
    ASSERT_OK(store_counts_refresh(st, 1000, &recounted, &err), &err);
    ASSERT(recounted);
    ASSERT_EQ(counted(st, "a", JOB_SUCCEEDED), 90000);
    ASSERT_EQ(counted(st, "b", JOB_DEAD), 7);
    ASSERT_EQ(counted(st, "b", JOB_CANCELLED), 5);
    ASSERT_EQ(counted(st, "b", JOB_PENDING), 1);

    /* Fresh now: a second server's refresh does nothing. */
    ASSERT_OK(store_counts_refresh(st, 1000, &recounted, &err), &err);
    ASSERT(!recounted);

    /* Rows that leave (a retention's delete) leave the counts. */
    pq_ok(c, "DELETE FROM jobd.jobs_done WHERE queue = 'a'");
    manual_clock_advance(&mc, 60 * 1000000LL);
    ASSERT_OK(store_counts_refresh(st, 1000, &recounted, &err), &err);
    ASSERT(recounted);
    ASSERT_EQ(counted(st, "a", JOB_SUCCEEDED), 0);
    ASSERT_EQ(counted(st, "b", JOB_CANCELLED), 5);
    store_close(st);
    pgtest_drop_db(url);
}
