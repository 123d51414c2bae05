/*
 * test_list_plans.c — every job listing the dashboard can ask for
 * (GET /v1/jobs with each filter it offers, alone and with a status or a
 * queue, and a cursor) is planned as index walks, never a full scan, on
 * both stores: the cheap check in `make test` of what test_ui_scale.sh
 * measures at 1M jobs (docs/DASHBOARD.md "Fast at size"). On SQLite the
 * EXPLAIN QUERY PLAN of the statement must have no "SCAN jobs" or
 * "SCAN jobs_done" line (a walk of the table) — statistics from ANALYZE of
 * a skewed table are present, as in a real store; on PostgreSQL, with
 * enable_seqscan off (so a Seq Scan appears only when no index can serve),
 * its EXPLAIN must have no "Seq Scan". Without the indexes of migrations
 * 10 (SQLite) and 13 (PostgreSQL) these fail, and those of a group without
 * SQLite's 23 and 26 and PostgreSQL's 33. On SQLite a group's listing
 * probes its index by bucket of ids and group in jobs and jobs_done
 * (migration 26), so its plan walks nothing but the buckets (r) and the
 * branches' pages: no "SCAN" of a table or an index, and each probe by
 * bucket and group.
 */
#include <libpq-fe.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/job.h"
#include "pgtest.h"
#include "store/store.h"
#include "store/pg/internal.h"
#include "store/sqlite/internal.h"
#include "test.h"

/* Each filter the job list offers; the statuses are added to each below. */
static const struct job_filter filters[] = {
    {.status = STORE_ANY},
    {.status = STORE_ANY, .queue = "q1"},
    {.status = STORE_ANY, .type = "t1"},
    {.status = STORE_ANY, .queue = "q1", .type = "t1"},
    {.status = STORE_ANY, .schedule = "nightly"},
    {.status = STORE_ANY, .key = "k1"},
    {.status = STORE_ANY, .queue = "q1", .before_id = 1000},
    {.status = STORE_ANY, .type = "t1", .schedule = "nightly", .created_after_us = 1},
    {.status = STORE_ANY, .queue = "q1", .key = "k1", .created_before_us = 2},
    {.status = STORE_ANY, .group = "g1"},
    {.status = STORE_ANY, .queue = "q1", .group = "g1", .before_id = 1000},
    {.status = STORE_ANY, .type = "t1", .group = "g1"},
};
#define N_FILTERS (sizeof filters / sizeof filters[0])

/* Filter i with status s (STORE_ANY or a status). */
static struct job_filter
filter(size_t i, int s)
{
    struct job_filter f = filters[i];
    f.status = s;
    return f;
}

static void
describe(const struct job_filter *f, char *out, size_t len)
{
    snprintf(out, len, "status=%s queue=%s type=%s schedule=%s key=%s group=%s after=%d before=%d",
             f->status == STORE_ANY ? "any" : job_status_name((enum job_status)f->status),
             f->queue ? f->queue : "-", f->type ? f->type : "-", f->schedule ? f->schedule : "-",
             f->key ? f->key : "-", f->group ? f->group : "-", f->created_after_us != 0,
             f->created_before_us != 0);
}

static void
db_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        TEST_FAIL("%s: %s", sql, msg ? msg : "?");
}

/* Fails if the plan of f's listing walks a whole table. */
static void
sq_check(sqlite3 *db, const struct job_filter *f)
{
    char *sql = sq_list_sql(f), what[256], q[8192];
    ASSERT(sql != NULL);
    describe(f, what, sizeof what);
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    free(sql);
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, q, -1, &stmt, NULL) != SQLITE_OK)
        TEST_FAIL("%s: %s", what, sqlite3_errmsg(db));
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(stmt, 3);
        if (strcmp(line, "SCAN jobs") == 0 || strcmp(line, "SCAN jobs_done") == 0)
            TEST_FAIL("%s: the listing walks a whole table (%s)", what, line);
        /* allowed: the buckets (r), a CTE's first row, a branch's page */
        if (f->group != NULL && strncmp(line, "SCAN ", 5) == 0 && strcmp(line, "SCAN r") != 0 &&
            strcmp(line, "SCAN CONSTANT ROW") != 0 && strncmp(line, "SCAN (subquery-", 15) != 0)
            TEST_FAIL("%s: the listing by group walks more than its buckets (%s)", what, line);
        if (strstr(line, "_grp_bucket") != NULL && strstr(line, "(<expr>=? AND grp=?") == NULL)
            TEST_FAIL("%s: a probe not by bucket and group (%s)", what, line);
    }
    sqlite3_finalize(stmt);
}

TEST(sqlite_listings_use_indexes)
{
    struct jobd_error err = {0};
    struct store *st = NULL;
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", test_path("plans.db"));
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    store_close(st);
    sqlite3 *db = NULL;
    ASSERT_EQ(sqlite3_open(test_path("plans.db"), &db), SQLITE_OK);
    /* Statistics of a store where one type and one queue hold most jobs. */
    db_exec(db, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) "
                "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts,"
                "  created_at, grp) SELECT 'default', 't0', '{}', 'pending', 0, i, 25, i,"
                "  CASE WHEN i % 10 = 0 THEN 'g0' END FROM c;"
                "INSERT INTO jobs_done (id, queue, type, payload, status, priority, run_at,"
                "  attempt, max_attempts, created_at, finished_at, grp)"
                "  SELECT id + 10000, queue, type, payload, 'succeeded', 0, run_at, 1, 25,"
                "  created_at, created_at, grp FROM jobs; ANALYZE;");
    int statuses[] = {STORE_ANY, JOB_PENDING, JOB_RUNNING, JOB_SUCCEEDED, JOB_DEAD, JOB_CANCELLED};
    for (size_t i = 0; i < N_FILTERS; i++)
        for (size_t s = 0; s < sizeof statuses / sizeof statuses[0]; s++) {
            struct job_filter f = filter(i, statuses[s]);
            sq_check(db, &f);
        }
    sqlite3_close(db);
}

/* Fails if the plan of f's listing has a sequential scan. */
static void
pg_check(PGconn *c, const struct job_filter *f)
{
    struct pg_list_query q;
    char what[256];
    describe(f, what, sizeof what);
    ASSERT_EQ(pg_list_sql(f, 51, NULL, &q), JOBD_OK);
    size_t len = strlen(q.sql) + 16;
    char *sql = malloc(len);
    ASSERT(sql != NULL);
    snprintf(sql, len, "EXPLAIN %s", q.sql);
    free(q.sql);
    PGresult *r = PQexecParams(c, sql, q.n, NULL, q.vals, NULL, NULL, 0);
    free(sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", what, PQerrorMessage(c));
    for (int row = 0; row < PQntuples(r); row++) {
        const char *line = PQgetvalue(r, row, 0);
        if (strstr(line, "Seq Scan") != NULL)
            TEST_FAIL("%s: the listing scans a whole table (%s)", what, line);
        /* A walk of the primary key tests every job newer than the cursor:
         * it serves only a key's one job, or a status most jobs of the table
         * have (pending in jobs without a queue, type or schedule; succeeded,
         * where the planner may prefer it for a page of a common status). */
        const char *next = row + 1 < PQntuples(r) ? PQgetvalue(r, row + 1, 0) : "";
        bool by_id = strstr(next, "Index Cond: (id") != NULL; /* a key, or past the cursor */
        bool common = strstr(next, "Filter:") != NULL && strstr(next, "'succeeded'") != NULL;
        if (!by_id && !common &&
            (strstr(line, "using jobs_done_pkey") != NULL ||
             (strstr(line, "using jobs_pkey") != NULL &&
              (f->queue || f->type || f->schedule || f->group))))
            TEST_FAIL("%s: the listing walks a whole table in id order (%s)", what, line);
        /* Sorting is for the few: a key's one job, running jobs, succeeded
         * ones not yet archived, a schedule's pending ones; the others walk
         * an index in id order. */
        const char *prev = row > 0 ? PQgetvalue(r, row - 1, 0) : "";
        if (f->key == NULL && strstr(line, "Sort Key") != NULL && strstr(prev, "Sort  (") &&
            strstr(next, "Bitmap Heap Scan") == NULL && /* few rows, by two indexes */
            strstr(next, "->  Append") == NULL &&       /* the branches, each cut to the page */
            strstr(next, "jobs_lease") == NULL && strstr(next, "jobs_succeeded") == NULL &&
            strstr(next, "jobs_schedule_firing") == NULL)
            TEST_FAIL("%s: the listing sorts what it reads (%s)", what, next);
    }
    PQclear(r);
}

TEST(pg_listings_use_indexes)
{
    char url[1100];
    if (pgtest_fresh_db(url, sizeof url) != 0)
        TEST_FAIL("no PostgreSQL database (JOBD_TEST_PG_URL)");
    struct jobd_error err = {0};
    struct store *st = NULL;
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    store_close(st);
    PGconn *c = PQconnectdb(url);
    ASSERT_EQ(PQstatus(c), CONNECTION_OK);
    /* Statistics of a store where the queue, type and schedule filtered on
     * are rare (for a common one, walking the primary key is right). */
    PGresult *r = PQexec(
        c, "INSERT INTO jobd.jobs (queue, type, payload, status, priority, run_at, max_attempts,"
           "  idempotency_key, schedule, scheduled_for, created_at, grp)"
           "  SELECT CASE WHEN i % 500 = 0 THEN 'q1' ELSE 'default' END,"
           "  CASE WHEN i % 500 = 1 THEN 't1' ELSE 't0' END, '{}',"
           "  'pending', 0, now(), 25, 'k' || i, CASE WHEN i % 2000 = 0 THEN 'nightly' END,"
           "  to_timestamp(i), now(), CASE WHEN i % 500 = 2 THEN 'g1' WHEN i % 3 = 0 THEN 'g0' END"
           "  FROM generate_series(1, 20000) i;"
           "INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority, run_at,"
           "  attempt, attempt_floor, max_attempts, cancel_requested, schedule, created_at,"
           "  finished_at, grp) SELECT id + 100000, queue, type, payload, CASE WHEN id % 100 = 0"
           "  THEN 'cancelled' WHEN id % 10 = 0 THEN 'dead' ELSE 'succeeded' END, 0, run_at, 1,"
           "  0, 25, false, schedule, created_at, now(), grp FROM jobd.jobs;"
           "ANALYZE jobd.jobs; ANALYZE jobd.jobs_done; SET enable_seqscan = off;");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        TEST_FAIL("filling: %s", PQerrorMessage(c));
    PQclear(r);
    int statuses[] = {STORE_ANY, JOB_PENDING, JOB_RUNNING, JOB_SUCCEEDED, JOB_DEAD, JOB_CANCELLED};
    for (size_t i = 0; i < N_FILTERS; i++)
        for (size_t s = 0; s < sizeof statuses / sizeof statuses[0]; s++) {
            struct job_filter f = filter(i, statuses[s]);
            pg_check(c, &f);
        }
    PQfinish(c);
    pgtest_drop_db(url);
}
