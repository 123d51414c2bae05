/*
 * test_backlog_cost.c — the work of each request must not grow with the
 * backlog (docs/DESIGN.md "Cost per request"). With 100,000 pending jobs
 * (and 20,000 finished ones) in a SQLite store, every operation a route or
 * a long-poll pass runs — queue counts, listings filtered by type or
 * status, claims and due checks for a type with no jobs or with many, the
 * soonest run_at for a worker's types or queues — is measured in SQLite
 * virtual-machine steps over all the connection's statements (the closest
 * thing to "rows examined"): a scan of the jobs would be hundreds of
 * thousands, an index walk a few thousand at most (full-scan steps are
 * printed too: only the tiny queues and job_counts tables may have any). The counts that /v1/queues reports are also checked against a real
 * count after a mix of every transition, since triggers maintain them.
 */
#include <libpq-fe.h>
#include <sqlite3.h>

#include "core/err.h"
#include "pgtemplate.h"
#include "pgtest.h"
#include "store/operator.h"
#include "store/store.h"
#include "store/pg/internal.h"
#include "store/sqlite/internal.h"
#include "test.h"
#include "util/clock.h"

#define BACKLOG 100000
#define DONE 20000
#define STEP_BUDGET 25000 /* a quarter of the backlog; a scan costs several times it */

static sqlite3 *
db_of(struct store *st)
{
    return ((struct sqlite_store *)st)->db;
}

/* VM steps (and full-scan steps) of every statement since the last call. */
static int64_t
steps(struct store *st, int64_t *fullscan)
{
    int64_t n = 0, fs = 0;
    for (sqlite3_stmt *p = sqlite3_next_stmt(db_of(st), NULL); p != NULL;
         p = sqlite3_next_stmt(db_of(st), p)) {
        n += sqlite3_stmt_status(p, SQLITE_STMTSTATUS_VM_STEP, 1);
        fs += sqlite3_stmt_status(p, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1);
    }
    if (fullscan != NULL)
        *fullscan = fs;
    return n;
}

static void
exec(struct store *st, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db_of(st), sql, NULL, NULL, &msg) != SQLITE_OK)
        TEST_FAIL("%s: %s", sql, msg ? msg : "?");
}

static void
check_cost(struct store *st, const char *what)
{
    int64_t fs = 0, n = steps(st, &fs);
    printf("  %-44s %7lld VM steps, %lld in full scans\n", what, (long long)n, (long long)fs);
    if (n > STEP_BUDGET)
        TEST_FAIL("%s: %lld VM steps with %d pending: grows with the backlog", what, (long long)n,
                  BACKLOG);
}

static void
fill(struct store *st)
{
    exec(st, "BEGIN");
    /* types t0..t4 over two queues, all due; a few future ones of type later */
    exec(st, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000) "
             "INSERT INTO jobs (queue, type, payload, status, priority, run_at, max_attempts, "
             "  created_at) "
             "SELECT CASE WHEN i % 4 = 0 THEN 'q1' ELSE 'default' END, 't' || (i % 5), '{}', "
             "  'pending', i % 3, 1000000 + i, 25, 1000000 FROM c");
    exec(st, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000) "
             "INSERT INTO jobs_done (id, queue, type, payload, status, priority, run_at, attempt, "
             "  max_attempts, created_at, finished_at) "
             "SELECT 1000000 + i, 'default', 't1', '{}', 'succeeded', 0, 0, 1, 25, 0, i FROM c");
    exec(st, "COMMIT");
    /* With statistics the planner may prefer other paths (a rowid walk for a listing). */
    exec(st, "ANALYZE");
}

TEST(sqlite_routes_cost_log_n_plus_answer)
{
    struct jobd_error err = {0};
    struct store *st = NULL;
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", test_path("backlog.db"));
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    fill(st);
    (void)steps(st, NULL);

    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(st, &qs, &nq, &err), &err);
    check_cost(st, "queue counts (/v1/queues, /metrics)");
    int64_t pending = 0;
    for (size_t i = 0; i < nq; i++)
        pending += qs[i].count[JOB_PENDING];
    free(qs);
    ASSERT_EQ(pending, BACKLOG);

    const char *lists[][2] = {{"absent", NULL}, {"t1", NULL}, {NULL, "dead"}, {NULL, "succeeded"}};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        struct job_filter f = {.status = STORE_ANY, .type = lists[i][0], .limit = 100};
        enum job_status js;
        if (lists[i][1] != NULL && job_status_parse(lists[i][1], &js) == JOBD_OK)
            f.status = js;
        struct job_list l = {0};
        int64_t cursor = 0;
        ASSERT_OK(store_list(st, &f, &l, &cursor, &err), &err);
        char what[64];
        snprintf(what, sizeof what, "GET /v1/jobs?%s=%s", lists[i][0] ? "type" : "status",
                 lists[i][0] ? lists[i][0] : lists[i][1]);
        check_cost(st, what);
        job_list_fini(&l);
    }

    const char *absent[] = {"absent"}, *t1[] = {"t1"}, *two[] = {"t2", "absent"}, *q1[] = {"q1"};
    struct claim_req reqs[] = {
        {.worker_id = "w", .types = absent, .n_types = 1, .limit = 10},
        {.worker_id = "w", .types = t1, .n_types = 1, .limit = 10},
        {.worker_id = "w", .types = two, .n_types = 2, .queues = q1, .n_queues = 1, .limit = 10},
        {.worker_id = "w", .queues = q1, .n_queues = 1, .limit = 10},
    };
    const char *names[] = {"type absent", "type t1", "types t2+absent in q1", "queue q1"};
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        struct job_list l = {0};
        char what[64];
        ASSERT_OK(store_claim(st, &reqs[i], &l, &err), &err);
        snprintf(what, sizeof what, "claim, %s", names[i]);
        check_cost(st, what);
        ASSERT_EQ(l.n, i == 0 ? 0 : 10);
        job_list_fini(&l);
        int64_t run_at = 0;
        ASSERT_OK(store_next_run_at(st, &reqs[i], &run_at, &err), &err);
        snprintf(what, sizeof what, "next run_at, %s", names[i]);
        check_cost(st, what);
        ASSERT(i == 0 ? run_at == 0 : run_at > 0);
    }
    store_close(st);
}

/* job_counts (kept by triggers) against a real count, after every kind of transition. */
TEST(sqlite_counts_stay_exact)
{
    struct jobd_error err = {0};
    struct store *st = NULL;
    char url[600];
    snprintf(url, sizeof url, "sqlite:%s", test_path("counts.db"));
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    struct job_spec js = {.type = "t", .max_attempts = 1};
    struct job j = {0};
    for (int i = 0; i < 12; i++) {
        js.queue = i % 2 ? "a" : "b";
        ASSERT_OK(store_enqueue(st, &js, &j, NULL, &err), &err);
        job_fini(&j);
    }
    struct claim_req req = {.worker_id = "w", .limit = 6};
    struct job_list l = {0};
    ASSERT_OK(store_claim(st, &req, &l, &err), &err);
    ASSERT_EQ(l.n, 6);
    ASSERT_OK(store_complete(st, l.v[0].id, l.v[0].attempt, NULL, NULL, &err), &err);
    ASSERT_OK(store_fail(st, l.v[1].id, l.v[1].attempt, "x", false, 0, NULL, &err), &err);
    ASSERT_OK(store_cancel(st, l.v[2].id, NULL, &err), &err); /* running: requested only */
    ASSERT_OK(store_retry(st, l.v[1].id, NULL, &err), &err);  /* dead -> pending */
    int64_t pending_id = 0;
    struct job_filter f = {.status = JOB_PENDING, .limit = 1};
    struct job_list p = {0};
    int64_t cursor = 0;
    ASSERT_OK(store_list(st, &f, &p, &cursor, &err), &err);
    ASSERT_EQ(p.n, 1);
    pending_id = p.v[0].id;
    job_list_fini(&p);
    ASSERT_OK(store_cancel(st, pending_id, NULL, &err), &err);
    job_list_fini(&l);

    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(st, &qs, &nq, &err), &err);
    sqlite3_stmt *stmt;
    ASSERT_EQ(sqlite3_prepare_v2(db_of(st),
                                 "SELECT queue, status, count(*) FROM (SELECT queue, status FROM "
                                 "jobs UNION ALL SELECT queue, status FROM jobs_done) "
                                 "GROUP BY queue, status",
                                 -1, &stmt, NULL),
              SQLITE_OK);
    int rows = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
        const char *q = (const char *)sqlite3_column_text(stmt, 0);
        enum job_status s;
        ASSERT_EQ(job_status_parse((const char *)sqlite3_column_text(stmt, 1), &s), JOBD_OK);
        bool found = false;
        for (size_t i = 0; i < nq; i++) {
            if (strcmp(qs[i].name, q) == 0) {
                ASSERT_EQ(qs[i].count[s], sqlite3_column_int64(stmt, 2));
                found = true;
            }
        }
        ASSERT(found);
        rows++;
    }
    sqlite3_finalize(stmt);
    ASSERT(rows >= 5); /* pending, running, succeeded, cancelled over two queues */
    free(qs);
    store_close(st);
}

/* ---- PostgreSQL: rows examined from the statistics views ---- */

static void
pq_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

/*
 * Rows read from jobs and jobs_done so far (sequential scans plus index
 * entries), after making the store's backend publish its counters.
 */
static int64_t
rows_read(PGconn *store_conn, PGconn *obs)
{
    pq_ok(store_conn, "SELECT pg_stat_force_next_flush()");
    PGresult *r =
        PQexec(obs, "SELECT (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables"
                    "         WHERE schemaname = 'jobd' AND relname IN ('jobs', 'jobs_done'))"
                    "     + (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes"
                    "         WHERE schemaname = 'jobd' AND relname IN ('jobs', 'jobs_done'))");
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        TEST_FAIL("stats: %s", PQerrorMessage(obs));
    int64_t n = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return n;
}

static void
pg_check(PGconn *c, PGconn *obs, int64_t *last, const char *what)
{
    int64_t now = rows_read(c, obs), n = now - *last;
    *last = now;
    printf("  %-44s %7lld rows read\n", what, (long long)n);
    if (n > STEP_BUDGET / 5)
        TEST_FAIL("%s: %lld rows read with %d pending: grows with the backlog", what, (long long)n,
                  BACKLOG);
}

/* 100,000 pending jobs in two queues and five types, 20,000 succeeded of type t1. */
static void
pg_fill(PGconn *c)
{
    pq_ok(c, "INSERT INTO jobd.jobs (queue, type, payload, status, priority, run_at, max_attempts,"
             "  created_at) SELECT CASE WHEN i % 4 = 0 THEN 'q1' ELSE 'default' END,"
             "  't' || (i % 5), '{}', 'pending', i % 3,"
             "  timestamptz '2000-01-01' + i * interval '1 ms', 25, now()"
             "  FROM generate_series(1, 100000) i");
    pq_ok(c, "INSERT INTO jobd.jobs_done (id, queue, type, payload, status, priority, run_at,"
             "  attempt, attempt_floor, max_attempts, cancel_requested, created_at, finished_at)"
             "  SELECT 1000000 + i, 'default', 't1', '{}', 'succeeded', 0, now(), 1, 0, 25, false, "
             "now(),"
             "  now() FROM generate_series(1, 20000) i");
    pq_ok(c, "ANALYZE jobd.jobs");
    pq_ok(c, "ANALYZE jobd.jobs_done");
}

static int64_t
pending_counted(struct store *st)
{
    struct jobd_error err = {0};
    struct queue_stat *qs = NULL;
    size_t nq = 0;
    ASSERT_OK(store_queue_stats(st, &qs, &nq, &err), &err);
    int64_t pending = 0;
    for (size_t i = 0; i < nq; i++)
        pending += qs[i].count[JOB_PENDING];
    free(qs);
    return pending;
}

/*
 * Queue counts: a request reads the cache, fresh or stale (before, the
 * first request a second after the last recount recounted every job:
 * 120,000 rows here); only store_counts_refresh, a background thread's
 * call, recounts, and not while the cache is younger than it asks.
 */
static void
pg_counts(struct store *st, PGconn *c, PGconn *obs, struct manual_clock *mc, int64_t *last)
{
    struct jobd_error err = {0};
    bool recounted = true;
    (void)pending_counted(st); /* fills the cache: it was never filled */
    *last = rows_read(c, obs);
    ASSERT_EQ(pending_counted(st), BACKLOG);
    pg_check(c, obs, last, "queue counts, from the cache");
    manual_clock_advance(mc, 60 * 1000000LL);
    pq_ok(c,
          "INSERT INTO jobd.jobs (queue, type, payload, status, priority, run_at,"
          "  max_attempts, created_at) VALUES ('q1', 't9', '{}', 'pending', 0, now(), 25, now())");
    ASSERT_EQ(pending_counted(st), BACKLOG);
    pg_check(c, obs, last, "queue counts, a minute old");
    ASSERT_OK(store_counts_refresh(st, 1000, &recounted, &err), &err);
    ASSERT(recounted);
    ASSERT_EQ(pending_counted(st), BACKLOG + 1);
    ASSERT_OK(store_counts_refresh(st, 1000, &recounted, &err), &err);
    ASSERT(!recounted); /* fresh: nothing to do */
    /* The recount's reads reach the statistics views when its backend goes
     * idle: wait until they are all in, so the next check counts only its own. */
    for (int64_t prev = -1; prev != *last; usleep(50000)) {
        prev = *last;
        *last = rows_read(c, obs);
    }
}

/*
 * Listings by type, each run more than the five times after which a
 * prepared statement may switch to a generic plan (which would guess every
 * type common and walk the primary keys); the last run is measured.
 */
static void
pg_lists(struct store *st, PGconn *c, PGconn *obs, int64_t *last)
{
    const char *types[] = {"absent", "t1"};
    for (size_t i = 0; i < 2; i++) {
        struct jobd_error err = {0};
        struct job_filter f = {.status = STORE_ANY, .type = types[i], .limit = 50};
        struct job_list l = {0};
        int64_t cursor = 0;
        for (int k = 0; k < 7; k++) {
            job_list_fini(&l);
            *last = rows_read(c, obs);
            ASSERT_OK(store_list(st, &f, &l, &cursor, &err), &err);
        }
        char what[64];
        snprintf(what, sizeof what, "list, type %s", types[i]);
        pg_check(c, obs, last, what);
        ASSERT_EQ(l.n, i == 0 ? 0 : 50);
        if (i == 1)
            ASSERT_EQ(l.v[0].id, 1020000); /* the newest t1, from jobs_done */
        job_list_fini(&l);
    }
}

TEST(pg_routes_cost_log_n_plus_answer)
{
    char url[1100];
    /* jobd's schema in it already (tests/pgtemplate.h); store_migrate finds it up to date */
    if (pgtemplate_fresh_db(url, sizeof url) != 0)
        TEST_FAIL("no PostgreSQL database (JOBD_TEST_PG_URL)");
    struct jobd_error err = {0};
    struct store *st = NULL;
    ASSERT_OK(store_open(url, &st, &err), &err);
    ASSERT_OK(store_migrate(st, &err), &err);
    struct manual_clock mc; /* moved by hand: the counts cache ages only when told */
    manual_clock_init(&mc, clock_real_now_us());
    store_set_clock(st, &mc.clock);
    PGconn *c = ((struct store_pg *)st)->conn;
    pg_fill(c);
    PGconn *obs = PQconnectdb(url);
    ASSERT_EQ(PQstatus(obs), CONNECTION_OK);
    pq_ok(obs, "SET stats_fetch_consistency = none");
    int64_t last = rows_read(c, obs);
    pg_counts(st, c, obs, &mc, &last);
    pg_lists(st, c, obs, &last);

    const char *absent[] = {"absent"}, *t1[] = {"t1"}, *two[] = {"t2", "absent"}, *q1[] = {"q1"};
    struct claim_req reqs[] = {
        {.worker_id = "w", .types = absent, .n_types = 1, .limit = 10},
        {.worker_id = "w", .types = t1, .n_types = 1, .limit = 10},
        {.worker_id = "w", .types = two, .n_types = 2, .queues = q1, .n_queues = 1, .limit = 10},
    };
    const char *names[] = {"type absent", "type t1", "types t2+absent in q1"};
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        struct job_list l = {0};
        char what[64];
        ASSERT_OK(store_claim(st, &reqs[i], &l, &err), &err);
        snprintf(what, sizeof what, "claim, %s", names[i]);
        pg_check(c, obs, &last, what);
        ASSERT_EQ(l.n, i == 0 ? 0 : 10);
        job_list_fini(&l);
        int64_t run_at = 0;
        ASSERT_OK(store_next_run_at(st, &reqs[i], &run_at, &err), &err);
        snprintf(what, sizeof what, "next run_at, %s", names[i]);
        pg_check(c, obs, &last, what);
        ASSERT(i == 0 ? run_at == 0 : run_at > 0);
    }
    PQfinish(obs);
    store_close(st);
    pgtest_drop_db(url);
}
